"""Mobile-net stage: two inverted-residual blocks (1x1 expand, depthwise 3x3, 1x1 project, BN)."""

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
        bn.running_mean.normal_(0.0, 0.3)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.normal_(0.0, 0.1)
    return bn


class InvertedResidual(nn.Module):
    def __init__(self, channels: int, expand: int):
        super().__init__()
        hidden = channels * expand
        self.expand = nn.Conv2d(channels, hidden, 1, bias=False)
        self.bn1 = _trained_bn(hidden)
        self.dw = nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden, bias=False)
        self.bn2 = _trained_bn(hidden)
        self.project = nn.Conv2d(hidden, channels, 1, bias=False)
        self.bn3 = _trained_bn(channels)

    def forward(self, x):
        h = F.relu6(self.bn1(self.expand(x)))
        h = F.relu6(self.bn2(self.dw(h)))
        return x + self.bn3(self.project(h))


class _KernelOptReference(nn.Module):
    def __init__(self, channels: int, expand: int, blocks: int):
        super().__init__()
        self.blocks = nn.Sequential(*[InvertedResidual(channels, expand) for _ in range(blocks)])

    def forward(self, x):
        return self.blocks(x)


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

    def _kernelopt_sources(self):
        blocks_0_expand_weight = getattr(self.blocks, "0").expand.weight
        blocks_0_bn1_running_var = getattr(self.blocks, "0").bn1.running_var
        blocks_0_bn1_running_mean = getattr(self.blocks, "0").bn1.running_mean
        blocks_0_bn1_weight = getattr(self.blocks, "0").bn1.weight
        blocks_0_bn1_bias = getattr(self.blocks, "0").bn1.bias
        blocks_0_dw_weight = getattr(self.blocks, "0").dw.weight
        blocks_0_bn2_running_var = getattr(self.blocks, "0").bn2.running_var
        blocks_0_bn2_running_mean = getattr(self.blocks, "0").bn2.running_mean
        blocks_0_bn2_weight = getattr(self.blocks, "0").bn2.weight
        blocks_0_bn2_bias = getattr(self.blocks, "0").bn2.bias
        blocks_0_project_weight = getattr(self.blocks, "0").project.weight
        blocks_0_bn3_running_var = getattr(self.blocks, "0").bn3.running_var
        blocks_0_bn3_running_mean = getattr(self.blocks, "0").bn3.running_mean
        blocks_0_bn3_weight = getattr(self.blocks, "0").bn3.weight
        blocks_0_bn3_bias = getattr(self.blocks, "0").bn3.bias
        blocks_1_expand_weight = getattr(self.blocks, "1").expand.weight
        blocks_1_bn1_running_var = getattr(self.blocks, "1").bn1.running_var
        blocks_1_bn1_running_mean = getattr(self.blocks, "1").bn1.running_mean
        blocks_1_bn1_weight = getattr(self.blocks, "1").bn1.weight
        blocks_1_bn1_bias = getattr(self.blocks, "1").bn1.bias
        blocks_1_dw_weight = getattr(self.blocks, "1").dw.weight
        blocks_1_bn2_running_var = getattr(self.blocks, "1").bn2.running_var
        blocks_1_bn2_running_mean = getattr(self.blocks, "1").bn2.running_mean
        blocks_1_bn2_weight = getattr(self.blocks, "1").bn2.weight
        blocks_1_bn2_bias = getattr(self.blocks, "1").bn2.bias
        blocks_1_project_weight = getattr(self.blocks, "1").project.weight
        blocks_1_bn3_running_var = getattr(self.blocks, "1").bn3.running_var
        blocks_1_bn3_running_mean = getattr(self.blocks, "1").bn3.running_mean
        blocks_1_bn3_weight = getattr(self.blocks, "1").bn3.weight
        blocks_1_bn3_bias = getattr(self.blocks, "1").bn3.bias
        return (blocks_0_expand_weight, blocks_0_bn1_running_var, blocks_0_bn1_running_mean, blocks_0_bn1_weight, blocks_0_bn1_bias, blocks_0_dw_weight, blocks_0_bn2_running_var, blocks_0_bn2_running_mean, blocks_0_bn2_weight, blocks_0_bn2_bias, blocks_0_project_weight, blocks_0_bn3_running_var, blocks_0_bn3_running_mean, blocks_0_bn3_weight, blocks_0_bn3_bias, blocks_1_expand_weight, blocks_1_bn1_running_var, blocks_1_bn1_running_mean, blocks_1_bn1_weight, blocks_1_bn1_bias, blocks_1_dw_weight, blocks_1_bn2_running_var, blocks_1_bn2_running_mean, blocks_1_bn2_weight, blocks_1_bn2_bias, blocks_1_project_weight, blocks_1_bn3_running_var, blocks_1_bn3_running_mean, blocks_1_bn3_weight, blocks_1_bn3_bias)
    

    def _kernelopt_derive(self):
        blocks_0_expand_weight = getattr(self.blocks, "0").expand.weight
        blocks_0_bn1_running_var = getattr(self.blocks, "0").bn1.running_var
        blocks_0_bn1_running_mean = getattr(self.blocks, "0").bn1.running_mean
        add_2 = blocks_0_bn1_running_var + 1e-05;  blocks_0_bn1_running_var = None
        rsqrt = torch.rsqrt(add_2);  add_2 = None
        blocks_0_bn1_weight = getattr(self.blocks, "0").bn1.weight
        mul = blocks_0_bn1_weight * rsqrt;  blocks_0_bn1_weight = rsqrt = None
        reshape = mul.reshape((-1, 1, 1, 1))
        mul_1 = blocks_0_expand_weight * reshape;  blocks_0_expand_weight = reshape = None
        neg = -blocks_0_bn1_running_mean;  blocks_0_bn1_running_mean = None
        mul_2 = neg * mul;  neg = mul = None
        blocks_0_bn1_bias = getattr(self.blocks, "0").bn1.bias
        add_3 = mul_2 + blocks_0_bn1_bias;  mul_2 = blocks_0_bn1_bias = None
        blocks_0_dw_weight = getattr(self.blocks, "0").dw.weight
        blocks_0_bn2_running_var = getattr(self.blocks, "0").bn2.running_var
        blocks_0_bn2_running_mean = getattr(self.blocks, "0").bn2.running_mean
        add_4 = blocks_0_bn2_running_var + 1e-05;  blocks_0_bn2_running_var = None
        rsqrt_1 = torch.rsqrt(add_4);  add_4 = None
        blocks_0_bn2_weight = getattr(self.blocks, "0").bn2.weight
        mul_3 = blocks_0_bn2_weight * rsqrt_1;  blocks_0_bn2_weight = rsqrt_1 = None
        reshape_1 = mul_3.reshape((-1, 1, 1, 1))
        mul_4 = blocks_0_dw_weight * reshape_1;  blocks_0_dw_weight = reshape_1 = None
        neg_1 = -blocks_0_bn2_running_mean;  blocks_0_bn2_running_mean = None
        mul_5 = neg_1 * mul_3;  neg_1 = mul_3 = None
        blocks_0_bn2_bias = getattr(self.blocks, "0").bn2.bias
        add_5 = mul_5 + blocks_0_bn2_bias;  mul_5 = blocks_0_bn2_bias = None
        blocks_0_project_weight = getattr(self.blocks, "0").project.weight
        blocks_0_bn3_running_var = getattr(self.blocks, "0").bn3.running_var
        blocks_0_bn3_running_mean = getattr(self.blocks, "0").bn3.running_mean
        add_6 = blocks_0_bn3_running_var + 1e-05;  blocks_0_bn3_running_var = None
        rsqrt_2 = torch.rsqrt(add_6);  add_6 = None
        blocks_0_bn3_weight = getattr(self.blocks, "0").bn3.weight
        mul_6 = blocks_0_bn3_weight * rsqrt_2;  blocks_0_bn3_weight = rsqrt_2 = None
        reshape_2 = mul_6.reshape((-1, 1, 1, 1))
        mul_7 = blocks_0_project_weight * reshape_2;  blocks_0_project_weight = reshape_2 = None
        neg_2 = -blocks_0_bn3_running_mean;  blocks_0_bn3_running_mean = None
        mul_8 = neg_2 * mul_6;  neg_2 = mul_6 = None
        blocks_0_bn3_bias = getattr(self.blocks, "0").bn3.bias
        add_7 = mul_8 + blocks_0_bn3_bias;  mul_8 = blocks_0_bn3_bias = None
        blocks_1_expand_weight = getattr(self.blocks, "1").expand.weight
        blocks_1_bn1_running_var = getattr(self.blocks, "1").bn1.running_var
        blocks_1_bn1_running_mean = getattr(self.blocks, "1").bn1.running_mean
        add_8 = blocks_1_bn1_running_var + 1e-05;  blocks_1_bn1_running_var = None
        rsqrt_3 = torch.rsqrt(add_8);  add_8 = None
        blocks_1_bn1_weight = getattr(self.blocks, "1").bn1.weight
        mul_9 = blocks_1_bn1_weight * rsqrt_3;  blocks_1_bn1_weight = rsqrt_3 = None
        reshape_3 = mul_9.reshape((-1, 1, 1, 1))
        mul_10 = blocks_1_expand_weight * reshape_3;  blocks_1_expand_weight = reshape_3 = None
        neg_3 = -blocks_1_bn1_running_mean;  blocks_1_bn1_running_mean = None
        mul_11 = neg_3 * mul_9;  neg_3 = mul_9 = None
        blocks_1_bn1_bias = getattr(self.blocks, "1").bn1.bias
        add_9 = mul_11 + blocks_1_bn1_bias;  mul_11 = blocks_1_bn1_bias = None
        blocks_1_dw_weight = getattr(self.blocks, "1").dw.weight
        blocks_1_bn2_running_var = getattr(self.blocks, "1").bn2.running_var
        blocks_1_bn2_running_mean = getattr(self.blocks, "1").bn2.running_mean
        add_10 = blocks_1_bn2_running_var + 1e-05;  blocks_1_bn2_running_var = None
        rsqrt_4 = torch.rsqrt(add_10);  add_10 = None
        blocks_1_bn2_weight = getattr(self.blocks, "1").bn2.weight
        mul_12 = blocks_1_bn2_weight * rsqrt_4;  blocks_1_bn2_weight = rsqrt_4 = None
        reshape_4 = mul_12.reshape((-1, 1, 1, 1))
        mul_13 = blocks_1_dw_weight * reshape_4;  blocks_1_dw_weight = reshape_4 = None
        neg_4 = -blocks_1_bn2_running_mean;  blocks_1_bn2_running_mean = None
        mul_14 = neg_4 * mul_12;  neg_4 = mul_12 = None
        blocks_1_bn2_bias = getattr(self.blocks, "1").bn2.bias
        add_11 = mul_14 + blocks_1_bn2_bias;  mul_14 = blocks_1_bn2_bias = None
        blocks_1_project_weight = getattr(self.blocks, "1").project.weight
        blocks_1_bn3_running_var = getattr(self.blocks, "1").bn3.running_var
        blocks_1_bn3_running_mean = getattr(self.blocks, "1").bn3.running_mean
        add_12 = blocks_1_bn3_running_var + 1e-05;  blocks_1_bn3_running_var = None
        rsqrt_5 = torch.rsqrt(add_12);  add_12 = None
        blocks_1_bn3_weight = getattr(self.blocks, "1").bn3.weight
        mul_15 = blocks_1_bn3_weight * rsqrt_5;  blocks_1_bn3_weight = rsqrt_5 = None
        reshape_5 = mul_15.reshape((-1, 1, 1, 1))
        mul_16 = blocks_1_project_weight * reshape_5;  blocks_1_project_weight = reshape_5 = None
        neg_5 = -blocks_1_bn3_running_mean;  blocks_1_bn3_running_mean = None
        mul_17 = neg_5 * mul_15;  neg_5 = mul_15 = None
        blocks_1_bn3_bias = getattr(self.blocks, "1").bn3.bias
        add_13 = mul_17 + blocks_1_bn3_bias;  mul_17 = blocks_1_bn3_bias = None
        return (mul_1, add_3, mul_4, add_5, mul_7, add_7, mul_10, add_9, mul_13, add_11, mul_16, add_13)
    

    def _refresh_derived_weights(self):
        """Re-derive the hoisted weights when a parameter or buffer they read changed."""
        key = _kernelopt_state_key(self._kernelopt_sources())
        if key == self._kernelopt_key:
            return
        with torch.no_grad():
            values = self._kernelopt_derive()
            old = (self._kernelopt_derived_0, self._kernelopt_derived_1, self._kernelopt_derived_2, self._kernelopt_derived_3, self._kernelopt_derived_4, self._kernelopt_derived_5, self._kernelopt_derived_6, self._kernelopt_derived_7, self._kernelopt_derived_8, self._kernelopt_derived_9, self._kernelopt_derived_10, self._kernelopt_derived_11)
            values = tuple(_kernelopt_keep(o, v) for o, v in zip(old, values))
        self._kernelopt_derived_0, self._kernelopt_derived_1, self._kernelopt_derived_2, self._kernelopt_derived_3, self._kernelopt_derived_4, self._kernelopt_derived_5, self._kernelopt_derived_6, self._kernelopt_derived_7, self._kernelopt_derived_8, self._kernelopt_derived_9, self._kernelopt_derived_10, self._kernelopt_derived_11 = values
        self._kernelopt_key = key

    def forward(self, x):
        self._refresh_derived_weights()
        _kernelopt_derived_0 = self._kernelopt_derived_0
        _kernelopt_derived_1 = self._kernelopt_derived_1
        conv2d = torch.conv2d(x, _kernelopt_derived_0, _kernelopt_derived_1, (1, 1), (0, 0), (1, 1), 1);  _kernelopt_derived_0 = _kernelopt_derived_1 = None
        relu6 = torch.nn.functional.relu6(conv2d, inplace = False);  conv2d = None
        _kernelopt_derived_2 = self._kernelopt_derived_2
        _kernelopt_derived_3 = self._kernelopt_derived_3
        conv2d_1 = torch.conv2d(relu6, _kernelopt_derived_2, _kernelopt_derived_3, (1, 1), (1, 1), (1, 1), 192);  relu6 = _kernelopt_derived_2 = _kernelopt_derived_3 = None
        relu6_1 = torch.nn.functional.relu6(conv2d_1, inplace = False);  conv2d_1 = None
        _kernelopt_derived_4 = self._kernelopt_derived_4
        _kernelopt_derived_5 = self._kernelopt_derived_5
        conv2d_2 = torch.conv2d(relu6_1, _kernelopt_derived_4, _kernelopt_derived_5, (1, 1), (0, 0), (1, 1), 1);  relu6_1 = _kernelopt_derived_4 = _kernelopt_derived_5 = None
        add = x + conv2d_2;  x = conv2d_2 = None
        _kernelopt_derived_6 = self._kernelopt_derived_6
        _kernelopt_derived_7 = self._kernelopt_derived_7
        conv2d_3 = torch.conv2d(add, _kernelopt_derived_6, _kernelopt_derived_7, (1, 1), (0, 0), (1, 1), 1);  _kernelopt_derived_6 = _kernelopt_derived_7 = None
        relu6_2 = torch.nn.functional.relu6(conv2d_3, inplace = False);  conv2d_3 = None
        _kernelopt_derived_8 = self._kernelopt_derived_8
        _kernelopt_derived_9 = self._kernelopt_derived_9
        conv2d_4 = torch.conv2d(relu6_2, _kernelopt_derived_8, _kernelopt_derived_9, (1, 1), (1, 1), (1, 1), 192);  relu6_2 = _kernelopt_derived_8 = _kernelopt_derived_9 = None
        relu6_3 = torch.nn.functional.relu6(conv2d_4, inplace = False);  conv2d_4 = None
        _kernelopt_derived_10 = self._kernelopt_derived_10
        _kernelopt_derived_11 = self._kernelopt_derived_11
        conv2d_5 = torch.conv2d(relu6_3, _kernelopt_derived_10, _kernelopt_derived_11, (1, 1), (0, 0), (1, 1), 1);  relu6_3 = _kernelopt_derived_10 = _kernelopt_derived_11 = None
        add_1 = add + conv2d_5;  add = conv2d_5 = None
        return add_1
    


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
