"""Harvested from torch.compile (Inductor) for problem 'depthwise_pointwise_conv'.

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
    'triton_poi_fused__native_batch_norm_legit_no_training_convolution_hardtanh_0': {'XBLOCK': 1024, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused__native_batch_norm_legit_no_training_1': {'XBLOCK': 512, 'num_warps': 8, 'num_stages': 1},
}


# ---- Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_convolution_hardtanh_0 <- aten._native_batch_norm_legit_no_training, aten.hardtanh, aten.convolution
@triton.jit
def triton_poi_fused__native_batch_norm_legit_no_training_convolution_hardtanh_0(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, xnumel, XBLOCK: tl.constexpr):
    xnumel = 14450688
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x3 = xindex
    x1 = xindex // 3136 % 144
    tmp0 = tl.load(in_out_ptr0 + x3, None, eviction_policy='evict_first')
    tmp1 = tl.load(in_ptr0 + x1, None, eviction_policy='evict_last')
    tmp3 = tl.load(in_ptr1 + x1, None, eviction_policy='evict_last')
    tmp12 = tl.load(in_ptr2 + x1, None, eviction_policy='evict_last')
    tmp14 = tl.load(in_ptr3 + x1, None, eviction_policy='evict_last')
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
    tl.store(in_out_ptr0 + x3, tmp19, None)


# ---- Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_1 <- aten._native_batch_norm_legit_no_training
@triton.jit
def triton_poi_fused__native_batch_norm_legit_no_training_1(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, xnumel, XBLOCK: tl.constexpr):
    xnumel = 4014080
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x3 = xindex
    x1 = xindex // 3136 % 40
    tmp0 = tl.load(in_out_ptr0 + x3, None)
    tmp1 = tl.load(in_ptr0 + x1, None, eviction_policy='evict_last')
    tmp3 = tl.load(in_ptr1 + x1, None, eviction_policy='evict_last')
    tmp12 = tl.load(in_ptr2 + x1, None, eviction_policy='evict_last')
    tmp14 = tl.load(in_ptr3 + x1, None, eviction_policy='evict_last')
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
    tl.store(in_out_ptr0 + x3, tmp15, None)


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
    arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, arg5_1, arg6_1, arg7_1, arg8_1, arg9_1, arg10_1, = args
    _device = arg1_1.device
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution
    buf0 = torch.convolution(arg1_1, arg0_1, stride=(2, 2), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=144, bias=None)
    del arg0_1
    del arg1_1
    buf1 = buf0
    del buf0
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_convolution_hardtanh_0 <- aten._native_batch_norm_legit_no_training, aten.hardtanh, aten.convolution
    triton_poi_fused__native_batch_norm_legit_no_training_convolution_hardtanh_0[lambda meta: (triton.cdiv(14450688, meta['XBLOCK']),)](buf1, arg2_1, arg3_1, arg4_1, arg5_1, 14450688, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_convolution_hardtanh_0'])
    del arg2_1
    del arg3_1
    del arg4_1
    del arg5_1
    # vendor call (kept): aten.convolution via cuDNN <- aten._native_batch_norm_legit_no_training, aten.hardtanh, aten.convolution
    buf2 = torch.convolution(buf1, arg6_1, stride=(1, 1), padding=(0, 0), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del arg6_1
    del buf1
    buf3 = buf2
    del buf2
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_1 <- aten._native_batch_norm_legit_no_training
    triton_poi_fused__native_batch_norm_legit_no_training_1[lambda meta: (triton.cdiv(4014080, meta['XBLOCK']),)](buf3, arg7_1, arg8_1, arg9_1, arg10_1, 4014080, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_1'])
    del arg10_1
    del arg7_1
    del arg8_1
    del arg9_1
    return (buf3,)


class _ModelNewEager(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'dw.weight', (144, 1, 3, 3), torch.float32, True)
        _declare(self, 'bn1.weight', (144,), torch.float32, True)
        _declare(self, 'bn1.bias', (144,), torch.float32, True)
        _declare(self, 'bn1.running_mean', (144,), torch.float32, False)
        _declare(self, 'bn1.running_var', (144,), torch.float32, False)
        _declare(self, 'bn1.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'pw.weight', (40, 144, 1, 1), torch.float32, True)
        _declare(self, 'bn2.weight', (40,), torch.float32, True)
        _declare(self, 'bn2.bias', (40,), torch.float32, True)
        _declare(self, 'bn2.running_mean', (40,), torch.float32, False)
        _declare(self, 'bn2.running_var', (40,), torch.float32, False)
        _declare(self, 'bn2.num_batches_tracked', (), torch.int64, False)

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([self.dw.weight, x, self.bn1.running_mean, self.bn1.running_var, self.bn1.weight, self.bn1.bias, self.pw.weight, self.bn2.running_mean, self.bn2.running_var, self.bn2.weight, self.bn2.bias])
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
