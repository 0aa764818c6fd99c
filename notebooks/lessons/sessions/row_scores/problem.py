import torch
import torch.nn as nn

TOKENS, FEATURES, HIDDEN = 64, 128, 256  # small enough for Triton's CPU interpreter


class Model(nn.Module):
    """A score per token: a linear layer whose outputs are summed."""

    def __init__(self, features: int, hidden: int):
        super().__init__()
        self.proj = nn.Linear(features, hidden)

    def forward(self, x):
        return self.proj(x).sum(dim=-1)


def get_inputs():
    return [torch.randn(TOKENS, FEATURES)]


def get_init_inputs():
    return [FEATURES, HIDDEN]
