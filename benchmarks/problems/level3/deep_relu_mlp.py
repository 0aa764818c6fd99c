"""Deep ReLU MLP: six Linear -> ReLU layers of width 4096 on a batch of 4096, then a projection."""

import os

import torch
import torch.nn as nn

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
BATCH, IN_F, HIDDEN, DEPTH, OUT_F = (64, 96, 128, 6, 32) if SMALL else (4096, 1024, 4096, 6, 256)


class Model(nn.Module):
    def __init__(self, in_f: int, hidden: int, depth: int, out_f: int):
        super().__init__()
        layers = []
        width = in_f
        for _ in range(depth):
            layers += [nn.Linear(width, hidden), nn.ReLU()]
            width = hidden
        self.body = nn.Sequential(*layers)
        self.out = nn.Linear(hidden, out_f)

    def forward(self, x):
        return self.out(self.body(x))


def get_inputs():
    return [torch.randn(BATCH, IN_F)]


def get_init_inputs():
    return [IN_F, HIDDEN, DEPTH, OUT_F]
