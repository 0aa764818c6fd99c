"""Scoring head: Linear -> sum over features (keepdim) -> logsumexp over that size-1 dim -> ReLU."""

import os

import torch
import torch.nn as nn

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
BATCH, IN_F, OUT_F = (128, 96, 160) if SMALL else (8192, 8192, 8192)


class Model(nn.Module):
    def __init__(self, in_f: int, out_f: int):
        super().__init__()
        self.linear = nn.Linear(in_f, out_f)

    def forward(self, x):
        y = self.linear(x)
        y = torch.sum(y, dim=1, keepdim=True)
        y = torch.logsumexp(y, dim=1, keepdim=True)
        return torch.relu(y)


def get_inputs():
    return [torch.randn(BATCH, IN_F)]


def get_init_inputs():
    return [IN_F, OUT_F]
