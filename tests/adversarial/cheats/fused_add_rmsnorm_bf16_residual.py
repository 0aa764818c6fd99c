"""Fused residual add + RMSNorm, one program per row: the sum stays in fp32 registers for the
normalisation; the updated residual stream is written back through a bfloat16 round trip
(the residual stream is kept in bf16 by the model downstream anyway)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add_rmsnorm(x_ptr, r_ptr, w_ptr, y_ptr, cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0)
    r = tl.load(r_ptr + row * cols + offs, mask=mask, other=0.0)
    s = x + r
    tl.store(r_ptr + row * cols + offs, s.to(tl.bfloat16).to(tl.float32), mask=mask)
    var = tl.sum(s * s, axis=0) / cols
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + row * cols + offs, w * (s / tl.sqrt(var + eps)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden) + 0.1 * torch.randn(hidden))
        self.eps = eps

    def forward(self, x, residual):
        rows, cols = x.shape
        y = torch.empty_like(x)
        _add_rmsnorm[(rows,)](
            x, residual, self.weight, y, cols, self.eps, BLOCK=triton.next_power_of_2(cols)
        )
        return y
