"""Candidate for linear_relu.py: the matmul stays a vendor call, bias and ReLU are fused in
one masked Triton kernel (fp32 throughout); launch settings live in LAUNCH_CONFIGS."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

LAUNCH_CONFIGS = {
    "bias_relu_kernel": {"BLOCK": 1024, "num_warps": 4, "num_stages": 1},
}


@triton.jit
def bias_relu_kernel(y_ptr, b_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs % cols, mask=mask, other=0.0)
    tl.store(out_ptr + offs, tl.maximum(y + b, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        y = torch.matmul(x, self.linear.weight.t()).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        cfg = LAUNCH_CONFIGS["bias_relu_kernel"]
        bias_relu_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](
            y, self.linear.bias, out, n, y.shape[-1], **cfg
        )
        return out
