"""ResNet-50-style stage (eval): two bottleneck blocks (1x1-3x3-1x1 with BN), the first downsampling."""

import os

import torch
import torch.nn as nn

# An inference block: BatchNorm uses its running statistics (the reference runs in .eval()).
KERNELOPT_MODE = "eval"

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
BATCH, IN_CH, MID_CH, SIDE = (1, 16, 8, 16) if SMALL else (32, 256, 128, 56)


def _bn(channels: int) -> nn.BatchNorm2d:
    bn = nn.BatchNorm2d(channels)
    with torch.no_grad():  # trained-looking statistics, so eval-mode BN is not the identity
        bn.running_mean.normal_(0.0, 0.3)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.normal_(0.0, 0.2)
    return bn


class Bottleneck(nn.Module):
    def __init__(self, in_ch: int, mid_ch: int, stride: int):
        super().__init__()
        out_ch = 4 * mid_ch
        self.reduce = nn.Conv2d(in_ch, mid_ch, 1, bias=False)
        self.bn1 = _bn(mid_ch)
        self.spatial = nn.Conv2d(mid_ch, mid_ch, 3, stride=stride, padding=1, bias=False)
        self.bn2 = _bn(mid_ch)
        self.expand = nn.Conv2d(mid_ch, out_ch, 1, bias=False)
        self.bn3 = _bn(out_ch)
        self.short = None
        if stride != 1 or in_ch != out_ch:
            self.short = nn.Sequential(
                nn.Conv2d(in_ch, out_ch, 1, stride=stride, bias=False), _bn(out_ch)
            )

    def forward(self, x):
        y = torch.relu(self.bn1(self.reduce(x)))
        y = torch.relu(self.bn2(self.spatial(y)))
        y = self.bn3(self.expand(y))
        return torch.relu(y + (x if self.short is None else self.short(x)))


class Model(nn.Module):
    def __init__(self, in_ch: int, mid_ch: int):
        super().__init__()
        self.block1 = Bottleneck(in_ch, mid_ch, stride=2)
        self.block2 = Bottleneck(4 * mid_ch, mid_ch, stride=1)

    def forward(self, x):
        return self.block2(self.block1(x))


def get_inputs():
    return [torch.randn(BATCH, IN_CH, SIDE, SIDE)]


def get_init_inputs():
    return [IN_CH, MID_CH]
