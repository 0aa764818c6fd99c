"""Wide MLP up-projection: Linear (bias) -> ReLU on a large token batch, a GEMM with an epilogue."""

import os

import torch
import torch.nn as nn

# Dispatch-only candidate: the reference after graph rewrites, on the vendor
# libraries (no generated kernels).
KERNELOPT_DISPATCH_ONLY = True


class _KernelOptReference(nn.Module):
    def __init__(self, in_f: int, out_f: int):
        super().__init__()
        self.fc = nn.Linear(in_f, out_f)

    def forward(self, x):
        return torch.relu(self.fc(x))


# --- KernelOPT graph rewrite: GEMM + bias + ReLU as the cuBLASLt fused epilogue ---

class ModelNew(_KernelOptReference):
    """The reference with its forward rewritten: GEMM + bias + ReLU as the cuBLASLt fused epilogue."""

    def forward(self, x):
        fc_weight = self.fc.weight
        fc_bias = self.fc.bias
        t = fc_weight.t();  fc_weight = None
        _addmm_activation_default = torch.ops.aten._addmm_activation.default(fc_bias, x, t, use_gelu = False);  fc_bias = x = t = None
        return _addmm_activation_default
    
