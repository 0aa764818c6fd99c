"""Exact GELU with blocks of 2048 that each also refresh the first element of the next
block (a halo kept for a fused consumer)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu_halo(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476)), mask=mask)
    halo = (pid + 1) * BLOCK
    tl.store(out_ptr + halo, 0.0, mask=halo < n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        _gelu_halo[(triton.cdiv(n, 2048),)](x, out, n, BLOCK=2048)
        return out
