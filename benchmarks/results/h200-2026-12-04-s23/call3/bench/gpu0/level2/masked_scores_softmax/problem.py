"""Attention probabilities: Q @ K^T -> scale -> key-padding mask -> softmax (no fused SDPA)."""

import os

import torch
import torch.nn as nn

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
HEADS_X_BATCH, SEQ, HEAD_DIM = (4, 128, 32) if SMALL else (64, 1024, 64)


class Model(nn.Module):
    def __init__(self, head_dim: int):
        super().__init__()
        self.scale = head_dim**-0.5

    def forward(self, q, k, key_valid):
        scores = torch.bmm(q, k.transpose(1, 2)) * self.scale
        scores = scores.masked_fill(~key_valid[:, None, :], float("-inf"))
        return torch.softmax(scores, dim=-1)


def get_inputs():
    q = torch.randn(HEADS_X_BATCH, SEQ, HEAD_DIM)
    k = torch.randn(HEADS_X_BATCH, SEQ, HEAD_DIM)
    # Each sequence keeps a random prefix of at least one key, so no row is fully masked.
    lengths = torch.randint(1, SEQ + 1, (HEADS_X_BATCH, 1))
    key_valid = torch.arange(SEQ)[None, :] < lengths
    return [q, k, key_valid]


def get_init_inputs():
    return [HEAD_DIM]
