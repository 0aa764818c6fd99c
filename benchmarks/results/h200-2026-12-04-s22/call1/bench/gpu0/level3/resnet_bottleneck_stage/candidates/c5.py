"""ResNet-50-style stage (eval): two bottleneck blocks (1x1-3x3-1x1 with BN), the first downsampling."""

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


class Bottleneck(nn.Module):
    def __init__(self, in_ch: int, mid_ch: int, stride: int):
        super().__init__()
        out_ch = 4 * mid_ch
        self.reduce = nn.Conv2d(in_ch, mid_ch, 1, bias=False)
        self.bn1 = _bn(mid_ch)
        self.spatial = nn.Conv2d(mid_ch, mid_ch, 3, stride=stride, padding=1, bias=False)
        self.bn2 = _bn(mid_ch)
        self.expand = nn.Conv2d(mid_ch, out_ch, 1, bias=False)
        self.bn3 = _bn(out_ch)
        self.short = None
        if stride != 1 or in_ch != out_ch:
            self.short = nn.Sequential(
                nn.Conv2d(in_ch, out_ch, 1, stride=stride, bias=False), _bn(out_ch)
            )

    def forward(self, x):
        y = torch.relu(self.bn1(self.reduce(x)))
        y = torch.relu(self.bn2(self.spatial(y)))
        y = self.bn3(self.expand(y))
        return torch.relu(y + (x if self.short is None else self.short(x)))


