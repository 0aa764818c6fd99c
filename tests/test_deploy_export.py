"""``kernelopt export``: shape-specialized winners are reported and guarded; the exported
custom op runs in eager mode and under torch.compile on the CPU (Triton's interpreter)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from deploy_cases import CANDIDATE, PROBLEM, SPECIALIZED, make_run

from kernelopt_jupyter.cli.main import main
from kernelopt_jupyter.deploy import export
from kernelopt_jupyter.deploy.generalize import verify_shapes
from kernelopt_jupyter.deploy.packaging import ExportError
from kernelopt_jupyter.deploy.shapes import ShapeSet
from kernelopt_jupyter.problem import problem_from_source
from kernelopt_jupyter.verify import VerifyOptions


def _cli(*argv: str) -> tuple[int, dict[str, Any] | None, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    text = out.getvalue().strip()
    return code, json.loads(text) if text else None, err.getvalue()


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    assert SPECIALIZED != CANDIDATE
    run = make_run(tmp_path_factory.mktemp("run"), SPECIALIZED)
    code, data, err = _cli(
        "export", str(run), "--device", "cpu", "--seeds", "1", "--fixed-shape",
        "--shape", "ROWS=129", "--mode", "eval", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert data is not None
    return Path(data["package"]), data


def test_specialized_candidate_is_reported_and_only_its_shape_admitted(
    exported: tuple[Path, dict[str, Any]],
) -> None:
    package, data = exported
    assert data["specialized"] is True and data["verified_shapes"] == ["as given"]
    own, other = data["shapes"]["checks"]
    assert (own["name"], own["verdict"]) == ("as given", "pass")
    assert (other["name"], other["verdict"], other["failed_gate"]) == (
        "ROWS=129",
        "fail",
        "correctness",
    )
    assert sorted(p.name for p in package.iterdir() if p.suffix in (".py", ".json")) == [
        "__init__.py",
        "candidate.py",
        "guard_runtime.py",
        "manifest.json",
        "op_runtime.py",
        "reference.py",
    ]
    manifest = json.loads((package / "manifest.json").read_text())
    assert manifest["verified"]["signatures"] == [
        [{"kind": "tensor", "shape": [64, 128], "dtype": "torch.float32", "contiguous": True}]
    ]
    assert manifest["verified"]["outputs"][0]["tensors"][0]["shape"] == [64, 128]
    assert manifest["verified"]["state_dtypes"] == ["torch.float32"]
    # --mode eval: verified in inference mode, and the packaged reference says so.
    assert manifest["verified"]["training"] is False
    assert 'KERNELOPT_MODE = "eval"' in (package / "reference.py").read_text()
    assert manifest["launch_configs"] == {
        "_bias_relu": {"BLOCK": 1024, "num_warps": 4, "num_stages": 1}
    }
    assert set(manifest["fingerprint"]) == {"torch", "triton", "gpu", "capability"}
    assert (package / "candidate.py").read_text() == SPECIALIZED


USE_EXPORT = """
import json, sys, torch
sys.path.insert(0, sys.argv[1])
import kernelopt_p as k
model = k.load()
graphs = []
def record(gm, inputs):
    graphs.append(str(gm.graph))
    return gm.forward
found = {}
with torch.no_grad():
    for rows in (64, 129):
        x = torch.randn(rows, 128)
        torch.testing.assert_close(model(x), model.reference(x))
        found[f"eager {rows}"] = model.kernelopt_path
        for backend in ("aot_eager", "inductor", record):
            compiled = torch.compile(model, backend=backend, fullgraph=True)  # no graph break
            torch.testing.assert_close(compiled(x), model.reference(x))
            found[f"{getattr(backend, '__name__', backend)} {rows}"] = model.kernelopt_path
    x = torch.randn(64, 128)
    handle = id(model.kernelopt_parts.optimized)
    torch.testing.assert_close(k.op([x], 0, handle)[0], model.reference(x))
    torch.library.opcheck(k.op, ([x], 0, handle))
compiled_fallback = k.load(fallback="compile")
with torch.no_grad():
    x = torch.randn(129, 128)
    torch.testing.assert_close(compiled_fallback(x), compiled_fallback.reference(x))
    found["compile fallback 129"] = compiled_fallback.kernelopt_path
    found["compiled reference"] = type(compiled_fallback.kernelopt_parts.fallback).__name__
import importlib
k = importlib.reload(k)  # a notebook re-running its import: the op stays, calls still work
again = k.load()
with torch.no_grad():
    x = torch.randn(64, 128)
    torch.testing.assert_close(again(x), again.reference(x))
    found["after reload"] = again.kernelopt_path
