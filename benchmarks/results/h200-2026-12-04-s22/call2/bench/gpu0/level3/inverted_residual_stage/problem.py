"""Mobile-net stage: two inverted-residual blocks (1x1 expand, depthwise 3x3, 1x1 project, BN)."""

import os

import torch
import torch.nn as nn
import torch.nn.functional as F

# An inference block: BatchNorm uses its running statistics (the reference runs in .eval()).
KERNELOPT_MODE = "eval"

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
BATCH, CHANNELS, SIDE, EXPAND = (1, 8, 24, 4) if SMALL else (32, 32, 56, 6)
BLOCKS = 2


def _trained_bn(channels: int) -> nn.BatchNorm2d:
    bn = nn.BatchNorm2d(channels)
    with torch.no_grad():  # trained-looking statistics, so eval-mode BN is not the identity
        bn.running_mean.normal_(0.0, 0.3)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.normal_(0.0, 0.1)
    return bn


class InvertedResidual(nn.Module):
    def __init__(self, channels: int, expand: int):
        super().__init__()
        hidden = channels * expand
        self.expand = nn.Conv2d(channels, hidden, 1, bias=False)
        self.bn1 = _trained_bn(hidden)
        self.dw = nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden, bias=False)
        self.bn2 = _trained_bn(hidden)
        self.project = nn.Conv2d(hidden, channels, 1, bias=False)
        self.bn3 = _trained_bn(channels)

    def forward(self, x):
        h = F.relu6(self.bn1(self.expand(x)))
        h = F.relu6(self.bn2(self.dw(h)))
        return x + self.bn3(self.project(h))


class Model(nn.Module):
    def __init__(self, channels: int, expand: int, blocks: int):
        super().__init__()
        self.blocks = nn.Sequential(*[InvertedResidual(channels, expand) for _ in range(blocks)])

    def forward(self, x):
        return self.blocks(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, SIDE, SIDE)]


def get_init_inputs():
    return [CHANNELS, EXPAND, BLOCKS]
