"""Linear + ReLU: torch.addmm writes a temporary that the Triton kernel then rectifies in
place; the temporary is this call's own buffer, returned as the output."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_inplace(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(y, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = torch.addmm(self.linear.bias, x, self.linear.weight.t())
        n = y.numel()
        _relu_inplace[(triton.cdiv(n, 2048),)](y, n, BLOCK=2048)
        return y
