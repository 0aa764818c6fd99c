"""Correct but reordered: each row is summed in blocks of 256, so the cancellation in
E[x^2] - E[x]^2 rounds differently from torch's reduction. It misses the strict tolerance and
passes only because its error against float64 is as small as the reference's own."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_var(x_ptr, out_ptr, cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    s1 = tl.zeros((BLOCK,), dtype=tl.float32)
    s2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * stride + offs, mask=offs < cols, other=0.0)
        s1 += v
        s2 += v * v
    mean = tl.sum(s1, axis=0) / cols
    tl.store(out_ptr + row, tl.sum(s2, axis=0) / cols - mean * mean)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty(x.shape[0], device=x.device, dtype=x.dtype)
        _row_var[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK=256)
        return out
