"""Harvested from torch.compile (Inductor) for problem 'inverted_residual_stage'.

Editable candidate: each Triton kernel below is Inductor's generated code as a plain
@triton.jit function; vendor-library calls (cuBLAS/cuDNN) are kept and labelled.
Shapes are static: the code is specialised to the problem's input shapes.
Harvested on cuda (torch 2.11.0+cu130, triton 3.6.0).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

aten = torch.ops.aten

# Launch configurations (block sizes, warps, stages) per kernel: the Tuner edits
# only this dict; grids follow the block sizes through `meta`.
LAUNCH_CONFIGS = {
    'triton_poi_fused_convolution_0': {'YBLOCK': 32, 'XBLOCK': 32, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1': {'XBLOCK': 512, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused__native_batch_norm_legit_no_training_add_2': {'YBLOCK': 256, 'XBLOCK': 16, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused__native_batch_norm_legit_no_training_add_3': {'YBLOCK': 256, 'XBLOCK': 16, 'num_warps': 8, 'num_stages': 1},
}


# ---- Triton kernel triton_poi_fused_convolution_0 <- aten.convolution
@triton.jit
def triton_poi_fused_convolution_0(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 100352
    xnumel = 32
    yoffset = (tl.program_id(1) + tl.program_id(2) * tl.num_programs(1)) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = yindex < ynumel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y0 = yindex % 3136
    y1 = yindex // 3136
    y3 = yindex
    tmp0 = tl.load(in_ptr0 + (y0 + 3136 * x2 + 100352 * y1), xmask & ymask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (x2 + 32 * y3), tmp0, xmask & ymask)


# ---- Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1 <- aten._native_batch_norm_legit_no_training, aten.hardtanh
@triton.jit
def triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, xnumel, XBLOCK: tl.constexpr):
    xnumel = 19267584
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x2 = xindex
    x0 = xindex % 192
    tmp0 = tl.load(in_out_ptr0 + x2, None)
    tmp1 = tl.load(in_ptr0 + x0, None, eviction_policy='evict_last')
    tmp3 = tl.load(in_ptr1 + x0, None, eviction_policy='evict_last')
    tmp12 = tl.load(in_ptr2 + x0, None, eviction_policy='evict_last')
    tmp14 = tl.load(in_ptr3 + x0, None, eviction_policy='evict_last')
    tmp2 = tmp0 - tmp1
    tmp4 = tl.full([1], 1e-05, tl.float32)
    tmp5 = tmp3 + tmp4
    tmp6 = tl.sqrt_rn(tmp5)
    tmp7 = tl.full([1], 1, tl.int32)
    tmp8 = tmp7 / tmp6
    tmp9 = tl.full([1], 1.0, tl.float32)
    tmp10 = tmp8 * tmp9
    tmp11 = tmp2 * tmp10
    tmp13 = tmp11 * tmp12
    tmp15 = tmp13 + tmp14
    tmp16 = tl.full([1], 0.0, tl.float32)
    tmp17 = tl.maximum(tmp15, tmp16, propagate_nan=tl.PropagateNan.ALL)
    tmp18 = tl.full([1], 6.0, tl.float32)
    tmp19 = tl.minimum(tmp17, tmp18, propagate_nan=tl.PropagateNan.ALL)
    tl.store(in_out_ptr0 + x2, tmp19, None)


# ---- Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_add_2 <- aten._native_batch_norm_legit_no_training, aten.add
@triton.jit
def triton_poi_fused__native_batch_norm_legit_no_training_add_2(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 100352
    xnumel = 32
    yoffset = (tl.program_id(1) + tl.program_id(2) * tl.num_programs(1)) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = yindex < ynumel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y0 = yindex % 3136
    y1 = yindex // 3136
    y3 = yindex
    tmp0 = tl.load(in_ptr0 + (y0 + 3136 * x2 + 100352 * y1), xmask & ymask, eviction_policy='evict_last')
    tmp1 = tl.load(in_out_ptr0 + (x2 + 32 * y3), xmask & ymask, eviction_policy='evict_last')
    tmp2 = tl.load(in_ptr1 + x2, xmask, eviction_policy='evict_last')
    tmp4 = tl.load(in_ptr2 + x2, xmask, eviction_policy='evict_last')
    tmp13 = tl.load(in_ptr3 + x2, xmask, eviction_policy='evict_last')
    tmp15 = tl.load(in_ptr4 + x2, xmask, eviction_policy='evict_last')
    tmp3 = tmp1 - tmp2
    tmp5 = tl.full([1, 1], 1e-05, tl.float32)
    tmp6 = tmp4 + tmp5
    tmp7 = tl.sqrt_rn(tmp6)
    tmp8 = tl.full([1, 1], 1, tl.int32)
    tmp9 = tmp8 / tmp7
    tmp10 = tl.full([1, 1], 1.0, tl.float32)
    tmp11 = tmp9 * tmp10
    tmp12 = tmp3 * tmp11
    tmp14 = tmp12 * tmp13
    tmp16 = tmp14 + tmp15
    tmp17 = tmp0 + tmp16
    tl.debug_barrier()
    tl.store(in_out_ptr0 + (x2 + 32 * y3), tmp17, xmask & ymask)


# ---- Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_add_3 <- aten._native_batch_norm_legit_no_training, aten.add
@triton.jit
def triton_poi_fused__native_batch_norm_legit_no_training_add_3(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, in_ptr5, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 100352
    xnumel = 32
    yoffset = (tl.program_id(1) + tl.program_id(2) * tl.num_programs(1)) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = yindex < ynumel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y3 = yindex
    y0 = yindex % 3136
    y1 = yindex // 3136
    tmp0 = tl.load(in_ptr0 + (x2 + 32 * y3), xmask & ymask, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + (x2 + 32 * y3), xmask & ymask, eviction_policy='evict_last')
    tmp2 = tl.load(in_ptr2 + x2, xmask, eviction_policy='evict_last')
    tmp4 = tl.load(in_ptr3 + x2, xmask, eviction_policy='evict_last')
    tmp13 = tl.load(in_ptr4 + x2, xmask, eviction_policy='evict_last')
    tmp15 = tl.load(in_ptr5 + x2, xmask, eviction_policy='evict_last')
    tmp3 = tmp1 - tmp2
    tmp5 = tl.full([1, 1], 1e-05, tl.float32)
    tmp6 = tmp4 + tmp5
    tmp7 = tl.sqrt_rn(tmp6)
    tmp8 = tl.full([1, 1], 1, tl.int32)
    tmp9 = tmp8 / tmp7
    tmp10 = tl.full([1, 1], 1.0, tl.float32)
    tmp11 = tmp9 * tmp10
    tmp12 = tmp3 * tmp11
    tmp14 = tmp12 * tmp13
    tmp16 = tmp14 + tmp15
    tmp17 = tmp0 + tmp16
    tl.store(out_ptr0 + (y0 + 3136 * x2 + 100352 * y1), tmp17, xmask & ymask)


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
    arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, arg5_1, arg6_1, arg7_1, arg8_1, arg9_1, arg10_1, arg11_1, arg12_1, arg13_1, arg14_1, arg15_1, arg16_1, arg17_1, arg18_1, arg19_1, arg20_1, arg21_1, arg22_1, arg23_1, arg24_1, arg25_1, arg26_1, arg27_1, arg28_1, arg29_1, arg30_1, = args
    _device = arg1_1.device
    buf0 = torch.empty_strided((32, 32, 56, 56), (100352, 1, 1792, 32), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_0 <- aten.convolution
    triton_poi_fused_convolution_0[lambda meta: (triton.cdiv(32, meta['XBLOCK']), triton.cdiv(triton.cdiv(100352, meta['YBLOCK']), triton.cdiv(triton.cdiv(100352, meta['YBLOCK']), 65535)), triton.cdiv(triton.cdiv(100352, meta['YBLOCK']), 65535))](arg1_1, buf0, 100352, 32, **LAUNCH_CONFIGS['triton_poi_fused_convolution_0'])
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution
    buf1 = torch.convolution(buf0, arg0_1, stride=(1, 1), padding=(0, 0), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del arg0_1
    del buf0
    buf2 = buf1
    del buf1
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1 <- aten._native_batch_norm_legit_no_training, aten.hardtanh
    triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1[lambda meta: (triton.cdiv(19267584, meta['XBLOCK']),)](buf2, arg2_1, arg3_1, arg4_1, arg5_1, 19267584, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1'])
    del arg2_1
    del arg3_1
    del arg4_1
    del arg5_1
    # vendor call (kept): aten.convolution via cuDNN <- aten._native_batch_norm_legit_no_training, aten.hardtanh, aten.convolution
    buf3 = torch.convolution(buf2, arg6_1, stride=(1, 1), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=192, bias=None)
    del arg6_1
    del buf2
    buf4 = buf3
    del buf3
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1 <- aten._native_batch_norm_legit_no_training, aten.hardtanh
    triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1[lambda meta: (triton.cdiv(19267584, meta['XBLOCK']),)](buf4, arg7_1, arg8_1, arg9_1, arg10_1, 19267584, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1'])
    del arg10_1
    del arg7_1
    del arg8_1
    del arg9_1
    # vendor call (kept): aten.convolution via cuDNN <- aten._native_batch_norm_legit_no_training, aten.hardtanh, aten.convolution
    buf5 = torch.convolution(buf4, arg11_1, stride=(1, 1), padding=(0, 0), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del arg11_1
    del buf4
    buf6 = buf5
    del buf5
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_add_2 <- aten._native_batch_norm_legit_no_training, aten.add
    triton_poi_fused__native_batch_norm_legit_no_training_add_2[lambda meta: (triton.cdiv(32, meta['XBLOCK']), triton.cdiv(triton.cdiv(100352, meta['YBLOCK']), triton.cdiv(triton.cdiv(100352, meta['YBLOCK']), 65535)), triton.cdiv(triton.cdiv(100352, meta['YBLOCK']), 65535))](buf6, arg1_1, arg12_1, arg13_1, arg14_1, arg15_1, 100352, 32, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_add_2'])
    del arg12_1
    del arg13_1
    del arg14_1
    del arg15_1
    del arg1_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution
    buf7 = torch.convolution(buf6, arg16_1, stride=(1, 1), padding=(0, 0), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del arg16_1
    buf8 = buf7
    del buf7
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1 <- aten._native_batch_norm_legit_no_training, aten.hardtanh
    triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1[lambda meta: (triton.cdiv(19267584, meta['XBLOCK']),)](buf8, arg17_1, arg18_1, arg19_1, arg20_1, 19267584, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1'])
    del arg17_1
    del arg18_1
    del arg19_1
    del arg20_1
    # vendor call (kept): aten.convolution via cuDNN <- aten._native_batch_norm_legit_no_training, aten.hardtanh, aten.convolution
    buf9 = torch.convolution(buf8, arg21_1, stride=(1, 1), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=192, bias=None)
    del arg21_1
    del buf8
    buf10 = buf9
    del buf9
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1 <- aten._native_batch_norm_legit_no_training, aten.hardtanh
    triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1[lambda meta: (triton.cdiv(19267584, meta['XBLOCK']),)](buf10, arg22_1, arg23_1, arg24_1, arg25_1, 19267584, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1'])
    del arg22_1
    del arg23_1
    del arg24_1
    del arg25_1
    # vendor call (kept): aten.convolution via cuDNN <- aten._native_batch_norm_legit_no_training, aten.hardtanh, aten.convolution
    buf11 = torch.convolution(buf10, arg26_1, stride=(1, 1), padding=(0, 0), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del arg26_1
    del buf10
    buf12 = torch.empty_strided((32, 32, 56, 56), (100352, 3136, 56, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_add_3 <- aten._native_batch_norm_legit_no_training, aten.add
    triton_poi_fused__native_batch_norm_legit_no_training_add_3[lambda meta: (triton.cdiv(32, meta['XBLOCK']), triton.cdiv(triton.cdiv(100352, meta['YBLOCK']), triton.cdiv(triton.cdiv(100352, meta['YBLOCK']), 65535)), triton.cdiv(triton.cdiv(100352, meta['YBLOCK']), 65535))](buf6, buf11, arg27_1, arg28_1, arg29_1, arg30_1, buf12, 100352, 32, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_add_3'])
    del arg27_1
    del arg28_1
    del arg29_1
    del arg30_1
    del buf11
    del buf6
    return (buf12,)


class _ModelNewEager(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'blocks.0.expand.weight', (192, 32, 1, 1), torch.float32, True)
        _declare(self, 'blocks.0.bn1.weight', (192,), torch.float32, True)
        _declare(self, 'blocks.0.bn1.bias', (192,), torch.float32, True)
        _declare(self, 'blocks.0.bn1.running_mean', (192,), torch.float32, False)
        _declare(self, 'blocks.0.bn1.running_var', (192,), torch.float32, False)
        _declare(self, 'blocks.0.bn1.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'blocks.0.dw.weight', (192, 1, 3, 3), torch.float32, True)
        _declare(self, 'blocks.0.bn2.weight', (192,), torch.float32, True)
        _declare(self, 'blocks.0.bn2.bias', (192,), torch.float32, True)
        _declare(self, 'blocks.0.bn2.running_mean', (192,), torch.float32, False)
        _declare(self, 'blocks.0.bn2.running_var', (192,), torch.float32, False)
        _declare(self, 'blocks.0.bn2.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'blocks.0.project.weight', (32, 192, 1, 1), torch.float32, True)
        _declare(self, 'blocks.0.bn3.weight', (32,), torch.float32, True)
        _declare(self, 'blocks.0.bn3.bias', (32,), torch.float32, True)
        _declare(self, 'blocks.0.bn3.running_mean', (32,), torch.float32, False)
        _declare(self, 'blocks.0.bn3.running_var', (32,), torch.float32, False)
        _declare(self, 'blocks.0.bn3.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'blocks.1.expand.weight', (192, 32, 1, 1), torch.float32, True)
        _declare(self, 'blocks.1.bn1.weight', (192,), torch.float32, True)
        _declare(self, 'blocks.1.bn1.bias', (192,), torch.float32, True)
        _declare(self, 'blocks.1.bn1.running_mean', (192,), torch.float32, False)
        _declare(self, 'blocks.1.bn1.running_var', (192,), torch.float32, False)
        _declare(self, 'blocks.1.bn1.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'blocks.1.dw.weight', (192, 1, 3, 3), torch.float32, True)
        _declare(self, 'blocks.1.bn2.weight', (192,), torch.float32, True)
        _declare(self, 'blocks.1.bn2.bias', (192,), torch.float32, True)
        _declare(self, 'blocks.1.bn2.running_mean', (192,), torch.float32, False)
        _declare(self, 'blocks.1.bn2.running_var', (192,), torch.float32, False)
        _declare(self, 'blocks.1.bn2.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'blocks.1.project.weight', (32, 192, 1, 1), torch.float32, True)
        _declare(self, 'blocks.1.bn3.weight', (32,), torch.float32, True)
        _declare(self, 'blocks.1.bn3.bias', (32,), torch.float32, True)
        _declare(self, 'blocks.1.bn3.running_mean', (32,), torch.float32, False)
        _declare(self, 'blocks.1.bn3.running_var', (32,), torch.float32, False)
        _declare(self, 'blocks.1.bn3.num_batches_tracked', (), torch.int64, False)

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([self.get_parameter('blocks.0.expand.weight'), x, self.get_buffer('blocks.0.bn1.running_mean'), self.get_buffer('blocks.0.bn1.running_var'), self.get_parameter('blocks.0.bn1.weight'), self.get_parameter('blocks.0.bn1.bias'), self.get_parameter('blocks.0.dw.weight'), self.get_buffer('blocks.0.bn2.running_mean'), self.get_buffer('blocks.0.bn2.running_var'), self.get_parameter('blocks.0.bn2.weight'), self.get_parameter('blocks.0.bn2.bias'), self.get_parameter('blocks.0.project.weight'), self.get_buffer('blocks.0.bn3.running_mean'), self.get_buffer('blocks.0.bn3.running_var'), self.get_parameter('blocks.0.bn3.weight'), self.get_parameter('blocks.0.bn3.bias'), self.get_parameter('blocks.1.expand.weight'), self.get_buffer('blocks.1.bn1.running_mean'), self.get_buffer('blocks.1.bn1.running_var'), self.get_parameter('blocks.1.bn1.weight'), self.get_parameter('blocks.1.bn1.bias'), self.get_parameter('blocks.1.dw.weight'), self.get_buffer('blocks.1.bn2.running_mean'), self.get_buffer('blocks.1.bn2.running_var'), self.get_parameter('blocks.1.bn2.weight'), self.get_parameter('blocks.1.bn2.bias'), self.get_parameter('blocks.1.project.weight'), self.get_buffer('blocks.1.bn3.running_mean'), self.get_buffer('blocks.1.bn3.running_var'), self.get_parameter('blocks.1.bn3.weight'), self.get_parameter('blocks.1.bn3.bias')])
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
