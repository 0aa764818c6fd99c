"""Broken for the GPU: the kernel calls a plain Python helper (no @triton.jit). Triton's
interpreter runs it as Python, so the CPU results are right, but the real compiler rejects the
call: only the sm_90 compile check catches it."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _relu(v):
    return tl.where(v > 0, v, 0.0)


@triton.jit
def _relu_scale_add_helper(x_ptr, y_ptr, s_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    s = tl.load(s_ptr + offs % cols, mask=mask)
    tl.store(out_ptr + offs, _relu(x) * s + y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.scale = nn.Parameter(torch.empty(features))

    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        grid = (triton.cdiv(n, 4096),)
        _relu_scale_add_helper[grid](x, y, self.scale, out, n, x.shape[-1], BLOCK=4096)
        return out
