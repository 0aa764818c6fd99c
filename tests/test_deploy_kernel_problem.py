"""Export of a Triton problem (a launcher function, no weights): the guarded function runs
the candidate through the custom op at verified sizes and the user's own launcher otherwise."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

from deploy_cases import TRITON_CANDIDATE, TRITON_PROBLEM, make_run

from kernelopt_jupyter.cli.main import main

USE = """
import json, sys, torch
sys.path.insert(0, sys.argv[1])
import kernelopt_p as k
fn = k.load()
found = {}
for n in (3000, 1023, 50):
    x = torch.randn(n)
    torch.testing.assert_close(fn(x), x * 2.0 + 1.0)
    found[str(n)] = fn.kernelopt_path
compiled = torch.compile(fn, backend="aot_eager")
x = torch.randn(1023)
torch.testing.assert_close(compiled(x), x * 2.0 + 1.0)
found["compiled 1023"] = fn.kernelopt_path
print(json.dumps(found))
"""


def test_kernel_problem_export_guards_the_launcher(tmp_path: Path) -> None:
    assert TRITON_CANDIDATE != TRITON_PROBLEM
    run = make_run(tmp_path / "run", TRITON_CANDIDATE, TRITON_PROBLEM)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(
            ["export", str(run), "--device", "cpu", "--seeds", "1", "--fixed-shape",
             "--shape", "N=1023", "--json"]
        )  # fmt: skip
    assert code == 0, err.getvalue()
    data = json.loads(out.getvalue())
    # The candidate carries the problem's `N = 3000`, read only by its copy of get_inputs():
    # no evidence of a hard-coded size, so N=1023 is verified like the own shape.
    assert data["verified_shapes"] == ["as given", "N=1023"] and not data["specialized"]
    manifest = json.loads((Path(data["package"]) / "manifest.json").read_text())
    assert manifest["candidate"]["optimized"] == "scale_shift" and manifest["init"] == []
    (tmp_path / "use.py").write_text(USE)
    proc = subprocess.run(
        [sys.executable, str(tmp_path / "use.py"), str(Path(data["package"]).parent)],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "TRITON_INTERPRET": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["3000"] == "kernel" and found["1023"] == "kernel"
    assert found["50"].startswith("reference: these shapes")
    assert found["compiled 1023"] == "kernel"
