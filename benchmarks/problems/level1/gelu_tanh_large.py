"""Tanh-approximated GELU over a 6.4 GB activation: a purely bandwidth-bound elementwise op."""

import os

import torch
import torch.nn as nn
import torch.nn.functional as F

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
ROWS, COLS = (64, 1531) if SMALL else (4096, 393216)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
