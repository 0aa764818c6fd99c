import torch
import torch.nn as nn


class Model(nn.Module):
    """Row statistics over a wide, odd width: looped (non-persistent) reductions, Welford variance."""

    def forward(self, x):
        var, mean = torch.var_mean(x, dim=-1, keepdim=True)
        y = (x - mean) * torch.rsqrt(var + 1e-5)
        return y, x.amax(dim=-1), x.argmax(dim=-1).float()


def get_inputs():
    return [torch.randn(2, 1500)]
