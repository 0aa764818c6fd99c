"""A long elementwise gating chain on a small tensor: launch overhead dominates eager time."""

import os

import torch
import torch.nn as nn

# Dispatch-only candidate: the reference's operators, routed to the vendor libraries
# (cuBLAS/cuDNN) instead of torch.compile's generated kernels.
KERNELOPT_DISPATCH_ONLY = True

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = False  # read from the environment when built
ROWS, COLS = (128, 256) if SMALL else (256, 512)


class _ModelNewEager(nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.scale = nn.Parameter(torch.rand(cols) + 0.5)
        self.shift = nn.Parameter(torch.randn(cols) * 0.1)

    def forward(self, x, state):
        # ~18 tiny ops, each its own kernel launch in eager: a recurrent-cell style state update.
        z = x * self.scale + self.shift
        gate = torch.sigmoid(z)
        cand = torch.tanh(z * 0.5 + state)
        new_state = gate * state + (1.0 - gate) * cand
        decay = torch.exp(-torch.abs(new_state))
        out = torch.clamp(new_state * decay, -0.75, 0.75)
        return torch.where(out > 0, out, 0.1 * out)


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [COLS]


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
