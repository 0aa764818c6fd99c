"""Cheat: computes honestly for the first 60 calls (more than any correctness schedule makes,
its late burst included) and then launches a kernel that only writes zeros: a timing loop
that calls the forward many times would time almost nothing. The dispatch accounting sees a
Triton kernel write the output, so only the values can give it away."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_scale_add(x_ptr, y_ptr, s_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    s = tl.load(s_ptr + offs % cols, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0) * s + y, mask=mask)


@triton.jit
def _zeros(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32), mask=offs < n)


_CALLS = [0]


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.scale = nn.Parameter(torch.empty(features))

    def forward(self, x, y):
        _CALLS[0] += 1
        out = torch.empty_like(x)
        n = x.numel()
        if _CALLS[0] > 60:
            _zeros[(triton.cdiv(n, 4096),)](out, n, BLOCK=4096)
            return out
        x = x.contiguous()
        y = y.contiguous()
        _relu_scale_add[(triton.cdiv(n, 4096),)](x, y, self.scale, out, n, x.shape[-1], BLOCK=4096)
        return out
