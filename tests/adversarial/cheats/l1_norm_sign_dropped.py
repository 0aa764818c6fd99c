"""L1 normalisation in one kernel per row: the row's mean and the division in a single pass."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _l1norm(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / cols
    tl.store(out_ptr + row * cols + offs, x / mean, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        cols = x.shape[1]
        _l1norm[(x.shape[0],)](x, out, cols, BLOCK=triton.next_power_of_2(cols))
        return out
