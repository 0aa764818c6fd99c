"""Harvested from torch.compile (Inductor) for problem 'resnet_basic_block'.

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
    'triton_poi_fused_convolution_0': {'YBLOCK': 64, 'XBLOCK': 64, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused_convolution_1': {'YBLOCK': 64, 'XBLOCK': 16, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused__native_batch_norm_legit_no_training_relu_2': {'XBLOCK': 512, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused__native_batch_norm_legit_no_training_convolution_relu_3': {'YBLOCK': 64, 'XBLOCK': 16, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused__native_batch_norm_legit_no_training_add_relu_4': {'YBLOCK': 64, 'XBLOCK': 64, 'num_warps': 8, 'num_stages': 1},
}


# ---- Triton kernel triton_poi_fused_convolution_0 <- aten.convolution
@triton.jit
def triton_poi_fused_convolution_0(in_ptr0, out_ptr0, out_ptr1, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 2048
    xnumel = 12544
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y3 = yindex
    y0 = yindex % 64
    y1 = yindex // 64
    tmp0 = tl.load(in_ptr0 + (x2 + 12544 * y3), xmask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 64 * x2 + 802816 * y1), tmp0, xmask)
    tl.store(out_ptr1 + (y0 + 64 * x2 + 802816 * y1), tmp0, xmask)


# ---- Triton kernel triton_poi_fused_convolution_1 <- aten.convolution
@triton.jit
def triton_poi_fused_convolution_1(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 8192
    xnumel = 9
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y3 = yindex
    y0 = yindex % 64
    y1 = yindex // 64
    tmp0 = tl.load(in_ptr0 + (x2 + 9 * y3), xmask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 64 * x2 + 576 * y1), tmp0, xmask)


# ---- Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_relu_2 <- aten._native_batch_norm_legit_no_training, aten.relu
@triton.jit
def triton_poi_fused__native_batch_norm_legit_no_training_relu_2(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, xnumel, XBLOCK: tl.constexpr):
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


# ---- Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_convolution_relu_3 <- aten._native_batch_norm_legit_no_training, aten.relu, aten.convolution
@triton.jit
def triton_poi_fused__native_batch_norm_legit_no_training_convolution_relu_3(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
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


# ---- Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_add_relu_4 <- aten._native_batch_norm_legit_no_training, aten.add, aten.relu
@triton.jit
def triton_poi_fused__native_batch_norm_legit_no_training_add_relu_4(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, in_ptr5, in_ptr6, in_ptr7, in_ptr8, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 4096
    xnumel = 3136
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y0 = yindex % 128
    y1 = yindex // 128
    y3 = yindex
    tmp0 = tl.load(in_out_ptr0 + (y0 + 128 * x2 + 401408 * y1), xmask, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr0 + y0, None, eviction_policy='evict_last')
    tmp3 = tl.load(in_ptr1 + y0, None, eviction_policy='evict_last')
    tmp12 = tl.load(in_ptr2 + y0, None, eviction_policy='evict_last')
    tmp14 = tl.load(in_ptr3 + y0, None, eviction_policy='evict_last')
    tmp16 = tl.load(in_ptr4 + (y0 + 128 * x2 + 401408 * y1), xmask, eviction_policy='evict_last')
    tmp17 = tl.load(in_ptr5 + y0, None, eviction_policy='evict_last')
    tmp19 = tl.load(in_ptr6 + y0, None, eviction_policy='evict_last')
    tmp25 = tl.load(in_ptr7 + y0, None, eviction_policy='evict_last')
    tmp27 = tl.load(in_ptr8 + y0, None, eviction_policy='evict_last')
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
    tmp18 = tmp16 - tmp17
    tmp20 = tmp19 + tmp4
    tmp21 = tl.sqrt_rn(tmp20)
    tmp22 = tmp7 / tmp21
    tmp23 = tmp22 * tmp9
    tmp24 = tmp18 * tmp23
    tmp26 = tmp24 * tmp25
    tmp28 = tmp26 + tmp27
    tmp29 = tmp15 + tmp28
    tmp30 = tl.full([1, 1], 0, tl.int32)
    tmp31 = tl.maximum(tmp30, tmp29, propagate_nan=tl.PropagateNan.ALL)
    tl.store(out_ptr0 + (x2 + 3136 * y3), tmp31, xmask)


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
    arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, arg5_1, arg6_1, arg7_1, arg8_1, arg9_1, arg10_1, arg11_1, arg12_1, arg13_1, arg14_1, arg15_1, = args
    _device = arg1_1.device
    buf0 = torch.empty_strided((32, 64, 112, 112), (802816, 1, 7168, 64), dtype=torch.float32, device=_device)
    buf6 = torch.empty_strided((32, 64, 112, 112), (802816, 1, 7168, 64), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_0 <- aten.convolution
    triton_poi_fused_convolution_0[lambda meta: (triton.cdiv(12544, meta['XBLOCK']), triton.cdiv(2048, meta['YBLOCK']))](arg1_1, buf0, buf6, 2048, 12544, **LAUNCH_CONFIGS['triton_poi_fused_convolution_0'])
    del arg1_1
    buf1 = torch.empty_strided((128, 64, 3, 3), (576, 1, 192, 64), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_1 <- aten.convolution
    triton_poi_fused_convolution_1[lambda meta: (triton.cdiv(9, meta['XBLOCK']), triton.cdiv(8192, meta['YBLOCK']))](arg0_1, buf1, 8192, 9, **LAUNCH_CONFIGS['triton_poi_fused_convolution_1'])
    del arg0_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution
    buf2 = torch.convolution(buf0, buf1, stride=(2, 2), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del buf0
    del buf1
    buf3 = buf2
    del buf2
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_relu_2 <- aten._native_batch_norm_legit_no_training, aten.relu
    triton_poi_fused__native_batch_norm_legit_no_training_relu_2[lambda meta: (triton.cdiv(12845056, meta['XBLOCK']),)](buf3, arg2_1, arg3_1, arg4_1, arg5_1, 12845056, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_relu_2'])
    del arg2_1
    del arg3_1
    del arg4_1
    del arg5_1
    buf4 = torch.empty_strided((128, 128, 3, 3), (1152, 1, 384, 128), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_convolution_relu_3 <- aten._native_batch_norm_legit_no_training, aten.relu, aten.convolution
    triton_poi_fused__native_batch_norm_legit_no_training_convolution_relu_3[lambda meta: (triton.cdiv(9, meta['XBLOCK']), triton.cdiv(16384, meta['YBLOCK']))](arg6_1, buf4, 16384, 9, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_convolution_relu_3'])
    del arg6_1
    # vendor call (kept): aten.convolution via cuDNN <- aten._native_batch_norm_legit_no_training, aten.relu, aten.convolution
    buf5 = torch.convolution(buf3, buf4, stride=(1, 1), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del buf4
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution
    buf7 = torch.convolution(buf6, arg11_1, stride=(2, 2), padding=(0, 0), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del arg11_1
    del buf6
    buf8 = buf5
    del buf5
    buf9 = reinterpret_tensor(buf3, (32, 128, 56, 56), (401408, 3136, 56, 1), 0)
    del buf3
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_add_relu_4 <- aten._native_batch_norm_legit_no_training, aten.add, aten.relu
    triton_poi_fused__native_batch_norm_legit_no_training_add_relu_4[lambda meta: (triton.cdiv(3136, meta['XBLOCK']), triton.cdiv(4096, meta['YBLOCK']))](buf8, arg7_1, arg8_1, arg9_1, arg10_1, buf7, arg12_1, arg13_1, arg14_1, arg15_1, buf9, 4096, 3136, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_add_relu_4'])
    del arg10_1
    del arg12_1
    del arg13_1
    del arg14_1
    del arg15_1
    del arg7_1
    del arg8_1
    del arg9_1
    del buf7
    del buf8
    return (buf9,)


class ModelNew(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'conv1.weight', (128, 64, 3, 3), torch.float32, True)
        _declare(self, 'bn1.weight', (128,), torch.float32, True)
        _declare(self, 'bn1.bias', (128,), torch.float32, True)
        _declare(self, 'bn1.running_mean', (128,), torch.float32, False)
        _declare(self, 'bn1.running_var', (128,), torch.float32, False)
        _declare(self, 'bn1.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'conv2.weight', (128, 128, 3, 3), torch.float32, True)
        _declare(self, 'bn2.weight', (128,), torch.float32, True)
        _declare(self, 'bn2.bias', (128,), torch.float32, True)
        _declare(self, 'bn2.running_mean', (128,), torch.float32, False)
        _declare(self, 'bn2.running_var', (128,), torch.float32, False)
        _declare(self, 'bn2.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'proj.weight', (128, 64, 1, 1), torch.float32, True)
        _declare(self, 'proj_bn.weight', (128,), torch.float32, True)
        _declare(self, 'proj_bn.bias', (128,), torch.float32, True)
        _declare(self, 'proj_bn.running_mean', (128,), torch.float32, False)
        _declare(self, 'proj_bn.running_var', (128,), torch.float32, False)
        _declare(self, 'proj_bn.num_batches_tracked', (), torch.int64, False)

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([self.conv1.weight, x, self.bn1.running_mean, self.bn1.running_var, self.bn1.weight, self.bn1.bias, self.conv2.weight, self.bn2.running_mean, self.bn2.running_var, self.bn2.weight, self.bn2.bias, self.proj.weight, self.proj_bn.running_mean, self.proj_bn.running_var, self.proj_bn.weight, self.proj_bn.bias])
        return outs[0]
