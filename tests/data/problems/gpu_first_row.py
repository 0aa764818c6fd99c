"""GPU-only test problem: the reference reads a 256 MiB input but its output depends only on
the first row. A candidate that reads just that row is correct yet faster than moving the
inputs once through HBM: the performance gate must flag it as implausible."""

import torch
import torch.nn as nn

ROWS, COLS = 16384, 4096


class Model(nn.Module):
    def forward(self, x):
        return x[:1] * 2.0 + x.abs().amax() * 0.0


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
