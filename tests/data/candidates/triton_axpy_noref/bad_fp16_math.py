"""Inaccurate: computes in fp16 inside the kernel. Within the loose tolerance, but with no
fp64 referee for this problem the strict tolerance is final, so correctness fails."""

import torch
import triton
import triton.language as tl


@triton.jit
def _axpy_half(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float16)
    y = tl.load(y_ptr + offs, mask=mask).to(tl.float16)
    tl.store(out_ptr + offs, (alpha * x + y).to(tl.float32), mask=mask)


def axpy(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    _axpy_half[(triton.cdiv(n, 8192),)](x, y, out, 2.5, n, BLOCK=8192)
    return out
