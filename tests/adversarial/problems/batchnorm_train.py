"""BatchNorm1d over 256 features of a 512-row batch, in training mode (batch statistics;
the running mean and variance are updated as a side effect, as in every training step)."""

import torch
import torch.nn as nn

BATCH, FEATURES = 512, 256


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.bn = nn.BatchNorm1d(features)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(BATCH, FEATURES)]


def get_init_inputs():
    return [FEATURES]
