"""A Helion problem: scaled add."""

import helion
import helion.language as hl
import torch


@helion.kernel(config=helion.Config(block_sizes=[128]))
def scaled_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        out[tile] = x[tile] * 2.0 + y[tile]
    return out


def get_inputs():
    return [torch.randn(10007), torch.randn(10007)]


def reference(x, y):
    return x * 2.0 + y
