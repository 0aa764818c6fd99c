"""Product of two lower-triangular matrices, keeping the lower triangle: tril(A @ B)."""

import os

import torch
import torch.nn as nn

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
N = 192 if SMALL else 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.tril(torch.matmul(a, b))


def get_inputs():
    return [torch.tril(torch.randn(N, N)), torch.tril(torch.randn(N, N))]


def get_init_inputs():
    return []
