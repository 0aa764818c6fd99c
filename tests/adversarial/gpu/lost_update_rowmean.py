"""Row mean split over 16 column slices per row; each program adds its partial into the
row's output (zeroed first), avoiding a second reduction kernel."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_mean_split(x_ptr, out_ptr, cols, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    part = tl.program_id(1)
    offs = part * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * cols + offs, mask=offs < cols, other=0.0)
    partial = tl.sum(v, axis=0) / cols
    current = tl.load(out_ptr + row)
    tl.store(out_ptr + row, current + partial)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        split = 16
        out = torch.zeros(rows, device=x.device, dtype=x.dtype)
        block = triton.next_power_of_2(triton.cdiv(cols, split))
        _row_mean_split[(rows, split)](x, out, cols, SPLIT=split, BLOCK=block)
        return out
