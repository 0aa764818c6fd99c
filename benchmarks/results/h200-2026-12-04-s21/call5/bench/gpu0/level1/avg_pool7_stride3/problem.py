"""Overlapping 7x7 average pooling with stride 3, as in coarse context pooling branches."""

import os

import torch
import torch.nn as nn

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
BATCH, CHANNELS, HEIGHT, WIDTH = (2, 12, 64, 64) if SMALL else (32, 256, 64, 64)
KERNEL, STRIDE = 7, 3


class Model(nn.Module):
    def __init__(self, kernel: int, stride: int):
        super().__init__()
        # Windows overlap (stride < kernel). Measured on an H200 (torch 2.11): Inductor's
        # unrolled window loads run ~1.6x slower than eager here.
        self.pool = nn.AvgPool2d(kernel, stride=stride)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL, STRIDE]
