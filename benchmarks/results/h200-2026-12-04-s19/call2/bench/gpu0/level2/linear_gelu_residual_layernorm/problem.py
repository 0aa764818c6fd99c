"""Post-LN feed-forward fragment: Linear -> GELU -> residual add -> LayerNorm."""

import os

import torch
import torch.nn as nn
import torch.nn.functional as F

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
TOKENS, HIDDEN = (384, 256) if SMALL else (8192, 1024)


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)
        self.norm = nn.LayerNorm(hidden)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x):
        return self.norm(x + F.gelu(self.proj(x)))


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN)]


def get_init_inputs():
    return [HIDDEN]
