"""Diffusion UNet resblock head: GroupNorm -> SiLU -> add projected timestep embedding."""

import os

import torch
import torch.nn as nn
import torch.nn.functional as F

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
BATCH, CHANNELS, SIDE, TIME_DIM = (2, 64, 28, 128) if SMALL else (16, 256, 64, 512)
GROUPS = 32


class Model(nn.Module):
    def __init__(self, channels: int, time_dim: int, groups: int):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)
        self.time_proj = nn.Linear(time_dim, channels)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x, temb):
        t = self.time_proj(F.silu(temb))
        return F.silu(self.norm(x)) + t[:, :, None, None]


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, SIDE, SIDE), torch.randn(BATCH, TIME_DIM)]


def get_init_inputs():
    return [CHANNELS, TIME_DIM, GROUPS]
