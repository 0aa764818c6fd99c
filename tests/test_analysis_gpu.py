"""Analysis on the H200 (run by scripts/gpu_checks.sh): real times, shares, baselines, ncu.

Timings are printed for the issue, never asserted.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kernelopt_jupyter.analysis import harvest_problem, measure_baselines, profile_problem
from kernelopt_jupyter.analysis.codegen import build_candidate
from kernelopt_jupyter.cli.profile import render_table
from kernelopt_jupyter.problem import load_problem
from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

DATA = Path(__file__).parent / "data" / "analysis"
ROUND_TRIP = [
    "pointwise_chain",
    "linear_norm_chain",
    "wide_row_stats",
    "conv_relu_bias",
    "conv_relu_bias_sum",
    "plain_matmul",
    "avg_pool",
    "depthwise_conv",
]


@pytest.mark.gpu
def test_conv_relu_bias_profile_names_vendor_conv_and_triton_epilogue() -> None:
    dmap = profile_problem(load_problem(DATA / "conv_relu_bias.py"), "cuda")
    print(render_table(dmap))
    assert dmap.ok, dmap.error
    assert dmap.total_ms is not None and dmap.total_ms > 0
    conv = [r for r in dmap.records if r.kind == "vendor" and "aten.convolution" in r.ops]
    epilogue = [r for r in dmap.records if r.kind == "triton" and "aten.relu" in r.ops]
    assert len(conv) == 1 and conv[0].library == "cuDNN"
    assert len(epilogue) == 1
    for rec in (conv[0], epilogue[0]):
        assert rec.ms is not None and rec.ms > 0 and rec.share is not None and 0 < rec.share <= 1
        assert rec.roofline_fraction is not None and rec.roofline_fraction > 0
    assert sum(r.share or 0.0 for r in dmap.records) <= 1.0 + 1e-6
    times = [r.ms or 0.0 for r in dmap.records]
    assert times == sorted(times, reverse=True)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ROUND_TRIP)
def test_harvested_candidate_verifies_on_gpu(name: str) -> None:
    problem = load_problem(DATA / f"{name}.py")
    h = harvest_problem(problem, "cuda")
    assert h.ok, h.error + "\n" + "\n".join(h.notes)
    report = verify_candidate(problem, h.source, VerifyOptions(device="cuda"))
    gates = {g.name: g for g in report.gates}
    print(name, {g.name: (g.status, g.detail) for g in report.gates})
    for gate in ("static", "correctness", "fp64"):
        assert gates[gate].status == "pass", f"{gate}: {gates[gate].detail}"
    assert gates["performance"].status in ("pass", "fail")  # measured, whatever the outcome
    for label, source in h.dispatch_variants:
        variant = verify_candidate(problem, source, VerifyOptions(device="cuda"))
        print(name, label, variant.verdict, variant.speedup)
        assert [g.status for g in variant.gates[:3]] == ["pass"] * 3, label


@pytest.mark.gpu
def test_cuda_style_sample_runs_on_gpu() -> None:
    # The saved torch 2.11-style module and its launch facts live with the CPU codegen tests.
    from test_analysis_codegen import CUDA_STYLE, FACTS, LAUNCHES

    source = build_candidate(CUDA_STYLE, dict(LAUNCHES), FACTS).source
    problem = load_problem(DATA / "conv_relu_bias_sum.py")
    report = verify_candidate(problem, source, VerifyOptions(device="cuda"))
    assert [g.status for g in report.gates[:3]] == ["pass"] * 3, report.to_dict()


@pytest.mark.gpu
def test_baselines_measured_on_gpu() -> None:
    base = measure_baselines(load_problem(DATA / "conv_relu_bias.py"), "cuda")
    print(base.to_dict())
    assert base.measured, base.detail
    for ms in base.as_ms().values():
        assert ms is not None and ms > 0
    # every torch.compile peer (reduce-overhead joined default and max-autotune in the scale
    # issue; this assertion still named two and failed on the H200 on 2026-12-02)
    assert set(base.compile_s) == {"compile", "max_autotune", "reduce_overhead"}, base.detail
    assert "failed" not in base.detail, base.detail


@pytest.mark.gpu
def test_depthwise_dispatch_choice_is_measured() -> None:
    dmap = profile_problem(load_problem(DATA / "depthwise_conv.py"), "cuda")
    print(render_table(dmap))
    assert dmap.ok, dmap.error
    conv_kernels = [r for r in dmap.records if r.kind == "triton" and "aten.convolution" in r.ops]
    if not conv_kernels:
        assert dmap.choices == []  # Inductor left the conv entirely to cuDNN: nothing to choose
        return
    [choice] = [c for c in dmap.choices if "convolution" in c.label]
    assert choice.vendor_beats_inductor is not None
    assert choice.inductor_ms is not None and choice.inductor_ms > 0
    if choice.variant_available:
        assert choice.variant_ms and choice.harvest_ms


@pytest.mark.gpu
def test_ncu_metrics_or_the_reason() -> None:
    have_ncu = shutil.which("ncu") is not None
    dmap = profile_problem(load_problem(DATA / "conv_relu_bias.py"), "cuda", ncu=have_ncu)
    assert dmap.ok, dmap.error
    epilogue = next(r for r in dmap.records if r.kind == "triton" and "aten.relu" in r.ops)
    print(epilogue.ncu)
    if have_ncu:
        assert isinstance(epilogue.ncu, dict) and "memory_sol_pct" in epilogue.ncu
    else:
        assert "not on PATH" in str(epilogue.ncu)


@pytest.mark.gpu
def test_max_autotune_harvest_verifies_on_gpu() -> None:
    problem = load_problem(DATA / "linear_norm_chain.py")
    h = harvest_problem(
        problem,
        "cuda",
        variants=False,
        mode="max-autotune",
        inductor_config={"max_autotune_gemm_backends": "TRITON"},
    )
    assert h.ok, h.error
    print([k.name for k in h.kernels], h.notes)
    report = verify_candidate(problem, h.source, VerifyOptions(device="cuda"))
    assert [g.status for g in report.gates[:3]] == ["pass"] * 3, report.to_dict()


@pytest.mark.gpu
def test_the_quick_start_is_decided_while_the_harvest_compiles(tmp_path: Path) -> None:
    """A full-size conv network, analysis not cached: the quick-start candidate (the
    reference's ops in one CUDA graph) is gated before the analysis's profile event,
    its verification held the GPU's timing lock, and every verdict says where its peak memory
    came from. Times are printed for the issue, never asserted."""
    from kernelopt_jupyter.events import read_events
    from kernelopt_jupyter.session import OptimizationSession, SearchOptions

    problem = load_problem(
        Path(__file__).resolve().parents[1]
        / "benchmarks"
        / "problems"
        / "level2"
        / "conv_bn_silu.py"
    )
    options = SearchOptions(
        device="cuda",
        budget=4,
        iterations=1,
        out_dir=tmp_path / "run",
        cache_dir=tmp_path / "cache",
        memory_path=None,
        max_seconds=120,
        final_check=False,
        profile_best=False,
    )
    OptimizationSession(problem, options).run()
    events = read_events(tmp_path / "run" / "events.jsonl")
    order = [(e.type, e.data.get("candidate") or e.data.get("id"), e.t) for e in events]
    print([(k, c, round(t, 1)) for k, c, t in order if k in ("verdict", "profile", "decision")])
    quick = [e for e in events if e.type == "decision" and e.data.get("kind") == "quick_start"]
    assert len(quick) == 1
    cid = quick[0].data["candidate"]
    # Its gate began before the analysis ended (on the H200 its verdict also came first:
    # 7.2 s against the profile's 11.8 s).
    began_at = next(i for i, (k, c, _) in enumerate(order) if k == "candidate" and c == cid)
    profile_at = next(i for i, (k, _, _) in enumerate(order) if k == "profile")
    assert began_at < profile_at
    for e in events:
        if e.type != "verdict" or not e.data.get("report"):
            continue
        gates = {g["name"]: g for g in e.data["report"]["gates"]}
        timings = gates["correctness"]["metrics"]["timings"]
        assert timings["gpu_lock"]["shared"] is False, timings["gpu_lock"]
        stages = timings["peak_bytes_by_stage"]
        assert {"reference setup", "first call"} <= set(stages), stages
        assert all(v.get("checker", 0) >= 0 and "reference" in v for v in stages.values())
