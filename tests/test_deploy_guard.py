"""The guard: which calls take the kernel path, which the reference, and why; its rendering
into best.py (which still passes the verifier)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch
from deploy_cases import CANDIDATE, PROBLEM

from kernelopt_jupyter.deploy import op_runtime
from kernelopt_jupyter.deploy.guard import guard_best_source, render_guard
from kernelopt_jupyter.deploy.guard_runtime import (
    KernelOPTGuard,
    KernelOPTGuarded,
    kernelopt_guard,
    kernelopt_signature,
)
from kernelopt_jupyter.problem import problem_from_source
from kernelopt_jupyter.verify import VerifyOptions, verify_candidate
from kernelopt_jupyter.verify.static import analyze_candidate

ROOT = Path(__file__).resolve().parents[1]


class Reference(torch.nn.Module):
    def __init__(self, cols: int) -> None:
        super().__init__()
        self.bias = torch.nn.Parameter(torch.randn(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.bias)


class Optimized(torch.nn.Module):
    """Stands in for a candidate: computes the same, and counts its calls."""

    calls = 0

    def __init__(self, cols: int) -> None:
        super().__init__()
        self.bias = torch.nn.Parameter(torch.zeros(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        Optimized.calls += 1
        return (x + self.bias).clamp_min(0)


def _verified(*shapes: tuple[int, ...], device: str = "cpu") -> dict[str, Any]:
    return {
        "device": device,
        "signatures": [kernelopt_signature([torch.empty(s)]) for s in shapes],
        "shapes": [str(s) for s in shapes],
    }


def test_choose_admits_only_the_verified_signature() -> None:
    guard = KernelOPTGuard(_verified((4, 8), (5, 8)))
    assert guard.choose([torch.randn(4, 8)])[0] == 0
    assert guard.choose([torch.randn(5, 8)])[0] == 1
    cases = {
        "these shapes": [torch.randn(6, 8)],
        "dtypes": [torch.randn(4, 8, dtype=torch.float64)],
        "or values": [torch.randn(8, 4).t()],  # same shape, not contiguous
    }
    for why, args in cases.items():
        number, reason = guard.choose(args)
        assert number == -1 and why in reason
        assert guard.describe() == f"reference: {reason}"
    assert guard.choose([torch.randn(4, 8)], training=True)[1].startswith(
        "the module is in training"
    )
    assert "no backward" in guard.choose([torch.randn(4, 8)], needs_grad=True)[1]
    assert (
        "verified on cuda"
        in KernelOPTGuard(_verified((4, 8), device="cuda")).choose([torch.randn(4, 8)])[1]
    )


def test_plain_values_are_part_of_the_signature() -> None:
    guard = KernelOPTGuard(
        {"device": "cpu", "signatures": [kernelopt_signature([torch.ones(3), 2])]}
    )
    assert guard.choose([torch.ones(3), 2])[0] == 0
    assert guard.choose([torch.ones(3), 3])[0] == -1
    assert guard.choose([torch.ones(3), 2.0])[0] == -1  # a float is not the verified int


def test_an_export_on_a_cpu_without_the_interpreter_takes_the_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    why = op_runtime.unavailable_here("cpu")
    assert why is not None and "TRITON_INTERPRET=1" in why
    assert op_runtime.unavailable_here("cuda") is None
    guard = KernelOPTGuard(_verified((4, 8)), why)
    assert guard.choose([torch.randn(4, 8)]) == (-1, why)
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert op_runtime.unavailable_here("cpu") is None


def test_guarded_module_takes_each_path_and_ties_the_weights() -> None:
    reference = Reference(8).eval()
    guarded = kernelopt_guard(reference, Optimized, _verified((4, 8)), [8])
    assert isinstance(guarded, KernelOPTGuarded)
    assert list(guarded.state_dict()) == ["reference.bias"]  # one copy of the weights
    x = torch.randn(4, 8)
    Optimized.calls = 0
    with torch.no_grad():
        torch.testing.assert_close(guarded(x), reference(x))
        assert guarded.kernelopt_path == "kernel" and Optimized.calls == 1
        guarded(torch.randn(3, 8))
        assert guarded.kernelopt_path.startswith("reference: ") and Optimized.calls == 1
        reference.bias.add_(1.0)  # the kernels see the reference's weights, not a copy
        torch.testing.assert_close(guarded(x), reference(x))
    guarded(x)  # autograd on, the bias needs a gradient
    assert "no backward" in guarded.kernelopt_path and Optimized.calls == 2
    guarded.train()
    with torch.no_grad():
        guarded(x)
    assert "training mode" in guarded.kernelopt_path


class WithBuffer(Reference):
    def __init__(self, cols: int) -> None:
        super().__init__(cols)
        self.register_buffer("shift", torch.zeros(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.bias + self.shift)


class OptimizedWithBuffer(Optimized):
    def __init__(self, cols: int) -> None:
        super().__init__(cols)
        self.register_buffer("shift", torch.ones(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x + self.bias + self.shift).clamp_min(0)


def test_buffers_stay_tied_after_a_conversion() -> None:
    reference = WithBuffer(8).eval()
    guarded = kernelopt_guard(reference, OptimizedWithBuffer, _verified((4, 8)), [8])
    guarded.to(torch.float64)  # buffers come back as new tensors: the tie is made again
    optimized = guarded.kernelopt_parts.optimized
    assert optimized.shift is reference.shift and optimized.bias is reference.bias
    reference.shift.fill_(3.0)  # what a training step of the reference would do
    verified = _verified((4, 8))
    verified["signatures"][0][0]["dtype"] = "torch.float64"
    guarded.kernelopt_guard = KernelOPTGuard(verified)
    x = torch.randn(4, 8, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(guarded(x), reference(x))
    assert guarded.kernelopt_path == "kernel"


def test_converted_weights_take_the_reference_until_converted_back() -> None:
    reference = Reference(8).eval()
    verified = _verified((4, 8)) | {"state_dtypes": ["torch.float32"]}
    guarded = kernelopt_guard(reference, Optimized, verified, [8])
    x = torch.randn(4, 8)
    with torch.no_grad():
        guarded(x)
        assert guarded.kernelopt_path == "kernel"
        guarded.double()  # fp32 inputs would still match: the weights' dtype is checked too
        guarded(x)
        assert guarded.kernelopt_path == (
            "reference: weights in torch.float64; verified with torch.float32"
        )
        guarded.float()
        torch.testing.assert_close(guarded(x), reference(x))
        assert guarded.kernelopt_path == "kernel"


def test_guarded_function() -> None:
    guarded = kernelopt_guard(torch.relu, torch.nn.functional.relu, _verified((4, 8)))
    x = torch.randn(4, 8)
    torch.testing.assert_close(guarded(x), torch.relu(x))
    assert guarded.kernelopt_path == "kernel"
    guarded(torch.randn(2, 2))
    assert guarded.kernelopt_path.startswith("reference: ")


USE_BEST = """
import importlib.util, sys, torch
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
best = load(sys.argv[1], "best")
problem = load(sys.argv[2], "problem")
reference = problem.Model(*problem.get_init_inputs())  # as constructed, as it was verified
model = best.kernelopt_guarded(reference)
with torch.no_grad():
    for rows in (64, 65):
        x = torch.randn(rows, 128)
        torch.testing.assert_close(model(x), reference(x))
        print(rows, model.kernelopt_path)
    model.eval()
    model(torch.randn(64, 128))
    print("eval", model.kernelopt_path)
