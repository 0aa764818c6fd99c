"""A Triton problem with no reference(): the fp64 referee cannot run, so the strict
tolerance is final."""

import torch
import triton
import triton.language as tl

KERNELOPT_ENTRY = "axpy"
ALPHA = 2.5


@triton.jit
def _axpy_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + y, mask=mask)


def axpy(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    _axpy_kernel[(triton.cdiv(n, 1024),)](x, y, out, ALPHA, n, BLOCK=1024)
    return out


def get_inputs():
    return [torch.randn(100003), torch.randn(100003)]
