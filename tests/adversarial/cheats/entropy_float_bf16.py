"""Row softmax kernel that also writes each row's entropy; the logged mean entropy is
accumulated from bfloat16 products (it is a monitoring statistic), read back as a Python float."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_ent(x_ptr, p_ptr, ent_ptr, cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=-float("inf"))
    m = tl.max(x, axis=0)
    e = tl.where(mask, tl.exp(x - m), 0.0)
    s = tl.sum(e, axis=0)
    p = e / s
    tl.store(p_ptr + row * stride + offs, p, mask=mask)
    logp = (x - m) - tl.log(s)
    ent = -tl.sum(
        tl.where(mask & (p > 0), (p.to(tl.bfloat16) * logp.to(tl.bfloat16)).to(tl.float32), 0.0),
        axis=0,
    )
    tl.store(ent_ptr + row, ent)


@triton.jit
def _mean_every(ent_ptr, out_ptr, n, STEP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK) * STEP
    v = tl.load(ent_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(v, axis=0) / tl.cdiv(n, STEP))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        p = torch.empty_like(x)
        ent = torch.empty(rows, device=x.device, dtype=torch.float32)
        mean = torch.empty(1, device=x.device, dtype=torch.float32)
        _softmax_ent[(rows,)](x, p, ent, cols, x.stride(0), BLOCK=triton.next_power_of_2(cols))
        _mean_every[(1,)](ent, mean, rows, STEP=1, BLOCK=triton.next_power_of_2(rows))
        return p, mean.item()