"""


def test_best_py_guard_passes_the_verifier_and_guards(tmp_path: Path) -> None:
    problem = problem_from_source(textwrap.dedent(PROBLEM), "p.py")
    text = guard_best_source(problem, CANDIDATE, "cpu")
    assert "KERNELOPT_VERIFIED" in text and text.startswith(CANDIDATE.rstrip("\n"))
    assert analyze_candidate(text).violations == []
    report = verify_candidate(problem, text, VerifyOptions(device="cpu", seeds=1))
    assert report.verdict == "pass", [g.to_dict() for g in report.gates]
    (tmp_path / "best.py").write_text(text)
    (tmp_path / "p.py").write_text(textwrap.dedent(PROBLEM))
    (tmp_path / "use.py").write_text(USE_BEST)
    proc = subprocess.run(
        [
            sys.executable,
            str(tmp_path / "use.py"),
            str(tmp_path / "best.py"),
            str(tmp_path / "p.py"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TRITON_INTERPRET": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == "64 kernel"
    assert lines[1].startswith("65 reference: these shapes")
    assert lines[2] == (
        "eval reference: the module is in eval mode; the kernels were verified in training mode"
    )


def test_render_guard_names_the_optimized_and_the_shapes() -> None:
    text = render_guard(
        _verified((4, 8)) | {"shapes": ["as given"]}, optimized="row_softmax", init=[]
    )
    assert "kernelopt_guard(reference, row_softmax, KERNELOPT_VERIFIED, args)" in text
    assert "# Verified shape sets: as given." in text
    assert "\nfrom __future__ import" not in text  # it is appended below other code
    compile(text, "<guard>", "exec")


def test_a_problem_that_cannot_be_described_gets_a_comment_not_a_failure() -> None:
    problem = problem_from_source(textwrap.dedent(PROBLEM), "p.py")
    broken = type(problem)(problem.kind, problem.path, "def get_inputs(:\n", problem.entry, "p")
    text = guard_best_source(broken, CANDIDATE, "cpu")
    assert text.rstrip().splitlines()[-1].startswith("# KernelOPT guard not added:")


def test_a_guard_the_static_rules_refuse_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    # best.py must keep passing the verifier even if its rules tighten past the guard's text.
    from kernelopt_jupyter.deploy import guard as guard_module
    from kernelopt_jupyter.verify.static import StaticAnalysis

    monkeypatch.setattr(
        guard_module, "analyze_candidate", lambda text: StaticAnalysis(violations=["line 3: no"])
    )
    problem = problem_from_source(textwrap.dedent(PROBLEM), "p.py")
    text = guard_best_source(problem, CANDIDATE, "cpu")
    assert "KERNELOPT_VERIFIED" not in text
    assert text.rstrip().splitlines()[-1].endswith("static rules refuse it (line 3: no)")


NOTEBOOK = """
import runpy, sys, torch
# A notebook: the problem's cell, then the accepted cell, in one namespace.
ns = runpy.run_path(sys.argv[1])
ns = runpy.run_path(sys.argv[2], init_globals=ns)
guarded = ns["scale_shift"]
for n in (3000, 7):
    x = torch.randn(n)
    torch.testing.assert_close(guarded(x), x * 2.0 + 1.0)
    print(n, guarded.kernelopt_path)
print(guarded.reference is ns["_kernelopt_reference_scale_shift"])
"""


def test_accepted_cell_of_a_kernel_problem_guards_the_persons_function(tmp_path: Path) -> None:
    from deploy_cases import TRITON_CANDIDATE, TRITON_PROBLEM

    from kernelopt_jupyter.deploy.guard import accepted_cell_source

    problem = problem_from_source(textwrap.dedent(TRITON_PROBLEM), "p.py")
    cell = accepted_cell_source(problem, TRITON_CANDIDATE, "cpu")
    assert cell.rstrip().endswith(
        "scale_shift = kernelopt_guarded(_kernelopt_reference_scale_shift)"
    )
    (tmp_path / "problem_cell.py").write_text(textwrap.dedent(TRITON_PROBLEM))
    (tmp_path / "accepted_cell.py").write_text(cell)
    (tmp_path / "nb.py").write_text(NOTEBOOK)
    proc = subprocess.run(
        [sys.executable, str(tmp_path / "nb.py"), str(tmp_path / "problem_cell.py"),
         str(tmp_path / "accepted_cell.py")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TRITON_INTERPRET": "1"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == "3000 kernel" and lines[1].startswith("7 reference: these shapes")
    assert lines[2] == "True"
