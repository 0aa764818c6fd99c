"""Mixed candidates: KernelOPT's own kernel where a rule takes an op, PyTorch ops for the rest
of the forward. The scan offers them (marked dispatch-only, saying what runs beside the
kernel), ranks them below kernels alone, and the verifier passes them on the CPU: the kernel's
launches are counted and the PyTorch ops are judged as the candidate's work."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from kernelopt_jupyter.agents.rewrites.task import RewriteScan, scan
from kernelopt_jupyter.candidate import is_dispatch_only
from kernelopt_jupyter.problem import problem_from_source
from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

_NORM_THEN = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.norm = nn.LayerNorm(features)

    def forward(self, x):
        return {tail}


def get_inputs():
    return [torch.randn(3, 5, 33)]


def get_init_inputs():
    return [33]
"""


def _problem(tail: str) -> str:
    return _NORM_THEN.format(tail=tail)


@pytest.mark.parametrize(
    ("tail", "op"),
    [
        ("torch.logsumexp(self.norm(x), dim=-1)", "logsumexp"),
        ("self.norm(x).softmax(dim=1) * 2.0", "softmax"),
        ("torch.std(self.norm(x), dim=-1)", "std"),
    ],
)
def test_a_kernel_beside_pytorch_ops_is_offered_as_a_mixed_candidate(tail: str, op: str) -> None:
    found = scan(_problem(tail), "<norm>")
    mixed = [m for m in found.matches if m.names == ["layer_norm_kernel"]]
    assert mixed, (found.error, [m.names for m in found.matches])
    match = mixed[0]
    assert match.kernels and match.beside == op, (match.beside, match.title)
    assert f"PyTorch ops for the rest ({op})" in match.title
    assert is_dispatch_only(match.eager_source)
    assert "Mixed candidate" in match.eager_source and "own_" in match.eager_source
    assert found.mixed.get("layer_norm_kernel") == op


def test_kernels_alone_are_not_marked_dispatch_only() -> None:
    found = scan(_problem("torch.relu(self.norm(x))"), "<norm>")
    alone = [m for m in found.matches if "layer_norm_kernel" in m.names]
    assert alone and not alone[0].beside
    assert not is_dispatch_only(alone[0].eager_source)
    assert not found.mixed


def test_a_mixed_candidate_passes_the_gates_and_launches_its_kernel() -> None:
    source = _problem("torch.logsumexp(self.norm(x), dim=-1)")
    match = next(m for m in scan(source, "<norm>").matches if "layer_norm_kernel" in m.names)
    problem = problem_from_source(source, "<norm>")
    report = verify_candidate(problem, match.eager_source, VerifyOptions(seed=3))
    assert report.verdict == "pass", [(g.name, g.status, g.detail) for g in report.gates]
    static = next(g for g in report.gates if g.name == "static")
    assert "Triton kernel" in static.detail and "own_" in static.detail, static.detail


def test_the_policy_ranks_a_mixed_candidate_below_kernels_alone(tmp_path: Path) -> None:
    from kernelopt_jupyter.agents.base import AgentContext, AgentIO
    from kernelopt_jupyter.agents.offline import MIXED_PENALTY, OfflinePolicy
    from kernelopt_jupyter.events import EventLog

    alone_source = _problem("torch.relu(self.norm(x))")
    alone = next(m for m in scan(alone_source, "<n>").matches if m.names == ["layer_norm_kernel"])
    source = _problem("torch.logsumexp(self.norm(x), dim=-1)")
    mixed = next(m for m in scan(source, "<n>").matches if m.names == ["layer_norm_kernel"])
    policy = OfflinePolicy()
    policy._scans[source] = RewriteScan(matches=[alone, mixed])
    io = AgentIO(EventLog(tmp_path / "events.jsonl"), "planner", step=0)

    def ranks(eager: float, compiled: float) -> list[tuple[float, str]]:
        ctx = AgentContext(
            problem=problem_from_source(source, "<n>"),
            device="cpu",
            baselines={"eager": eager, "compile": compiled},
            kernels=[],
        )
        return [(p, m.beside) for p, m, _ in policy._rewrite_options(ctx, io)]

    even = dict((b, p) for p, b in ranks(1.0, 1.0))
    assert even[""] - even["logsumexp"] == pytest.approx(MIXED_PENALTY)
    # Where torch.compile is far ahead of eager, the PyTorch rest runs op by op: further back.
    behind = dict((b, p) for p, b in ranks(2.0, 1.0))
    assert behind[""] == pytest.approx(even[""])
    assert behind["logsumexp"] == pytest.approx(even["logsumexp"] - 2 * math.log(2.0))
