"""Row argmax, one program per row: max first, then the position of the max found with a
second max over the matching indices (one pass over registers, no index tie-break logic)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _argmax(x_ptr, out_ptr, cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=-float("inf"))
    m = tl.max(x, axis=0)
    idx = tl.max(tl.where(x == m, offs, -1), axis=0)
    tl.store(out_ptr + row, idx.to(tl.int64))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        out = torch.empty(rows, device=x.device, dtype=torch.int64)
        _argmax[(rows,)](x, out, cols, x.stride(0), BLOCK=triton.next_power_of_2(cols))
        return out
