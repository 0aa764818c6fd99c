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
    'triton_poi_fused_convolution_0': {'YBLOCK': 32, 'XBLOCK': 32, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1': {'XBLOCK': 1024, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused__native_batch_norm_legit_no_training_2': {'YBLOCK': 64, 'XBLOCK': 64, 'num_warps': 8, 'num_stages': 1},
}


# ---- Triton kernel triton_poi_fused_convolution_0 <- aten.convolution
@triton.jit
def triton_poi_fused_convolution_0(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 4608
    xnumel = 12544
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = yindex < ynumel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y3 = yindex
    y0 = yindex % 144
    y1 = yindex // 144
    tmp0 = tl.load(in_ptr0 + (x2 + 12544 * y3), xmask & ymask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 144 * x2 + 1806336 * y1), tmp0, xmask & ymask)


# ---- Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1 <- aten._native_batch_norm_legit_no_training, aten.hardtanh
@triton.jit
def triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, xnumel, XBLOCK: tl.constexpr):
    xnumel = 14450688
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x2 = xindex
    x0 = xindex % 144
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


# ---- Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_2 <- aten._native_batch_norm_legit_no_training
@triton.jit
def triton_poi_fused__native_batch_norm_legit_no_training_2(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 1280
    xnumel = 3136
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = yindex < ynumel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y0 = yindex % 40
    y1 = yindex // 40
    y3 = yindex
    tmp0 = tl.load(in_ptr0 + (y0 + 40 * x2 + 125440 * y1), xmask & ymask, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + y0, ymask, eviction_policy='evict_last')
    tmp3 = tl.load(in_ptr2 + y0, ymask, eviction_policy='evict_last')
    tmp12 = tl.load(in_ptr3 + y0, ymask, eviction_policy='evict_last')
    tmp14 = tl.load(in_ptr4 + y0, ymask, eviction_policy='evict_last')
    tmp2 = tmp0 - tmp1
    tmp4 = tl.full([1, 1], 1e-05, tl.float32)
    tmp5 = tmp3 + tmp4
    tmp6 = tl.sqrt_rn(tmp5)
    tmp7 = tl.full([1, 1], 1, tl.int32)
    tmp8 = tmp7 / tmp6
    tmp9 = tl.full([1, 1], 1.0, tl.float32)
    tmp10 = tmp8 * tmp9
    tmp11 = tmp2 * tmp10
    tmp13 = tmp11 * tmp12
    tmp15 = tmp13 + tmp14
    tl.store(out_ptr0 + (x2 + 3136 * y3), tmp15, xmask & ymask)


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
    buf0 = torch.empty_strided((32, 144, 112, 112), (1806336, 1, 16128, 144), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_0 <- aten.convolution
    triton_poi_fused_convolution_0[lambda meta: (triton.cdiv(12544, meta['XBLOCK']), triton.cdiv(4608, meta['YBLOCK']))](arg1_1, buf0, 4608, 12544, **LAUNCH_CONFIGS['triton_poi_fused_convolution_0'])
    del arg1_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution
    buf1 = torch.convolution(buf0, arg0_1, stride=(2, 2), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=144, bias=None)
    del arg0_1
    del buf0
    buf2 = buf1
    del buf1
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1 <- aten._native_batch_norm_legit_no_training, aten.hardtanh
    triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1[lambda meta: (triton.cdiv(14450688, meta['XBLOCK']),)](buf2, arg2_1, arg3_1, arg4_1, arg5_1, 14450688, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_hardtanh_1'])
    del arg2_1
    del arg3_1
    del arg4_1
    del arg5_1
    # vendor call (kept): aten.convolution via cuDNN <- aten._native_batch_norm_legit_no_training, aten.hardtanh, aten.convolution
    buf3 = torch.convolution(buf2, arg6_1, stride=(1, 1), padding=(0, 0), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del arg6_1
    del buf2
    buf4 = torch.empty_strided((32, 40, 56, 56), (125440, 3136, 56, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_2 <- aten._native_batch_norm_legit_no_training
    triton_poi_fused__native_batch_norm_legit_no_training_2[lambda meta: (triton.cdiv(3136, meta['XBLOCK']), triton.cdiv(1280, meta['YBLOCK']))](buf3, arg7_1, arg8_1, arg9_1, arg10_1, buf4, 1280, 3136, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_2'])
    del arg10_1
    del arg7_1
    del arg8_1
    del arg9_1
    del buf3
    return (buf4,)


class ModelNew(nn.Module):
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
