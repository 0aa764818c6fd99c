"""GPU-only checks of the verifier (run on the H200 with scripts/gpu_checks.sh).

Real CUDA timing (performance gate pass, fail and the roofline flag), the launch recorder's
side-stream detection, CUDA-graph candidates, an illegal-address crash that the caller
survives, the torch.compile baseline, and the CLI with ``--device cuda``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch
from _verify_corpus import DATA, assert_caught_by, verify_on

pytestmark = pytest.mark.gpu


def test_fused_kernel_passes_all_four_gates_with_a_measured_speedup() -> None:
    report = verify_on("cuda", "scaled_residual", "good_fused")
    assert report.verdict == "pass", [(g.name, g.status, g.detail) for g in report.gates]
    static = report.gate("static")
    assert static is not None and "compiled and ran on the GPU" in static.detail
    perf = report.gate("performance")
    assert perf is not None and perf.status == "pass"
    m = perf.metrics
    assert m["ci_low"] <= m["speedup"] <= m["ci_high"] and m["candidate_ms"] > 0
    assert m["baseline"] == "eager" and m["rounds"] >= 10 and not m["implausible"]
    assert report.speedup == pytest.approx(m["speedup"])


def test_fifty_launches_per_call_fail_the_performance_gate() -> None:
    report = verify_on("cuda", "scaled_residual", "slow_many_launches")
    assert_caught_by(report, "performance", "slower than the baseline")
    perf = report.gate("performance")
    assert perf is not None and perf.metrics["ci_high"] < 1.0


def test_reading_less_than_the_inputs_is_flagged_implausible() -> None:
    report = verify_on("cuda", "gpu_first_row", "reads_one_row", seeds=1)
    assert_caught_by(report, "performance", "implausible")
    perf = report.gate("performance")
    assert perf is not None and perf.metrics["implausible"] is True
    assert perf.metrics["candidate_ms"] < perf.metrics["roofline_ms"]


def test_compile_baseline_is_timed_alongside_eager() -> None:
    report = verify_on("cuda", "linear_gelu", "good_mm_epilogue", baselines=("eager", "compile"))
    perf = report.gate("performance")
    assert perf is not None and perf.status in ("pass", "fail"), perf.detail
    m = perf.metrics
    assert m["speedup_vs_eager"] > 0 and m["speedup_vs_compile"] > 0
    fastest = min(m["eager_ms"], m["compile_ms"])
    assert m["baseline_ms"] == pytest.approx(fastest)


def test_cuda_graph_candidate_passes_static_and_correctness() -> None:
    report = verify_on("cuda", "scaled_residual", "good_cuda_graph", run_performance=False)
    statuses = [(g.name, g.status) for g in report.gates]
    assert statuses[:3] == [("static", "pass"), ("correctness", "pass"), ("fp64", "pass")], [
        g.detail for g in report.gates
    ]


def test_illegal_address_fails_static_and_the_caller_survives() -> None:
    report = verify_on("cuda", "scaled_residual", "bad_illegal_address")
    assert report.failed_gate == "static"
    static = report.gate("static")
    assert static is not None
    text = static.detail.lower()
    assert "illegal" in text or "cuda" in text or "died with" in text, static.detail
    # This process's CUDA context is untouched: a fresh verification still works.
    assert torch.cuda.is_available() and torch.zeros(4, device="cuda").sum().item() == 0.0
    assert verify_on("cuda", "triton_axpy", "good_function", run_performance=False).verdict == (
        "pass"
    )


def test_side_stream_launch_is_detected_at_run_time() -> None:
    from kernelopt_jupyter.problem import load_source_module
    from kernelopt_jupyter.verify.launches import LaunchRecorder

    source = (DATA / "candidates" / "scaled_residual" / "good_fused.py").read_text()
    module = load_source_module(source, "gpu_stream_check")
    model = module.ModelNew(1023).cuda()
    x, y = torch.randn(97, 1023, device="cuda"), torch.randn(97, 1023, device="cuda")
    recorder = LaunchRecorder("cuda")
    recorder.install()
    with recorder.recording():
        model(x, y)
    assert recorder.total == 1 and recorder.stream_violations == []
    side = torch.cuda.Stream()
    with recorder.recording(), torch.cuda.stream(side):
        model(x, y)
    torch.cuda.synchronize()
    assert recorder.stream_violations and "side stream" in recorder.stream_violations[0]
    # Launches during CUDA-graph capture go to the capture stream by design: not a violation.
    recorder.stream_violations.clear()
    model(x, y)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with recorder.recording(), torch.cuda.graph(graph):
        model(x, y)
    assert recorder.stream_violations == []


def test_cli_on_the_gpu_reports_a_speedup() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kernelopt_jupyter.cli",
            "verify",
            str(DATA / "problems" / "scaled_residual.py"),
            str(DATA / "candidates" / "scaled_residual" / "good_fused.py"),
            "--device",
            "cuda",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["device"] == "cuda" and isinstance(data["gates"][3]["speedup"], float)
