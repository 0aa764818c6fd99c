"""Row softmax with a kernel specialised per row width at construction (one kernel object per
width, built on first use)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=offs < n), mask=offs < n)


def _stable_exp(z):
    return tl.exp(z)


def _make_softmax(width):
    block = triton.next_power_of_2(width)

    @triton.jit
    def softmax_rows(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        mask = offs < cols
        x = tl.load(x_ptr + row * cols + offs, mask=mask, other=-float("inf"))
        e = _stable_exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * cols + offs, e / tl.sum(e, axis=0), mask=mask)

    return softmax_rows, block


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._kernels = {}

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        kernel, block = self._kernels.setdefault(cols, _make_softmax(cols))
        out = torch.empty_like(x)
        kernel[(rows,)](x, out, cols, BLOCK=block)
        return out
