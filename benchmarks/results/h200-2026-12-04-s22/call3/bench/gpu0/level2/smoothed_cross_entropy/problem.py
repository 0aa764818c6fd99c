"""Temperature-scaled cross entropy with label smoothing over an odd vocabulary (32003)."""

import os

import torch
import torch.nn as nn
import torch.nn.functional as F

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
TOKENS, VOCAB = (8, 12007) if SMALL else (2048, 32003)
TEMPERATURE = 0.7
SMOOTHING = 0.1


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, targets):
        return F.cross_entropy(logits / TEMPERATURE, targets, label_smoothing=SMOOTHING)


def get_inputs():
    return [torch.randn(TOKENS, VOCAB) * 4.0, torch.randint(0, VOCAB, (TOKENS,))]


def get_init_inputs():
    return []
