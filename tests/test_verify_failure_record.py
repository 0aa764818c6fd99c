"""What a failing candidate's correctness record says: only what is true of that candidate.

A pure-PyTorch candidate launches no kernel, so no hint about races between a kernel's
programs; the error reported is the failing call's, and none where nothing was compared."""

from __future__ import annotations

from _verify_corpus import problem

from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

#: A dispatch-only candidate 50% off the reference: it fails the first comparison.
WRONG_TORCH_ONLY = """
import torch
import torch.nn as nn

KERNELOPT_DISPATCH_ONLY = True


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.scale = nn.Parameter(torch.empty(features))

    def forward(self, x, y):
        return torch.addcmul(y, torch.relu(x), self.scale) * 1.5
"""

#: Its output has the wrong shape: nothing can be compared.
WRONG_SHAPE = WRONG_TORCH_ONLY.replace(") * 1.5", ")[:, :-1]")


def test_a_wrong_pure_torch_candidate_gets_no_race_hint_and_its_own_error() -> None:
    report = verify_candidate(
        problem("scaled_residual"), WRONG_TORCH_ONLY, VerifyOptions(device="cpu"), "wrong.py"
    )
    gate = report.gate("correctness")
    assert gate is not None and gate.status == "fail", report.gates
    assert "race" not in gate.detail, gate.detail
    err = gate.metrics["max_abs_err"]
    assert err is not None and err > 0.1  # the failing call's error, not 0.0


def test_a_candidate_failing_before_any_comparison_reports_no_error() -> None:
    report = verify_candidate(
        problem("scaled_residual"), WRONG_SHAPE, VerifyOptions(device="cpu"), "shape.py"
    )
    gate = report.gate("correctness")
    assert gate is not None and gate.status == "fail", report.gates
    assert gate.metrics["max_abs_err"] is None
