"""Under the CPU interpreter a kernel's body runs as Python, and some ``libdevice`` functions
(erf, ...) run as ATen ops: those are the kernel's work, not host compute of the candidate,
so an honest GELU kernel passes (the harvested Inductor GELU once failed its static gate
here); the same op in the candidate's host code is still refused."""

from __future__ import annotations

import pytest

from kernelopt_jupyter.problem import problem_from_source
from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

pytestmark = pytest.mark.slow

PROBLEM = """
import torch
import torch.nn.functional as F

class Model(torch.nn.Module):
    def forward(self, x):
        return F.gelu(x)

def get_inputs():
    return [torch.randn(16, 96)]
"""

KERNEL = """
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def _gelu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = 0.5 * x * (1.0 + libdevice.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        _gelu[(triton.cdiv(n, 512),)](x, out, n, BLOCK=512)
        return out{host}
"""


def _verify(host: str) -> object:
    problem = problem_from_source(PROBLEM, "gelu.py")
    source = KERNEL.format(host=host)
    return verify_candidate(problem, source, VerifyOptions(device="cpu", seeds=1))


def test_libdevice_inside_an_interpreted_kernel_is_the_kernels_work() -> None:
    report = _verify("")
    assert report.verdict == "pass", [(g.name, g.status, g.detail) for g in report.gates]


def test_the_same_op_in_host_code_is_still_refused() -> None:
    report = _verify(" + 0.0 * torch.erf(x)")
    assert report.verdict == "fail"
    static = report.gate("static")
    assert static is not None and "aten.erf" in static.detail, static.detail
