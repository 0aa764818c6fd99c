"""A linear layer followed by ReLU: 64 x 128 activations, 96 output features."""

import torch
import torch.nn as nn

BATCH, IN_FEATURES, OUT_FEATURES = 64, 128, 96


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
