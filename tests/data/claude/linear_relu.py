"""A small module problem for the Claude policy's tests: a vendor matmul with a bias+ReLU
epilogue, the pattern the Planner should fuse around (keep the matmul, fuse the epilogue)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(127, 64)]


def get_init_inputs():
    return [64]
