"""Batched product of 16384 small 48x40 @ 40x56 matrices (per-patch projections)."""

import os

import torch
import torch.nn as nn

# Dispatch-only candidate: the reference's operators, routed to the vendor libraries
# (cuBLAS/cuDNN) instead of torch.compile's generated kernels.
KERNELOPT_DISPATCH_ONLY = True

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = False  # read from the environment when built
BATCH = 32 if SMALL else 16384
M, K, N = 48, 40, 56


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(BATCH, M, K), torch.randn(BATCH, K, N)]


def get_init_inputs():
    return []
