"""The offline Planner's ordering for a short GPU search: graphed rewrites first where launches
dominate, compile-heavy moves skipped late (``budget_left``), kernel moves on the parent's own
kernels, and the experience memory keyed by op pattern."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_offline_moves import CONV_BN, ROW_NORM, _ctx, _io, _root, _unit
from test_search import ROOT

from kernelopt_jupyter.agents.base import ExperienceItem, KernelUnit, Plan
from kernelopt_jupyter.agents.memory import ExperienceMemory
from kernelopt_jupyter.agents.offline import OfflinePolicy, move_cost_s, patterns_of
from kernelopt_jupyter.candidate import Candidate
from kernelopt_jupyter.verify import VerifyOptions, verify_candidate


@pytest.fixture(scope="module")
def scanned() -> OfflinePolicy:
    """A policy that has scanned the conv+BN problem once (the scan is a worker)."""
    policy = OfflinePolicy()
    policy._scan(_ctx(CONV_BN), _io_once())
    return policy


def _io_once():  # type: ignore[no-untyped-def]
    import tempfile

    return _io(Path(tempfile.mkdtemp()))


def _policy(scanned: OfflinePolicy, memory: ExperienceMemory | None = None) -> OfflinePolicy:
    policy = OfflinePolicy(memory)
    policy._scans = scanned._scans
    return policy


def _launch_bound_ctx(**kw: object):  # type: ignore[no-untyped-def]
    ctx = _ctx(CONV_BN, [_unit("extern_conv", "vendor", 0.6, ["aten.convolution"])], "cuda")
    ctx.baselines = {"eager": 0.05, "compile": 0.06}
    for k, v in kw.items():
        setattr(ctx, k, v)
    return ctx


def test_a_launch_bound_rewrite_comes_first_already_graphed(
    scanned: OfflinePolicy, tmp_path: Path
) -> None:
    policy = _policy(scanned)
    ctx = _launch_bound_ctx()
    plans = policy.plan(ctx, None, _root(), 8, _io(tmp_path))  # type: ignore[arg-type]
    rewrites = [p for p in plans if p.action == "graph_rewrite"]
    first = rewrites[0]  # the graphed eager rewrite leads the rewrites, the plain one after
    assert first.action == "graph_rewrite" and first.params.get("graphed") is True
    assert first.title.endswith("in a CUDA graph") and first.params["route"] == "eager"
    plain = [p for p in rewrites if p.params["route"] == "eager" and not p.params.get("graphed")]
    assert plain and plans.index(first) < plans.index(plain[0])
    assert plans.index(first) <= 1  # among the first two plans (with the CUDA graph)
    edit = policy.execute(ctx, first, _root(), None, _io(tmp_path))
    assert edit.source is not None and "KernelOPT: CUDA-graph capture" in edit.source
    assert "_refresh_before_replay" in edit.source and edit.dispatch_only
    # Off the GPU (nothing to capture) no graphed variant is offered.
    cpu = _policy(scanned).plan(_ctx(CONV_BN), None, _root(), 8, _io(tmp_path))  # type: ignore[arg-type]
    assert not [p for p in cpu if p.params.get("graphed")]


def test_moves_that_need_a_compile_are_skipped_late(scanned: OfflinePolicy, tmp_path: Path) -> None:
    kernels = [
        _unit("extern_conv", "vendor", 0.6, ["aten.convolution"]),
        _unit("triton_poi_fused_0", "triton", 0.4, ["aten.relu"]),
    ]
    early = _launch_bound_ctx(kernels=kernels, budget_left=500.0)
    late = _launch_bound_ctx(kernels=kernels, budget_left=15.0)
    io = _io(tmp_path)
    many = _policy(scanned).plan(early, None, _root(), 30, io)  # type: ignore[arg-type]
    few = _policy(scanned).plan(late, None, _root(), 30, io)  # type: ignore[arg-type]
    assert any(move_cost_s(p.action, p.params) for p in many)
    assert few and not any(move_cost_s(p.action, p.params) for p in few)
    assert {p.action for p in few} >= {"graph_rewrite", "cuda_graph"}  # cheap moves remain
    assert move_cost_s("inductor_config", {"config": "coordinate_descent_tuning"}) > move_cost_s(
        "inductor_config", {"config": "aggressive_fusion"}
    )


def test_kernel_moves_use_the_parents_own_kernels(tmp_path: Path) -> None:
    ctx = _ctx(
        ROW_NORM,
        [KernelUnit("triton_red_fused_div_0", "triton", share=0.9, bound="memory")],
        "cuda",
    )
    parent = Candidate("c2", ROOT, "c0", "executor", "c0.p1", False, "rewrite: something")
    plans = OfflinePolicy().plan(ctx, None, parent, 12, _io(tmp_path))  # type: ignore[arg-type]
    kernel_plans = [p for p in plans if p.action == "retile"]
    assert kernel_plans and all(p.params["kernel"] == "k_relu" for p in kernel_plans)
    body = [p for p in kernel_plans if p.params.get("body") == "evict_first"]
    assert body and "kernel body" in body[0].title
    edit = OfflinePolicy().execute(ctx, body[0], parent, None, _io(tmp_path))
    assert edit.source is not None and "evict_first" in edit.source


def test_the_kernel_body_move_passes_the_gates(tmp_path: Path) -> None:
    from test_search import PROBLEM

    from kernelopt_jupyter.problem import problem_from_source

    problem = problem_from_source(PROBLEM, "relu2.py")
    ctx = _ctx(ROW_NORM)
    ctx.problem = problem
    plan = Plan(
        "p", "kernel body", "r", "retile", params={"kernel": "k_relu", "body": "evict_first"}
    )
    parent = Candidate("c0", ROOT, None, "harvest", None, False, "harvest")
    edit = OfflinePolicy().execute(ctx, plan, parent, None, _io(tmp_path))
    assert edit.source is not None
    report = verify_candidate(problem, edit.source, VerifyOptions(device="cpu", seeds=2))
    assert report.verdict == "pass", [g.detail for g in report.gates]


def test_memory_keys_op_patterns_and_graphed_moves(scanned: OfflinePolicy, tmp_path: Path) -> None:
    ctx = _launch_bound_ctx()
    tags = patterns_of(ctx)
    assert "op:convolution" in tags and "launch-bound" in tags
    memory = ExperienceMemory(None)
    # A lesson learnt elsewhere on a convolution: the plain CUDA graph won big there.
    memory.items.append(ExperienceItem("op:convolution", "cuda_graph", 4.0, "graph won", "other"))
    plans = _policy(scanned, memory).plan(ctx, None, _root(), 8, _io(tmp_path))  # type: ignore[arg-type]
    assert plans[0].action == "cuda_graph" and "memory" in plans[0].rationale
    graphed = Plan(
        "p", "t", "r", "graph_rewrite", params={"rewrite": "fold_batchnorm", "graphed": True}
    )
    from kernelopt_jupyter.agents.offline import memory_action

    assert memory_action(graphed) == "graph_rewrite:fold_batchnorm+graph"


def test_an_autotuning_compile_is_costed_from_the_profile() -> None:
    """Coordinate descent or max-autotune costs a base plus a template search per vendor GEMM
    or convolution plus its benchmark runs (the H200's max-autotune compiles: 11 s for a
    LayerNorm, 61-69 s for a 16k GEMM): with 40 s left a reduction-only forward still gets its
    tuning move, a forward with a 170 ms GEMM does not; without a profile the flat cost holds."""
    from kernelopt_jupyter.agents.offline import AUTOTUNE_S, GATE_S, autotune_cost_s

    norm = [KernelUnit("triton_red_fused_native_layer_norm_0", "triton", share=1.0, ms=0.38)]
    small_conv = [
        KernelUnit("extern_conv", "vendor", ops=["aten.convolution"], share=0.8, ms=0.6),
        *norm,
    ]
    big_gemm = [KernelUnit("extern_mm", "vendor", ops=["aten.mm"], share=1.0, ms=170.0)]
    cd = {"config": "coordinate_descent_tuning"}
    assert move_cost_s("inductor_config", cd, norm) + GATE_S < 40.0
    assert move_cost_s("inductor_config", cd, small_conv) + GATE_S < 40.0
    assert move_cost_s("inductor_config", cd, big_gemm) + GATE_S > 40.0
    assert autotune_cost_s(None) == AUTOTUNE_S == move_cost_s("inductor_config", cd)
    assert move_cost_s("inductor_config", {"config": "aggressive_fusion"}, big_gemm) == 20.0


def _reduction_plans(tmp_path: Path, budget_left: float | None, names: list[str]) -> list[Plan]:
    ctx = _ctx(
        ROW_NORM,
        [KernelUnit(n, "triton", share=1.0 / len(names), bound="memory") for n in names],
        "cuda",
    )
    ctx.baselines = {"eager": 1.0, "compile": 0.5}
    ctx.budget_left = budget_left
    root = Candidate("c0", ROOT, None, "harvest", None, False, "Inductor harvest")
    return OfflinePolicy().plan(ctx, None, root, 30, _io(tmp_path))  # type: ignore[arg-type]


def _first(plans: list[Plan], text: str) -> int:
    return next(i for i, p in enumerate(plans) if text in p.title)


def test_under_a_tight_deadline_an_edit_goes_before_a_lower_ranked_compile(
    tmp_path: Path,
) -> None:
    """Seen on the H200: with 32 s left, three Inductor configurations of a one-kernel
    reduction (11-13 s each, all giving the default code) took the rest of the search and the
    launch configuration after them never ran. With time for every compile the priorities
    stand; under a deadline that cannot fit them, a compile ranked a little above an edit
    goes after it, and the top-ranked compile still goes first."""
    kernel = ["triton_red_fused_div_0"]
    relaxed = _reduction_plans(tmp_path, None, kernel)
    tight = _reduction_plans(tmp_path, 32.0, kernel)
    assert _first(relaxed, "2-D tiling") < _first(relaxed, "launch config")
    assert _first(tight, "launch config") < _first(tight, "2-D tiling")
    assert _first(tight, "coordinate_descent") < _first(tight, "launch config")
    assert [p.title for p in _reduction_plans(tmp_path, 500.0, kernel)] == [
        p.title for p in relaxed
    ]


def test_split_reductions_off_needs_a_split_reduction(tmp_path: Path) -> None:
    """Un-splitting changes code only where Inductor split a reduction into a partial and a
    final kernel: with one reduction kernel the move is not proposed."""
    one = _reduction_plans(tmp_path, None, ["triton_red_fused_div_0"])
    two = _reduction_plans(tmp_path, None, ["triton_red_fused_sum_0", "triton_per_fused_sum_1"])
    assert not [p for p in one if "split_reductions" in p.title]
    assert [p for p in two if "split_reductions" in p.title]
