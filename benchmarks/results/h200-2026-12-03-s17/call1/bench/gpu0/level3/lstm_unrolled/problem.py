"""LSTM language-model core: an LSTM cell written out gate by gate, unrolled over 8 time steps."""

import os

import torch
import torch.nn as nn

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = os.environ.get("KERNELOPT_SMALL") == "1"
BATCH, STEPS, IN_F, HIDDEN = (16, 4, 64, 64) if SMALL else (512, 8, 1024, 2048)


class Model(nn.Module):
    def __init__(self, in_f: int, hidden: int):
        super().__init__()
        self.hidden = hidden
        self.x2h = nn.Linear(in_f, 4 * hidden)
        self.h2h = nn.Linear(hidden, 4 * hidden, bias=False)

    def forward(self, xs, h, c):
        outs = []
        for t in range(xs.shape[1]):
            gates = self.x2h(xs[:, t]) + self.h2h(h)
            i, f, g, o = gates.chunk(4, dim=1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            outs.append(h)
        return torch.stack(outs, dim=1)


def get_inputs():
    return [torch.randn(BATCH, STEPS, IN_F), torch.randn(BATCH, HIDDEN), torch.randn(BATCH, HIDDEN)]


def get_init_inputs():
    return [IN_F, HIDDEN]
