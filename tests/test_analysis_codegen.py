"""The generated-module rewrite on saved code: torch 2.11 CUDA layout and error cases (fast)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kernelopt_jupyter.agents.transforms import read_launch_configs
from kernelopt_jupyter.analysis.codegen import (
    HarvestError,
    LaunchInfo,
    ModelFacts,
    _grid_lambda,
    build_candidate,
)
from kernelopt_jupyter.analysis.roofline import H200_BANDWIDTH, H200_FP32, place
from kernelopt_jupyter.problem import load_problem
from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

DATA = Path(__file__).parent / "data" / "analysis"
CUDA_STYLE = (DATA / "generated" / "cuda_style_2_11.py.txt").read_text()
LAUNCHES = {
    "triton_poi_fused_add_convolution_relu_0": LaunchInfo(
        "triton_poi_fused_add_convolution_relu_0", {"XBLOCK": 512}, 4, 1, "Grid1D", "pointwise"
    ),
    "triton_red_fused_sum_1": LaunchInfo(
        "triton_red_fused_sum_1", {"XBLOCK": 2, "RBLOCK": 64}, 2, 1, "Grid1D", "reduction"
    ),
}
FACTS = ModelFacts(
    state=[
        ("bias", [8, 1, 1], "float32", True),
        ("conv.weight", [8, 3, 3, 3], "float32", True),
        ("conv.bias", [8], "float32", True),
    ],
    arg_sources=[("param", "conv.weight"), ("param", "conv.bias"), ("input", 0), ("param", "bias")],
    forward_params=["x"],
    n_inputs=1,
    outputs=("tuple", 2),
)


@pytest.fixture(scope="module")
def cuda_style() -> str:
    """The candidate harvested from the torch 2.11-style CUDA module."""
    return build_candidate(CUDA_STYLE, {k: v for k, v in LAUNCHES.items()}, FACTS).source


def test_cuda_layout_is_rewritten_to_plain_launches(cuda_style: str) -> None:
    ast.parse(cuda_style)
    for gone in (
        "_DeviceGuard",
        "set_device",
        "get_raw_stream",
        ".run(",
        "assert_size_stride",
        "triton_heuristics",
        "empty_strided_cuda",
        "extern_kernels",
        "set_driver_to",
    ):
        assert gone not in cuda_style, gone
    configs = read_launch_configs(cuda_style)
    assert configs["triton_red_fused_sum_1"] == {
        "XBLOCK": 2,
        "RBLOCK": 64,
        "num_warps": 2,
        "num_stages": 1,
    }
    assert "triton.cdiv(16, meta['XBLOCK'])" in cuda_style  # grid follows the config
    assert "torch.empty_strided((2, 8), (8, 1), dtype=torch.float32, device=_device)" in cuda_style
    assert "# vendor call (kept): aten.convolution via cuDNN" in cuda_style
    assert "tl.maximum(tmp3, tmp2, propagate_nan=tl.PropagateNan.ALL)" in cuda_style


def test_cuda_layout_candidate_runs_and_verifies_on_cpu(cuda_style: str) -> None:
    problem = load_problem(DATA / "conv_relu_bias_sum.py")
    report = verify_candidate(problem, cuda_style, VerifyOptions(device="cpu"))
    assert report.verdict == "pass", [(g.name, g.detail) for g in report.gates]


def test_records_name_kernels_and_vendor_calls() -> None:
    code = build_candidate(CUDA_STYLE, dict(LAUNCHES), FACTS)
    names = [k["name"] for k in code.kernels]
    assert names == ["triton_poi_fused_add_convolution_relu_0", "triton_red_fused_sum_1"]
    assert code.kernels[0]["ops"] == ["aten.convolution", "aten.relu", "aten.add"]
    assert code.kernels[1]["elements"] == 16 * 196
    assert [(v["op"], v["library"]) for v in code.vendor_calls] == [("aten.convolution", "cuDNN")]


def test_unknown_generated_names_and_cpp_kernels_are_refused() -> None:
    odd = CUDA_STYLE.replace("del arg1_1\n", "del arg1_1\n        mystery_helper(buf1)\n")
    with pytest.raises(HarvestError, match="mystery_helper"):
        build_candidate(odd, dict(LAUNCHES), FACTS)
    cpp = CUDA_STYLE.replace(
        "async_compile.wait(globals())",
        "cpp_fused_0 = async_compile.cpp_pybinding(['float*'], 'code')\nasync_compile.wait(globals())",
    )
    with pytest.raises(HarvestError, match="non-Triton kernel"):
        build_candidate(cpp, dict(LAUNCHES), FACTS)
    with pytest.raises(HarvestError, match="never ran"):
        build_candidate(
            CUDA_STYLE, {"triton_red_fused_sum_1": LAUNCHES["triton_red_fused_sum_1"]}, FACTS
        )


def test_persistent_reduction_block_is_fixed_not_tunable() -> None:
    launches = dict(LAUNCHES)
    launches["triton_red_fused_sum_1"] = LaunchInfo(
        "triton_red_fused_sum_1",
        {"XBLOCK": 2, "RBLOCK": 256},
        2,
        1,
        "Grid1D",
        "persistent_reduction",
    )
    source = build_candidate(CUDA_STYLE, launches, FACTS).source
    assert read_launch_configs(source)["triton_red_fused_sum_1"] == {
        "XBLOCK": 2,
        "num_warps": 2,
        "num_stages": 1,
    }
    assert "RBLOCK=256, **LAUNCH_CONFIGS['triton_red_fused_sum_1']" in source


def test_grid_types() -> None:
    numel = {"xnumel": "100", "ynumel": "70000"}
    assert (
        _grid_lambda("Grid1D", numel, {"XBLOCK"})
        == "lambda meta: (triton.cdiv(100, meta['XBLOCK']),)"
    )
    two = _grid_lambda("Grid2D", numel, {"XBLOCK", "YBLOCK"})
    assert "triton.cdiv(70000, meta['YBLOCK'])" in two
    over = _grid_lambda("Grid2DWithYZOverflow", numel, {"XBLOCK", "YBLOCK"})
    grid = eval(over, {"triton": __import__("triton")})({"XBLOCK": 64, "YBLOCK": 1})
    assert grid[1] <= 65535 and grid[1] * grid[2] >= 70000
    with pytest.raises(HarvestError, match="not supported"):
        _grid_lambda("CooperativeReductionGrid", numel, {"XBLOCK"})


def test_roofline_placement() -> None:
    mem = place(flops=10**6, nbytes=10**9, ms=None, peak_flops=H200_FP32, peak_name="fp32")
    assert mem.bound == "memory" and mem.fraction is None
    assert mem.bound_ms == pytest.approx(1e9 / H200_BANDWIDTH * 1e3)
    comp = place(flops=10**13, nbytes=10**6, ms=300.0, peak_flops=H200_FP32, peak_name="fp32")
    assert comp.bound == "compute" and comp.fraction == pytest.approx(
        10**13 / H200_FP32 * 1e3 / 300
    )


def test_ncu_csv_parsing() -> None:
    from kernelopt_jupyter.analysis.ncu import parse_ncu_csv

    text = (
        "==PROF== Connected to process 1\n"
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
        '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
        '"Metric Value"\n'
        '"0","1","python","h","triton_poi_fused_add_relu_0","1","7","(128, 1, 1)","(25, 1, 1)",'
        '"0","9.0","Command line profiler metrics",'
        '"dram__throughput.avg.pct_of_peak_sustained_elapsed","%","61.5"\n'
        '"0","1","python","h","triton_poi_fused_add_relu_0","1","7","(128, 1, 1)","(25, 1, 1)",'
        '"0","9.0","Command line profiler metrics","dram__bytes.sum.per_second",'
        '"Tbyte/second","2.5"\n'
        '"1","1","python","h","sm90_xmma_fprop_implicit_gemm(int)","1","7","(128, 1, 1)",'
        '"(25, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum",'
        '"nsecond","1,234"\n'
    )
    metrics = parse_ncu_csv(text)
    assert metrics["triton_poi_fused_add_relu_0"] == {
        "memory_sol_pct": 61.5,
        "achieved_bandwidth": 2.5e12,
    }
    assert metrics["sm90_xmma_fprop_implicit_gemm"] == {"duration_ns": 1234.0}
