"""Linear + ReLU that stores its weight K-major: the state dict's (out, in) weight is
transposed once as it is loaded, so every call multiplies without a transposed view."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bias_relu(y_ptr, b_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(y_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs % cols, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(y + b, 0.0), mask=mask)


class _KMajorLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.zeros(out_features))
        nn.init.normal_(self.weight, std=in_features**-0.5)

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        key = prefix + "weight"
        if key in state_dict and state_dict[key].shape == self.weight.shape[::-1]:
            state_dict = dict(state_dict)
            state_dict[key] = state_dict[key].t()
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = _KMajorLinear(in_features, out_features)

    def forward(self, x):
        y = torch.mm(x, self.linear.weight)
        out = torch.empty_like(y)
        n = y.numel()
        _bias_relu[(triton.cdiv(n, 2048),)](y, self.linear.bias, out, n, y.shape[1], BLOCK=2048)
        return out
