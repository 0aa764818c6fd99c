"""VGG-style feature stack: three (conv3x3 -> BN -> ReLU -> 2x2 max-pool) stages and a linear head."""

import itertools
import os

import torch
import torch.nn as nn

# An inference block: BatchNorm uses its running statistics (the reference runs in .eval()).
KERNELOPT_MODE = "eval"

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
BATCH, SIDE, WIDTHS, CLASSES = (
    (1, 32, [3, 8, 16, 16], 10) if SMALL else (64, 128, [3, 64, 128, 256], 1000)
)


class Model(nn.Module):
    def __init__(self, widths: list, side: int, classes: int):
        super().__init__()
        layers = []
        for c_in, c_out in itertools.pairwise(widths):
            bn = nn.BatchNorm2d(c_out)
            with torch.no_grad():  # trained-looking statistics, so eval-mode BN is not the identity
                bn.running_mean.normal_(0.0, 0.3)
                bn.running_var.uniform_(0.5, 2.0)
            layers += [nn.Conv2d(c_in, c_out, 3, padding=1), bn, nn.ReLU(), nn.MaxPool2d(2)]
        self.features = nn.Sequential(*layers)
        reduced = side // 2 ** (len(widths) - 1)
        self.head = nn.Linear(widths[-1] * reduced * reduced, classes)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


def get_inputs():
    return [torch.randn(BATCH, WIDTHS[0], SIDE, SIDE)]


def get_init_inputs():
    return [WIDTHS, SIDE, CLASSES]
