"""Demo problem: Conv2d -> ReLU -> per-channel bias add, sized for the CPU Triton interpreter."""

import torch
import torch.nn as nn

BATCH = 4
IN_CHANNELS = 16
OUT_CHANNELS = 32
SIDE = 32
KERNEL = 3


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel, padding=kernel // 2)
        # Added after the ReLU, so it is not the convolution's own bias: a fusable epilogue.
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x)) + self.bias


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(BATCH, IN_CHANNELS, SIDE, SIDE)]


def get_init_inputs() -> list[int]:
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL]
