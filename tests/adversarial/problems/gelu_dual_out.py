"""Exact (erf) GELU over a 64 x 1024 activation, returned in fp32 (for the residual branch)
and as a bfloat16 copy (the next GEMM's operand)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS, COLS = 64, 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = F.gelu(x)
        return y, y.to(torch.bfloat16)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
