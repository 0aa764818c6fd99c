"""RMSNorm in one Triton pass per row, fp32 throughout (rsqrt of the mean square)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rms(x_ptr, w_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0)
    var = tl.sum(x * x, axis=0) / cols
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + row * cols + offs, w * (x * tl.math.rsqrt(var)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x):
        x = x.float().contiguous()
        rows, cols = x.shape
        out = torch.empty_like(x)
        _rms[(rows,)](x, self.weight, out, cols, BLOCK=triton.next_power_of_2(cols))
        return out
