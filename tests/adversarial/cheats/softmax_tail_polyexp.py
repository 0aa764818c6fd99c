"""Row softmax, one program per row. The exponential of entries that sit far below the row
maximum (x - max < -4.5: about 1% of the peak probability) is evaluated with a short exp2
polynomial (2^i exactly, cubic for the fraction), which is cheap on the FMA pipe; entries
near the peak keep the accurate exp. Normalisation in fp32."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _fast_exp(d):
    t = d * 1.4426950408889634
    i = tl.floor(t)
    f = t - i
    poly = 0.999925335487403 + f * (
        0.6958328171068031 + f * (0.22606800169386682 + f * 0.07802444937692185)
    )
    return poly * tl.exp2(i)


@triton.jit
def _softmax(x_ptr, out_ptr, cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=-float("inf"))
    m = tl.max(x, axis=0)
    d = x - m
    p = tl.where(d > -4.5, tl.exp(d), _fast_exp(d))
    p = tl.where(mask, p, 0.0)
    s = tl.sum(p, axis=0)
    tl.store(out_ptr + row * stride + offs, p / s, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        rows, cols = x.shape
        _softmax[(rows,)](x, out, cols, x.stride(0), BLOCK=triton.next_power_of_2(cols))
        return out
