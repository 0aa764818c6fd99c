"""The offline policy spends its minute by the roofline: units are put in op families, moves on
the kernels furthest from their roofs go first, the experience memory remembers which move won
on which family, and the KernelBench dev record splits each level's gain over the kinds of move.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
import types
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from test_offline_moves import CONV_BN, ROW_NORM, _ctx, _io, _root

from kernelopt_jupyter.agents.base import (
    AgentContext,
    AgentIO,
    ExperienceItem,
    KernelUnit,
    Plan,
    StepRecord,
)
from kernelopt_jupyter.agents.headroom import (
    STATIC_FRACTION,
    Aim,
    family_lines,
    headroom,
    max_gain,
    roof_term,
)
from kernelopt_jupyter.agents.memory import FAMILY_BOOST_CAP, ExperienceMemory
from kernelopt_jupyter.agents.offline import OfflinePolicy
from kernelopt_jupyter.agents.op_families import (
    family_of_ops,
    graph_families,
    node_family,
    unit_family,
)
from kernelopt_jupyter.agents.prompts import kernel_table
from kernelopt_jupyter.agents.rewrites.canonical import canonicalize
from kernelopt_jupyter.agents.rewrites.graph import trace
from kernelopt_jupyter.agents.rewrites.task import RewriteMatch, RewriteScan, scan
from kernelopt_jupyter.analysis.cache import gpu_name
from kernelopt_jupyter.analysis.dispatch import profile_problem
from kernelopt_jupyter.candidate import Candidate
from kernelopt_jupyter.gpu_peaks import roof_name
from kernelopt_jupyter.problem import load_problem

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "problems"

# ----------------------------------------------------------------------- profile fixtures
#: Units as the CPU dispatch map gives them (``kernelopt profile --json``'s records, trimmed).
FUSED_NORM = KernelUnit(
    "triton_per_fused__softmax_gelu_mean_mul_native_layer_norm_0",
    "triton",
    ops=["aten.gelu", "aten.native_layer_norm", "aten._softmax", "aten.mul", "aten.mean"],
)
WRITTEN_OUT_RMS = KernelUnit(
    "triton_per_fused_add_div_mean_pow_sqrt_0",
    "triton",
    ops=["aten.pow", "aten.mean", "aten.add", "aten.sqrt", "aten.div"],
)
ADDMM = KernelUnit(
    "vendor_0_addmm",
    "vendor",
    source="extern_kernels.addmm(arg2_1, arg0_1, reinterpret_tensor(arg1_1, (64, 48)))",
    ops=["aten.t", "aten.addmm"],
    library="cuBLAS",
)
CONV_T = KernelUnit(
    "vendor_0_convolution",
    "vendor",
    source="buf0 = extern_kernels.convolution(arg1_1, arg0_1, stride=(2, 2), padding=(1, 1), "
    "dilation=(1, 1), transposed=True, output_padding=(1, 1), groups=1, bias=None)",
    # A vendor unit lists the ops fused around it too: its own call says what it is.
    ops=["aten.relu", "aten.convolution"],
    library="cuDNN",
)
POOL_CALL = KernelUnit(
    "vendor_1_avg_pool3d",
    "vendor",
    source="torch.ops.aten.avg_pool3d.default(buf2, [3, 3, 3], [2, 2, 2])",
    ops=["aten.avg_pool3d"],
)


def test_profile_units_are_put_in_their_op_family() -> None:
    assert unit_family(FUSED_NORM) == "normalisation"  # a fused norm, softmax and GELU
    assert unit_family(WRITTEN_OUT_RMS) == "normalisation"  # mean, sqrt, div: a norm op by op
    assert unit_family(ADDMM) == "gemm"
    assert unit_family(CONV_T) == "conv-transpose"  # not the ReLU fused before it
    assert unit_family(POOL_CALL) == "pooling"
    plain_conv = KernelUnit("v", "vendor", source=CONV_T.source.replace("True", "False"),
                            ops=["aten.convolution"], library="cuDNN")  # fmt: skip
    assert unit_family(plain_conv) == "conv"
    # Inductor's relayout of a convolution's operand and a GEMM's epilogue list the op; the
    # vendor call does the product, so they are data movement and elementwise work.
    relayout = KernelUnit("triton_poi_fused_convolution_0", "triton", ops=["aten.convolution"],
                          source="x = tl.load(in_ptr0 + i)\ntl.store(out_ptr0 + j, x)")  # fmt: skip
    assert unit_family(relayout) == "elementwise"
    epilogue = KernelUnit("triton_poi_fused_addmm_relu_0", "triton",
                          ops=["aten.addmm", "aten.relu"], source="tl.maximum(0, x)")  # fmt: skip
    assert unit_family(epilogue) == "elementwise"
    template = KernelUnit("triton_tem_fused_mm_0", "triton", ops=["aten.mm"],
                          source="acc += tl.dot(a, b)")  # fmt: skip
    assert unit_family(template) == "gemm"
    assert family_of_ops(["aten.cumsum", "aten.mul"]) == "scan"
    assert family_of_ops(["aten.argmax"]) == "arg-reduction"
    assert family_of_ops(["aten.amax", "aten.sub", "aten.exp", "aten.sum", "aten.div"]) == "softmax"
    assert family_of_ops(["aten._log_softmax", "aten.nll_loss_forward"]) == "softmax"
    assert family_of_ops(["aten.nll_loss_forward"]) == "loss"
    assert family_of_ops(["aten.sum", "aten.mul"]) == "reduction"
    assert family_of_ops(["prims.convert_element_type", "aten.add"]) == "elementwise"
    assert family_of_ops(["aten.view", "aten.permute"]) is None  # data movement only
    # A Triton problem's own kernel has no ATen ops: its tl.* calls say what it does.
    triton = {
        "acc += tl.dot(a, b)": "gemm",
        "y = tl.cumsum(x, axis=0)": "scan",
        "i = tl.argmax(x, 0)": "arg-reduction",
        "m = tl.max(x, 0)\ne = tl.exp(x - m)\ny = e / tl.sum(e, 0)": "softmax",
        "s = tl.sum(x * x, 0)\ny = x * tl.rsqrt(s)": "normalisation",
        "tl.store(o, tl.load(p) * 2)": "elementwise",
    }
    for body, family in triton.items():
        assert unit_family(KernelUnit("k", "triton", source=body)) == family, body


class _Graph(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.ConvTranspose3d(3, 4, 3, stride=2)
        self.norm = nn.GroupNorm(2, 4)
        self.pool = nn.MaxPool3d(2)
        self.proj = nn.Linear(4, 6)

    def forward(self, x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        y = self.pool(self.norm(self.up(x))).mean((2, 3, 4))
        z = torch.softmax(self.proj(y) @ torch.ones(6, 6), dim=-1).cumsum(1)
        return z.argmin(1).float().sum() + F.mse_loss(z, target) + F.conv1d(z[:, None], z[:1, None])


def test_graph_nodes_are_put_in_their_op_family() -> None:
    gm = trace(_Graph(), [torch.randn(2, 3, 4, 4, 4), torch.randn(2, 6)])
    by_node = {str(n.target): node_family(gm, n) for n in gm.graph.nodes}
    assert by_node["up"] == "conv-transpose" and by_node["norm"] == "normalisation"
    assert by_node["pool"] == "pooling" and by_node["proj"] == "gemm"
    # In the canonical spelling the rules match (the pool layer a functional call) alike.
    canonicalize(gm)
    counts = graph_families(gm)
    for family in ("gemm", "pooling", "softmax", "scan", "arg-reduction", "reduction", "loss"):
        assert counts[family] >= 1, (family, counts)
    assert counts["conv"] == 1 and counts["conv-transpose"] == 1
    assert None not in counts


def test_a_rewrite_targets_the_families_it_took_nodes_from() -> None:
    found = scan(CONV_BN, "<test>")
    fold = next(m for m in found.matches if m.names == ["fold_batchnorm"])
    assert fold.families == ["normalisation"]  # the BatchNorm goes; the conv stays a conv


# ----------------------------------------------------------------------- the ranking
POOL = "triton_poi_fused_max_pool2d_with_indices_0"
NORM = "triton_per_fused_native_layer_norm_1"


def _units(pool_roof: float | None, norm_roof: float | None, ms: float = 0.5) -> list[KernelUnit]:
    timed = ms if pool_roof is not None else None
    return [
        KernelUnit(POOL, "triton", ops=["aten.max_pool2d_with_indices"], share=0.5, ms=timed,
                   roofline_fraction=pool_roof),
        KernelUnit(NORM, "triton", ops=["aten.native_layer_norm"], share=0.5, ms=timed,
                   roofline_fraction=norm_roof),
    ]  # fmt: skip


def _match(name: str, family: str) -> RewriteMatch:
    """A rewrite to one of KernelOPT's own kernels, as the scan reports it (never built here)."""
    return RewriteMatch(
        names=[name], title=f"rewrite: {name}", exact="bit-exact", sites=1, problem_source="",
        eager_source="class ModelNew: pass\n", eager_only=True, kernels=True, families=[family],
    )  # fmt: skip


