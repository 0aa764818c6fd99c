"""Gram matrix of a wide feature matrix: X @ X^T with a long inner dimension (compute-bound)."""

import os

import torch
import torch.nn as nn

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
ROWS = 96 if SMALL else 4096
FEATURES = 160 if SMALL else 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.matmul(x, x.t())


def get_inputs():
    return [torch.randn(ROWS, FEATURES)]


def get_init_inputs():
    return []
