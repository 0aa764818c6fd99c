"""LayerNorm over the last dimension of 64 x 1024 activations (nn.LayerNorm, affine)."""

import torch
import torch.nn as nn

ROWS, HIDDEN = 64, 1024


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(ROWS, HIDDEN)]


def get_init_inputs():
    return [HIDDEN]
