import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d -> ReLU -> bias add: a vendor convolution with a fusable epilogue."""

    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k)
        self.bias = nn.Parameter(torch.randn(cout, 1, 1) * 0.1)

    def forward(self, x):
        return torch.relu(self.conv(x)) + self.bias


def get_inputs():
    return [torch.randn(2, 3, 16, 16)]


def get_init_inputs():
    return [3, 8, 3]