def _policy(ctx: AgentContext, memory: ExperienceMemory | None = None) -> OfflinePolicy:
    """A policy whose rewrite scan of ``ctx``'s problem found a pooling kernel and a norm
    kernel, listed norm first (a tie keeps the scan's order)."""
    policy = OfflinePolicy(memory)
    policy._scans[ctx.problem.source] = RewriteScan(
        matches=[_match("layer_norm_kernel", "normalisation"), _match("max_pool_kernel", "pooling")]
    )
    return policy


def _gpu_ctx(units: list[KernelUnit], compile_ms: float | None = 1.0) -> AgentContext:
    ctx = _ctx(ROW_NORM, units, "cuda")
    ctx.baselines = {"eager": 1.2, "compile": compile_ms}
    ctx.gpu = "NVIDIA H100 80GB HBM3"
    return ctx


def _rewrites(plans: list[Plan]) -> list[str]:
    return [str(p.params["rewrite"]) for p in plans if p.action == "graph_rewrite"]


def _said(io: AgentIO) -> str:
    return "".join(str(e.data.get("delta", "")) for e in io.log.of_type("agent_text"))


def test_the_move_on_the_kernel_furthest_from_its_roof_goes_first(tmp_path: Path) -> None:
    far_pool = _gpu_ctx(_units(pool_roof=0.08, norm_roof=0.9))
    io = _io(tmp_path)
    plans = _policy(far_pool).plan(far_pool, None, _root(), 12, io)  # type: ignore[arg-type]
    assert _rewrites(plans) == ["max_pool_kernel", "layer_norm_kernel"]
    pool_plan = next(p for p in plans if p.params.get("rewrite") == "max_pool_kernel")
    assert "roofline: +" in pool_plan.rationale and "aims at pooling" in pool_plan.rationale
    far_norm = _gpu_ctx(_units(pool_roof=0.9, norm_roof=0.08))
    plans = _policy(far_norm).plan(far_norm, None, _root(), 12, _io(tmp_path))  # type: ignore[arg-type]
    assert _rewrites(plans) == ["layer_norm_kernel", "max_pool_kernel"]
    # The Planner says where the time goes, one line per family, under the card's own roofs.
    text = _said(io)
    assert "roofs of the H100 SXM" in text and "H200" not in text
    assert "- pooling: 50% of the time (1 unit) at 8% of its roof" in text
    assert "- normalisation: 50% of the time (1 unit) at 90% of its roof" in text


