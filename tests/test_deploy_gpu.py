"""On the GPU (H200): export at a realistic size with derived shapes, then the exported op in
eager mode, under torch.compile (Inductor), under CUDA-graph capture and replay, and the
guard's fallback outside the verified set. Run by the lead: scripts/gpu_checks.sh."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from deploy_cases import CANDIDATE, PROBLEM, SPECIALIZED, make_run

from kernelopt_jupyter.cli.main import main

pytestmark = pytest.mark.gpu

#: 8192 x 4096 fp32 (128 MiB) inputs: the kernels see more than one wave of programs.
LARGE = PROBLEM.replace("ROWS = 64", "ROWS = 8192").replace("COLS = 128", "COLS = 4096")


def _cli(*argv: str) -> tuple[int, dict[str, Any] | None, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    text = out.getvalue().strip()
    return code, json.loads(text) if text else None, err.getvalue()


USE_GPU = """
import json, sys, torch
sys.path.insert(0, sys.argv[1])
import kernelopt_p as k
model = k.load().cuda()
found = {}
with torch.no_grad():
    x = torch.randn(8192, 4096, device="cuda")
    torch.testing.assert_close(model(x), model.reference(x))
    found["eager"] = model.kernelopt_path
    odd = torch.randn(100, 4096, device="cuda")
    torch.testing.assert_close(model(odd), model.reference(odd))
    found["eager 100"] = model.kernelopt_path
    small = torch.randn(127, 4096, device="cuda")
    torch.testing.assert_close(model(small), model.reference(small))
    found["eager 127"] = model.kernelopt_path
    compiled = torch.compile(model)
    torch.testing.assert_close(compiled(x), model.reference(x))
    found["inductor"] = model.kernelopt_path
    graphed = torch.compile(model, mode="reduce-overhead")
    for _ in range(3):
        y = graphed(x)
    torch.testing.assert_close(y, model.reference(x))
    found["reduce-overhead"] = model.kernelopt_path
    static = x.clone()
    model(static)  # warm up (Triton compiles) before capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = model(static)
    static.copy_(torch.randn_like(static))
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, model.reference(static))
    found["cuda graph"] = model.kernelopt_path
print(json.dumps(found))
"""


def test_export_on_the_gpu_eager_compile_and_cuda_graphs(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run", CANDIDATE, LARGE)
    code, data, err = _cli("export", str(run), "--device", "cuda", "--seeds", "1", "--json")
    assert code == 0, err
    assert data is not None and not data["specialized"], data["shapes"]
    assert {"as given", "ROWS=127", "ROWS=129"} <= set(data["verified_shapes"])
    assert data["fingerprint"]["gpu"] != "no GPU"
    (tmp_path / "use.py").write_text(USE_GPU)
    proc = subprocess.run(
        [sys.executable, str(tmp_path / "use.py"), str(Path(data["package"]).parent)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["eager"] == "kernel" and found["eager 127"] == "kernel"
    assert found["eager 100"].startswith("reference: these shapes")
    for way in ("inductor", "reduce-overhead", "cuda graph"):
        assert found[way] == "kernel", found


def test_a_specialized_winner_is_guarded_on_the_gpu(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run", SPECIALIZED)
    # ROWS=1 would make the specialized kernel read out of bounds: only a larger shape here.
    code, data, err = _cli(
        "export",
        str(run),
        "--device",
        "cuda",
        "--seeds",
        "1",
        "--fixed-shape",
        "--shape",
        "ROWS=129",
        "--json",
    )
    assert code == 0, err
    assert data is not None and data["specialized"] and data["verified_shapes"] == ["as given"]
