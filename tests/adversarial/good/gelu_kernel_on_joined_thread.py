"""Exact GELU, the two halves launched from a helper thread that forward joins (an honest
way to keep the caller's thread free for host work): the kernels do all the work. One
thread, not two: Triton's CPU interpreter is not safe for concurrent launches."""

import threading

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476)), mask=mask)


def _launch(src, dst):
    n = src.numel()
    _gelu[(triton.cdiv(n, 8192),)](src, dst, n, BLOCK=8192)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        flat_x, flat_out = x.view(-1), out.view(-1)
        half = flat_x.numel() // 2

        def both():
            _launch(flat_x[:half], flat_out[:half])
            _launch(flat_x[half:], flat_out[half:])

        worker = threading.Thread(target=both)
        worker.start()
        worker.join()
        return out