def test_kernels_are_placed_under_the_cards_own_roofs(tmp_path: Path) -> None:
    unit = KernelUnit(POOL, "triton", share=1.0, ms=1.0, bound="memory", roofline_fraction=0.3)
    report = OfflinePolicy().profile(_gpu_ctx([unit]), _io(tmp_path))
    assert report.bottlenecks[0].note == "memory-bound at 30% of the H100 SXM roofline"
    table = kernel_table([unit], gpu="NVIDIA H100 80GB HBM3")
    assert "peak of the H100 SXM" in table and "H200" not in table
    assert "H200 (no GPU here" in kernel_table([unit])


def test_gains_and_the_static_estimate() -> None:
    h = headroom(_gpu_ctx(_units(pool_roof=0.1, norm_roof=1.0)))
    pool, norm = Aim(frozenset({POOL})), Aim(frozenset({NORM}))
    assert max_gain(h, pool) == pytest.approx(1 / (1 - 0.5 * 0.9))
    assert max_gain(h, norm) == pytest.approx(1.0)
    assert roof_term(h, pool) > 0 > roof_term(h, norm)
    # Work a move deletes is not bounded by the roof: no term.
    assert roof_term(h, Aim(frozenset({POOL}), deletes=True)) == 0.0
    # Nothing measured (the CPU): every unit at the static fraction, so no move moves.
    cpu = _ctx(ROW_NORM, _units(None, None))
    h_cpu = headroom(cpu)
    assert {p.fraction for p in h_cpu.placements} == {STATIC_FRACTION}
    assert roof_term(h_cpu, pool) == 0.0 and roof_term(h_cpu, norm) == 0.0
    lines = family_lines(h_cpu)
    assert "nothing is timed here" in lines[0] and "H200 (no GPU here" in lines[0]
    assert lines[1:] == ["- pooling: 1 of 2 units", "- normalisation: 1 of 2 units"]


