"""One U-Net level: conv-ReLU encoder, max-pool, bottleneck conv, transposed-conv upsample, skip concat."""

import os

import torch
import torch.nn as nn

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
BATCH, IN_CH, WIDTH, SIDE = (1, 3, 8, 32) if SMALL else (16, 3, 64, 256)


class Model(nn.Module):
    def __init__(self, in_ch: int, width: int):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(in_ch, width, 3, padding=1), nn.ReLU())
        self.pool = nn.MaxPool2d(2)
        self.mid = nn.Sequential(nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU())
        self.up = nn.ConvTranspose2d(2 * width, width, 2, stride=2)
        self.dec = nn.Sequential(nn.Conv2d(2 * width, width, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(width, 1, 1)

    def forward(self, x):
        skip = self.enc(x)
        y = self.up(self.mid(self.pool(skip)))
        return self.head(self.dec(torch.cat([y, skip], dim=1)))


def get_inputs():
    return [torch.randn(BATCH, IN_CH, SIDE, SIDE)]


def get_init_inputs():
    return [IN_CH, WIDTH]
