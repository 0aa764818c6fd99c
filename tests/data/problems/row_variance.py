"""Per-row variance by the textbook formula E[x^2] - E[x]^2 on data far from zero.

The subtraction cancels most significant digits, so any two fp32 summation orders disagree
beyond a strict 1e-4 tolerance while both stay close to the float64 answer: a reordered
(blocked) reduction is correct only by the fp64 referee's judgement.
"""

import torch
import torch.nn as nn

ROWS, COLS = 63, 1023


class Model(nn.Module):
    def forward(self, x):
        mean = x.mean(dim=-1)
        return (x * x).mean(dim=-1) - mean * mean


def get_inputs():
    return [torch.randn(ROWS, COLS) * 0.5 + 30.0]


def get_init_inputs():
    return []
