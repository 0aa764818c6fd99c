"""Squeeze-and-excitation block (eval): conv-BN-ReLU, global pool, bottleneck MLP, sigmoid gating."""

import os

import torch
import torch.nn as nn

# An inference block: BatchNorm uses its running statistics (the reference runs in .eval()).
KERNELOPT_MODE = "eval"

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
BATCH, CH, SIDE, REDUCTION = (2, 16, 16, 4) if SMALL else (64, 256, 56, 16)


class Model(nn.Module):
    def __init__(self, channels: int, reduction: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        with torch.no_grad():  # trained-looking statistics, so eval-mode BN is not the identity
            self.bn.running_mean.normal_(0.0, 0.3)
            self.bn.running_var.uniform_(0.5, 2.0)
        self.fc1 = nn.Linear(channels, channels // reduction)
        self.fc2 = nn.Linear(channels // reduction, channels)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        s = y.mean(dim=(2, 3))
        gate = torch.sigmoid(self.fc2(torch.relu(self.fc1(s))))
        return y * gate[:, :, None, None] + x


def get_inputs():
    return [torch.randn(BATCH, CH, SIDE, SIDE)]


def get_init_inputs():
    return [CH, REDUCTION]
