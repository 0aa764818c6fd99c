"""GELU with an aligned fast path: when the input's address is 16-byte aligned and its size
a multiple of the tile, the kernel runs without masks (the compiler can then emit 128-bit
vector loads); otherwise the masked kernel handles the ragged tail."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs) if EVEN else tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    y = x * 0.5 * (1.0 + tl.math.erf(x * 0.7071067811865476))
    if EVEN:
        tl.store(out_ptr + offs, y)
    else:
        tl.store(out_ptr + offs, y, mask=offs < n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        block = 1024
        aligned = x.data_ptr() % 16 == 0 and out.data_ptr() % 16 == 0
        even = aligned and n % block == 0
        _gelu[(triton.cdiv(n, block),)](x, out, n, BLOCK=block, EVEN=even)
        return out
