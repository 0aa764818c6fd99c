import torch
import torch.nn as nn


class Model(nn.Module):
    """3x3 average pooling alone: Inductor lowers it to a Triton kernel; eager has its own."""

    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool2d(3, stride=1, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(2, 4, 12, 12)]
