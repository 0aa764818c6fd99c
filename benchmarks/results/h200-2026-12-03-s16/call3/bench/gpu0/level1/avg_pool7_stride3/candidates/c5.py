"""Overlapping 7x7 average pooling with stride 3, as in coarse context pooling branches."""

import os

import torch
import torch.nn as nn

# Dispatch-only candidate: the reference after graph rewrites, on the vendor
# libraries (no generated kernels).
KERNELOPT_DISPATCH_ONLY = True


class _KernelOptReference(nn.Module):
    def __init__(self, kernel: int, stride: int):
        super().__init__()
        # Windows overlap (stride < kernel). Measured on an H200 (torch 2.11): Inductor's
        # unrolled window loads run ~1.6x slower than eager here.
        self.pool = nn.AvgPool2d(kernel, stride=stride)

    def forward(self, x):
        return self.pool(x)


# --- KernelOPT graph rewrite: average pool as two 1-D passes ---

class ModelNew(_KernelOptReference):
    """The reference with its forward rewritten: average pool as two 1-D passes."""

    def forward(self, x):
        avg_pool2d = torch._C._nn.avg_pool2d(x, (7, 1), (3, 1), (0, 0));  x = None
        avg_pool2d_1 = torch._C._nn.avg_pool2d(avg_pool2d, (1, 7), (1, 3), (0, 0));  avg_pool2d = None
        return avg_pool2d_1
    
