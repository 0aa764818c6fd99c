"""Kernel timelines for the panel: the reference and a candidate, profiled in a worker."""

from __future__ import annotations

from pathlib import Path

from kernelopt_jupyter.analysis.timeline import classify_launch, profile_timeline
from kernelopt_jupyter.problem import load_problem

ROOT = Path(__file__).resolve().parents[1]
CANDIDATE = Path(__file__).parent / "data" / "candidates" / "linear_gelu" / "good_mm_epilogue.py"


def test_launch_names_are_classified() -> None:
    assert classify_launch("triton_poi_fused_add_0", "cuda") == "triton"
    assert classify_launch("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n", "cuda") == "vendor"
    assert classify_launch("cudnn::bn_fw_inf_1C11_kernel_NCHW", "cuda") == "vendor"
    assert classify_launch("vectorized_elementwise_kernel", "cuda") == "other"
    assert classify_launch("aten::addmm", "cpu") == "vendor"
    assert classify_launch("triton:_k", "cpu") == "triton"


def test_reference_and_candidate_timelines_on_the_cpu() -> None:
    problem = load_problem(CANDIDATE.parents[2] / "problems" / "linear_gelu.py")
    reference = profile_timeline(problem, "cpu")
    assert reference["timeline"], reference["detail"]
    assert {"vendor"} <= {row["kind"] for row in reference["timeline"]}
    candidate = profile_timeline(problem, "cpu", CANDIDATE.read_text())
    kinds = [row["kind"] for row in candidate["timeline"]]
    assert "triton" in kinds and "vendor" in kinds, candidate
    starts = [row["start_ms"] for row in candidate["timeline"]]
    assert starts == sorted(starts) and starts[0] == 0.0
    assert all(row["dur_ms"] >= 0 for row in candidate["timeline"])
