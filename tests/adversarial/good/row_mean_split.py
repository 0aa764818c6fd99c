"""Row mean as a split reduction: the first kernel writes one partial sum per
(row, column slice), the second adds the slices and divides."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _partial_sums(x_ptr, part_ptr, cols, stride, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    part = tl.program_id(1)
    offs = part * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * stride + offs, mask=offs < cols, other=0.0)
    tl.store(part_ptr + row * SPLIT + part, tl.sum(v, axis=0))


@triton.jit
def _finish(part_ptr, out_ptr, cols, SPLIT: tl.constexpr):
    row = tl.program_id(0)
    p = tl.load(part_ptr + row * SPLIT + tl.arange(0, SPLIT))
    tl.store(out_ptr + row, tl.sum(p, axis=0) / cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        split = 4
        block = triton.next_power_of_2(triton.cdiv(cols, split))
        partials = torch.empty(rows, split, device=x.device, dtype=torch.float32)
        out = torch.empty(rows, device=x.device, dtype=x.dtype)
        _partial_sums[(rows, split)](x, partials, cols, x.stride(0), SPLIT=split, BLOCK=block)
        _finish[(rows,)](partials, out, cols, SPLIT=split)
        return out
