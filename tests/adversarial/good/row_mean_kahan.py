"""Row mean with a compensated (Kahan) sum over column tiles: more accurate than the
reference's own fp32 sum, so it differs from it in the last bits."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_mean_kahan(x_ptr, out_ptr, cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    comp = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * stride + offs, mask=offs < cols, other=0.0)
        y = v - comp
        t = acc + y
        comp = (t - acc) - y
        acc = t
    total = tl.sum(acc, axis=0) - tl.sum(comp, axis=0)
    tl.store(out_ptr + row, total / cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        out = torch.empty(rows, device=x.device, dtype=x.dtype)
        _row_mean_kahan[(rows,)](x, out, cols, x.stride(0), BLOCK=256)
        return out
