"""Harvested from torch.compile (Inductor) for problem 'gated_conv_mixer'.

Editable candidate: each Triton kernel below is Inductor's generated code as a plain
@triton.jit function; vendor-library calls (cuBLAS/cuDNN) are kept and labelled.
Shapes are static: the code is specialised to the problem's input shapes.
Harvested on cuda (torch 2.11.0+cu130, triton 3.6.0).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.language.extra import libdevice

aten = torch.ops.aten

# Launch configurations (block sizes, warps, stages) per kernel: the Tuner edits
# only this dict; grids follow the block sizes through `meta`.
LAUNCH_CONFIGS = {
    'triton_per_fused_add_mean_mul_pow_rsqrt_0': {'XBLOCK': 2, 'num_warps': 1, 'num_stages': 1},
    'triton_poi_fused__unsafe_view_convolution_split_transpose_1': {'YBLOCK': 32, 'XBLOCK': 32, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused__unsafe_view_clone_convolution_mul_sigmoid_silu_slice_split_transpose_2': {'YBLOCK': 2, 'XBLOCK': 512, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused__unsafe_view_add_3': {'XBLOCK': 512, 'num_warps': 8, 'num_stages': 1},
}


# ---- Triton kernel triton_per_fused_add_mean_mul_pow_rsqrt_0 <- aten.pow, aten.mean, aten.add, aten.rsqrt, aten.mul
@triton.jit
def triton_per_fused_add_mean_mul_pow_rsqrt_0(in_ptr0, in_ptr1, out_ptr1, xnumel, r0_numel, XBLOCK: tl.constexpr):
    xnumel = 16384
    r0_numel = 512
    R0_BLOCK: tl.constexpr = 512
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 512 * x0), None)
    tmp11 = tl.load(in_ptr1 + r0_1, None, eviction_policy='evict_last')
    tmp1 = tmp0 * tmp0
    tmp2 = tl.broadcast_to(tmp1, [XBLOCK, R0_BLOCK])
    tmp4 = tl.sum(tmp2, 1)[:, None].to(tl.float32)
    tmp5 = tl.full([1, 1], 512.0, tl.float32)
    tmp6 = tmp4 / tmp5
    tmp7 = tl.full([1, 1], 1e-06, tl.float32)
    tmp8 = tmp6 + tmp7
    tmp9 = libdevice.rsqrt(tmp8)
    tmp10 = tmp0 * tmp9
    tmp12 = tmp10 * tmp11
    tl.store(out_ptr1 + (r0_1 + 512 * x0), tmp12, None)


# ---- Triton kernel triton_poi_fused__unsafe_view_convolution_split_transpose_1 <- aten._unsafe_view, aten.split, aten.transpose, aten.convolution
@triton.jit
def triton_poi_fused__unsafe_view_convolution_split_transpose_1(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 8192
    xnumel = 1024
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y0 = yindex % 512
    y1 = yindex // 512
    y3 = yindex
    tmp0 = tl.load(in_ptr0 + (y0 + 1024 * x2 + 1048576 * y1), xmask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (x2 + 1024 * y3), tmp0, xmask)


# ---- Triton kernel triton_poi_fused__unsafe_view_clone_convolution_mul_sigmoid_silu_slice_split_transpose_2 <- aten._unsafe_view, aten.split, aten.transpose, aten.convolution, aten.slice, aten.silu, aten.sigmoid, aten.mul, aten.clone
@triton.jit
def triton_poi_fused__unsafe_view_clone_convolution_mul_sigmoid_silu_slice_split_transpose_2(in_ptr0, in_ptr1, in_ptr2, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 16384
    xnumel = 512
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y0 = yindex % 1024
    y1 = yindex // 1024
    y3 = yindex
    tmp0 = tl.load(in_ptr0 + (y0 + 1027 * x2 + 525824 * y1), xmask, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + x2, xmask, eviction_policy='evict_last')
    tmp8 = tl.load(in_ptr2 + (512 + x2 + 1024 * y3), xmask, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tmp3 = -tmp2
    tmp4 = libdevice.exp(tmp3)
    tmp5 = tl.full([1, 1], 1.0, tl.float32)
    tmp6 = tmp4 + tmp5
    tmp7 = tmp2 / tmp6
    tmp9 = tl.sigmoid(tmp8)
    tmp10 = tmp7 * tmp9
    tl.store(out_ptr0 + (x2 + 512 * y3), tmp10, xmask)


# ---- Triton kernel triton_poi_fused__unsafe_view_add_3 <- aten._unsafe_view, aten.add
@triton.jit
def triton_poi_fused__unsafe_view_add_3(in_out_ptr0, in_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 8388608
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + x0, None)
    tmp1 = tl.load(in_out_ptr0 + x0, None)
    tmp2 = tmp0 + tmp1
    tl.store(in_out_ptr0 + x0, tmp2, None)


def reinterpret_tensor(tensor, size, stride, offset=0):
    """A view of ``tensor``'s storage with the given size, stride and extra offset."""
    return tensor.as_strided(size, stride, tensor.storage_offset() + offset)