with torch.no_grad():
    model.train()
    model(torch.randn(64, 128))
    found["train 64"] = model.kernelopt_path
    model.eval()
found["op in graph"] = ["kernelopt" in g for g in graphs]
found["op"] = k.MANIFEST["op"]
print(json.dumps(found))
"""


def test_exported_op_in_eager_and_under_torch_compile(
    exported: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    package, _ = exported
    script = tmp_path / "use.py"
    script.write_text(USE_EXPORT)
    proc = subprocess.run(
        [sys.executable, str(script), str(package.parent)],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "TRITON_INTERPRET": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    for way in ("eager", "aot_eager", "inductor", "record"):
        assert found[f"{way} 64"] == "kernel", found
        assert found[f"{way} 129"].startswith("reference: these shapes"), found
    # The compiled graph calls the custom op where the guard admits the call, and the
    # reference's own ops (compiled) elsewhere.
    assert found["op in graph"] == [True, False]
    assert found["compile fallback 129"].startswith("reference: ")
    assert found["after reload"] == "kernel"
    assert found["train 64"].endswith("in training mode; the kernels were verified in eval mode")
    assert found["compiled reference"] == "OptimizedModule"
    assert found["op"].startswith("kernelopt::p_")


def test_a_general_candidate_passes_at_every_shape() -> None:
    problem = problem_from_source(textwrap.dedent(PROBLEM), "p.py")
    shapes = [ShapeSet("as given"), ShapeSet("ROWS=1", {"ROWS": 1}, "derived")]
    shapes.append(ShapeSet("ROWS=129", {"ROWS": 129}, "derived"))
    report = verify_shapes(problem, CANDIDATE, shapes, VerifyOptions(device="cpu", seeds=1))
    assert [c.verdict for c in report.checks] == ["pass", "pass", "pass"]
    assert not report.specialized
    assert report.guard_set()["shapes"] == ["as given", "ROWS=1", "ROWS=129"]
    assert [s[0]["shape"] for s in report.guard_set()["signatures"]] == [
        [64, 128],
        [1, 128],
        [129, 128],
    ]


def test_a_shape_the_reference_cannot_run_at_is_skipped() -> None:
    even_only = PROBLEM.replace(
        "        return torch.relu(x + self.bias)",
        "        assert x.shape[0] % 2 == 0, 'an even number of rows'\n"
        "        return torch.relu(x + self.bias)",
    )
    assert even_only != PROBLEM
    problem = problem_from_source(textwrap.dedent(even_only), "p.py")
    shapes = [ShapeSet("as given"), ShapeSet("ROWS=129", {"ROWS": 129}, "person")]
    report = verify_shapes(problem, CANDIDATE, shapes, VerifyOptions(device="cpu", seeds=1))
    assert [c.verdict for c in report.checks] == ["pass", "skipped"]
    assert "an even number of rows" in report.checks[1].detail
    assert report.guard_set()["shapes"] == ["as given"] and not report.specialized


def test_export_errors_are_one_line(tmp_path: Path) -> None:
    code, _, err = _cli("export", str(tmp_path), "--device", "cpu")
    assert code == 2 and "not a finished KernelOPT run" in err and err.count("\n") == 1
    with pytest.raises(ExportError, match="not a finished KernelOPT run"):
        export(tmp_path, device="cpu")  # the Python API the notebook uses
    run = make_run(tmp_path / "run", CANDIDATE)
    result = json.loads((run / "result.json").read_text())
    (run / "result.json").write_text(json.dumps({**result, "best": None}))
    code, _, err = _cli("export", str(run), "--device", "cpu")
    assert code == 1 and "verified no candidate" in err
    (run / "result.json").write_text(json.dumps(result))
    (run / "export" / "kernelopt_p").mkdir(parents=True)  # a folder that is not an export
    code, _, err = _cli("export", str(run), "--device", "cpu", "--json")
    assert code == 2 and "exists and is not a KernelOPT export" in err
    assert (run / "export" / "kernelopt_p").is_dir()


def test_the_api_functions_survive_their_modules_import() -> None:
    """The package's ``export``/``reverify`` stay functions once their modules are loaded (a
    submodule of the same name would replace the function: the second Export click failed)."""
    import inspect

    import kernelopt_jupyter.deploy as deploy
    import kernelopt_jupyter.deploy.packaging
    import kernelopt_jupyter.deploy.recheck  # noqa: F401

    assert inspect.isfunction(deploy.export) and inspect.isfunction(deploy.reverify)