def test_the_cuda_graph_rises_once_torch_compiles_time_is_known(tmp_path: Path) -> None:
    # The kernels take 0.3 ms of torch.compile's 1.0 ms: most of the forward is launch gaps.
    units = _units(pool_roof=0.5, norm_roof=0.5, ms=0.15)
    before = _gpu_ctx(units, compile_ms=None)
    policy = _policy(before)
    io = _io(tmp_path)
    first = policy.plan(before, None, _root(), 20, io)  # type: ignore[arg-type]
    graph = next(p for p in first if p.action == "cuda_graph")
    assert first.index(graph) > 0 and "roofline" not in graph.rationale
    assert "outside the kernels" not in _said(io)
    before.baselines["compile"] = 1.0  # the deferred peers are timed: re-rank
    parent = Candidate("c1", "class ModelNew: pass\n", "c0", "offline", None, False, "x")
    again = policy.plan(before, None, parent, 20, io)  # type: ignore[arg-type]
    graph = next(p for p in again if p.action == "cuda_graph")
    assert again.index(graph) == 0 and "70% of the time outside kernels" in graph.rationale
    assert "- outside the kernels (launch gaps, host work): 70% of torch.compile's" in _said(io)
    # A rewrite that deletes work, replayed in a CUDA graph: the gaps count, no roof does.
    h = headroom(before)
    graphed_deletion = roof_term(h, Aim(frozenset({POOL}), overhead=True, deletes=True))
    assert graphed_deletion == roof_term(h, Aim(overhead=True)) > 0


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("level1/avg_pool7_stride3", "pooling"),
        ("level1/layernorm_odd_width", "normalisation"),
        ("level1/bmm_many_small", "gemm"),
        ("level2/conv_bn_silu", "conv"),
    ],
)
def test_a_gpu_profile_is_placed_by_family_under_the_cards_roofs(name: str, family: str) -> None:
    problem = load_problem(BENCH / f"{name}.py")
    dmap = profile_problem(problem, "cuda")
    assert dmap.ok, dmap.error
    ctx = _ctx(problem.source, [KernelUnit(**u) for u in dmap.units()], "cuda")
    ctx.gpu = gpu_name("cuda")
    h = headroom(ctx)
    assert h.timed and family in {p.family for p in h.placements}
    assert any(p.measured and 0 < p.fraction <= 1 for p in h.placements)
    assert sum(p.share for p in h.placements) == pytest.approx(1.0)
    head = family_lines(h)[0]
    assert roof_name(ctx.gpu) in head and "no GPU" not in head and "assumed" not in head


