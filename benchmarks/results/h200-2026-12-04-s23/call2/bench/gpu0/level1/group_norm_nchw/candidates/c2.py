"""GroupNorm with 32 groups on a UNet-sized NCHW feature map (a two-pass memory-bound norm)."""

import os

import torch
import torch.nn as nn


class _KernelOptReference(nn.Module):
    def __init__(self, groups: int, channels: int):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x):
        return self.norm(x)


# --- KernelOPT graph rewrite: GroupNorm as KernelOPT's own one-kernel Triton normalisation ---
import torch
import triton
import triton.language as tl


@triton.jit
def own_group_norm_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    out_ptr,
    GROUPS,
    HW,
    CG,
    GROUP_SIZE,
    eps,
    HAS_AFFINE: tl.constexpr,
    BLOCK: tl.constexpr,
):
    # One program: one (image, group), whose CG channels x HW elements are contiguous. The
    # statistics and the normalisation in one kernel: the second read of the group comes
    # right after the first, while its lines are likely still in L2.
    row = tl.program_id(0).to(tl.int64)  # image * GROUPS + group
    base = row * GROUP_SIZE
    first_channel = (row % GROUPS) * CG
    zero = tl.sum(tl.zeros([BLOCK], dtype=tl.float32), 0)
    mean, m2, count = zero, zero, zero
    for start in range(0, GROUP_SIZE, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < GROUP_SIZE
        v = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
        n_b = tl.minimum(GROUP_SIZE - start, BLOCK).to(tl.float32)
        mean_b = tl.sum(v, 0) / n_b
        d = tl.where(mask, v - mean_b, 0.0)
        m2_b = tl.sum(d * d, 0)
        # Chan's combination of the running (count, mean, M2) with this block's.
        total = count + n_b
        delta = mean_b - mean
        mean = mean + delta * (n_b / total)
        m2 = m2 + m2_b + delta * delta * (count * n_b / total)
        count = total
    rstd = 1.0 / tl.sqrt(m2 / count + eps)
    for start in range(0, GROUP_SIZE, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < GROUP_SIZE
        v = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
        y = (v - mean) * rstd
        if HAS_AFFINE:
            channel = first_channel + offs // HW
            gamma = tl.load(w_ptr + channel, mask=mask, other=1.0).to(tl.float32)
            beta = tl.load(b_ptr + channel, mask=mask, other=0.0).to(tl.float32)
            y = y * gamma + beta
        tl.store(out_ptr + base + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernelopt_group_norm(x, num_groups, weight, bias, eps):
    """``F.group_norm(x, num_groups, weight, bias, eps)`` (``x`` of shape ``(N, C, *)``) in
    one Triton kernel: one program per image and group computes the group's mean and variance
    (blockwise, combined by Chan's formula, in float32) and then normalises it, so the group is
    read twice back to back (the second time mostly from L2) and written once, where the usual
    two kernels (statistics, then normalisation) read it twice from memory. A reassociation of
    the vendor's sums.
    """
    n, c = x.shape[0], x.shape[1]
    hw = x.numel() // max(1, n * c)
    out = torch.empty(x.shape, device=x.device, dtype=x.dtype)
    if x.device.type == "meta" or out.numel() == 0:
        return out
    x = x.contiguous()
    cg = c // num_groups
    affine = weight is not None and bias is not None
    block = max(16, min(4096, triton.next_power_of_2(cg * hw)))
    own_group_norm_kernel[(n * num_groups,)](
        x,
        weight.contiguous() if affine else x,
        bias.contiguous() if affine else x,
        out,
        num_groups,
        hw,
        cg,
        cg * hw,
        float(eps),
        HAS_AFFINE=affine,
        BLOCK=block,
        num_warps=8 if block >= 2048 else 4,
    )
    return out


kernelopt_jupyter_agents_rewrites_kernels_kernelopt_group_norm = kernelopt_group_norm



class _ModelNewEager(_KernelOptReference):
    """The reference with its forward rewritten: GroupNorm as KernelOPT's own one-kernel Triton normalisation."""

    def forward(self, x):
        norm_weight = self.norm.weight
        norm_bias = self.norm.bias
        kernelopt_group_norm = kernelopt_jupyter_agents_rewrites_kernels_kernelopt_group_norm(x, 32, norm_weight, norm_bias, 1e-05);  x = norm_weight = norm_bias = None
        return kernelopt_group_norm
    


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
