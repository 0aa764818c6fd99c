"""Row softmax whose per-row statistics live in a scratch buffer allocated once and fully
overwritten on every call (the output itself is fresh each call)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_stats(x_ptr, stats_ptr, cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + offs, mask=offs < cols, other=-float("inf"))
    m = tl.max(x, axis=0)
    tl.store(stats_ptr + 2 * row, m)
    tl.store(stats_ptr + 2 * row + 1, tl.sum(tl.exp(x - m), axis=0))


@triton.jit
def _normalise(x_ptr, stats_ptr, out_ptr, cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=-float("inf"))
    m = tl.load(stats_ptr + 2 * row)
    s = tl.load(stats_ptr + 2 * row + 1)
    tl.store(out_ptr + row * stride + offs, tl.exp(x - m) / s, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._scratch = None

    def _stats_buffer(self, rows, device):
        if self._scratch is None or self._scratch.numel() < 2 * rows:
            self._scratch = torch.empty(2 * rows, device=device, dtype=torch.float32)
        return self._scratch

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        block = triton.next_power_of_2(cols)
        stats = self._stats_buffer(rows, x.device)
        out = torch.empty_like(x)
        _row_stats[(rows,)](x, stats, cols, x.stride(0), BLOCK=block)
        _normalise[(rows,)](x, stats, out, cols, x.stride(0), BLOCK=block)
        return out
