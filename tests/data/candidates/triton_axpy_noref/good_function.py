"""Correct: the entry function with a wider block (a function candidate, no ModelNew)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _axpy_wide(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + y, mask=mask)


def axpy(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    _axpy_wide[(triton.cdiv(n, 8192),)](x, y, out, 2.5, n, BLOCK=8192)
    return out
