"""The offline policy's rewrite and Inductor-configuration moves: proposed by pattern and by the
profile's cost model, built into gated candidates, and labelled with the move behind them."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from kernelopt_jupyter.agents.base import AgentContext, AgentIO, ExperienceItem, KernelUnit, Plan
from kernelopt_jupyter.agents.memory import ExperienceMemory
from kernelopt_jupyter.agents.offline import OfflinePolicy, _labelled, memory_action
from kernelopt_jupyter.agents.rewrites.moves import (
    FAMILY_KERNELS,
    INDUCTOR_MOVES,
    Shares,
    cost_shares,
    inductor_moves,
    rewrite_priority,
)
from kernelopt_jupyter.agents.rewrites.rules import BY_NAME
from kernelopt_jupyter.analysis.capture import knob_exists
from kernelopt_jupyter.candidate import Candidate
from kernelopt_jupyter.events import EventLog
from kernelopt_jupyter.problem import problem_from_source
from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

CONV_BN = '''"""Conv -> BatchNorm (eval) -> ReLU."""

import torch
import torch.nn as nn

KERNELOPT_MODE = "eval"  # an inference block: BatchNorm uses its running statistics


class Model(nn.Module):
    def __init__(self, c: int):
        super().__init__()
        self.conv = nn.Conv2d(c, 2 * c, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(2 * c)
        with torch.no_grad():
            self.bn.running_mean.normal_(0.0, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(1, 4, 12, 12)]


def get_init_inputs():
    return [4]
'''

ROW_NORM = '''"""Row normalisation: nothing to rewrite."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x / x.norm(dim=-1, keepdim=True)


def get_inputs():
    return [torch.randn(32, 300)]


def get_init_inputs():
    return []
