import torch
import torch.nn as nn


class Model(nn.Module):
    """A pointwise chain with transcendental ops (libdevice under Inductor)."""

    def forward(self, x, y):
        z = torch.tanh(x) * torch.sigmoid(y) + torch.erf(x * 0.5)
        return torch.pow(z.abs() + 1.0, 1.5) - torch.exp(-y * y)


def get_inputs():
    return [torch.randn(64, 96), torch.randn(64, 96)]
