"""Exact GELU over a ragged size: 2D tiles of rows x columns, every load and store masked
to the tensor's extent in both dimensions (strides passed, so a row-padded input works)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu_2d(x_ptr, out_ptr, rows, cols, sx, so, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)[:, None]
    c = tl.program_id(1) * BC + tl.arange(0, BC)[None, :]
    inside = (r < rows) & (c < cols)
    x = tl.load(x_ptr + r * sx + c, mask=inside, other=0.0)
    y = x * 0.5 * (1.0 + tl.math.erf(x * 0.7071067811865476))
    tl.store(out_ptr + r * so + c, y, mask=inside)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        flat = x.reshape(-1, x.shape[-1])
        if flat.stride(-1) != 1:
            flat = flat.contiguous()
        rows, cols = flat.shape
        out = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
        grid = (triton.cdiv(rows, 16), triton.cdiv(cols, 256))
        _gelu_2d[grid](flat, out, rows, cols, flat.stride(0), out.stride(0), BR=16, BC=256)
        return out.reshape(x.shape)