class _KernelOptReference(nn.Module):
    def __init__(self, in_ch: int, mid_ch: int):
        super().__init__()
        self.block1 = Bottleneck(in_ch, mid_ch, stride=2)
        self.block2 = Bottleneck(4 * mid_ch, mid_ch, stride=1)

    def forward(self, x):
        return self.block2(self.block1(x))


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
    _kernelopt_derived_6 = None
    _kernelopt_derived_7 = None
    _kernelopt_derived_8 = None
    _kernelopt_derived_9 = None
    _kernelopt_derived_10 = None
    _kernelopt_derived_11 = None
    _kernelopt_derived_12 = None
    _kernelopt_derived_13 = None

    def _kernelopt_sources(self):
        block1_reduce_weight = self.block1.reduce.weight
        block1_bn1_running_var = self.block1.bn1.running_var
        block1_bn1_running_mean = self.block1.bn1.running_mean
        block1_bn1_weight = self.block1.bn1.weight
        block1_bn1_bias = self.block1.bn1.bias
        block1_spatial_weight = self.block1.spatial.weight
        block1_bn2_running_var = self.block1.bn2.running_var
        block1_bn2_running_mean = self.block1.bn2.running_mean
        block1_bn2_weight = self.block1.bn2.weight
        block1_bn2_bias = self.block1.bn2.bias
        block1_expand_weight = self.block1.expand.weight
        block1_bn3_running_var = self.block1.bn3.running_var
        block1_bn3_running_mean = self.block1.bn3.running_mean
        block1_bn3_weight = self.block1.bn3.weight
        block1_bn3_bias = self.block1.bn3.bias
        block1_short_0_weight = getattr(self.block1.short, "0").weight
        block1_short_1_running_var = getattr(self.block1.short, "1").running_var
        block1_short_1_running_mean = getattr(self.block1.short, "1").running_mean
        block1_short_1_weight = getattr(self.block1.short, "1").weight
        block1_short_1_bias = getattr(self.block1.short, "1").bias
        block2_reduce_weight = self.block2.reduce.weight
        block2_bn1_running_var = self.block2.bn1.running_var
        block2_bn1_running_mean = self.block2.bn1.running_mean
        block2_bn1_weight = self.block2.bn1.weight
        block2_bn1_bias = self.block2.bn1.bias
        block2_spatial_weight = self.block2.spatial.weight
        block2_bn2_running_var = self.block2.bn2.running_var
        block2_bn2_running_mean = self.block2.bn2.running_mean
        block2_bn2_weight = self.block2.bn2.weight
        block2_bn2_bias = self.block2.bn2.bias
        block2_expand_weight = self.block2.expand.weight
        block2_bn3_running_var = self.block2.bn3.running_var
        block2_bn3_running_mean = self.block2.bn3.running_mean
        block2_bn3_weight = self.block2.bn3.weight
        block2_bn3_bias = self.block2.bn3.bias
        return (block1_reduce_weight, block1_bn1_running_var, block1_bn1_running_mean, block1_bn1_weight, block1_bn1_bias, block1_spatial_weight, block1_bn2_running_var, block1_bn2_running_mean, block1_bn2_weight, block1_bn2_bias, block1_expand_weight, block1_bn3_running_var, block1_bn3_running_mean, block1_bn3_weight, block1_bn3_bias, block1_short_0_weight, block1_short_1_running_var, block1_short_1_running_mean, block1_short_1_weight, block1_short_1_bias, block2_reduce_weight, block2_bn1_running_var, block2_bn1_running_mean, block2_bn1_weight, block2_bn1_bias, block2_spatial_weight, block2_bn2_running_var, block2_bn2_running_mean, block2_bn2_weight, block2_bn2_bias, block2_expand_weight, block2_bn3_running_var, block2_bn3_running_mean, block2_bn3_weight, block2_bn3_bias)
    

    def _kernelopt_derive(self):
        block1_reduce_weight = self.block1.reduce.weight
        block1_bn1_running_var = self.block1.bn1.running_var
        block1_bn1_running_mean = self.block1.bn1.running_mean
        add_2 = block1_bn1_running_var + 1e-05;  block1_bn1_running_var = None
        rsqrt = torch.rsqrt(add_2);  add_2 = None
        block1_bn1_weight = self.block1.bn1.weight
        mul = block1_bn1_weight * rsqrt;  block1_bn1_weight = rsqrt = None
        reshape = mul.reshape((-1, 1, 1, 1))
        mul_1 = block1_reduce_weight * reshape;  block1_reduce_weight = reshape = None
        neg = -block1_bn1_running_mean;  block1_bn1_running_mean = None
        mul_2 = neg * mul;  neg = mul = None
        block1_bn1_bias = self.block1.bn1.bias
        add_3 = mul_2 + block1_bn1_bias;  mul_2 = block1_bn1_bias = None
        block1_spatial_weight = self.block1.spatial.weight
        block1_bn2_running_var = self.block1.bn2.running_var
        block1_bn2_running_mean = self.block1.bn2.running_mean
        add_4 = block1_bn2_running_var + 1e-05;  block1_bn2_running_var = None
        rsqrt_1 = torch.rsqrt(add_4);  add_4 = None
        block1_bn2_weight = self.block1.bn2.weight
        mul_3 = block1_bn2_weight * rsqrt_1;  block1_bn2_weight = rsqrt_1 = None
        reshape_1 = mul_3.reshape((-1, 1, 1, 1))
        mul_4 = block1_spatial_weight * reshape_1;  block1_spatial_weight = reshape_1 = None
        neg_1 = -block1_bn2_running_mean;  block1_bn2_running_mean = None
        mul_5 = neg_1 * mul_3;  neg_1 = mul_3 = None
        block1_bn2_bias = self.block1.bn2.bias
        add_5 = mul_5 + block1_bn2_bias;  mul_5 = block1_bn2_bias = None
        block1_expand_weight = self.block1.expand.weight
        block1_bn3_running_var = self.block1.bn3.running_var
        block1_bn3_running_mean = self.block1.bn3.running_mean
        add_6 = block1_bn3_running_var + 1e-05;  block1_bn3_running_var = None
        rsqrt_2 = torch.rsqrt(add_6);  add_6 = None
        block1_bn3_weight = self.block1.bn3.weight
        mul_6 = block1_bn3_weight * rsqrt_2;  block1_bn3_weight = rsqrt_2 = None
        reshape_2 = mul_6.reshape((-1, 1, 1, 1))
        mul_7 = block1_expand_weight * reshape_2;  block1_expand_weight = reshape_2 = None
        neg_2 = -block1_bn3_running_mean;  block1_bn3_running_mean = None
        mul_8 = neg_2 * mul_6;  neg_2 = mul_6 = None
        block1_bn3_bias = self.block1.bn3.bias
        add_7 = mul_8 + block1_bn3_bias;  mul_8 = block1_bn3_bias = None
        block1_short_0_weight = getattr(self.block1.short, "0").weight
        block1_short_1_running_var = getattr(self.block1.short, "1").running_var
        block1_short_1_running_mean = getattr(self.block1.short, "1").running_mean
        add_8 = block1_short_1_running_var + 1e-05;  block1_short_1_running_var = None
        rsqrt_3 = torch.rsqrt(add_8);  add_8 = None
        block1_short_1_weight = getattr(self.block1.short, "1").weight
        mul_9 = block1_short_1_weight * rsqrt_3;  block1_short_1_weight = rsqrt_3 = None
        reshape_3 = mul_9.reshape((-1, 1, 1, 1))
        mul_10 = block1_short_0_weight * reshape_3;  block1_short_0_weight = reshape_3 = None
        neg_3 = -block1_short_1_running_mean;  block1_short_1_running_mean = None
        mul_11 = neg_3 * mul_9;  neg_3 = mul_9 = None
        block1_short_1_bias = getattr(self.block1.short, "1").bias
        add_9 = mul_11 + block1_short_1_bias;  mul_11 = block1_short_1_bias = None
        block2_reduce_weight = self.block2.reduce.weight
        block2_bn1_running_var = self.block2.bn1.running_var
        block2_bn1_running_mean = self.block2.bn1.running_mean
        add_10 = block2_bn1_running_var + 1e-05;  block2_bn1_running_var = None
        rsqrt_4 = torch.rsqrt(add_10);  add_10 = None
        block2_bn1_weight = self.block2.bn1.weight
        mul_12 = block2_bn1_weight * rsqrt_4;  block2_bn1_weight = rsqrt_4 = None
        reshape_4 = mul_12.reshape((-1, 1, 1, 1))
        mul_13 = block2_reduce_weight * reshape_4;  block2_reduce_weight = reshape_4 = None
        neg_4 = -block2_bn1_running_mean;  block2_bn1_running_mean = None
        mul_14 = neg_4 * mul_12;  neg_4 = mul_12 = None
        block2_bn1_bias = self.block2.bn1.bias
        add_11 = mul_14 + block2_bn1_bias;  mul_14 = block2_bn1_bias = None
        block2_spatial_weight = self.block2.spatial.weight
        block2_bn2_running_var = self.block2.bn2.running_var
        block2_bn2_running_mean = self.block2.bn2.running_mean
        add_12 = block2_bn2_running_var + 1e-05;  block2_bn2_running_var = None
        rsqrt_5 = torch.rsqrt(add_12);  add_12 = None
        block2_bn2_weight = self.block2.bn2.weight
        mul_15 = block2_bn2_weight * rsqrt_5;  block2_bn2_weight = rsqrt_5 = None
        reshape_5 = mul_15.reshape((-1, 1, 1, 1))
        mul_16 = block2_spatial_weight * reshape_5;  block2_spatial_weight = reshape_5 = None
        neg_5 = -block2_bn2_running_mean;  block2_bn2_running_mean = None
        mul_17 = neg_5 * mul_15;  neg_5 = mul_15 = None
        block2_bn2_bias = self.block2.bn2.bias
        add_13 = mul_17 + block2_bn2_bias;  mul_17 = block2_bn2_bias = None
        block2_expand_weight = self.block2.expand.weight
        block2_bn3_running_var = self.block2.bn3.running_var
        block2_bn3_running_mean = self.block2.bn3.running_mean
        add_14 = block2_bn3_running_var + 1e-05;  block2_bn3_running_var = None
        rsqrt_6 = torch.rsqrt(add_14);  add_14 = None
        block2_bn3_weight = self.block2.bn3.weight
        mul_18 = block2_bn3_weight * rsqrt_6;  block2_bn3_weight = rsqrt_6 = None
        reshape_6 = mul_18.reshape((-1, 1, 1, 1))
        mul_19 = block2_expand_weight * reshape_6;  block2_expand_weight = reshape_6 = None
        neg_6 = -block2_bn3_running_mean;  block2_bn3_running_mean = None
        mul_20 = neg_6 * mul_18;  neg_6 = mul_18 = None
        block2_bn3_bias = self.block2.bn3.bias
        add_15 = mul_20 + block2_bn3_bias;  mul_20 = block2_bn3_bias = None
        return (mul_1, add_3, mul_4, add_5, mul_7, add_7, mul_10, add_9, mul_13, add_11, mul_16, add_13, mul_19, add_15)
    

    def _refresh_derived_weights(self):
        """Re-derive the hoisted weights when a parameter or buffer they read changed."""
        key = _kernelopt_state_key(self._kernelopt_sources())
        if key == self._kernelopt_key:
            return
        with torch.no_grad():
            values = self._kernelopt_derive()
            old = (self._kernelopt_derived_0, self._kernelopt_derived_1, self._kernelopt_derived_2, self._kernelopt_derived_3, self._kernelopt_derived_4, self._kernelopt_derived_5, self._kernelopt_derived_6, self._kernelopt_derived_7, self._kernelopt_derived_8, self._kernelopt_derived_9, self._kernelopt_derived_10, self._kernelopt_derived_11, self._kernelopt_derived_12, self._kernelopt_derived_13)
            values = tuple(_kernelopt_keep(o, v) for o, v in zip(old, values))
        self._kernelopt_derived_0, self._kernelopt_derived_1, self._kernelopt_derived_2, self._kernelopt_derived_3, self._kernelopt_derived_4, self._kernelopt_derived_5, self._kernelopt_derived_6, self._kernelopt_derived_7, self._kernelopt_derived_8, self._kernelopt_derived_9, self._kernelopt_derived_10, self._kernelopt_derived_11, self._kernelopt_derived_12, self._kernelopt_derived_13 = values
        self._kernelopt_key = key

    def forward(self, x):
        self._refresh_derived_weights()
        _kernelopt_derived_0 = self._kernelopt_derived_0
        _kernelopt_derived_1 = self._kernelopt_derived_1
        conv2d = torch.conv2d(x, _kernelopt_derived_0, _kernelopt_derived_1, (1, 1), (0, 0), (1, 1), 1);  _kernelopt_derived_0 = _kernelopt_derived_1 = None
        relu = torch.relu(conv2d);  conv2d = None
        _kernelopt_derived_2 = self._kernelopt_derived_2
        _kernelopt_derived_3 = self._kernelopt_derived_3
        conv2d_1 = torch.conv2d(relu, _kernelopt_derived_2, _kernelopt_derived_3, (2, 2), (1, 1), (1, 1), 1);  relu = _kernelopt_derived_2 = _kernelopt_derived_3 = None
        relu_1 = torch.relu(conv2d_1);  conv2d_1 = None
        _kernelopt_derived_4 = self._kernelopt_derived_4
        _kernelopt_derived_5 = self._kernelopt_derived_5
        conv2d_2 = torch.conv2d(relu_1, _kernelopt_derived_4, _kernelopt_derived_5, (1, 1), (0, 0), (1, 1), 1);  relu_1 = _kernelopt_derived_4 = _kernelopt_derived_5 = None
        _kernelopt_derived_6 = self._kernelopt_derived_6
        _kernelopt_derived_7 = self._kernelopt_derived_7
        conv2d_3 = torch.conv2d(x, _kernelopt_derived_6, _kernelopt_derived_7, (2, 2), (0, 0), (1, 1), 1);  x = _kernelopt_derived_6 = _kernelopt_derived_7 = None
        add = conv2d_2 + conv2d_3;  conv2d_2 = conv2d_3 = None
        relu_2 = torch.relu(add);  add = None
        _kernelopt_derived_8 = self._kernelopt_derived_8
        _kernelopt_derived_9 = self._kernelopt_derived_9
        conv2d_4 = torch.conv2d(relu_2, _kernelopt_derived_8, _kernelopt_derived_9, (1, 1), (0, 0), (1, 1), 1);  _kernelopt_derived_8 = _kernelopt_derived_9 = None
        relu_3 = torch.relu(conv2d_4);  conv2d_4 = None
        _kernelopt_derived_10 = self._kernelopt_derived_10
        _kernelopt_derived_11 = self._kernelopt_derived_11
        conv2d_5 = torch.conv2d(relu_3, _kernelopt_derived_10, _kernelopt_derived_11, (1, 1), (1, 1), (1, 1), 1);  relu_3 = _kernelopt_derived_10 = _kernelopt_derived_11 = None
        relu_4 = torch.relu(conv2d_5);  conv2d_5 = None
        _kernelopt_derived_12 = self._kernelopt_derived_12
        _kernelopt_derived_13 = self._kernelopt_derived_13
        conv2d_6 = torch.conv2d(relu_4, _kernelopt_derived_12, _kernelopt_derived_13, (1, 1), (0, 0), (1, 1), 1);  relu_4 = _kernelopt_derived_12 = _kernelopt_derived_13 = None
        add_1 = conv2d_6 + relu_2;  conv2d_6 = relu_2 = None
        relu_5 = torch.relu(add_1);  add_1 = None
        return relu_5
    


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
