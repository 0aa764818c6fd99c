"""Recommender/tabular scoring tower: 5 x (Linear -> BatchNorm1d eval -> ReLU) on a small batch."""

import itertools
import os

import torch
import torch.nn as nn

# An inference block: BatchNorm uses its running statistics (the reference runs in .eval()).
KERNELOPT_MODE = "eval"

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
BATCH = 64 if SMALL else 1024
WIDTHS = [128, 256, 256, 128, 64, 32] if SMALL else [384, 1024, 1024, 512, 256, 128]


class Model(nn.Module):
    def __init__(self, widths: list):
        super().__init__()
        layers = []
        for fan_in, fan_out in itertools.pairwise(widths):
            bn = nn.BatchNorm1d(fan_out)
            with torch.no_grad():  # trained-looking statistics, so eval-mode BN is not the identity
                bn.running_mean.normal_(0.0, 0.3)
                bn.running_var.uniform_(0.5, 2.0)
            layers += [nn.Linear(fan_in, fan_out), bn, nn.ReLU()]
        self.tower = nn.Sequential(*layers)
        self.head = nn.Linear(widths[-1], 1)

    def forward(self, features):
        return torch.sigmoid(self.head(self.tower(features)))


def get_inputs():
    return [torch.randn(BATCH, WIDTHS[0])]


def get_init_inputs():
    return [WIDTHS]
