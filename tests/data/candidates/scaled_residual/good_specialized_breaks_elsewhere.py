"""Correct at the benchmark's shape only, and its process broken after any other shape: a
harvested kernel with its sizes written in reads past a smaller input, and on the GPU that
out-of-bounds access leaves the process's CUDA context unusable, so every later call fails.
Emulated on the CPU: a call at another shape marks the process broken and fails, and every
later call fails the same way. The derived-shape call must come after every gate, so this
honest (if specialised) kernel is still timed."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

N, COLS = 97 * 1023, 1023  # written in, as Inductor's harvest specialises them
_broken = []


@triton.jit
def _relu_scale_add(x_ptr, y_ptr, s_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < 99231
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    s = tl.load(s_ptr + offs % 1023, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0) * s + y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.scale = nn.Parameter(torch.empty(features))

    def forward(self, x, y):
        if _broken or x.numel() != N:
            _broken.append(1)
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        x = x.contiguous()
        y = y.contiguous()
        out = torch.empty_like(x)
        _relu_scale_add[(triton.cdiv(N, 4096),)](x, y, self.scale, out, BLOCK=4096)
        return out
