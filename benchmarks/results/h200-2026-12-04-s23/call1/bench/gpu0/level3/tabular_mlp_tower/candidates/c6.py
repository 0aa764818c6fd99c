"""Recommender/tabular scoring tower: 5 x (Linear -> BatchNorm1d eval -> ReLU) on a small batch."""

import itertools
import os

import torch
import torch.nn as nn

# Dispatch-only candidate: the reference after graph rewrites, on the vendor
# libraries (no generated kernels).
KERNELOPT_DISPATCH_ONLY = True


class _KernelOptReference(nn.Module):
    def __init__(self, widths: list):
        super().__init__()
        layers = []
        for fan_in, fan_out in itertools.pairwise(widths):
            bn = nn.BatchNorm1d(fan_out)
            with torch.no_grad():  # trained-looking statistics, so eval-mode BN is not the identity
                bn.running_mean.normal_(0.0, 0.3)
                bn.running_var.uniform_(0.5, 2.0)
            layers += [nn.Linear(fan_in, fan_out), bn, nn.ReLU()]
        self.tower = nn.Sequential(*layers)
        self.head = nn.Linear(widths[-1], 1)

    def forward(self, features):
        return torch.sigmoid(self.head(self.tower(features)))


# --- KernelOPT graph rewrite: fold BatchNorm into the conv/linear; GEMM + bias + ReLU as the cuBLASLt fused epilogue ---
def _kernelopt_keep(old, new):
    """``new`` written into ``old`` where the layout matches (stable addresses), else ``new``."""
    if (
        isinstance(old, torch.Tensor)
        and isinstance(new, torch.Tensor)
        and old.shape == new.shape
        and old.dtype == new.dtype
        and old.device == new.device
        and old.stride() == new.stride()
    ):
        old.copy_(new)
        return old
    return new


def _kernelopt_state_key(tensors):
    """What identifies the state derived weights come from: layout, object and version (not
    the address: a candidate that reads raw addresses on the CPU makes that memory host data
    for the verifier)."""
    return tuple(
        (t.device, t.dtype, tuple(t.shape), id(t), t._version)
        if isinstance(t, torch.Tensor)
        else t
        for t in tensors
    )


