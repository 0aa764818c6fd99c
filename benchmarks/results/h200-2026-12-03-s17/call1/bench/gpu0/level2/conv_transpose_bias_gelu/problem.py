"""Decoder upsampling: ConvTranspose2d (stride 2) -> per-channel bias -> GELU -> scale."""

import os

import torch
import torch.nn as nn
import torch.nn.functional as F

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
BATCH, IN_CH, OUT_CH, SIDE = (1, 8, 8, 16) if SMALL else (16, 128, 64, 64)


class Model(nn.Module):
    def __init__(self, in_ch: int, out_ch: int):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_ch, out_ch, kernel_size=4, stride=2, padding=1)
        self.bias = nn.Parameter(torch.randn(out_ch, 1, 1) * 0.1)

    def forward(self, x):
        y = self.up(x) + self.bias
        return F.gelu(y) * 0.5


def get_inputs():
    return [torch.randn(BATCH, IN_CH, SIDE, SIDE)]


def get_init_inputs():
    return [IN_CH, OUT_CH]
