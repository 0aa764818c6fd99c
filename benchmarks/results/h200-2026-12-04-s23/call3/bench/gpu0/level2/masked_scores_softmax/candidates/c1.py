"""Attention probabilities: Q @ K^T -> scale -> key-padding mask -> softmax (no fused SDPA)."""

import os

import torch
import torch.nn as nn

# Dispatch-only candidate: the reference's operators, routed to the vendor libraries
# (cuBLAS/cuDNN) instead of torch.compile's generated kernels.
KERNELOPT_DISPATCH_ONLY = True

# KERNELOPT_SMALL=1 shrinks every size so CPU tests under the Triton interpreter stay fast.
SMALL = False  # read from the environment when built
HEADS_X_BATCH, SEQ, HEAD_DIM = (4, 128, 32) if SMALL else (64, 1024, 64)


class _ModelNewEager(nn.Module):
    def __init__(self, head_dim: int):
        super().__init__()
        self.scale = head_dim**-0.5

    def forward(self, q, k, key_valid):
        scores = torch.bmm(q, k.transpose(1, 2)) * self.scale
        scores = scores.masked_fill(~key_valid[:, None, :], float("-inf"))
        return torch.softmax(scores, dim=-1)


def get_inputs():
    q = torch.randn(HEADS_X_BATCH, SEQ, HEAD_DIM)
    k = torch.randn(HEADS_X_BATCH, SEQ, HEAD_DIM)
    # Each sequence keeps a random prefix of at least one key, so no row is fully masked.
    lengths = torch.randint(1, SEQ + 1, (HEADS_X_BATCH, 1))
    key_valid = torch.arange(SEQ)[None, :] < lengths
    return [q, k, key_valid]


def get_init_inputs():
    return [HEAD_DIM]


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
