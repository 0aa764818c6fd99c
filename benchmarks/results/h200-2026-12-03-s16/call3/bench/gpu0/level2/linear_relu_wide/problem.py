"""Wide MLP up-projection: Linear (bias) -> ReLU on a large token batch, a GEMM with an epilogue."""

import os

import torch
import torch.nn as nn

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
TOKENS, IN_F, OUT_F = (192, 128, 256) if SMALL else (16384, 1024, 8192)


class Model(nn.Module):
    def __init__(self, in_f: int, out_f: int):
        super().__init__()
        self.fc = nn.Linear(in_f, out_f)

    def forward(self, x):
        return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(TOKENS, IN_F)]


def get_init_inputs():
    return [IN_F, OUT_F]
