"""Demo problem: Linear -> GELU -> bias add -> residual, sized for the CPU Triton interpreter."""

import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 384
FEATURES = 256


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.linear = nn.Linear(features, features)
        # A separate bias after the activation: it cannot fold into the matmul, so fusing it
        # into the GELU epilogue is the optimization to find.
        self.bias = nn.Parameter(torch.randn(features) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + (F.gelu(self.linear(x)) + self.bias)


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(TOKENS, FEATURES)]


def get_init_inputs() -> list[int]:
    return [FEATURES]
