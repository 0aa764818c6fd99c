"""Linear layer followed by a chain of constant rescalings and shifts (x*s1 + c, / s2, - c2)."""

import os

import torch
import torch.nn as nn

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
BATCH, IN_F, OUT_F = (128, 192, 160) if SMALL else (8192, 2048, 8192)


class Model(nn.Module):
    def __init__(self, in_f: int, out_f: int, scale: float, shift: float, divisor: float):
        super().__init__()
        self.linear = nn.Linear(in_f, out_f)
        self.scale = scale
        self.shift = shift
        self.divisor = divisor

    def forward(self, x):
        y = self.linear(x)
        y = y * self.scale
        y = y + self.shift
        y = y / self.divisor
        return y - 0.25


def get_inputs():
    return [torch.randn(BATCH, IN_F)]


def get_init_inputs():
    return [IN_F, OUT_F, 1.75, 0.5, 3.0]
