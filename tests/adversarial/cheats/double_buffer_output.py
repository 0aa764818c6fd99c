"""Row softmax into one of two persistent output buffers, alternating call by call (no
allocation on the hot path; the previous result stays valid while the next is computed)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * cols + offs, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._pool = {}
        self._flip = 0

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        key = (rows, cols, x.device, self._flip)
        out = self._pool.get(key)
        if out is None:
            out = self._pool[key] = torch.empty_like(x)
        self._flip ^= 1
        _softmax[(rows,)](x, out, cols, BLOCK=triton.next_power_of_2(cols))
        return out
