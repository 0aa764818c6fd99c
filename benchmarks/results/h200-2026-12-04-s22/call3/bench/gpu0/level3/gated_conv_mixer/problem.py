"""Attention-free sequence mixer: RMSNorm, in-proj, causal depthwise conv1d, gate, out-proj."""

import os

import torch
import torch.nn as nn
import torch.nn.functional as F

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
BATCH, SEQ, DIM = (2, 128, 64) if SMALL else (16, 1024, 512)
CONV_WIDTH = 4
EPS = 1e-6


class Model(nn.Module):
    def __init__(self, dim: int, conv_width: int):
        super().__init__()
        self.norm_weight = nn.Parameter(torch.rand(dim) + 0.5)
        self.in_proj = nn.Linear(dim, 2 * dim, bias=False)
        # Left padding of width-1 then trimming keeps the convolution causal in time.
        self.conv = nn.Conv1d(dim, dim, conv_width, groups=dim, padding=conv_width - 1)
        self.out_proj = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        seq = x.shape[1]
        h = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS) * self.norm_weight
        u, gate = self.in_proj(h).chunk(2, dim=-1)
        u = self.conv(u.transpose(1, 2))[..., :seq].transpose(1, 2)
        y = F.silu(u) * torch.sigmoid(gate)
        return x + self.out_proj(y)


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs():
    return [DIM, CONV_WIDTH]
