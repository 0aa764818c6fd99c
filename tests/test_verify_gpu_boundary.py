"""GPU-only checks of the verification boundary (run on the H200 with scripts/gpu_checks.sh).

Bounded memory at scale: a correct element-wise candidate over a >= 6 GB fp32 input, each
process's peak device memory (``torch.cuda.max_memory_allocated`` there, reported back) at most
3x the reference's own footprint (input + output + weights). A candidate that runs out of
memory gets a clean verdict. Cheats that only a GPU shows: a CUDA graph replayed on stale
inputs, programs racing on real hardware.
"""

from __future__ import annotations

import json

import pytest
import torch
from _verify_adversarial import CHEATS
from _verify_corpus import assert_caught_by
from _verify_corpus import problem as file_problem

from kernelopt_jupyter.problem import problem_from_source
from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

pytestmark = pytest.mark.gpu

# 1.6e9 fp32 values: a 6.4 GB input, as KernelBench's level-1 GELU.
BIG_GELU = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return F.gelu(x)


def get_inputs():
    return [torch.randn(16384, 98304)]
"""

GELU_CANDIDATE = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476)), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        _gelu[(triton.cdiv(n, 4096),)](x, out, n, BLOCK=4096)
        return out
"""

GREEDY_CANDIDATE = GELU_CANDIDATE.replace(
    "        out = torch.empty_like(x)\n",
    "        hoard = torch.empty(x.numel() * 64, device=x.device)  # 'a workspace'\n"
    "        out = torch.empty_like(x)\n",
)


def test_a_six_gigabyte_verification_stays_within_three_footprints() -> None:
    problem = problem_from_source(BIG_GELU, "<big_gelu>", validate=False)
    report = verify_candidate(
        problem,
        GELU_CANDIDATE,
        VerifyOptions(device="cuda", seeds=1, time_limit_s=500, run_performance=False),
    )
    assert report.verdict == "pass", [(g.name, g.status, g.detail) for g in report.gates]
    correctness = report.gate("correctness")
    assert correctness is not None
    memory = correctness.metrics["memory"]
    print("memory", json.dumps(memory))  # the figures on the issue come from this line
    # Where the time went (stages, and each process's commands with their seconds and bytes):
    # this verification took 27 s on 2026-12-01, 236-242 s by 2026-12-03 (the referee's
    # per-chunk torch.kthvalue, one thread block per slice on a GPU) and 21 s with topk.
    print("timings", json.dumps(correctness.metrics.get("timings")))
    footprint = memory["footprint_bytes"]
    assert footprint >= 2 * 6_000_000_000  # input + output
    assert 0 < memory["reference_peak_bytes"] <= 3 * footprint, memory
    assert 0 < memory["candidate_peak_bytes"] <= 3 * footprint, memory
    assert memory["peak_over_footprint"] <= 3.0


def test_a_candidate_out_of_memory_is_a_clean_verdict() -> None:
    problem = problem_from_source(BIG_GELU, "<big_gelu>", validate=False)
    report = verify_candidate(
        problem,
        GREEDY_CANDIDATE,
        VerifyOptions(device="cuda", seeds=1, time_limit_s=300, run_performance=False),
    )
    assert report.failed_gate == "static"
    static = report.gate("static")
    assert static is not None and "ran out of device memory" in static.detail
    assert "needs" in static.detail and "GiB" in static.detail
    # The caller's process never touched the candidate's CUDA context.
    assert torch.zeros(4, device="cuda").sum().item() == 0.0


STALE_GRAPH = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _k(x_ptr, y_ptr, s_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    s = tl.load(s_ptr + offs % cols, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0) * s + y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.scale = nn.Parameter(torch.empty(features))
        self.graph = None

    def forward(self, x, y):
        if self.graph is None:
            # captured on private copies of the first inputs, never refreshed afterwards
            self.sx, self.sy = x.clone(), y.clone()
            self.out = torch.empty_like(x)
            n = x.numel()
            _k[(triton.cdiv(n, 4096),)](self.sx, self.sy, self.scale, self.out, n, x.shape[-1],
                                        BLOCK=4096)
            torch.cuda.synchronize()
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                _k[(triton.cdiv(n, 4096),)](self.sx, self.sy, self.scale, self.out, n,
                                            x.shape[-1], BLOCK=4096)
        self.graph.replay()
        return self.out.clone()
"""


def test_cuda_graph_replayed_on_stale_inputs_is_caught() -> None:
    report = verify_candidate(
        file_problem("scaled_residual"),
        STALE_GRAPH,
        VerifyOptions(device="cuda", run_performance=False),
    )
    assert report.failed_gate == "correctness", [(g.name, g.detail) for g in report.gates]


def test_program_race_is_caught_on_the_gpu() -> None:
    case = next(c for c in CHEATS if c.name == "halo_overwrite_race")
    # On the GPU programs run concurrently: the stale halo shows up in some call.
    report = verify_candidate(
        file_problem("scaled_residual"),
        case.source,
        VerifyOptions(device="cuda", seeds=6, run_performance=False),
    )
    assert_caught_by(report, "correctness", "elements outside")
