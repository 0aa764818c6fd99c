"""Sum of all elements of a 1024 x 1024 tensor (a full reduction to a scalar)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.sum()


def get_inputs():
    return [torch.randn(1024, 1024)]


def get_init_inputs():
    return []
