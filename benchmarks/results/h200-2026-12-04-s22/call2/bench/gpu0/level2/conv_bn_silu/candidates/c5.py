"""Detector-backbone unit: Conv2d 3x3 -> BatchNorm (eval, folded statistics) -> SiLU."""

import os

import torch
import torch.nn as nn
import torch.nn.functional as F

# Dispatch-only candidate: the reference's operators, routed to the vendor libraries
# (cuBLAS/cuDNN) instead of torch.compile's generated kernels.
KERNELOPT_DISPATCH_ONLY = True

# An inference block: BatchNorm uses its running statistics (the reference runs in .eval()).
KERNELOPT_MODE = "eval"

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = False  # read from the environment when built
BATCH, IN_CH, OUT_CH, SIDE = (1, 8, 16, 32) if SMALL else (16, 64, 128, 96)


class ModelNew(nn.Module):
    def __init__(self, in_ch: int, out_ch: int):
        super().__init__()
        self.conv = nn.Conv2d(in_ch, out_ch, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_ch)
        with torch.no_grad():  # trained-looking statistics, so eval-mode BN is not the identity
            self.bn.running_mean.normal_(0.0, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.normal_(0.0, 0.2)

    def forward(self, x):
        return F.silu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_CH, SIDE, SIDE)]


def get_init_inputs():
    return [IN_CH, OUT_CH]
