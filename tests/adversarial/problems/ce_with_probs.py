"""Cross-entropy head: mean cross-entropy loss of 64 x 1000 logits, and the softmax
probabilities (kept for the backward / for calibration metrics)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, CLASSES = 64, 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        probs = torch.softmax(logits, dim=-1)
        loss = F.cross_entropy(logits, target)
        return loss, probs


def get_inputs():
    return [torch.randn(BATCH, CLASSES), torch.randint(0, CLASSES, (BATCH,))]


def get_init_inputs():
    return []
