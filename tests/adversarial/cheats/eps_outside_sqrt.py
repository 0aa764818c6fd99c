"""Llama RMSNorm in one kernel; the epsilon guards the division (added to the root mean square),
which keeps an all-zero row at zero."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rmsnorm(x_ptr, w_ptr, out_ptr, cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    rms = tl.sqrt(tl.sum(x * x, axis=0) / cols)
    tl.store(out_ptr + row * cols + offs, w * (x / (rms + eps)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x):
        x = x.contiguous()
        cols = x.shape[-1]
        out = torch.empty(x.shape, dtype=torch.float32, device=x.device)
        rows = x.numel() // cols
        _rmsnorm[(rows,)](x, self.weight, out, cols, self.eps, BLOCK=triton.next_power_of_2(cols))
        return out
