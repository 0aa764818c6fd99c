"""Row mean split over column blocks: each program sums one block of one row and adds its share
to the row's result with a float atomic (a split reduction, as on a GPU with few rows)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 256


@triton.jit
def _row_mean_part(x_ptr, out_ptr, cols, stride, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    part = tl.program_id(1)
    offs = part * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + offs, mask=offs < cols, other=0.0)
    tl.atomic_add(out_ptr + row, tl.sum(x, axis=0) * scale)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        out = torch.zeros(rows, device=x.device, dtype=torch.float32)
        grid = (rows, triton.cdiv(cols, BLOCK))
        _row_mean_part[grid](x, out, cols, x.stride(0), 1.0 / cols, BLOCK=BLOCK)
        return out
