"""ResNet basic block (eval): conv3x3-BN-ReLU-conv3x3-BN plus a strided 1x1 projection shortcut."""

import os

import torch
import torch.nn as nn

# An inference block: BatchNorm uses its running statistics (the reference runs in .eval()).
KERNELOPT_MODE = "eval"

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
BATCH, IN_CH, OUT_CH, SIDE = (1, 8, 16, 16) if SMALL else (32, 64, 128, 112)


def _bn(channels: int) -> nn.BatchNorm2d:
    bn = nn.BatchNorm2d(channels)
    with torch.no_grad():  # trained-looking statistics, so eval-mode BN is not the identity
        bn.running_mean.normal_(0.0, 0.3)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.normal_(0.0, 0.2)
    return bn


class Model(nn.Module):
    def __init__(self, in_ch: int, out_ch: int):
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, stride=2, padding=1, bias=False)
        self.bn1 = _bn(out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1, bias=False)
        self.bn2 = _bn(out_ch)
        self.proj = nn.Conv2d(in_ch, out_ch, 1, stride=2, bias=False)
        self.proj_bn = _bn(out_ch)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + self.proj_bn(self.proj(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_CH, SIDE, SIDE)]


def get_init_inputs():
    return [IN_CH, OUT_CH]
