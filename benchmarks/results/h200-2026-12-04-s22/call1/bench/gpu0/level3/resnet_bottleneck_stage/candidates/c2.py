"""Harvested from torch.compile (Inductor) for problem 'resnet_bottleneck_stage'.

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
    'triton_poi_fused_convolution_0': {'YBLOCK': 256, 'XBLOCK': 16, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused__native_batch_norm_legit_no_training_relu_1': {'XBLOCK': 1024, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused__native_batch_norm_legit_no_training_convolution_relu_2': {'YBLOCK': 64, 'XBLOCK': 16, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused__native_batch_norm_legit_no_training_relu_3': {'XBLOCK': 512, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused__native_batch_norm_legit_no_training_add_relu_4': {'XBLOCK': 1024, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused__native_batch_norm_legit_no_training_add_relu_5': {'YBLOCK': 64, 'XBLOCK': 64, 'num_warps': 8, 'num_stages': 1},
}


# ---- Triton kernel triton_poi_fused_convolution_0 <- aten.convolution
@triton.jit
def triton_poi_fused_convolution_0(in_ptr0, out_ptr0, out_ptr1, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 8192
    xnumel = 3136
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y3 = yindex
    y0 = yindex % 256
    y1 = yindex // 256
    tmp0 = tl.load(in_ptr0 + (x2 + 3136 * y3), xmask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 256 * x2 + 802816 * y1), tmp0, xmask)
    tl.store(out_ptr1 + (y0 + 256 * x2 + 802816 * y1), tmp0, xmask)


# ---- Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_relu_1 <- aten._native_batch_norm_legit_no_training, aten.relu
@triton.jit
def triton_poi_fused__native_batch_norm_legit_no_training_relu_1(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, xnumel, XBLOCK: tl.constexpr):
    xnumel = 12845056
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x2 = xindex
    x0 = xindex % 128
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
    tmp16 = tl.full([1], 0, tl.int32)
    tmp17 = tl.maximum(tmp16, tmp15, propagate_nan=tl.PropagateNan.ALL)
    tl.store(in_out_ptr0 + x2, tmp17, None)


# ---- Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_convolution_relu_2 <- aten._native_batch_norm_legit_no_training, aten.relu, aten.convolution
@triton.jit
def triton_poi_fused__native_batch_norm_legit_no_training_convolution_relu_2(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 16384
    xnumel = 9
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y3 = yindex
    y0 = yindex % 128
    y1 = yindex // 128
    tmp0 = tl.load(in_ptr0 + (x2 + 9 * y3), xmask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 128 * x2 + 1152 * y1), tmp0, xmask)


# ---- Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_relu_3 <- aten._native_batch_norm_legit_no_training, aten.relu
@triton.jit
def triton_poi_fused__native_batch_norm_legit_no_training_relu_3(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, xnumel, XBLOCK: tl.constexpr):
    xnumel = 3211264
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x2 = xindex
    x0 = xindex % 128
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
    tmp16 = tl.full([1], 0, tl.int32)
    tmp17 = tl.maximum(tmp16, tmp15, propagate_nan=tl.PropagateNan.ALL)
    tl.store(in_out_ptr0 + x2, tmp17, None)


# ---- Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_add_relu_4 <- aten._native_batch_norm_legit_no_training, aten.add, aten.relu
@triton.jit
def triton_poi_fused__native_batch_norm_legit_no_training_add_relu_4(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, in_ptr5, in_ptr6, in_ptr7, in_ptr8, xnumel, XBLOCK: tl.constexpr):
    xnumel = 12845056
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x2 = xindex
    x0 = xindex % 512
    tmp0 = tl.load(in_out_ptr0 + x2, None)
    tmp1 = tl.load(in_ptr0 + x0, None, eviction_policy='evict_last')
    tmp3 = tl.load(in_ptr1 + x0, None, eviction_policy='evict_last')
    tmp12 = tl.load(in_ptr2 + x0, None, eviction_policy='evict_last')
    tmp14 = tl.load(in_ptr3 + x0, None, eviction_policy='evict_last')
    tmp16 = tl.load(in_ptr4 + x2, None)
    tmp17 = tl.load(in_ptr5 + x0, None, eviction_policy='evict_last')
    tmp19 = tl.load(in_ptr6 + x0, None, eviction_policy='evict_last')
    tmp25 = tl.load(in_ptr7 + x0, None, eviction_policy='evict_last')
    tmp27 = tl.load(in_ptr8 + x0, None, eviction_policy='evict_last')
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
    tmp18 = tmp16 - tmp17
    tmp20 = tmp19 + tmp4
    tmp21 = tl.sqrt_rn(tmp20)
    tmp22 = tmp7 / tmp21
    tmp23 = tmp22 * tmp9
    tmp24 = tmp18 * tmp23
    tmp26 = tmp24 * tmp25
    tmp28 = tmp26 + tmp27
    tmp29 = tmp15 + tmp28
    tmp30 = tl.full([1], 0, tl.int32)
    tmp31 = tl.maximum(tmp30, tmp29, propagate_nan=tl.PropagateNan.ALL)
    tl.store(in_out_ptr0 + x2, tmp31, None)


# ---- Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_add_relu_5 <- aten._native_batch_norm_legit_no_training, aten.add, aten.relu
@triton.jit
def triton_poi_fused__native_batch_norm_legit_no_training_add_relu_5(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, in_ptr5, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 25088
    xnumel = 512
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = yindex < ynumel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y3 = yindex
    y0 = yindex % 784
    y1 = yindex // 784
    tmp0 = tl.load(in_ptr0 + (x2 + 512 * y3), xmask & ymask, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + x2, xmask, eviction_policy='evict_last')
    tmp3 = tl.load(in_ptr2 + x2, xmask, eviction_policy='evict_last')
    tmp12 = tl.load(in_ptr3 + x2, xmask, eviction_policy='evict_last')
    tmp14 = tl.load(in_ptr4 + x2, xmask, eviction_policy='evict_last')
    tmp16 = tl.load(in_ptr5 + (x2 + 512 * y3), xmask & ymask, eviction_policy='evict_last')
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
    tmp17 = tmp15 + tmp16
    tmp18 = tl.full([1, 1], 0, tl.int32)
    tmp19 = tl.maximum(tmp18, tmp17, propagate_nan=tl.PropagateNan.ALL)
    tl.store(out_ptr0 + (y0 + 784 * x2 + 401408 * y1), tmp19, xmask & ymask)


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
    arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, arg5_1, arg6_1, arg7_1, arg8_1, arg9_1, arg10_1, arg11_1, arg12_1, arg13_1, arg14_1, arg15_1, arg16_1, arg17_1, arg18_1, arg19_1, arg20_1, arg21_1, arg22_1, arg23_1, arg24_1, arg25_1, arg26_1, arg27_1, arg28_1, arg29_1, arg30_1, arg31_1, arg32_1, arg33_1, arg34_1, arg35_1, = args
    _device = arg1_1.device
    buf0 = torch.empty_strided((32, 256, 56, 56), (802816, 1, 14336, 256), dtype=torch.float32, device=_device)
    buf7 = torch.empty_strided((32, 256, 56, 56), (802816, 1, 14336, 256), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_0 <- aten.convolution
    triton_poi_fused_convolution_0[lambda meta: (triton.cdiv(3136, meta['XBLOCK']), triton.cdiv(8192, meta['YBLOCK']))](arg1_1, buf0, buf7, 8192, 3136, **LAUNCH_CONFIGS['triton_poi_fused_convolution_0'])
    del arg1_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution
    buf1 = torch.convolution(buf0, arg0_1, stride=(1, 1), padding=(0, 0), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del arg0_1
    del buf0
    buf2 = buf1
    del buf1
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_relu_1 <- aten._native_batch_norm_legit_no_training, aten.relu
    triton_poi_fused__native_batch_norm_legit_no_training_relu_1[lambda meta: (triton.cdiv(12845056, meta['XBLOCK']),)](buf2, arg2_1, arg3_1, arg4_1, arg5_1, 12845056, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_relu_1'])
    del arg2_1
    del arg3_1
    del arg4_1
    del arg5_1
    buf3 = torch.empty_strided((128, 128, 3, 3), (1152, 1, 384, 128), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_convolution_relu_2 <- aten._native_batch_norm_legit_no_training, aten.relu, aten.convolution
    triton_poi_fused__native_batch_norm_legit_no_training_convolution_relu_2[lambda meta: (triton.cdiv(9, meta['XBLOCK']), triton.cdiv(16384, meta['YBLOCK']))](arg6_1, buf3, 16384, 9, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_convolution_relu_2'])
    del arg6_1
    # vendor call (kept): aten.convolution via cuDNN <- aten._native_batch_norm_legit_no_training, aten.relu, aten.convolution
    buf4 = torch.convolution(buf2, buf3, stride=(2, 2), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del buf2
    buf5 = buf4
    del buf4
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_relu_3 <- aten._native_batch_norm_legit_no_training, aten.relu
    triton_poi_fused__native_batch_norm_legit_no_training_relu_3[lambda meta: (triton.cdiv(3211264, meta['XBLOCK']),)](buf5, arg7_1, arg8_1, arg9_1, arg10_1, 3211264, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_relu_3'])
    del arg10_1
    del arg7_1
    del arg8_1
    del arg9_1
    # vendor call (kept): aten.convolution via cuDNN <- aten._native_batch_norm_legit_no_training, aten.relu, aten.convolution
    buf6 = torch.convolution(buf5, arg11_1, stride=(1, 1), padding=(0, 0), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del arg11_1
    del buf5
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution
    buf8 = torch.convolution(buf7, arg16_1, stride=(2, 2), padding=(0, 0), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del arg16_1
    del buf7
    buf9 = buf6
    del buf6
    buf10 = buf9
    del buf9
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_add_relu_4 <- aten._native_batch_norm_legit_no_training, aten.add, aten.relu
    triton_poi_fused__native_batch_norm_legit_no_training_add_relu_4[lambda meta: (triton.cdiv(12845056, meta['XBLOCK']),)](buf10, arg12_1, arg13_1, arg14_1, arg15_1, buf8, arg17_1, arg18_1, arg19_1, arg20_1, 12845056, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_add_relu_4'])
    del arg12_1
    del arg13_1
    del arg14_1
    del arg15_1
    del arg17_1
    del arg18_1
    del arg19_1
    del arg20_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.relu, aten.convolution
    buf11 = torch.convolution(buf10, arg21_1, stride=(1, 1), padding=(0, 0), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del arg21_1
    buf12 = buf11
    del buf11
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_relu_3 <- aten._native_batch_norm_legit_no_training, aten.relu
    triton_poi_fused__native_batch_norm_legit_no_training_relu_3[lambda meta: (triton.cdiv(3211264, meta['XBLOCK']),)](buf12, arg22_1, arg23_1, arg24_1, arg25_1, 3211264, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_relu_3'])
    del arg22_1
    del arg23_1
    del arg24_1
    del arg25_1
    buf13 = buf3
    del buf3
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_convolution_relu_2 <- aten._native_batch_norm_legit_no_training, aten.relu, aten.convolution
    triton_poi_fused__native_batch_norm_legit_no_training_convolution_relu_2[lambda meta: (triton.cdiv(9, meta['XBLOCK']), triton.cdiv(16384, meta['YBLOCK']))](arg26_1, buf13, 16384, 9, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_convolution_relu_2'])
    del arg26_1
    # vendor call (kept): aten.convolution via cuDNN <- aten._native_batch_norm_legit_no_training, aten.relu, aten.convolution
    buf14 = torch.convolution(buf12, buf13, stride=(1, 1), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del buf12
    del buf13
    buf15 = buf14
    del buf14
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_relu_3 <- aten._native_batch_norm_legit_no_training, aten.relu
    triton_poi_fused__native_batch_norm_legit_no_training_relu_3[lambda meta: (triton.cdiv(3211264, meta['XBLOCK']),)](buf15, arg27_1, arg28_1, arg29_1, arg30_1, 3211264, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_relu_3'])
    del arg27_1
    del arg28_1
    del arg29_1
    del arg30_1
    # vendor call (kept): aten.convolution via cuDNN <- aten._native_batch_norm_legit_no_training, aten.relu, aten.convolution
    buf16 = torch.convolution(buf15, arg31_1, stride=(1, 1), padding=(0, 0), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del arg31_1
    del buf15
    buf17 = reinterpret_tensor(buf8, (32, 512, 28, 28), (401408, 784, 28, 1), 0)
    del buf8
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_add_relu_5 <- aten._native_batch_norm_legit_no_training, aten.add, aten.relu
    triton_poi_fused__native_batch_norm_legit_no_training_add_relu_5[lambda meta: (triton.cdiv(512, meta['XBLOCK']), triton.cdiv(25088, meta['YBLOCK']))](buf16, arg32_1, arg33_1, arg34_1, arg35_1, buf10, buf17, 25088, 512, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_add_relu_5'])
    del arg32_1
    del arg33_1
    del arg34_1
    del arg35_1
    del buf10
    del buf16
    return (buf17,)


class _ModelNewEager(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'block1.reduce.weight', (128, 256, 1, 1), torch.float32, True)
        _declare(self, 'block1.bn1.weight', (128,), torch.float32, True)
        _declare(self, 'block1.bn1.bias', (128,), torch.float32, True)
        _declare(self, 'block1.bn1.running_mean', (128,), torch.float32, False)
        _declare(self, 'block1.bn1.running_var', (128,), torch.float32, False)
        _declare(self, 'block1.bn1.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'block1.spatial.weight', (128, 128, 3, 3), torch.float32, True)
        _declare(self, 'block1.bn2.weight', (128,), torch.float32, True)
        _declare(self, 'block1.bn2.bias', (128,), torch.float32, True)
        _declare(self, 'block1.bn2.running_mean', (128,), torch.float32, False)
        _declare(self, 'block1.bn2.running_var', (128,), torch.float32, False)
        _declare(self, 'block1.bn2.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'block1.expand.weight', (512, 128, 1, 1), torch.float32, True)
        _declare(self, 'block1.bn3.weight', (512,), torch.float32, True)
        _declare(self, 'block1.bn3.bias', (512,), torch.float32, True)
        _declare(self, 'block1.bn3.running_mean', (512,), torch.float32, False)
        _declare(self, 'block1.bn3.running_var', (512,), torch.float32, False)
        _declare(self, 'block1.bn3.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'block1.short.0.weight', (512, 256, 1, 1), torch.float32, True)
        _declare(self, 'block1.short.1.weight', (512,), torch.float32, True)
        _declare(self, 'block1.short.1.bias', (512,), torch.float32, True)
        _declare(self, 'block1.short.1.running_mean', (512,), torch.float32, False)
        _declare(self, 'block1.short.1.running_var', (512,), torch.float32, False)
        _declare(self, 'block1.short.1.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'block2.reduce.weight', (128, 512, 1, 1), torch.float32, True)
        _declare(self, 'block2.bn1.weight', (128,), torch.float32, True)
        _declare(self, 'block2.bn1.bias', (128,), torch.float32, True)
        _declare(self, 'block2.bn1.running_mean', (128,), torch.float32, False)
        _declare(self, 'block2.bn1.running_var', (128,), torch.float32, False)
        _declare(self, 'block2.bn1.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'block2.spatial.weight', (128, 128, 3, 3), torch.float32, True)
        _declare(self, 'block2.bn2.weight', (128,), torch.float32, True)
        _declare(self, 'block2.bn2.bias', (128,), torch.float32, True)
        _declare(self, 'block2.bn2.running_mean', (128,), torch.float32, False)
        _declare(self, 'block2.bn2.running_var', (128,), torch.float32, False)
        _declare(self, 'block2.bn2.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'block2.expand.weight', (512, 128, 1, 1), torch.float32, True)
        _declare(self, 'block2.bn3.weight', (512,), torch.float32, True)
        _declare(self, 'block2.bn3.bias', (512,), torch.float32, True)
        _declare(self, 'block2.bn3.running_mean', (512,), torch.float32, False)
        _declare(self, 'block2.bn3.running_var', (512,), torch.float32, False)
        _declare(self, 'block2.bn3.num_batches_tracked', (), torch.int64, False)

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([self.block1.reduce.weight, x, self.block1.bn1.running_mean, self.block1.bn1.running_var, self.block1.bn1.weight, self.block1.bn1.bias, self.block1.spatial.weight, self.block1.bn2.running_mean, self.block1.bn2.running_var, self.block1.bn2.weight, self.block1.bn2.bias, self.block1.expand.weight, self.block1.bn3.running_mean, self.block1.bn3.running_var, self.block1.bn3.weight, self.block1.bn3.bias, self.get_parameter('block1.short.0.weight'), self.get_buffer('block1.short.1.running_mean'), self.get_buffer('block1.short.1.running_var'), self.get_parameter('block1.short.1.weight'), self.get_parameter('block1.short.1.bias'), self.block2.reduce.weight, self.block2.bn1.running_mean, self.block2.bn1.running_var, self.block2.bn1.weight, self.block2.bn1.bias, self.block2.spatial.weight, self.block2.bn2.running_mean, self.block2.bn2.running_var, self.block2.bn2.weight, self.block2.bn2.bias, self.block2.expand.weight, self.block2.bn3.running_mean, self.block2.bn3.running_var, self.block2.bn3.weight, self.block2.bn3.bias])
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
