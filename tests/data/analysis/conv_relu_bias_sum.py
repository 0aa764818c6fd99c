import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d -> ReLU -> bias add, and per-channel sums (the shape of the CUDA sample)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bias = nn.Parameter(torch.randn(8, 1, 1) * 0.1)

    def forward(self, x):
        y = torch.relu(self.conv(x)) + self.bias
        return y, y.sum(dim=(2, 3))


def get_inputs():
    return [torch.randn(2, 3, 16, 16)]
