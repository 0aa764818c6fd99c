"""LayerNorm in one Triton pass per row: sum and sum of squares in a single sweep."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _ln(x_ptr, w_ptr, b_ptr, out_ptr, cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0)
    s1 = tl.sum(x, axis=0)
    s2 = tl.sum(x * x, axis=0)
    mean = s1 / cols
    var = s2 / cols - mean * mean
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + row * cols + offs, (x - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        out = torch.empty_like(x)
        _ln[(rows,)](
            x,
            self.norm.weight,
            self.norm.bias,
            out,
            cols,
            self.norm.eps,
            BLOCK=triton.next_power_of_2(cols),
        )
        return out
