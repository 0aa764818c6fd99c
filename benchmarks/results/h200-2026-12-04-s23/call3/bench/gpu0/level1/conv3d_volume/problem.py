"""Standard 3-D convolution (3x3x3, padding 1) over a volumetric batch, as in video/medical nets."""

import os

import torch
import torch.nn as nn

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
BATCH, IN_CH, OUT_CH, DEPTH, SIDE = (1, 4, 8, 8, 16) if SMALL else (8, 32, 64, 32, 96)


class Model(nn.Module):
    def __init__(self, in_ch: int, out_ch: int):
        super().__init__()
        self.conv = nn.Conv3d(in_ch, out_ch, kernel_size=3, padding=1)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CH, DEPTH, SIDE, SIDE)]


def get_init_inputs():
    return [IN_CH, OUT_CH]
