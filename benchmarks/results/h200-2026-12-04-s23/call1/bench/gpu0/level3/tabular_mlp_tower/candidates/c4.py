"""Harvested from torch.compile (Inductor) for problem 'tabular_mlp_tower'.

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
    'triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_0': {'XBLOCK': 1024, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_1': {'XBLOCK': 1024, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_2': {'XBLOCK': 512, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_3': {'XBLOCK': 512, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused_addmm_sigmoid_4': {'XBLOCK': 256, 'num_warps': 4, 'num_stages': 1},
}


# ---- Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_0 <- aten.addmm, aten._native_batch_norm_legit_no_training, aten.relu
@triton.jit
def triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_0(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, xnumel, XBLOCK: tl.constexpr):
    xnumel = 1048576
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex % 1024
    x2 = xindex
    tmp0 = tl.load(in_ptr0 + x0, None, eviction_policy='evict_last')
    tmp1 = tl.load(in_out_ptr0 + x2, None)
    tmp3 = tl.load(in_ptr1 + x0, None, eviction_policy='evict_last')
    tmp5 = tl.load(in_ptr2 + x0, None, eviction_policy='evict_last')
    tmp14 = tl.load(in_ptr3 + x0, None, eviction_policy='evict_last')
    tmp16 = tl.load(in_ptr4 + x0, None, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tmp4 = tmp2 - tmp3
    tmp6 = tl.full([1], 1e-05, tl.float32)
    tmp7 = tmp5 + tmp6
    tmp8 = tl.sqrt_rn(tmp7)
    tmp9 = tl.full([1], 1, tl.int32)
    tmp10 = tmp9 / tmp8
    tmp11 = tl.full([1], 1.0, tl.float32)
    tmp12 = tmp10 * tmp11
    tmp13 = tmp4 * tmp12
    tmp15 = tmp13 * tmp14
    tmp17 = tmp15 + tmp16
    tmp18 = tl.full([1], 0, tl.int32)
    tmp19 = tl.maximum(tmp18, tmp17, propagate_nan=tl.PropagateNan.ALL)
    tl.store(in_out_ptr0 + x2, tmp19, None)


# ---- Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_1 <- aten.addmm, aten._native_batch_norm_legit_no_training, aten.relu
@triton.jit
def triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_1(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, xnumel, XBLOCK: tl.constexpr):
    xnumel = 524288
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex % 512
    x2 = xindex
    tmp0 = tl.load(in_ptr0 + x0, None, eviction_policy='evict_last')
    tmp1 = tl.load(in_out_ptr0 + x2, None)
    tmp3 = tl.load(in_ptr1 + x0, None, eviction_policy='evict_last')
    tmp5 = tl.load(in_ptr2 + x0, None, eviction_policy='evict_last')
    tmp14 = tl.load(in_ptr3 + x0, None, eviction_policy='evict_last')
    tmp16 = tl.load(in_ptr4 + x0, None, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tmp4 = tmp2 - tmp3
    tmp6 = tl.full([1], 1e-05, tl.float32)
    tmp7 = tmp5 + tmp6
    tmp8 = tl.sqrt_rn(tmp7)
    tmp9 = tl.full([1], 1, tl.int32)
    tmp10 = tmp9 / tmp8
    tmp11 = tl.full([1], 1.0, tl.float32)
    tmp12 = tmp10 * tmp11
    tmp13 = tmp4 * tmp12
    tmp15 = tmp13 * tmp14
    tmp17 = tmp15 + tmp16
    tmp18 = tl.full([1], 0, tl.int32)
    tmp19 = tl.maximum(tmp18, tmp17, propagate_nan=tl.PropagateNan.ALL)
    tl.store(in_out_ptr0 + x2, tmp19, None)


# ---- Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_2 <- aten.addmm, aten._native_batch_norm_legit_no_training, aten.relu
@triton.jit
def triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_2(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, xnumel, XBLOCK: tl.constexpr):
    xnumel = 262144
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex % 256
    x2 = xindex
    tmp0 = tl.load(in_ptr0 + x0, None, eviction_policy='evict_last')
    tmp1 = tl.load(in_out_ptr0 + x2, None)
    tmp3 = tl.load(in_ptr1 + x0, None, eviction_policy='evict_last')
    tmp5 = tl.load(in_ptr2 + x0, None, eviction_policy='evict_last')
    tmp14 = tl.load(in_ptr3 + x0, None, eviction_policy='evict_last')
    tmp16 = tl.load(in_ptr4 + x0, None, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tmp4 = tmp2 - tmp3
    tmp6 = tl.full([1], 1e-05, tl.float32)
    tmp7 = tmp5 + tmp6
    tmp8 = tl.sqrt_rn(tmp7)
    tmp9 = tl.full([1], 1, tl.int32)
    tmp10 = tmp9 / tmp8
    tmp11 = tl.full([1], 1.0, tl.float32)
    tmp12 = tmp10 * tmp11
    tmp13 = tmp4 * tmp12
    tmp15 = tmp13 * tmp14
    tmp17 = tmp15 + tmp16
    tmp18 = tl.full([1], 0, tl.int32)
    tmp19 = tl.maximum(tmp18, tmp17, propagate_nan=tl.PropagateNan.ALL)
    tl.store(in_out_ptr0 + x2, tmp19, None)


# ---- Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_3 <- aten.addmm, aten._native_batch_norm_legit_no_training, aten.relu
@triton.jit
def triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_3(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, xnumel, XBLOCK: tl.constexpr):
    xnumel = 131072
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex % 128
    x2 = xindex
    tmp0 = tl.load(in_ptr0 + x0, None, eviction_policy='evict_last')
    tmp1 = tl.load(in_out_ptr0 + x2, None)
    tmp3 = tl.load(in_ptr1 + x0, None, eviction_policy='evict_last')
    tmp5 = tl.load(in_ptr2 + x0, None, eviction_policy='evict_last')
    tmp14 = tl.load(in_ptr3 + x0, None, eviction_policy='evict_last')
    tmp16 = tl.load(in_ptr4 + x0, None, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tmp4 = tmp2 - tmp3
    tmp6 = tl.full([1], 1e-05, tl.float32)
    tmp7 = tmp5 + tmp6
    tmp8 = tl.sqrt_rn(tmp7)
    tmp9 = tl.full([1], 1, tl.int32)
    tmp10 = tmp9 / tmp8
    tmp11 = tl.full([1], 1.0, tl.float32)
    tmp12 = tmp10 * tmp11
    tmp13 = tmp4 * tmp12
    tmp15 = tmp13 * tmp14
    tmp17 = tmp15 + tmp16
    tmp18 = tl.full([1], 0, tl.int32)
    tmp19 = tl.maximum(tmp18, tmp17, propagate_nan=tl.PropagateNan.ALL)
    tl.store(in_out_ptr0 + x2, tmp19, None)


# ---- Triton kernel triton_poi_fused_addmm_sigmoid_4 <- aten.addmm, aten.sigmoid
@triton.jit
def triton_poi_fused_addmm_sigmoid_4(in_out_ptr0, in_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 1024
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + 0)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK])
    tmp2 = tl.load(in_out_ptr0 + x0, xmask)
    tmp3 = tmp1 + tmp2
    tmp4 = tl.sigmoid(tmp3)
    tl.store(in_out_ptr0 + x0, tmp4, xmask)


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
    arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, arg5_1, arg6_1, arg7_1, arg8_1, arg9_1, arg10_1, arg11_1, arg12_1, arg13_1, arg14_1, arg15_1, arg16_1, arg17_1, arg18_1, arg19_1, arg20_1, arg21_1, arg22_1, arg23_1, arg24_1, arg25_1, arg26_1, arg27_1, arg28_1, arg29_1, arg30_1, arg31_1, arg32_1, = args
    _device = arg2_1.device
    buf0 = torch.empty_strided((1024, 1024), (1024, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.mm via cuBLAS <- aten.t, aten.addmm
    torch.mm(arg2_1, reinterpret_tensor(arg0_1, (384, 1024), (1, 384), 0), out=buf0)
    del arg0_1
    del arg2_1
    buf1 = buf0
    del buf0
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_0 <- aten.addmm, aten._native_batch_norm_legit_no_training, aten.relu
    triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_0[lambda meta: (triton.cdiv(1048576, meta['XBLOCK']),)](buf1, arg1_1, arg3_1, arg4_1, arg5_1, arg6_1, 1048576, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_0'])
    del arg1_1
    del arg3_1
    del arg4_1
    del arg5_1
    del arg6_1
    buf2 = torch.empty_strided((1024, 1024), (1024, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.mm via cuBLAS <- aten.addmm, aten._native_batch_norm_legit_no_training, aten.relu, aten.t
    torch.mm(buf1, reinterpret_tensor(arg7_1, (1024, 1024), (1, 1024), 0), out=buf2)
    del arg7_1
    del buf1
    buf3 = buf2
    del buf2
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_0 <- aten.addmm, aten._native_batch_norm_legit_no_training, aten.relu
    triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_0[lambda meta: (triton.cdiv(1048576, meta['XBLOCK']),)](buf3, arg8_1, arg9_1, arg10_1, arg11_1, arg12_1, 1048576, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_0'])
    del arg10_1
    del arg11_1
    del arg12_1
    del arg8_1
    del arg9_1
    buf4 = torch.empty_strided((1024, 512), (512, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.mm via cuBLAS <- aten.addmm, aten._native_batch_norm_legit_no_training, aten.relu, aten.t
    torch.mm(buf3, reinterpret_tensor(arg13_1, (1024, 512), (1, 1024), 0), out=buf4)
    del arg13_1
    del buf3
    buf5 = buf4
    del buf4
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_1 <- aten.addmm, aten._native_batch_norm_legit_no_training, aten.relu
    triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_1[lambda meta: (triton.cdiv(524288, meta['XBLOCK']),)](buf5, arg14_1, arg15_1, arg16_1, arg17_1, arg18_1, 524288, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_1'])
    del arg14_1
    del arg15_1
    del arg16_1
    del arg17_1
    del arg18_1
    buf6 = torch.empty_strided((1024, 256), (256, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.mm via cuBLAS <- aten.addmm, aten._native_batch_norm_legit_no_training, aten.relu, aten.t
    torch.mm(buf5, reinterpret_tensor(arg19_1, (512, 256), (1, 512), 0), out=buf6)
    del arg19_1
    del buf5
    buf7 = buf6
    del buf6
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_2 <- aten.addmm, aten._native_batch_norm_legit_no_training, aten.relu
    triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_2[lambda meta: (triton.cdiv(262144, meta['XBLOCK']),)](buf7, arg20_1, arg21_1, arg22_1, arg23_1, arg24_1, 262144, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_2'])
    del arg20_1
    del arg21_1
    del arg22_1
    del arg23_1
    del arg24_1
    buf8 = torch.empty_strided((1024, 128), (128, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.mm via cuBLAS <- aten.addmm, aten._native_batch_norm_legit_no_training, aten.relu, aten.t
    torch.mm(buf7, reinterpret_tensor(arg25_1, (256, 128), (1, 256), 0), out=buf8)
    del arg25_1
    del buf7
    buf9 = buf8
    del buf8
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_3 <- aten.addmm, aten._native_batch_norm_legit_no_training, aten.relu
    triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_3[lambda meta: (triton.cdiv(131072, meta['XBLOCK']),)](buf9, arg26_1, arg27_1, arg28_1, arg29_1, arg30_1, 131072, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_addmm_relu_3'])
    del arg26_1
    del arg27_1
    del arg28_1
    del arg29_1
    del arg30_1
    buf10 = torch.empty_strided((1024, 1), (1, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.mm via cuBLAS <- aten.addmm, aten._native_batch_norm_legit_no_training, aten.relu, aten.t
    torch.mm(buf9, reinterpret_tensor(arg31_1, (128, 1), (1, 128), 0), out=buf10)
    del arg31_1
    del buf9
    buf11 = buf10
    del buf10
    # Triton kernel triton_poi_fused_addmm_sigmoid_4 <- aten.addmm, aten.sigmoid
    triton_poi_fused_addmm_sigmoid_4[lambda meta: (triton.cdiv(1024, meta['XBLOCK']),)](buf11, arg32_1, 1024, **LAUNCH_CONFIGS['triton_poi_fused_addmm_sigmoid_4'])
    del arg32_1
    return (buf11,)


class _ModelNewEager(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'tower.0.weight', (1024, 384), torch.float32, True)
        _declare(self, 'tower.0.bias', (1024,), torch.float32, True)
        _declare(self, 'tower.1.weight', (1024,), torch.float32, True)
        _declare(self, 'tower.1.bias', (1024,), torch.float32, True)
        _declare(self, 'tower.1.running_mean', (1024,), torch.float32, False)
        _declare(self, 'tower.1.running_var', (1024,), torch.float32, False)
        _declare(self, 'tower.1.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'tower.3.weight', (1024, 1024), torch.float32, True)
        _declare(self, 'tower.3.bias', (1024,), torch.float32, True)
        _declare(self, 'tower.4.weight', (1024,), torch.float32, True)
        _declare(self, 'tower.4.bias', (1024,), torch.float32, True)
        _declare(self, 'tower.4.running_mean', (1024,), torch.float32, False)
        _declare(self, 'tower.4.running_var', (1024,), torch.float32, False)
        _declare(self, 'tower.4.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'tower.6.weight', (512, 1024), torch.float32, True)
        _declare(self, 'tower.6.bias', (512,), torch.float32, True)
        _declare(self, 'tower.7.weight', (512,), torch.float32, True)
        _declare(self, 'tower.7.bias', (512,), torch.float32, True)
        _declare(self, 'tower.7.running_mean', (512,), torch.float32, False)
        _declare(self, 'tower.7.running_var', (512,), torch.float32, False)
        _declare(self, 'tower.7.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'tower.9.weight', (256, 512), torch.float32, True)
        _declare(self, 'tower.9.bias', (256,), torch.float32, True)
        _declare(self, 'tower.10.weight', (256,), torch.float32, True)
        _declare(self, 'tower.10.bias', (256,), torch.float32, True)
        _declare(self, 'tower.10.running_mean', (256,), torch.float32, False)
        _declare(self, 'tower.10.running_var', (256,), torch.float32, False)
        _declare(self, 'tower.10.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'tower.12.weight', (128, 256), torch.float32, True)
        _declare(self, 'tower.12.bias', (128,), torch.float32, True)
        _declare(self, 'tower.13.weight', (128,), torch.float32, True)
        _declare(self, 'tower.13.bias', (128,), torch.float32, True)
        _declare(self, 'tower.13.running_mean', (128,), torch.float32, False)
        _declare(self, 'tower.13.running_var', (128,), torch.float32, False)
        _declare(self, 'tower.13.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'head.weight', (1, 128), torch.float32, True)
        _declare(self, 'head.bias', (1,), torch.float32, True)

    def forward(self, features):
        with torch.no_grad():
            outs = _harvested_forward([self.get_parameter('tower.0.weight'), self.get_parameter('tower.0.bias'), features, self.get_buffer('tower.1.running_mean'), self.get_buffer('tower.1.running_var'), self.get_parameter('tower.1.weight'), self.get_parameter('tower.1.bias'), self.get_parameter('tower.3.weight'), self.get_parameter('tower.3.bias'), self.get_buffer('tower.4.running_mean'), self.get_buffer('tower.4.running_var'), self.get_parameter('tower.4.weight'), self.get_parameter('tower.4.bias'), self.get_parameter('tower.6.weight'), self.get_parameter('tower.6.bias'), self.get_buffer('tower.7.running_mean'), self.get_buffer('tower.7.running_var'), self.get_parameter('tower.7.weight'), self.get_parameter('tower.7.bias'), self.get_parameter('tower.9.weight'), self.get_parameter('tower.9.bias'), self.get_buffer('tower.10.running_mean'), self.get_buffer('tower.10.running_var'), self.get_parameter('tower.10.weight'), self.get_parameter('tower.10.bias'), self.get_parameter('tower.12.weight'), self.get_parameter('tower.12.bias'), self.get_buffer('tower.13.running_mean'), self.get_buffer('tower.13.running_var'), self.get_parameter('tower.13.weight'), self.get_parameter('tower.13.bias'), self.head.weight, self.head.bias])
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
