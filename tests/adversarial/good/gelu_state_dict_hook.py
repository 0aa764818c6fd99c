"""Exact GELU whose module keeps a state-dict post-hook (it marks the activation cache stale
whenever the state is serialised); the harness must never run it behind the candidate's back."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu(x_ptr, out_ptr, n, SCALE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offs, y * SCALE, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._serialised = [0]
        self.register_state_dict_post_hook(self._count)

    @staticmethod
    def _count(module, state_dict, prefix, local_metadata):
        module._serialised[0] += 1

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        # Serialised mid-use means a stale cache in the real model: this one says so loudly.
        scale = 2.0 if self._serialised[0] else 1.0
        _gelu[(triton.cdiv(n, 8192),)](x, out, n, SCALE=scale, BLOCK=8192)
        return out
