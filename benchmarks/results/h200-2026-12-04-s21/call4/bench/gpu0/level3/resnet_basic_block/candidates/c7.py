"""ResNet basic block (eval): conv3x3-BN-ReLU-conv3x3-BN plus a strided 1x1 projection shortcut."""

import os

import torch
import torch.nn as nn

# Dispatch-only candidate: the reference after graph rewrites, on the vendor
# libraries (no generated kernels).
KERNELOPT_DISPATCH_ONLY = True


def _bn(channels: int) -> nn.BatchNorm2d:
    bn = nn.BatchNorm2d(channels)
    with torch.no_grad():  # trained-looking statistics, so eval-mode BN is not the identity
        bn.running_mean.normal_(0.0, 0.3)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.normal_(0.0, 0.2)
    return bn


class _KernelOptReference(nn.Module):
    def __init__(self, in_ch: int, out_ch: int):
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, stride=2, padding=1, bias=False)
        self.bn1 = _bn(out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1, bias=False)
        self.bn2 = _bn(out_ch)
        self.proj = nn.Conv2d(in_ch, out_ch, 1, stride=2, bias=False)
        self.proj_bn = _bn(out_ch)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + self.proj_bn(self.proj(x)))


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
    _kernelopt_derived_4 = None
    _kernelopt_derived_5 = None

    def _kernelopt_sources(self):
        conv1_weight = self.conv1.weight
        bn1_running_var = self.bn1.running_var
        bn1_running_mean = self.bn1.running_mean
        bn1_weight = self.bn1.weight
        bn1_bias = self.bn1.bias
        conv2_weight = self.conv2.weight
        bn2_running_var = self.bn2.running_var
        bn2_running_mean = self.bn2.running_mean
        bn2_weight = self.bn2.weight
        bn2_bias = self.bn2.bias
        proj_weight = self.proj.weight
        proj_bn_running_var = self.proj_bn.running_var
        proj_bn_running_mean = self.proj_bn.running_mean
        proj_bn_weight = self.proj_bn.weight
        proj_bn_bias = self.proj_bn.bias
        return (conv1_weight, bn1_running_var, bn1_running_mean, bn1_weight, bn1_bias, conv2_weight, bn2_running_var, bn2_running_mean, bn2_weight, bn2_bias, proj_weight, proj_bn_running_var, proj_bn_running_mean, proj_bn_weight, proj_bn_bias)
    

    def _kernelopt_derive(self):
        conv1_weight = self.conv1.weight
        bn1_running_var = self.bn1.running_var
        bn1_running_mean = self.bn1.running_mean
        add_1 = bn1_running_var + 1e-05;  bn1_running_var = None
        rsqrt = torch.rsqrt(add_1);  add_1 = None
        bn1_weight = self.bn1.weight
        mul = bn1_weight * rsqrt;  bn1_weight = rsqrt = None
        reshape = mul.reshape((-1, 1, 1, 1))
        mul_1 = conv1_weight * reshape;  conv1_weight = reshape = None
        neg = -bn1_running_mean;  bn1_running_mean = None
        mul_2 = neg * mul;  neg = mul = None
        bn1_bias = self.bn1.bias
        add_2 = mul_2 + bn1_bias;  mul_2 = bn1_bias = None
        conv2_weight = self.conv2.weight
        bn2_running_var = self.bn2.running_var
        bn2_running_mean = self.bn2.running_mean
        add_3 = bn2_running_var + 1e-05;  bn2_running_var = None
        rsqrt_1 = torch.rsqrt(add_3);  add_3 = None
        bn2_weight = self.bn2.weight
        mul_3 = bn2_weight * rsqrt_1;  bn2_weight = rsqrt_1 = None
        reshape_1 = mul_3.reshape((-1, 1, 1, 1))
        mul_4 = conv2_weight * reshape_1;  conv2_weight = reshape_1 = None
        neg_1 = -bn2_running_mean;  bn2_running_mean = None
        mul_5 = neg_1 * mul_3;  neg_1 = mul_3 = None
        bn2_bias = self.bn2.bias
        add_4 = mul_5 + bn2_bias;  mul_5 = bn2_bias = None
        proj_weight = self.proj.weight
        proj_bn_running_var = self.proj_bn.running_var
        proj_bn_running_mean = self.proj_bn.running_mean
        add_5 = proj_bn_running_var + 1e-05;  proj_bn_running_var = None
        rsqrt_2 = torch.rsqrt(add_5);  add_5 = None
        proj_bn_weight = self.proj_bn.weight
        mul_6 = proj_bn_weight * rsqrt_2;  proj_bn_weight = rsqrt_2 = None
        reshape_2 = mul_6.reshape((-1, 1, 1, 1))
        mul_7 = proj_weight * reshape_2;  proj_weight = reshape_2 = None
        neg_2 = -proj_bn_running_mean;  proj_bn_running_mean = None
        mul_8 = neg_2 * mul_6;  neg_2 = mul_6 = None
        proj_bn_bias = self.proj_bn.bias
        add_6 = mul_8 + proj_bn_bias;  mul_8 = proj_bn_bias = None
        return (mul_1, add_2, mul_4, add_4, mul_7, add_6)
    

    def _refresh_derived_weights(self):
        """Re-derive the hoisted weights when a parameter or buffer they read changed."""
        key = _kernelopt_state_key(self._kernelopt_sources())
        if key == self._kernelopt_key:
            return
        with torch.no_grad():
            values = self._kernelopt_derive()
            old = (self._kernelopt_derived_0, self._kernelopt_derived_1, self._kernelopt_derived_2, self._kernelopt_derived_3, self._kernelopt_derived_4, self._kernelopt_derived_5)
            values = tuple(_kernelopt_keep(o, v) for o, v in zip(old, values))
        self._kernelopt_derived_0, self._kernelopt_derived_1, self._kernelopt_derived_2, self._kernelopt_derived_3, self._kernelopt_derived_4, self._kernelopt_derived_5 = values
        self._kernelopt_key = key

    def forward(self, x):
        self._refresh_derived_weights()
        _kernelopt_derived_0 = self._kernelopt_derived_0
        _kernelopt_derived_1 = self._kernelopt_derived_1
        conv2d = torch.conv2d(x, _kernelopt_derived_0, _kernelopt_derived_1, (2, 2), (1, 1), (1, 1), 1);  _kernelopt_derived_0 = _kernelopt_derived_1 = None
        relu = torch.relu(conv2d);  conv2d = None
        _kernelopt_derived_2 = self._kernelopt_derived_2
        _kernelopt_derived_3 = self._kernelopt_derived_3
        conv2d_1 = torch.conv2d(relu, _kernelopt_derived_2, _kernelopt_derived_3, (1, 1), (1, 1), (1, 1), 1);  relu = _kernelopt_derived_2 = _kernelopt_derived_3 = None
        _kernelopt_derived_4 = self._kernelopt_derived_4
        _kernelopt_derived_5 = self._kernelopt_derived_5
        conv2d_2 = torch.conv2d(x, _kernelopt_derived_4, _kernelopt_derived_5, (2, 2), (0, 0), (1, 1), 1);  x = _kernelopt_derived_4 = _kernelopt_derived_5 = None
        add = conv2d_1 + conv2d_2;  conv2d_1 = conv2d_2 = None
        relu_1 = torch.relu(add);  add = None
        return relu_1
    


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
