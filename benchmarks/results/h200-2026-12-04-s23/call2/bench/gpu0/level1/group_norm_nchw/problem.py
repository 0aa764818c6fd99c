"""GroupNorm with 32 groups on a UNet-sized NCHW feature map (a two-pass memory-bound norm)."""

import os

import torch
import torch.nn as nn

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
BATCH, CHANNELS, HEIGHT, WIDTH = (2, 64, 28, 28) if SMALL else (16, 256, 96, 96)
GROUPS = 32


class Model(nn.Module):
    def __init__(self, groups: int, channels: int):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 2.0 - 0.5]


def get_init_inputs():
    return [GROUPS, CHANNELS]
