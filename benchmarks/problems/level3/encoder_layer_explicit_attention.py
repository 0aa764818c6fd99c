"""Post-LN transformer encoder layer with attention written out: QK^T, scale, softmax, V, FFN."""

import math
import os

import torch
import torch.nn as nn

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
BATCH, SEQ, DIM, HEADS = (1, 64, 64, 4) if SMALL else (8, 1024, 1024, 16)


class Model(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.o = nn.Linear(dim, dim)
        self.ln1 = nn.LayerNorm(dim)
        self.ff1 = nn.Linear(dim, 4 * dim)
        self.ff2 = nn.Linear(4 * dim, dim)
        self.ln2 = nn.LayerNorm(dim)

    def forward(self, x):
        b, t, d = x.shape
        hd = d // self.heads

        def heads(z):
            return z.view(b, t, self.heads, hd).transpose(1, 2)

        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(hd)
        attn = torch.matmul(torch.softmax(scores, dim=-1), v)
        x = self.ln1(x + self.o(attn.transpose(1, 2).reshape(b, t, d)))
        return self.ln2(x + self.ff2(torch.relu(self.ff1(x))))


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs():
    return [DIM, HEADS]