# ----------------------------------------------------------------------- the memory
def _lesson(action: str, family: str, outcome: float, problem: str = "p") -> ExperienceItem:
    return ExperienceItem("op:elsewhere", action, outcome, "lesson", problem, family=family)


def test_the_family_boost_is_capped(tmp_path: Path) -> None:
    memory = ExperienceMemory(tmp_path / "experience.json")
    action = "graph_rewrite:max_pool_kernel"
    memory.add(_lesson(action, "pooling", 1.1, "a"))
    assert memory.family_score({"pooling"}, action) == pytest.approx(math.log(1.1))
    # The same step kept once per pattern of its problem counts once.
    memory.add(ExperienceItem("kind:module", action, 1.1, "lesson", "a", family="pooling"))
    assert memory.family_score({"pooling"}, action) == pytest.approx(math.log(1.1))
    memory.add(_lesson(action, "pooling", 20.0, "b"))
    assert memory.family_score({"pooling"}, action) == FAMILY_BOOST_CAP
    assert memory.family_score({"gemm"}, action) == 0.0
    assert memory.family_score({"pooling"}, "cuda_graph") == 0.0
    memory.add(_lesson("retile:", "gemm", 0.1))
    assert memory.family_score({"gemm"}, "retile:") == -FAMILY_BOOST_CAP
    # Written and read back with the field.
    again = ExperienceMemory(tmp_path / "experience.json")
    assert {i.family for i in again.items} == {"pooling", "gemm"}


def test_an_experience_file_without_families_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "experience.json"
    old = {"pattern": "op:convolution", "action": "cuda_graph", "outcome": 1.5, "lesson": "l",
           "problem": "x"}  # fmt: skip
    path.write_text(json.dumps({"items": [old]}))
    memory = ExperienceMemory(path)
    assert len(memory.items) == 1 and memory.items[0].family == ""
    assert memory.score({"op:convolution"}, "cuda_graph") == pytest.approx(math.log(1.5))
    assert memory.family_score({"conv"}, "cuda_graph") == 0.0
    assert path.exists() and not path.with_suffix(".corrupt.json").exists()


def test_a_move_that_won_on_the_same_family_is_tried_first(tmp_path: Path) -> None:
    ctx = _ctx(ROW_NORM, _units(None, None))  # the CPU: nothing measured, a tie by priority
    plans = _policy(ctx).plan(ctx, None, _root(), 12, _io(tmp_path))  # type: ignore[arg-type]
    assert _rewrites(plans)[:2] == ["layer_norm_kernel", "max_pool_kernel"]
    memory = ExperienceMemory(None)
    memory.add(_lesson("graph_rewrite:max_pool_kernel", "pooling", 2.0))
    memory.add(_lesson("graph_rewrite:layer_norm_kernel", "gemm", 3.0))  # another family
    plans = _policy(ctx, memory).plan(ctx, None, _root(), 12, _io(tmp_path))  # type: ignore[arg-type]
    assert _rewrites(plans)[:2] == ["max_pool_kernel", "layer_norm_kernel"]
    pool = next(p for p in plans if p.params.get("rewrite") == "max_pool_kernel")
    assert f"memory on pooling: +{FAMILY_BOOST_CAP:.2f}" in pool.rationale


def test_the_summarizer_records_the_family_a_move_won_on(tmp_path: Path) -> None:
    ctx = _gpu_ctx(_units(pool_roof=0.08, norm_roof=0.9))
    policy = _policy(ctx)
    plans = policy.plan(ctx, None, _root(), 12, _io(tmp_path))  # type: ignore[arg-type]
    pool = next(p for p in plans if p.params.get("rewrite") == "max_pool_kernel")
    child = Candidate("c1", "class ModelNew: pass\n", "c0", "offline", pool.id, True, pool.title)
    step = StepRecord(child, _root().source, pool, "pass", 2.0, 1.0)
    summary = policy.summarize(ctx, [step], _io(tmp_path))
    assert summary.experience and {e.family for e in summary.experience} == {"pooling"}
    assert {e.action for e in summary.experience} == {"graph_rewrite:max_pool_kernel"}


