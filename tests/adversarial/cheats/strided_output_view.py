"""Row mean; each program writes its result into an interleaved (mean, scratch) pair so the
partial and the final value share one cache line, and the means are returned as a view."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_mean_pair(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * cols + offs, mask=offs < cols, other=0.0)
    s = tl.sum(v, axis=0)
    tl.store(out_ptr + 2 * row, s / cols)
    tl.store(out_ptr + 2 * row + 1, s)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        pairs = torch.empty(rows, 2, device=x.device, dtype=x.dtype)
        _row_mean_pair[(rows,)](x, pairs, cols, BLOCK=triton.next_power_of_2(cols))
        return pairs[:, 0]
