"""Row softmax, one program per row: a whole power-of-two tile is loaded without a mask (the
lanes past the row belong to the next row, so they are valid memory) and set to -inf before
the reduction, so they never count."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_row(x_ptr, out_ptr, cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    keep = offs < cols
    x = tl.load(x_ptr + row * stride + offs)
    x = tl.where(keep, x, -float("inf"))
    m = tl.max(x, axis=0)
    e = tl.exp(x - m)
    s = tl.sum(e, axis=0)
    tl.store(out_ptr + row * stride + offs, e / s, mask=keep)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        out = torch.empty_like(x)
        _softmax_row[(rows,)](x, out, cols, x.stride(0), BLOCK=triton.next_power_of_2(cols))
        return out
