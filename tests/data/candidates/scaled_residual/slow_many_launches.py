"""Correct but slow: launches the same kernel 50 times per call (the performance gate must
fail it on the GPU; the other gates pass)."""

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


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.scale = nn.Parameter(torch.empty(features))

    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        for _ in range(50):
            _relu_scale_add[(triton.cdiv(n, 1024),)](
                x, y, self.scale, out, n, x.shape[-1], BLOCK=1024
            )
        return out
