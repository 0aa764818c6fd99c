"""Training-mode BatchNorm1d: one program per block of features computes the batch mean and
biased variance in fp32 and normalises with the affine weight and bias."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bn(x_ptr, w_ptr, b_ptr, y_ptr, rows, cols, eps, BR: tl.constexpr, BC: tl.constexpr):
    pc = tl.program_id(0)
    c = pc * BC + tl.arange(0, BC)
    r = tl.arange(0, BR)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    x = tl.load(x_ptr + r[:, None] * cols + c[None, :], mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / rows
    d = tl.where(mask, x - mean[None, :], 0.0)
    var = tl.sum(d * d, axis=0) / rows
    w = tl.load(w_ptr + c, mask=c < cols, other=1.0)
    b = tl.load(b_ptr + c, mask=c < cols, other=0.0)
    y = d / tl.sqrt(var + eps)[None, :] * w[None, :] + b[None, :]
    tl.store(y_ptr + r[:, None] * cols + c[None, :], y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.bn = nn.BatchNorm1d(features)

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        _bn[(triton.cdiv(cols, 16),)](
            x,
            self.bn.weight,
            self.bn.bias,
            y,
            rows,
            cols,
            self.bn.eps,
            BR=triton.next_power_of_2(rows),
            BC=16,
        )
        return y