class ModelNew(_KernelOptReference):
    """The reference with its forward rewritten: fold BatchNorm into the conv/linear; GEMM + bias + ReLU as the cuBLASLt fused epilogue."""

    _kernelopt_key = None
    _kernelopt_derived_0 = None
    _kernelopt_derived_1 = None
    _kernelopt_derived_2 = None
    _kernelopt_derived_3 = None
    _kernelopt_derived_4 = None
    _kernelopt_derived_5 = None
    _kernelopt_derived_6 = None
    _kernelopt_derived_7 = None
    _kernelopt_derived_8 = None
    _kernelopt_derived_9 = None

    def _kernelopt_sources(self):
        tower_0_weight = getattr(self.tower, "0").weight
        tower_0_bias = getattr(self.tower, "0").bias
        tower_1_running_var = getattr(self.tower, "1").running_var
        tower_1_running_mean = getattr(self.tower, "1").running_mean
        tower_1_weight = getattr(self.tower, "1").weight
        tower_1_bias = getattr(self.tower, "1").bias
        tower_3_weight = getattr(self.tower, "3").weight
        tower_3_bias = getattr(self.tower, "3").bias
        tower_4_running_var = getattr(self.tower, "4").running_var
        tower_4_running_mean = getattr(self.tower, "4").running_mean
        tower_4_weight = getattr(self.tower, "4").weight
        tower_4_bias = getattr(self.tower, "4").bias
        tower_6_weight = getattr(self.tower, "6").weight
        tower_6_bias = getattr(self.tower, "6").bias
        tower_7_running_var = getattr(self.tower, "7").running_var
        tower_7_running_mean = getattr(self.tower, "7").running_mean
        tower_7_weight = getattr(self.tower, "7").weight
        tower_7_bias = getattr(self.tower, "7").bias
        tower_9_weight = getattr(self.tower, "9").weight
        tower_9_bias = getattr(self.tower, "9").bias
        tower_10_running_var = getattr(self.tower, "10").running_var
        tower_10_running_mean = getattr(self.tower, "10").running_mean
        tower_10_weight = getattr(self.tower, "10").weight
        tower_10_bias = getattr(self.tower, "10").bias
        tower_12_weight = getattr(self.tower, "12").weight
        tower_12_bias = getattr(self.tower, "12").bias
        tower_13_running_var = getattr(self.tower, "13").running_var
        tower_13_running_mean = getattr(self.tower, "13").running_mean
        tower_13_weight = getattr(self.tower, "13").weight
        tower_13_bias = getattr(self.tower, "13").bias
        return (tower_0_weight, tower_0_bias, tower_1_running_var, tower_1_running_mean, tower_1_weight, tower_1_bias, tower_3_weight, tower_3_bias, tower_4_running_var, tower_4_running_mean, tower_4_weight, tower_4_bias, tower_6_weight, tower_6_bias, tower_7_running_var, tower_7_running_mean, tower_7_weight, tower_7_bias, tower_9_weight, tower_9_bias, tower_10_running_var, tower_10_running_mean, tower_10_weight, tower_10_bias, tower_12_weight, tower_12_bias, tower_13_running_var, tower_13_running_mean, tower_13_weight, tower_13_bias)
    

    def _kernelopt_derive(self):
        tower_0_weight = getattr(self.tower, "0").weight
        tower_0_bias = getattr(self.tower, "0").bias
        tower_1_running_var = getattr(self.tower, "1").running_var
        tower_1_running_mean = getattr(self.tower, "1").running_mean
        add = tower_1_running_var + 1e-05;  tower_1_running_var = None
        rsqrt = torch.rsqrt(add);  add = None
        tower_1_weight = getattr(self.tower, "1").weight
        mul = tower_1_weight * rsqrt;  tower_1_weight = rsqrt = None
        reshape = mul.reshape((-1, 1))
        mul_1 = tower_0_weight * reshape;  tower_0_weight = reshape = None
        sub = tower_0_bias - tower_1_running_mean;  tower_0_bias = tower_1_running_mean = None
        mul_2 = sub * mul;  sub = mul = None
        tower_1_bias = getattr(self.tower, "1").bias
        add_1 = mul_2 + tower_1_bias;  mul_2 = tower_1_bias = None
        tower_3_weight = getattr(self.tower, "3").weight
        tower_3_bias = getattr(self.tower, "3").bias
        tower_4_running_var = getattr(self.tower, "4").running_var
        tower_4_running_mean = getattr(self.tower, "4").running_mean
        add_2 = tower_4_running_var + 1e-05;  tower_4_running_var = None
        rsqrt_1 = torch.rsqrt(add_2);  add_2 = None
        tower_4_weight = getattr(self.tower, "4").weight
        mul_3 = tower_4_weight * rsqrt_1;  tower_4_weight = rsqrt_1 = None
        reshape_1 = mul_3.reshape((-1, 1))
        mul_4 = tower_3_weight * reshape_1;  tower_3_weight = reshape_1 = None
        sub_1 = tower_3_bias - tower_4_running_mean;  tower_3_bias = tower_4_running_mean = None
        mul_5 = sub_1 * mul_3;  sub_1 = mul_3 = None
        tower_4_bias = getattr(self.tower, "4").bias
        add_3 = mul_5 + tower_4_bias;  mul_5 = tower_4_bias = None
        tower_6_weight = getattr(self.tower, "6").weight
        tower_6_bias = getattr(self.tower, "6").bias
        tower_7_running_var = getattr(self.tower, "7").running_var
        tower_7_running_mean = getattr(self.tower, "7").running_mean
        add_4 = tower_7_running_var + 1e-05;  tower_7_running_var = None
        rsqrt_2 = torch.rsqrt(add_4);  add_4 = None
        tower_7_weight = getattr(self.tower, "7").weight
        mul_6 = tower_7_weight * rsqrt_2;  tower_7_weight = rsqrt_2 = None
        reshape_2 = mul_6.reshape((-1, 1))
        mul_7 = tower_6_weight * reshape_2;  tower_6_weight = reshape_2 = None
        sub_2 = tower_6_bias - tower_7_running_mean;  tower_6_bias = tower_7_running_mean = None
        mul_8 = sub_2 * mul_6;  sub_2 = mul_6 = None
        tower_7_bias = getattr(self.tower, "7").bias
        add_5 = mul_8 + tower_7_bias;  mul_8 = tower_7_bias = None
        tower_9_weight = getattr(self.tower, "9").weight
        tower_9_bias = getattr(self.tower, "9").bias
        tower_10_running_var = getattr(self.tower, "10").running_var
        tower_10_running_mean = getattr(self.tower, "10").running_mean
        add_6 = tower_10_running_var + 1e-05;  tower_10_running_var = None
        rsqrt_3 = torch.rsqrt(add_6);  add_6 = None
        tower_10_weight = getattr(self.tower, "10").weight
        mul_9 = tower_10_weight * rsqrt_3;  tower_10_weight = rsqrt_3 = None
        reshape_3 = mul_9.reshape((-1, 1))
        mul_10 = tower_9_weight * reshape_3;  tower_9_weight = reshape_3 = None
        sub_3 = tower_9_bias - tower_10_running_mean;  tower_9_bias = tower_10_running_mean = None
        mul_11 = sub_3 * mul_9;  sub_3 = mul_9 = None
        tower_10_bias = getattr(self.tower, "10").bias
        add_7 = mul_11 + tower_10_bias;  mul_11 = tower_10_bias = None
        tower_12_weight = getattr(self.tower, "12").weight
        tower_12_bias = getattr(self.tower, "12").bias
        tower_13_running_var = getattr(self.tower, "13").running_var
        tower_13_running_mean = getattr(self.tower, "13").running_mean
        add_8 = tower_13_running_var + 1e-05;  tower_13_running_var = None
        rsqrt_4 = torch.rsqrt(add_8);  add_8 = None
        tower_13_weight = getattr(self.tower, "13").weight
        mul_12 = tower_13_weight * rsqrt_4;  tower_13_weight = rsqrt_4 = None
        reshape_4 = mul_12.reshape((-1, 1))
        mul_13 = tower_12_weight * reshape_4;  tower_12_weight = reshape_4 = None
        sub_4 = tower_12_bias - tower_13_running_mean;  tower_12_bias = tower_13_running_mean = None
        mul_14 = sub_4 * mul_12;  sub_4 = mul_12 = None
        tower_13_bias = getattr(self.tower, "13").bias
        add_9 = mul_14 + tower_13_bias;  mul_14 = tower_13_bias = None
        return (mul_1, add_1, mul_4, add_3, mul_7, add_5, mul_10, add_7, mul_13, add_9)
    

    def _refresh_derived_weights(self):
        """Re-derive the hoisted weights when a parameter or buffer they read changed."""
        key = _kernelopt_state_key(self._kernelopt_sources())
        if key == self._kernelopt_key:
            return
        with torch.no_grad():
            values = self._kernelopt_derive()
            old = (self._kernelopt_derived_0, self._kernelopt_derived_1, self._kernelopt_derived_2, self._kernelopt_derived_3, self._kernelopt_derived_4, self._kernelopt_derived_5, self._kernelopt_derived_6, self._kernelopt_derived_7, self._kernelopt_derived_8, self._kernelopt_derived_9)
            values = tuple(_kernelopt_keep(o, v) for o, v in zip(old, values))
        self._kernelopt_derived_0, self._kernelopt_derived_1, self._kernelopt_derived_2, self._kernelopt_derived_3, self._kernelopt_derived_4, self._kernelopt_derived_5, self._kernelopt_derived_6, self._kernelopt_derived_7, self._kernelopt_derived_8, self._kernelopt_derived_9 = values
        self._kernelopt_key = key

    def forward(self, features):
        self._refresh_derived_weights()
        _kernelopt_derived_0 = self._kernelopt_derived_0
        _kernelopt_derived_1 = self._kernelopt_derived_1
        t = _kernelopt_derived_0.t();  _kernelopt_derived_0 = None
        _addmm_activation_default = torch.ops.aten._addmm_activation.default(_kernelopt_derived_1, features, t, use_gelu = False);  _kernelopt_derived_1 = features = t = None
        _kernelopt_derived_2 = self._kernelopt_derived_2
        _kernelopt_derived_3 = self._kernelopt_derived_3
        t_1 = _kernelopt_derived_2.t();  _kernelopt_derived_2 = None
        _addmm_activation_default_1 = torch.ops.aten._addmm_activation.default(_kernelopt_derived_3, _addmm_activation_default, t_1, use_gelu = False);  _kernelopt_derived_3 = _addmm_activation_default = t_1 = None
        _kernelopt_derived_4 = self._kernelopt_derived_4
        _kernelopt_derived_5 = self._kernelopt_derived_5
        t_2 = _kernelopt_derived_4.t();  _kernelopt_derived_4 = None
        _addmm_activation_default_2 = torch.ops.aten._addmm_activation.default(_kernelopt_derived_5, _addmm_activation_default_1, t_2, use_gelu = False);  _kernelopt_derived_5 = _addmm_activation_default_1 = t_2 = None
        _kernelopt_derived_6 = self._kernelopt_derived_6
        _kernelopt_derived_7 = self._kernelopt_derived_7
        t_3 = _kernelopt_derived_6.t();  _kernelopt_derived_6 = None
        _addmm_activation_default_3 = torch.ops.aten._addmm_activation.default(_kernelopt_derived_7, _addmm_activation_default_2, t_3, use_gelu = False);  _kernelopt_derived_7 = _addmm_activation_default_2 = t_3 = None
        _kernelopt_derived_8 = self._kernelopt_derived_8
        _kernelopt_derived_9 = self._kernelopt_derived_9
        t_4 = _kernelopt_derived_8.t();  _kernelopt_derived_8 = None
        _addmm_activation_default_4 = torch.ops.aten._addmm_activation.default(_kernelopt_derived_9, _addmm_activation_default_3, t_4, use_gelu = False);  _kernelopt_derived_9 = _addmm_activation_default_3 = t_4 = None
        head = self.head(_addmm_activation_default_4);  _addmm_activation_default_4 = None
        sigmoid = torch.sigmoid(head);  head = None
        return sigmoid
    