# ----------------------------------------------------------------------- honest labels
def _load(name: str, path: Path) -> types.ModuleType:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _dev_row(level: int, name: str, gain: float | None, moves: list[str] | None) -> dict[str, Any]:
    row: dict[str, Any] = {
        "problem": f"level{level}/{name}.py", "level": level, "verified": gain is not None,
        "search_s": 60.0, "first_verdict_s": 5.0, "speedup_vs_best_peer": gain,
    }  # fmt: skip
    if moves is not None:
        row["moves"] = moves
    return row


def test_a_dev_row_names_the_moves_that_made_its_winner(tmp_path: Path) -> None:
    dev = _load("kb_dev", ROOT / "scripts" / "kernelbench_dev.py")
    run = tmp_path / "run"
    run.mkdir()
    cands = [
        {"id": "c0", "parent": None, "note": "Inductor harvest", "verdict": "pass", "time_ms": 2.0},
        {"id": "c1", "parent": "c0", "note": "rewrite: fold BatchNorm", "verdict": "pass"},
        {"id": "c2", "parent": "c1", "note": "CUDA graph on [rewrite: fold BatchNorm]",
         "verdict": "pass", "time_ms": 1.0},
        {"id": "c3", "parent": "c0", "note": "dispatch: a loser", "verdict": "pass"},
    ]  # fmt: skip
    result = {"best": "c2", "candidates": cands, "baselines": {"eager": 2.0, "compile": 3.0}}
    (run / "result.json").write_text(json.dumps(result))
    row = dev.summarize(Path("level2/x.py"), run, 60.0, 0, 100)
    assert row["moves"] == ["rewrite: fold BatchNorm", "CUDA graph on [rewrite: fold BatchNorm]"]
    assert row["speedup_vs_best_peer"] == pytest.approx(2.0)
    # Without torch.compile timed beside the winner, eager alone makes no claim over the peers
    # (a max pool's harvest read 2.53x "over the best peer" that way on the H100).
    result["baselines"] = {"eager": 2.0, "compile": None}
    (run / "result.json").write_text(json.dumps(result))
    row = dev.summarize(Path("level1/y.py"), run, 60.0, 0, 100)
    assert row["speedup_vs_best_peer"] is None and "torch.compile" in row["peers_note"]
    assert row["speedup"]["eager"] == pytest.approx(2.0)


def test_the_dev_record_splits_each_levels_gain_over_move_kinds() -> None:
    record = _load("kb_record_roof", ROOT / "benchmarks" / "kernelbench_record.py")
    rows = [
        _dev_row(1, "a", 4.0, ["rewrite: fold X", "CUDA graph on [rewrite: fold X]"]),
        _dev_row(1, "b", 2.0, ["kernel body: evict_first on k's 2 streamed load(s)"]),
        _dev_row(1, "c", 2.0, None),  # a row of a run before the field
        _dev_row(1, "d", None, []),  # no winner: no gain to share
        _dev_row(1, "e", 0.9, ["launch config: retune k"]),  # slower than the best peer
        _dev_row(2, "f", 1.5, None),
        _dev_row(3, "g", 2.0, []),  # the harvest itself won
    ]
    summary = record.summary(rows)
    kinds = summary["level1"]["move_kinds"]
    # log 4 over two kinds, log 2 to the kernel body, log 2 unrecorded: 1/4 each.
    assert kinds == {"CUDA graph": 0.25, "graph rewrite": 0.25, "kernel body": 0.25,
                     "unrecorded": 0.25}  # fmt: skip
    assert "move_kinds" not in summary["level2"]  # no row of it names its moves: left alone
    assert summary["level3"]["move_kinds"] == {"harvest": 1.0}
    # The other figures are the rows' own, as before.
    assert summary["level1"]["problems"] == 5 and summary["level1"]["verified"] == 4
