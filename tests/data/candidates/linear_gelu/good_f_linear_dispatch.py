"""Correct: F.linear (cuBLAS on the GPU) without the bias, then the bias + GELU epilogue in
Triton, with the launch configuration in the LAUNCH_CONFIGS convention."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

LAUNCH_CONFIGS = {"_bias_gelu_rows": {"BLOCK_N": 256, "num_warps": 4, "num_stages": 1}}


@triton.jit
def _bias_gelu_rows(y_ptr, b_ptr, out_ptr, cols, stride, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    mask = offs < cols
    v = tl.load(y_ptr + row * stride + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask)
    g = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
    tl.store(out_ptr + row * stride + offs, g, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = F.linear(x, self.linear.weight)
        out = torch.empty_like(y)
        cfg = LAUNCH_CONFIGS["_bias_gelu_rows"]
        _bias_gelu_rows[(y.shape[0],)](y, self.linear.bias, out, y.shape[1], y.stride(0), **cfg)
        return out
