"""Broken: stores far outside its output buffer (a CUDA illegal address on the GPU; in the CPU
interpreter the bounds check refuses the store). The caller must survive and report it."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_scale_add_wild(x_ptr, y_ptr, s_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    s = tl.load(s_ptr + offs % cols, mask=mask)
    wild = offs.to(tl.int64) + (1 << 40)
    tl.store(out_ptr + wild, tl.maximum(x, 0.0) * s + y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.scale = nn.Parameter(torch.empty(features))

    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        grid = (triton.cdiv(n, 4096),)
        _relu_scale_add_wild[grid](x, y, self.scale, out, n, x.shape[-1], BLOCK=4096)
        return out
