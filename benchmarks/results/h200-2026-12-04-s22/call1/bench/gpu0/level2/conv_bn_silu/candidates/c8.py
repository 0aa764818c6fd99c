"""Detector-backbone unit: Conv2d 3x3 -> BatchNorm (eval, folded statistics) -> SiLU."""

import os

import torch
import torch.nn as nn
import torch.nn.functional as F

# Dispatch-only candidate: the reference after graph rewrites, on the vendor
# libraries (no generated kernels).
KERNELOPT_DISPATCH_ONLY = True


class _KernelOptReference(nn.Module):
    def __init__(self, in_ch: int, out_ch: int):
        super().__init__()
        self.conv = nn.Conv2d(in_ch, out_ch, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_ch)
        with torch.no_grad():  # trained-looking statistics, so eval-mode BN is not the identity
            self.bn.running_mean.normal_(0.0, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.normal_(0.0, 0.2)

    def forward(self, x):
        return F.silu(self.bn(self.conv(x)))


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

    def _kernelopt_sources(self):
        conv_weight = self.conv.weight
        bn_running_var = self.bn.running_var
        bn_running_mean = self.bn.running_mean
        bn_weight = self.bn.weight
        bn_bias = self.bn.bias
        return (conv_weight, bn_running_var, bn_running_mean, bn_weight, bn_bias)
    

    def _kernelopt_derive(self):
        conv_weight = self.conv.weight
        bn_running_var = self.bn.running_var
        bn_running_mean = self.bn.running_mean
        add = bn_running_var + 1e-05;  bn_running_var = None
        rsqrt = torch.rsqrt(add);  add = None
        bn_weight = self.bn.weight
        mul = bn_weight * rsqrt;  bn_weight = rsqrt = None
        reshape = mul.reshape((-1, 1, 1, 1))
        mul_1 = conv_weight * reshape;  conv_weight = reshape = None
        neg = -bn_running_mean;  bn_running_mean = None
        mul_2 = neg * mul;  neg = mul = None
        bn_bias = self.bn.bias
        add_1 = mul_2 + bn_bias;  mul_2 = bn_bias = None
        return (mul_1, add_1)
    

    def _refresh_derived_weights(self):
        """Re-derive the hoisted weights when a parameter or buffer they read changed."""
        key = _kernelopt_state_key(self._kernelopt_sources())
        if key == self._kernelopt_key:
            return
        with torch.no_grad():
            values = self._kernelopt_derive()
            old = (self._kernelopt_derived_0, self._kernelopt_derived_1)
            values = tuple(_kernelopt_keep(o, v) for o, v in zip(old, values))
        self._kernelopt_derived_0, self._kernelopt_derived_1 = values
        self._kernelopt_key = key

    def forward(self, x):
        self._refresh_derived_weights()
        _kernelopt_derived_0 = self._kernelopt_derived_0
        _kernelopt_derived_1 = self._kernelopt_derived_1
        conv2d = torch.conv2d(x, _kernelopt_derived_0, _kernelopt_derived_1, (1, 1), (1, 1), (1, 1), 1);  x = _kernelopt_derived_0 = _kernelopt_derived_1 = None
        silu = torch.nn.functional.silu(conv2d, inplace = False);  conv2d = None
        return silu
    


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
