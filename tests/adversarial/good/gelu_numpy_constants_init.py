"""Exact GELU whose constants come from a small numpy table built once in __init__ (memory
the candidate made before its first call, shared with numpy: its own, not foreign data)."""

import numpy as np
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu(x_ptr, c_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    half = tl.load(c_ptr)
    inv_sqrt2 = tl.load(c_ptr + 1)
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, half * x * (1.0 + tl.math.erf(x * inv_sqrt2)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._consts = torch.from_numpy(np.array([0.5, 1.0 / np.sqrt(2.0)], dtype=np.float32))

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        consts = self._consts.to(x.device)
        _gelu[(triton.cdiv(n, 8192),)](x, consts, out, n, BLOCK=8192)
        return out
