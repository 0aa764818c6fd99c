"""Reads only the first row (correct: the rest cannot change the output); implausibly fast
against the roofline of the problem's declared inputs."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _first_row_times_two(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < cols
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty(1, x.shape[1], device=x.device, dtype=x.dtype)
        _first_row_times_two[(triton.cdiv(x.shape[1], 1024),)](x, out, x.shape[1], BLOCK=1024)
        return out
