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
    """At a size where the GPU's work is measured (1.07 GB per input: eager makes seven passes
    over it, the fused kernel three), not launch latency: at 97x1023 both sides take 0.01 to
    0.08 ms, whatever they launch, and the verdict is noise. At 8192x8191 (268 MB) the fused
    kernel's 0.2 ms met the performance gate's one-sided wall-clock bound, which charged it a
    0.25 ms gap once (0.887x, H200); at four times the size (about 0.75 ms at
    the H200's bandwidth, estimated, not yet run) such a gap is a third of the kernel's time."""
    from kernelopt_jupyter.problem import problem_from_source
    from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

    source = (DATA / "problems" / "scaled_residual.py").read_text()
    assert "ROWS, COLS = 97, 1023" in source
    big = problem_from_source(source.replace("97, 1023", "16384, 16383"), "<scaled_residual_big>")
    path = DATA / "candidates" / "scaled_residual" / "good_fused.py"
    report = verify_candidate(big, path.read_text(), VerifyOptions(device="cuda"), str(path))
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
    own = perf.metrics["own_median_ms"]["candidate"]  # before any wall-clock raise
    assert min(perf.metrics["candidate_ms"], own) < perf.metrics["roofline_ms"]


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
    # 0 or 1 (the verdict): on this 0.05 ms problem the Triton launch's own overhead can make
    # the fused kernel slower than eager's three ATen kernels, an honest "fail" (H200,
    # 2026-12-01: 0.15-0.19x in two of three runs). The CLI's point here is the speedup field.
    assert done.returncode in (0, 1), done.stderr
    data = json.loads(done.stdout)
    assert data["device"] == "cuda" and isinstance(data["gates"][3]["speedup"], float)
    assert data["verdict"] == ("pass" if done.returncode == 0 else "fail")


# A 256 MB activation: large enough that every bulk tensor goes device to device.
_BIG_SCALE = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * 2.0 + 1.0


def get_inputs():
    return [torch.randn(8192, 8192)]
"""

_SCALE_KERNEL = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _affine(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * 2.0 + OFFSET, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        _affine[(triton.cdiv(n, 4096),)](x, out, n, BLOCK=4096)
        return out
"""


@pytest.mark.parametrize(("offset", "verdict"), [("1.0", "pass"), ("1.001", "fail")])
def test_bulk_tensors_go_device_to_device(offset: str, verdict: str) -> None:
    """At a real size the inputs, the reference's outputs and the candidate's output move by
    CUDA IPC (staging buffers), not through the host: almost nothing goes over the sockets,
    and a candidate off by 1e-3 is still caught on the data it put in its slot."""
    from kernelopt_jupyter.problem import problem_from_source
    from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

    problem = problem_from_source(_BIG_SCALE, "<big_scale>", validate=False)
    source = _SCALE_KERNEL.replace("OFFSET", offset)
    report = verify_candidate(
        problem, source, VerifyOptions(device="cuda", seeds=2, run_performance=False)
    )
    correctness = report.gate("correctness")
    assert correctness is not None
    timings = correctness.metrics["timings"]
    assert timings["transfer"] == "device to device (CUDA IPC)", timings
    moved = sum(
        row["sent_mb"] + row["received_mb"]
        for who in ("reference", "candidate")
        for cmd, row in timings[who].items()
        if cmd in ("case", "call")
    )
    assert moved < 64, timings  # the bytes path moved several GB here
    assert report.verdict == verdict, [(g.name, g.status, g.detail) for g in report.gates]
    # The 256 MB output's answer key (fp32, float64) and the candidate's copy wait in host
    # memory (``lending.HOST_KEY_BYTES``): the checker's device peak is its staging (the
    # input it lends, the slot for the output) and one step at a time, about 1.5x the
    # footprint (about 4x with the key on the device).
    memory = correctness.metrics["memory"]
    assert memory["checker_over_footprint"] <= 2.0, memory


@pytest.mark.gpu
def test_the_performance_gate_moves_its_tensors_device_to_device(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The performance gate's timed inputs (``perf_setup``) and its last timed output with the
    reference's answer for it (``perf_last``) go by CUDA IPC too: on the H200 a 6 GB problem
    spent 37 s of a 64 s verification moving them as bytes. The last timed output is still
    compared as data: the gate runs to a timing verdict, not a transfer failure."""
    from kernelopt_jupyter.problem import problem_from_source
    from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

    monkeypatch.delenv("KERNELOPT_PERF_IPC", raising=False)  # the default: on
    problem = problem_from_source(_BIG_SCALE, "<big_scale>", validate=False)
    report = verify_candidate(
        problem, _SCALE_KERNEL.replace("OFFSET", "1.0"), VerifyOptions(device="cuda", seeds=2)
    )
    correctness, perf = report.gate("correctness"), report.gate("performance")
    assert correctness is not None and correctness.status == "pass", report.gates
    assert perf is not None and perf.status in ("pass", "fail"), report.gates
    assert "wrong result" not in perf.detail and "taken as data" not in perf.detail, perf.detail
    timings = correctness.metrics["timings"]
    moved = {
        (who, cmd): row["sent_mb"] + row["received_mb"]
        for who in ("reference", "candidate")
        for cmd, row in timings[who].items()
        if cmd in ("perf_setup", "perf_last")
    }
    assert moved and all(mb < 64 for mb in moved.values()), moved  # 256 MB each on bytes
