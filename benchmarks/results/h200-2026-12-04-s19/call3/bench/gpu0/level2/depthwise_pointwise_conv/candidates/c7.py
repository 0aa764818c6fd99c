"""Downsampling separable unit: depthwise 3x3 stride 2 -> BN -> ReLU6 -> 1x1 conv -> BN (eval)."""

import os

import torch
import torch.nn as nn
import torch.nn.functional as F

# Dispatch-only candidate: the reference after graph rewrites, on the vendor
# libraries (no generated kernels).
KERNELOPT_DISPATCH_ONLY = True


def _trained_bn(channels: int) -> nn.BatchNorm2d:
    bn = nn.BatchNorm2d(channels)
    with torch.no_grad():  # trained-looking statistics, so eval-mode BN is not the identity
        bn.running_mean.normal_(0.0, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.normal_(0.0, 0.2)
    return bn


class _KernelOptReference(nn.Module):
    def __init__(self, in_ch: int, out_ch: int):
        super().__init__()
        # Stride 2 halves the map: a strided depthwise conv is one torch.compile handles poorly.
        self.dw = nn.Conv2d(in_ch, in_ch, 3, stride=2, padding=1, groups=in_ch, bias=False)
        self.bn1 = _trained_bn(in_ch)
        self.pw = nn.Conv2d(in_ch, out_ch, 1, bias=False)
        self.bn2 = _trained_bn(out_ch)

    def forward(self, x):
        x = F.relu6(self.bn1(self.dw(x)))
        return self.bn2(self.pw(x))


# --- KernelOPT graph rewrite: fold BatchNorm into the conv/linear ---
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


class _ModelNewEager(_KernelOptReference):
    """The reference with its forward rewritten: fold BatchNorm into the conv/linear."""

    _kernelopt_key = None
    _kernelopt_derived_0 = None
    _kernelopt_derived_1 = None
    _kernelopt_derived_2 = None
    _kernelopt_derived_3 = None

    def _kernelopt_sources(self):
        dw_weight = self.dw.weight
        bn1_running_var = self.bn1.running_var
        bn1_running_mean = self.bn1.running_mean
        bn1_weight = self.bn1.weight
        bn1_bias = self.bn1.bias
        pw_weight = self.pw.weight
        bn2_running_var = self.bn2.running_var
        bn2_running_mean = self.bn2.running_mean
        bn2_weight = self.bn2.weight
        bn2_bias = self.bn2.bias
        return (dw_weight, bn1_running_var, bn1_running_mean, bn1_weight, bn1_bias, pw_weight, bn2_running_var, bn2_running_mean, bn2_weight, bn2_bias)
    

    def _kernelopt_derive(self):
        dw_weight = self.dw.weight
        bn1_running_var = self.bn1.running_var
        bn1_running_mean = self.bn1.running_mean
        add = bn1_running_var + 1e-05;  bn1_running_var = None
        rsqrt = torch.rsqrt(add);  add = None
        bn1_weight = self.bn1.weight
        mul = bn1_weight * rsqrt;  bn1_weight = rsqrt = None
        reshape = mul.reshape((-1, 1, 1, 1))
        mul_1 = dw_weight * reshape;  dw_weight = reshape = None
        neg = -bn1_running_mean;  bn1_running_mean = None
        mul_2 = neg * mul;  neg = mul = None
        bn1_bias = self.bn1.bias
        add_1 = mul_2 + bn1_bias;  mul_2 = bn1_bias = None
        pw_weight = self.pw.weight
        bn2_running_var = self.bn2.running_var
        bn2_running_mean = self.bn2.running_mean
        add_2 = bn2_running_var + 1e-05;  bn2_running_var = None
        rsqrt_1 = torch.rsqrt(add_2);  add_2 = None
        bn2_weight = self.bn2.weight
        mul_3 = bn2_weight * rsqrt_1;  bn2_weight = rsqrt_1 = None
        reshape_1 = mul_3.reshape((-1, 1, 1, 1))
        mul_4 = pw_weight * reshape_1;  pw_weight = reshape_1 = None
        neg_1 = -bn2_running_mean;  bn2_running_mean = None
        mul_5 = neg_1 * mul_3;  neg_1 = mul_3 = None
        bn2_bias = self.bn2.bias
        add_3 = mul_5 + bn2_bias;  mul_5 = bn2_bias = None
        return (mul_1, add_1, mul_4, add_3)
    

    def _refresh_derived_weights(self):
        """Re-derive the hoisted weights when a parameter or buffer they read changed."""
        key = _kernelopt_state_key(self._kernelopt_sources())
        if key == self._kernelopt_key:
            return
        with torch.no_grad():
            values = self._kernelopt_derive()
            old = (self._kernelopt_derived_0, self._kernelopt_derived_1, self._kernelopt_derived_2, self._kernelopt_derived_3)
            values = tuple(_kernelopt_keep(o, v) for o, v in zip(old, values))
        self._kernelopt_derived_0, self._kernelopt_derived_1, self._kernelopt_derived_2, self._kernelopt_derived_3 = values
        self._kernelopt_key = key

    def forward(self, x):
        self._refresh_derived_weights()
        _kernelopt_derived_0 = self._kernelopt_derived_0
        _kernelopt_derived_1 = self._kernelopt_derived_1
        conv2d = torch.conv2d(x, _kernelopt_derived_0, _kernelopt_derived_1, (2, 2), (1, 1), (1, 1), 144);  x = _kernelopt_derived_0 = _kernelopt_derived_1 = None
        relu6 = torch.nn.functional.relu6(conv2d, inplace = False);  conv2d = None
        _kernelopt_derived_2 = self._kernelopt_derived_2
        _kernelopt_derived_3 = self._kernelopt_derived_3
        conv2d_1 = torch.conv2d(relu6, _kernelopt_derived_2, _kernelopt_derived_3, (1, 1), (0, 0), (1, 1), 1);  relu6 = _kernelopt_derived_2 = _kernelopt_derived_3 = None
        return conv2d_1
    


# --- KernelOPT: CUDA-graph capture (the whole forward replays as one graph launch) ---
class ModelNew(_ModelNewEager):
    """The eager candidate above, captured once per input signature and replayed."""

    # Weights the candidate derives once per load (a graph rewrite's folds): re-derived in
    # place before each replay when a reload changed what they come from.
    _refresh_before_replay = getattr(_ModelNewEager, "_refresh_derived_weights", None)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._graph = None
        self._graph_key = None
        self._static_inputs = []
        self._static_output = None

    def _signature(self, inputs):
        return tuple(
            (tuple(x.shape), x.dtype, x.device) if isinstance(x, torch.Tensor) else ("v", x)
            for x in inputs
        )

    def _capture(self, inputs, key):
        self._static_inputs = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        # Two eager calls first: they compile the Triton kernels and create library handles,
        # neither of which may happen during capture.
        for _ in range(2):
            _ModelNewEager.forward(self, *self._static_inputs)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self._static_output = _ModelNewEager.forward(self, *self._static_inputs)
        self._graph, self._graph_key = graph, key

    def forward(self, *inputs):
        tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
        if not tensors or not all(x.is_cuda for x in tensors):
            return _ModelNewEager.forward(self, *inputs)
        key = self._signature(inputs)
        if self._graph is None or key != self._graph_key:
            self._capture(inputs, key)
        for static, x in zip(self._static_inputs, inputs):
            if isinstance(x, torch.Tensor):
                static.copy_(x)
        if self._refresh_before_replay is not None:
            self._refresh_before_replay()
        self._graph.replay()
        out = self._static_output
        if isinstance(out, torch.Tensor):
            return out.clone()
        return type(out)(o.clone() if isinstance(o, torch.Tensor) else o for o in out)
