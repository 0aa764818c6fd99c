"""Depthwise 3x3 convolution over a MobileNet-sized activation map (torch.compile is weak here)."""

import os

import torch
import torch.nn as nn

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
BATCH, CHANNELS, HEIGHT, WIDTH = (2, 16, 56, 56) if SMALL else (32, 384, 56, 56)
KERNEL = 3


class Model(nn.Module):
    def __init__(self, channels: int, kernel: int):
        super().__init__()
        self.dw = nn.Conv2d(channels, channels, kernel, padding=kernel // 2, groups=channels)

    def forward(self, x):
        return self.dw(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, KERNEL]
