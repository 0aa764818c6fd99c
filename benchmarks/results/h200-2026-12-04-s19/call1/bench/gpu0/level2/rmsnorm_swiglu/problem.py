"""LLM feed-forward entry: RMSNorm -> fused gate/up projection -> SiLU(gate) * up."""

import os

import torch
import torch.nn as nn
import torch.nn.functional as F

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
TOKENS, HIDDEN, FFN = (64, 128, 192) if SMALL else (2048, 1024, 2816)
EPS = 1e-6


class Model(nn.Module):
    def __init__(self, hidden: int, ffn: int):
        super().__init__()
        self.norm_weight = nn.Parameter(torch.rand(hidden) + 0.5)
        self.gate_up = nn.Linear(hidden, 2 * ffn, bias=False)

    def forward(self, x):
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS)
        h = x * rms * self.norm_weight
        gate, up = self.gate_up(h).chunk(2, dim=-1)
        return F.silu(gate) * up


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN)]


def get_init_inputs():
    return [HIDDEN, FFN]
