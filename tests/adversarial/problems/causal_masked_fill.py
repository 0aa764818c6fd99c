"""Causal masking of attention scores: positions where the mask is False get -inf, then a row
softmax. 2 heads x 64 x 64 scores, boolean mask input (CPU-interpreter size)."""

import torch
import torch.nn as nn

H, T = 2, 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, scores, mask):
        return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


def get_inputs():
    return [torch.randn(H, T, T), torch.tril(torch.ones(T, T, dtype=torch.bool))]


def get_init_inputs():
    return []
