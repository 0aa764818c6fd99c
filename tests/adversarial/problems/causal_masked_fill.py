"""Causal masking of attention scores: positions where the mask is False get -inf, then a row
softmax. 8 heads x 128 x 128 scores, boolean mask input."""

import torch
import torch.nn as nn

H, T = 8, 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, scores, mask):
        return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


def get_inputs():
    return [torch.randn(H, T, T), torch.tril(torch.ones(T, T, dtype=torch.bool))]


def get_init_inputs():
    return []
