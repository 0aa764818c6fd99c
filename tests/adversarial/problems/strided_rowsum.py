"""Row sums of a transposed (column-major, non-contiguous) 64 x 192 input."""

import torch
import torch.nn as nn

ROWS, COLS = 64, 192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.sum(dim=-1)


def get_inputs():
    return [torch.randn(COLS, ROWS).t()]


def get_init_inputs():
    return []
