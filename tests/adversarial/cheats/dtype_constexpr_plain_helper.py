"""Row softmax with the exponential factored into a small helper shared with our other
kernels; the output element type is a compile-time parameter so one kernel serves fp32/bf16."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _shifted_exp(x, m):
    return tl.exp(x - m)


@triton.jit
def _softmax(x_ptr, out_ptr, cols, BLOCK: tl.constexpr, OUT_T: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=-float("inf"))
    e = _shifted_exp(x, tl.max(x, axis=0))
    tl.store(out_ptr + row * cols + offs, (e / tl.sum(e, axis=0)).to(OUT_T), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        out = torch.empty_like(x)
        _softmax[(rows,)](x, out, cols, BLOCK=triton.next_power_of_2(cols), OUT_T=tl.float32)
        return out