'''


def _ctx(source: str, kernels: list[KernelUnit] | None = None, device: str = "cpu") -> AgentContext:
    problem = problem_from_source(source, "<test>")
    return AgentContext(
        problem=problem,
        device=device,
        baselines={"eager": None, "compile": None},
        kernels=kernels or [],
    )


def _io(tmp_path: Path) -> AgentIO:
    return AgentIO(EventLog(tmp_path / "events.jsonl"), "planner", step=0)


def _root(source: str = "class ModelNew: pass\n") -> Candidate:
    return Candidate("c0", source, None, "harvest", None, False, "Inductor harvest")


@pytest.fixture(scope="module")
def conv_bn_plans(tmp_path_factory: pytest.TempPathFactory) -> tuple[OfflinePolicy, list[Plan]]:
    """One policy and its plans for the conv+BN problem (the rewrite scan runs once)."""
    policy = OfflinePolicy()
    io = _io(tmp_path_factory.mktemp("plans"))
    return policy, policy.plan(_ctx(CONV_BN), None, _root(), 12, io)  # type: ignore[arg-type]


def test_planner_proposes_rewrites_whose_pattern_is_in_the_graph(
    conv_bn_plans: tuple[OfflinePolicy, list[Plan]], tmp_path: Path
) -> None:
    rewrites = [p for p in conv_bn_plans[1] if p.action == "graph_rewrite"]
    assert {p.params["rewrite"] for p in rewrites} == {"fold_batchnorm"}
    assert all(p.title.startswith("rewrite: ") for p in rewrites)
    assert {p.params["route"] for p in rewrites} == {"harvest", "eager"}
    assert "reassociation" in rewrites[0].rationale
    # A graph without any pattern gets no rewrite plan.
    plain = OfflinePolicy().plan(_ctx(ROW_NORM), None, _root(), 12, _io(tmp_path))  # type: ignore[arg-type]
    assert not [p for p in plain if p.action == "graph_rewrite"]


def test_rewrite_candidates_pass_the_gates(
    conv_bn_plans: tuple[OfflinePolicy, list[Plan]], tmp_path: Path
) -> None:
    policy, plans = conv_bn_plans
    ctx, io = _ctx(CONV_BN), _io(tmp_path)
    by_route = {p.params["route"]: p for p in plans if p.action == "graph_rewrite"}
    harvested = policy.execute(ctx, by_route["harvest"], _root(), None, io)
    eager = policy.execute(ctx, by_route["eager"], _root(), None, io)
    assert harvested.source and "@triton.jit" in harvested.source and not harvested.dispatch_only
    assert "fold BatchNorm" in harvested.explanation and "harvested" in harvested.explanation
    assert eager.source and eager.dispatch_only and "KERNELOPT_DISPATCH_ONLY = True" in eager.source
    report = verify_candidate(ctx.problem, eager.source, VerifyOptions(device="cpu", seeds=2))
    assert report.verdict == "pass", [g.detail for g in report.gates]
    # The harvested fold is a reassociation: the float64 referee has the last word on it (it
    # may refuse one on a tiny output's near-zero values), but gates 1-2 must hold.
    report = verify_candidate(ctx.problem, harvested.source, VerifyOptions(device="cpu", seeds=2))
    assert [g.status for g in report.gates[:2]] == ["pass", "pass"], report.gates[:2]


def test_memory_of_a_winning_rewrite_ranks_it_first(
    conv_bn_plans: tuple[OfflinePolicy, list[Plan]], tmp_path: Path
) -> None:
    memory = ExperienceMemory(None)
    memory.items.append(
        ExperienceItem("kind:module", "graph_rewrite:fold_batchnorm", 3.0, "folding won", "other")
    )
    policy = OfflinePolicy(memory)
    policy._scans = conv_bn_plans[0]._scans  # the same graph: reuse its scan
    plans = policy.plan(_ctx(CONV_BN), None, _root(), 12, _io(tmp_path))  # type: ignore[arg-type]
    assert plans[0].action == "graph_rewrite" and plans[0].params["rewrite"] == "fold_batchnorm"
    assert "memory" in plans[0].rationale


def _unit(name: str, kind: str, share: float, ops: list[str], source: str = "") -> KernelUnit:
    return KernelUnit(name=name, kind=kind, source=source, ops=ops, share=share)


def test_cost_model_reads_the_profile() -> None:
    ctx = _ctx(
        ROW_NORM,
        [
            _unit("extern_mm", "vendor", 0.7, ["aten.mm"]),
            _unit("triton_per_fused_0", "triton", 0.2, ["aten.sum"]),
            _unit("triton_poi_fused_1", "triton", 0.1, ["aten.add"], "YBLOCK: tl.constexpr"),
        ],
    )
    s = cost_shares(ctx)
    assert s.gemm == pytest.approx(0.7) and s.triton == pytest.approx(0.3)
    assert s.reductions == pytest.approx(0.2) and s.persistent and not s.looped and s.tiled_2d
    # GEMM-removing rewrites outrank folds, which outrank the epilogue; combos edge their best.
    assert rewrite_priority(["linear_reduction"], s) > rewrite_priority(["fold_batchnorm"], s)
    assert rewrite_priority(["fold_batchnorm"], s) > rewrite_priority(
        ["gemm_activation_epilogue"], s
    )
    assert rewrite_priority(["fold_batchnorm", "drop_identities"], s) > rewrite_priority(
        ["fold_batchnorm"], s
    )
    # The pool kernel alone goes before the pool split in two and then given to the kernel.
    assert rewrite_priority(["avg_pool_kernel"], s) > rewrite_priority(
        ["separable_avg_pool", "avg_pool_kernel"], s
    )
    assert rewrite_priority(["avg_pool_kernel"], s) > rewrite_priority(["separable_avg_pool"], s)
    # An op family's own kernel (a scan, a pool, a norm) goes before the folds.
    for name in FAMILY_KERNELS:
        assert rewrite_priority([name], s) > rewrite_priority(["fold_batchnorm"], s)
        assert name in BY_NAME and BY_NAME[name].kernels


def test_inductor_moves_follow_the_profile_and_the_device() -> None:
    kernels = [
        _unit("extern_mm", "vendor", 0.5, ["aten.addmm"]),
        _unit("triton_per_fused_0", "triton", 0.3, ["aten.sum"]),
        _unit("triton_poi_fused_1", "triton", 0.1, ["aten.add"]),
        _unit("triton_poi_fused_2", "triton", 0.1, ["aten.mul"]),
    ]
    gpu = {m.label for _, m in inductor_moves(_ctx(ROW_NORM, kernels, "cuda"))}
    assert "coordinate_descent_tuning" in gpu and "aggressive_fusion" in gpu
    assert "looped reductions (triton.persistent_reductions off)" in gpu
    assert "no split reductions (split_reductions off)" not in gpu  # no looped reduction here
    assert "combo_kernels" not in gpu  # three Triton kernels: below its threshold
    # Nothing is timed on the CPU: no configuration move is proposed there.
    assert inductor_moves(_ctx(ROW_NORM, kernels, "cpu")) == []
    # No Triton kernel at all: only dispatch-level moves remain, no configuration move.
    vendor_only = [_unit("extern_mm", "vendor", 1.0, ["aten.mm"])]
    assert not inductor_moves(_ctx(ROW_NORM, vendor_only, "cuda"))


def test_knobs_are_checked_against_this_torch() -> None:
    assert knob_exists("triton.persistent_reductions") and knob_exists("coordinate_descent_tuning")
    assert not knob_exists("triton.no_such_option") and not knob_exists("no_such_section.x")
    for move in INDUCTOR_MOVES:  # every knob named in the table exists in torch 2.13 (CI)
        assert all(knob_exists(k) for k in move.overrides), move.label


def test_unknown_or_absent_configuration_is_a_clean_no(tmp_path: Path) -> None:
    policy = OfflinePolicy()
    plan = Plan("c0.p0", "inductor config: x", "why", "inductor_config", params={"config": "nope"})
    edit = policy.execute(_ctx(ROW_NORM), plan, _root(), None, _io(tmp_path))
    assert edit.source is None and "unknown Inductor configuration" in edit.explanation


def test_inductor_config_move_harvests_different_code(tmp_path: Path) -> None:
    from kernelopt_jupyter.analysis.harvest import harvest_problem

    ctx = _ctx(ROW_NORM)
    root = harvest_problem(ctx.problem, "cpu", variants=False)
    assert root.ok
    policy = OfflinePolicy()
    label = "looped reductions (triton.persistent_reductions off)"
    plan = Plan(
        "c0.p0", f"inductor config: {label}", "why", "inductor_config", params={"config": label}
    )
    edit = policy.execute(ctx, plan, _root(root.source), None, _io(tmp_path))
    assert edit.source is not None and edit.source != root.source, edit.explanation
    assert label in edit.explanation
    report = verify_candidate(ctx.problem, edit.source, VerifyOptions(device="cpu", seeds=2))
    assert report.verdict == "pass"


def test_labels_and_memory_keys_name_the_move() -> None:
    child = Candidate("c3", "", "c1", "executor", "c1.p0", False, "rewrite: fold BatchNorm")
    assert _labelled("CUDA graph", child) == "CUDA graph on [rewrite: fold BatchNorm]"
    assert _labelled("CUDA graph", _root()) == "CUDA graph"
    # the same move on its own result counts up instead of nesting
    retile = "launch config: retune k0"
    once = Candidate(
        "c4", "", "c3", "executor", "c3.p0", False, f"{retile} on [rewrite: fold BatchNorm]"
    )
    twice = Candidate("c5", "", "c4", "executor", "c4.p0", False, _labelled(retile, once))
    assert twice.note == f"{retile} (x2) on [rewrite: fold BatchNorm]"
    assert _labelled(retile, twice) == f"{retile} (x3) on [rewrite: fold BatchNorm]"
    assert _labelled("CUDA graph", twice) == f"CUDA graph on [{twice.note}]"
    plan = Plan(
        "p", "t", "r", "graph_rewrite", params={"rewrite": "fold_batchnorm", "route": "harvest"}
    )
    assert memory_action(plan) == "graph_rewrite:fold_batchnorm"
    assert memory_action(Plan("p", "t", "r", "cuda_graph")) == "cuda_graph"


def test_shares_default_to_counts_when_unmeasured() -> None:
    ctx = _ctx(ROW_NORM, [KernelUnit("k0", "triton"), KernelUnit("k1", "vendor", ops=["aten.mm"])])
    s = cost_shares(ctx)
    assert s == Shares(triton=0.5, gemm=0.5, kernels=1, vendor=1)


def test_eager_route_drops_by_the_gap_when_compile_is_far_ahead(
    conv_bn_plans: tuple[OfflinePolicy, list[Plan]], tmp_path: Path
) -> None:
    """VGG on the H200: torch.compile 1.66x faster than eager, and the BatchNorm fold's eager
    routes (0.64x of the harvest) took the search's first slots. The gap now counts against
    the eager route, not against the harvested one."""
    policy, io = conv_bn_plans[0], _io(tmp_path)  # the fixture's policy has the scan cached

    def routes(eager: float, compiled: float) -> dict[str, float]:
        ctx = _ctx(CONV_BN)
        ctx.baselines = {"eager": eager, "compile": compiled}
        return {route: p for p, _, route in policy._rewrite_options(ctx, io)}

    even, behind = routes(1.0, 1.0), routes(1.66, 1.0)
    assert behind["harvest"] == pytest.approx(even["harvest"])
    assert behind["eager"] == pytest.approx(even["eager"] - 2 * math.log(1.66))
    assert behind["harvest"] > behind["eager"] + 1.0
    # Within 10% the routes rank as before.
    assert routes(1.05, 1.0) == even
