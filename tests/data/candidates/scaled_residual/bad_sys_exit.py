"""Broken: exits the interpreter from forward (sys.exit left in from a debugging session)."""

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


def launch(x, y, scale, out):
    n = x.numel()
    _relu_scale_add[(triton.cdiv(n, 4096),)](x, y, scale, out, n, x.shape[-1], BLOCK=4096)
    return out

import sys


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.scale = nn.Parameter(torch.empty(features))

    def forward(self, x, y):
        launch(x, y, self.scale, torch.empty_like(x))
        sys.exit(0)