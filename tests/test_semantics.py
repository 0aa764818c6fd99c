"""The reference runs as constructed (as KernelBench does) unless eval is asked for; a reference
that is random in its mode is refused with a one-line error."""

from __future__ import annotations

import pytest

from kernelopt_jupyter.problem import ProblemError, materialize, problem_from_source, with_mode
from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

BN = """
import torch
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm1d(8)
        with torch.no_grad():  # running statistics far from the batch's: the modes differ
            self.bn.running_mean.fill_(3.0)
            self.bn.running_var.fill_(9.0)
    def forward(self, x):
        return self.bn(x)
def get_inputs():
    return [torch.randn(64, 8)]
"""

# BatchNorm with the batch's own statistics, i.e. training-mode semantics, updating the
# running statistics as the reference's forward does.
BATCH_STATS = """
import torch
import torch.nn.functional as F
KERNELOPT_DISPATCH_ONLY = True
class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm1d(8)
    def forward(self, x):
        bn = self.bn
        bn.num_batches_tracked.add_(1)
        return F.batch_norm(
            x, bn.running_mean, bn.running_var, bn.weight, bn.bias, training=True
        )
"""
# The same output, but the running statistics are never updated.
STATS_NOT_KEPT = BATCH_STATS.replace("bn.running_mean, bn.running_var", "None, None")

DROPOUT = """
import torch
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = torch.nn.Dropout(0.25)
    def forward(self, x):
        return self.drop(x) * 2
def get_inputs():
    return [torch.randn(16)]
"""


def test_the_reference_runs_as_constructed_unless_eval_is_asked() -> None:
    built = problem_from_source(BN, "bn.py")
    assert built.mode == "as-constructed"
    assert materialize(built).make_model().training
    inference = with_mode(built, "eval")
    assert inference.mode == "eval" and 'KERNELOPT_MODE = "eval"' in inference.source
    assert not materialize(inference).make_model().training
    # the declaration survives a rebuild from the text (every worker reads the source)
    assert problem_from_source(inference.source, "bn.py").mode == "eval"


def test_a_reference_random_in_its_mode_is_refused_in_one_line() -> None:
    with pytest.raises(ProblemError) as err:
        problem_from_source(DROPOUT, "drop.py")
    message = str(err.value)
    assert message.startswith("drop.py: Dropout(p=0.25) at 'drop'") and "--mode eval" in message
    assert "\n" not in message
    assert problem_from_source(DROPOUT, "drop.py", mode="eval").mode == "eval"
    with pytest.raises(ProblemError, match="KERNELOPT_MODE must be"):
        problem_from_source(DROPOUT + "\nKERNELOPT_MODE = 'train'\n", "drop.py")


def test_batch_statistics_pass_as_constructed_and_fail_in_eval() -> None:
    options = VerifyOptions(device="cpu", seeds=1, run_performance=False)
    built = problem_from_source(BN, "bn.py")
    as_built = verify_candidate(built, BATCH_STATS, options)
    assert [g.status for g in as_built.gates[:2]] == ["pass", "pass"], as_built.to_dict()
    checked = as_built.gates[1].metrics.get("state_checked_calls")
    assert checked and checked >= 1, as_built.gates[1].metrics  # running statistics compared
    in_eval = verify_candidate(with_mode(built, "eval"), BATCH_STATS, options)
    assert in_eval.failed_gate == "correctness", in_eval.to_dict()


def test_running_statistics_the_reference_updates_are_compared() -> None:
    options = VerifyOptions(device="cpu", seeds=1, run_performance=False)
    report = verify_candidate(problem_from_source(BN, "bn.py"), STATS_NOT_KEPT, options)
    correctness = report.gate("correctness")
    assert correctness is not None and correctness.status == "fail", report.to_dict()
    assert "updates bn.running_mean" in correctness.detail, correctness.detail


SHARED_BN = """
import torch
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.BatchNorm1d(16)
        self.b = self.a  # one BatchNorm applied twice, registered under two names
    def forward(self, x):
        return self.b(torch.relu(self.a(x)))
def get_inputs():
    return [torch.randn(64, 16)]
"""


def test_a_module_registered_twice_has_its_state_compared_under_both_names() -> None:
    # The state dict names the shared BatchNorm's buffers under `a.` and `b.`; the candidate's
    # harness walked each module once and found only one of them ("does not have").
    candidate = "KERNELOPT_DISPATCH_ONLY = True\n" + SHARED_BN.split("def get_inputs")[0].replace(
        "class Model(", "class ModelNew("
    )
    options = VerifyOptions(device="cpu", seeds=1, run_performance=False)
    report = verify_candidate(problem_from_source(SHARED_BN, "shared.py"), candidate, options)
    correctness = report.gate("correctness")
    assert correctness is not None and correctness.status == "pass", report.to_dict()
    assert correctness.metrics.get("state_checked_calls", 0) >= 1, correctness.metrics