def _declare(module, key, shape, dtype, parameter):
    """Register ``key`` (dotted, like the reference's state_dict) as a zero tensor."""
    *path, leaf = key.split(".")
    for part in path:
        child = module._modules.get(part)
        if child is None:
            child = nn.Module()
            module.add_module(part, child)
        module = child
    tensor = torch.zeros(shape, dtype=dtype)
    if parameter:
        module.register_parameter(leaf, nn.Parameter(tensor, requires_grad=False))
    else:
        module.register_buffer(leaf, tensor)


def _harvested_forward(args):
    """Inductor's call(), rewritten with plain launches and torch calls."""
    arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, arg5_1, = args
    _device = arg0_1.device
    buf1 = torch.empty_strided((16, 1024, 512), (524288, 512, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_per_fused_add_mean_mul_pow_rsqrt_0 <- aten.pow, aten.mean, aten.add, aten.rsqrt, aten.mul
    triton_per_fused_add_mean_mul_pow_rsqrt_0[lambda meta: (triton.cdiv(16384, meta['XBLOCK']),)](arg0_1, arg1_1, buf1, 16384, 512, **LAUNCH_CONFIGS['triton_per_fused_add_mean_mul_pow_rsqrt_0'])
    del arg1_1
    buf2 = torch.empty_strided((16384, 1024), (1024, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.mm via cuBLAS <- aten.pow, aten.mean, aten.add, aten.rsqrt, aten.mul, aten.view, aten.t, aten.mm
    torch.mm(reinterpret_tensor(buf1, (16384, 512), (512, 1), 0), reinterpret_tensor(arg2_1, (512, 1024), (1, 512), 0), out=buf2)
    del arg2_1
    buf3 = reinterpret_tensor(buf1, (16, 512, 1024), (524288, 1024, 1), 0)
    del buf1
    # Triton kernel triton_poi_fused__unsafe_view_convolution_split_transpose_1 <- aten._unsafe_view, aten.split, aten.transpose, aten.convolution
    triton_poi_fused__unsafe_view_convolution_split_transpose_1[lambda meta: (triton.cdiv(1024, meta['XBLOCK']), triton.cdiv(8192, meta['YBLOCK']))](buf2, buf3, 8192, 1024, **LAUNCH_CONFIGS['triton_poi_fused__unsafe_view_convolution_split_transpose_1'])
    # vendor call (kept): aten.convolution via cuDNN <- aten._unsafe_view, aten.split, aten.transpose, aten.convolution
    buf4 = torch.convolution(buf3, arg3_1, stride=(1,), padding=(3,), dilation=(1,), transposed=False, output_padding=(0,), groups=512, bias=None)
    del arg3_1
    buf5 = reinterpret_tensor(buf3, (16, 1024, 512), (524288, 512, 1), 0)
    del buf3
    # Triton kernel triton_poi_fused__unsafe_view_clone_convolution_mul_sigmoid_silu_slice_split_transpose_2 <- aten._unsafe_view, aten.split, aten.transpose, aten.convolution, aten.slice, aten.silu, aten.sigmoid, aten.mul, aten.clone
    triton_poi_fused__unsafe_view_clone_convolution_mul_sigmoid_silu_slice_split_transpose_2[lambda meta: (triton.cdiv(512, meta['XBLOCK']), triton.cdiv(16384, meta['YBLOCK']))](buf4, arg4_1, buf2, buf5, 16384, 512, **LAUNCH_CONFIGS['triton_poi_fused__unsafe_view_clone_convolution_mul_sigmoid_silu_slice_split_transpose_2'])
    del arg4_1
    del buf2
    del buf4
    buf6 = torch.empty_strided((16384, 512), (512, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.mm via cuBLAS <- aten._unsafe_view, aten.split, aten.transpose, aten.convolution, aten.slice, aten.silu, aten.sigmoid, aten.mul, aten.clone, aten.t, aten.mm
    torch.mm(reinterpret_tensor(buf5, (16384, 512), (512, 1), 0), reinterpret_tensor(arg5_1, (512, 512), (1, 512), 0), out=buf6)
    del arg5_1
    del buf5
    buf7 = reinterpret_tensor(buf6, (16, 1024, 512), (524288, 512, 1), 0)
    del buf6
    # Triton kernel triton_poi_fused__unsafe_view_add_3 <- aten._unsafe_view, aten.add
    triton_poi_fused__unsafe_view_add_3[lambda meta: (triton.cdiv(8388608, meta['XBLOCK']),)](buf7, arg0_1, 8388608, **LAUNCH_CONFIGS['triton_poi_fused__unsafe_view_add_3'])
    del arg0_1
    return (buf7,)


class _ModelNewEager(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'norm_weight', (512,), torch.float32, True)
        _declare(self, 'in_proj.weight', (1024, 512), torch.float32, True)
        _declare(self, 'conv.weight', (512, 1, 4), torch.float32, True)
        _declare(self, 'conv.bias', (512,), torch.float32, True)
        _declare(self, 'out_proj.weight', (512, 512), torch.float32, True)

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([x, self.norm_weight, self.in_proj.weight, self.conv.weight, self.conv.bias, self.out_proj.weight])
        return outs[0]


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
