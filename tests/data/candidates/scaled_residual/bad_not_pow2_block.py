"""Broken for the GPU: a block of 1000 runs in the interpreter, but tl.arange needs a
power of two, so the kernel does not compile for sm_90."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_scale_add_1000(x_ptr, y_ptr, s_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
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

    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        _relu_scale_add_1000[(triton.cdiv(n, 1000),)](x, y, self.scale, out, n, x.shape[-1], BLOCK=1000)
        return out