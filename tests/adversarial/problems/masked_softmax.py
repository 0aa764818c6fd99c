"""Softmax of scores where some rows are fully masked with -inf: the reference returns NaN
for those rows, and a candidate must reproduce them."""

import torch
import torch.nn as nn

ROWS, COLS = 32, 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    x = torch.randn(ROWS, COLS)
    dead = torch.rand(ROWS) < 0.15
    dead[3] = True  # at least one fully masked row in every draw
    x[dead] = float("-inf")
    return [x]


def get_init_inputs():
    return []
