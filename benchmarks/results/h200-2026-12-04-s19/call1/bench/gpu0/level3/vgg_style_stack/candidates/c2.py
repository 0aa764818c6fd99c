"""VGG-style feature stack: three (conv3x3 -> BN -> ReLU -> 2x2 max-pool) stages and a linear head."""

import itertools
import os

import torch
import torch.nn as nn

# Dispatch-only candidate: the reference after graph rewrites, on the vendor
# libraries (no generated kernels).
KERNELOPT_DISPATCH_ONLY = True


class _KernelOptReference(nn.Module):
    def __init__(self, widths: list, side: int, classes: int):
        super().__init__()
        layers = []
        for c_in, c_out in itertools.pairwise(widths):
            bn = nn.BatchNorm2d(c_out)
            with torch.no_grad():  # trained-looking statistics, so eval-mode BN is not the identity
                bn.running_mean.normal_(0.0, 0.3)
                bn.running_var.uniform_(0.5, 2.0)
            layers += [nn.Conv2d(c_in, c_out, 3, padding=1), bn, nn.ReLU(), nn.MaxPool2d(2)]
        self.features = nn.Sequential(*layers)
        reduced = side // 2 ** (len(widths) - 1)
        self.head = nn.Linear(widths[-1] * reduced * reduced, classes)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


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
        features_0_weight = getattr(self.features, "0").weight
        features_0_bias = getattr(self.features, "0").bias
        features_1_running_var = getattr(self.features, "1").running_var
        features_1_running_mean = getattr(self.features, "1").running_mean
        features_1_weight = getattr(self.features, "1").weight
        features_1_bias = getattr(self.features, "1").bias
        features_4_weight = getattr(self.features, "4").weight
        features_4_bias = getattr(self.features, "4").bias
        features_5_running_var = getattr(self.features, "5").running_var
        features_5_running_mean = getattr(self.features, "5").running_mean
        features_5_weight = getattr(self.features, "5").weight
        features_5_bias = getattr(self.features, "5").bias
        features_8_weight = getattr(self.features, "8").weight
        features_8_bias = getattr(self.features, "8").bias
        features_9_running_var = getattr(self.features, "9").running_var
        features_9_running_mean = getattr(self.features, "9").running_mean
        features_9_weight = getattr(self.features, "9").weight
        features_9_bias = getattr(self.features, "9").bias
        return (features_0_weight, features_0_bias, features_1_running_var, features_1_running_mean, features_1_weight, features_1_bias, features_4_weight, features_4_bias, features_5_running_var, features_5_running_mean, features_5_weight, features_5_bias, features_8_weight, features_8_bias, features_9_running_var, features_9_running_mean, features_9_weight, features_9_bias)
    

    def _kernelopt_derive(self):
        features_0_weight = getattr(self.features, "0").weight
        features_0_bias = getattr(self.features, "0").bias
        features_1_running_var = getattr(self.features, "1").running_var
        features_1_running_mean = getattr(self.features, "1").running_mean
        add = features_1_running_var + 1e-05;  features_1_running_var = None
        rsqrt = torch.rsqrt(add);  add = None
        features_1_weight = getattr(self.features, "1").weight
        mul = features_1_weight * rsqrt;  features_1_weight = rsqrt = None
        reshape = mul.reshape((-1, 1, 1, 1))
        mul_1 = features_0_weight * reshape;  features_0_weight = reshape = None
        sub = features_0_bias - features_1_running_mean;  features_0_bias = features_1_running_mean = None
        mul_2 = sub * mul;  sub = mul = None
        features_1_bias = getattr(self.features, "1").bias
        add_1 = mul_2 + features_1_bias;  mul_2 = features_1_bias = None
        features_4_weight = getattr(self.features, "4").weight
        features_4_bias = getattr(self.features, "4").bias
        features_5_running_var = getattr(self.features, "5").running_var
        features_5_running_mean = getattr(self.features, "5").running_mean
        add_2 = features_5_running_var + 1e-05;  features_5_running_var = None
        rsqrt_1 = torch.rsqrt(add_2);  add_2 = None
        features_5_weight = getattr(self.features, "5").weight
        mul_3 = features_5_weight * rsqrt_1;  features_5_weight = rsqrt_1 = None
        reshape_1 = mul_3.reshape((-1, 1, 1, 1))
        mul_4 = features_4_weight * reshape_1;  features_4_weight = reshape_1 = None
        sub_1 = features_4_bias - features_5_running_mean;  features_4_bias = features_5_running_mean = None
        mul_5 = sub_1 * mul_3;  sub_1 = mul_3 = None
        features_5_bias = getattr(self.features, "5").bias
        add_3 = mul_5 + features_5_bias;  mul_5 = features_5_bias = None
        features_8_weight = getattr(self.features, "8").weight
        features_8_bias = getattr(self.features, "8").bias
        features_9_running_var = getattr(self.features, "9").running_var
        features_9_running_mean = getattr(self.features, "9").running_mean
        add_4 = features_9_running_var + 1e-05;  features_9_running_var = None
        rsqrt_2 = torch.rsqrt(add_4);  add_4 = None
        features_9_weight = getattr(self.features, "9").weight
        mul_6 = features_9_weight * rsqrt_2;  features_9_weight = rsqrt_2 = None
        reshape_2 = mul_6.reshape((-1, 1, 1, 1))
        mul_7 = features_8_weight * reshape_2;  features_8_weight = reshape_2 = None
        sub_2 = features_8_bias - features_9_running_mean;  features_8_bias = features_9_running_mean = None
        mul_8 = sub_2 * mul_6;  sub_2 = mul_6 = None
        features_9_bias = getattr(self.features, "9").bias
        add_5 = mul_8 + features_9_bias;  mul_8 = features_9_bias = None
        return (mul_1, add_1, mul_4, add_3, mul_7, add_5)
    

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
        conv2d = torch.conv2d(x, _kernelopt_derived_0, _kernelopt_derived_1, (1, 1), (1, 1), (1, 1), 1);  x = _kernelopt_derived_0 = _kernelopt_derived_1 = None
        features_2 = getattr(self.features, "2")(conv2d);  conv2d = None
        features_3 = getattr(self.features, "3")(features_2);  features_2 = None
        _kernelopt_derived_2 = self._kernelopt_derived_2
        _kernelopt_derived_3 = self._kernelopt_derived_3
        conv2d_1 = torch.conv2d(features_3, _kernelopt_derived_2, _kernelopt_derived_3, (1, 1), (1, 1), (1, 1), 1);  features_3 = _kernelopt_derived_2 = _kernelopt_derived_3 = None
        features_6 = getattr(self.features, "6")(conv2d_1);  conv2d_1 = None
        features_7 = getattr(self.features, "7")(features_6);  features_6 = None
        _kernelopt_derived_4 = self._kernelopt_derived_4
        _kernelopt_derived_5 = self._kernelopt_derived_5
        conv2d_2 = torch.conv2d(features_7, _kernelopt_derived_4, _kernelopt_derived_5, (1, 1), (1, 1), (1, 1), 1);  features_7 = _kernelopt_derived_4 = _kernelopt_derived_5 = None
        features_10 = getattr(self.features, "10")(conv2d_2);  conv2d_2 = None
        features_11 = getattr(self.features, "11")(features_10);  features_10 = None
        flatten = torch.flatten(features_11, 1);  features_11 = None
        head = self.head(flatten);  flatten = None
        return head
    


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
