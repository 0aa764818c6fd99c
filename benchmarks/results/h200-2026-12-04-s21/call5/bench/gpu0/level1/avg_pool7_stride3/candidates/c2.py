"""Overlapping 7x7 average pooling with stride 3, as in coarse context pooling branches."""

import os

import torch
import torch.nn as nn

LAUNCH_CONFIGS = {
    'own_depthwise_conv2d_kernel': {'num_warps': 4, 'num_stages': 3},
}



class _KernelOptReference(nn.Module):
    def __init__(self, kernel: int, stride: int):
        super().__init__()
        # Windows overlap (stride < kernel). Measured on an H200 (torch 2.11): Inductor's
        # unrolled window loads run ~1.6x slower than eager here.
        self.pool = nn.AvgPool2d(kernel, stride=stride)

    def forward(self, x):
        return self.pool(x)


# --- KernelOPT graph rewrite: average pool as KernelOPT's own Triton kernel ---
import torch
import triton
import triton.language as tl


MAX_GRID_Y = 65535


@triton.jit
def own_depthwise_conv2d_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    out_ptr,
    C,
    H,
    W,
    H_OUT,
    W_OUT,
    M,
    SH: tl.constexpr,
    SW: tl.constexpr,
    PH: tl.constexpr,
    PW: tl.constexpr,
    DH: tl.constexpr,
    DW: tl.constexpr,
    KH: tl.constexpr,
    KW: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    MB: tl.constexpr,
    BLOCK: tl.constexpr,
    AVG: tl.constexpr = False,
    SCALE: tl.constexpr = 1.0,
):
    # One program: BLOCK output pixels of one (image, input channel) plane, for all M output
    # channels that read that input channel (acc is MB x BLOCK): the input is read once.
    # AVG: an average pool instead (M = 1, no weights): the window's sum times SCALE.
    plane = tl.program_id(0).to(tl.int64)  # image * C + input channel
    c = plane % C
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    hw_out = H_OUT * W_OUT
    in_pix = offs < hw_out
    oh = offs // W_OUT
    ow = offs % W_OUT
    ms = tl.arange(0, MB)
    in_m = ms < M
    oc = c * M + ms
    x_base = x_ptr + plane * H * W
    acc = tl.zeros((MB, BLOCK), dtype=tl.float32)
    for kh in tl.static_range(KH):
        ih = oh * SH - PH + kh * DH
        row_ok = in_pix & (ih >= 0) & (ih < H)
        for kw in tl.static_range(KW):
            iw = ow * SW - PW + kw * DW
            ok = row_ok & (iw >= 0) & (iw < W)
            v = tl.load(x_base + ih * W + iw, mask=ok, other=0.0).to(tl.float32)
            if AVG:
                acc += v[None, :]
            else:
                wv = tl.load(w_ptr + oc * (KH * KW) + (kh * KW + kw), mask=in_m, other=0.0)
                acc += wv.to(tl.float32)[:, None] * v[None, :]
    if AVG:
        acc = acc * SCALE
    if HAS_BIAS:
        acc += tl.load(b_ptr + oc, mask=in_m, other=0.0).to(tl.float32)[:, None]
    image = plane // C
    rows = (image * C * M + oc) * hw_out
    ptrs = out_ptr + rows[:, None] + offs[None, :]
    tl.store(ptrs, acc.to(out_ptr.dtype.element_ty), mask=in_m[:, None] & in_pix[None, :])


def kernelopt_avg_pool2d(x, kernel, stride, padding, divisor):
    """``F.avg_pool2d(x, kernel, stride, padding)`` without ceil mode, zero padding counted
    (the window's sum over ``divisor``), NCHW: the depthwise kernel's window loop with a
    constant weight, one program per block of output pixels of one plane. Each input plane is
    read from memory once and its overlapping windows are served from cache. Sums in float32
    in tap order, then scales by ``1 / divisor`` (a reassociation of the vendor's sum).
    """
    n, c, h, w = x.shape
    kh, kw = kernel
    sh, sw = stride
    ph, pw = padding
    h_out = (h + 2 * ph - kh) // sh + 1
    w_out = (w + 2 * pw - kw) // sw + 1
    out = torch.empty((n, c, h_out, w_out), device=x.device, dtype=x.dtype)
    if x.device.type == "meta" or out.numel() == 0:
        return out
    x = x.contiguous()
    block = max(16, min(256, triton.next_power_of_2(h_out * w_out)))
    while triton.cdiv(h_out * w_out, block) > MAX_GRID_Y and block < 4096:
        block *= 2
    if triton.cdiv(h_out * w_out, block) > MAX_GRID_Y:
        return torch.nn.functional.avg_pool2d(x, kernel, stride, padding, False, True, divisor)
    grid = (n * c, triton.cdiv(h_out * w_out, block))
    own_depthwise_conv2d_kernel[grid](x, x, x, out, c, h, w, h_out, w_out, 1, SH=sh, SW=sw, PH=ph, PW=pw, DH=1, DW=1, KH=kh, KW=kw, HAS_BIAS=False, MB=1, BLOCK=block, AVG=True, SCALE=1.0 / divisor, **LAUNCH_CONFIGS['own_depthwise_conv2d_kernel'])
    return out


kernelopt_jupyter_agents_rewrites_kernels_kernelopt_avg_pool2d = kernelopt_avg_pool2d



class _ModelNewEager(_KernelOptReference):
    """The reference with its forward rewritten: average pool as KernelOPT's own Triton kernel."""

    def forward(self, x):
        kernelopt_avg_pool2d = kernelopt_jupyter_agents_rewrites_kernels_kernelopt_avg_pool2d(x, (7, 7), (3, 3), (0, 0), 49);  x = None
        return kernelopt_avg_pool2d
    


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
