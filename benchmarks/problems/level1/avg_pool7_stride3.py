"""Stride-1 3x3 average pooling with 'same' padding, as in Inception-style branches."""

import os

import torch
import torch.nn as nn

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
BATCH, CHANNELS, HEIGHT, WIDTH = (2, 12, 64, 64) if SMALL else (32, 256, 64, 64)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        # count_include_pad=False: border windows average only real pixels.
        self.pool = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return []
