"""Harvested from torch.compile (Inductor) for problem 'vgg_style_stack'.

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
    'triton_poi_fused_add_mul_rsqrt_view_0': {'YBLOCK': 256, 'XBLOCK': 1, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_add_convolution_mul_rsqrt_sub_view_1': {'YBLOCK': 32, 'XBLOCK': 32, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_add_mul_rsqrt_sub_2': {'XBLOCK': 64, 'num_warps': 1, 'num_stages': 1},
    'triton_poi_fused_add_convolution_mul_rsqrt_sub_view_3': {'XBLOCK': 1024, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_4': {'XBLOCK': 1024, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_add_mul_rsqrt_view_5': {'YBLOCK': 256, 'XBLOCK': 16, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused_add_mul_rsqrt_sub_6': {'XBLOCK': 128, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_7': {'XBLOCK': 1024, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_8': {'XBLOCK': 512, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused_add_mul_rsqrt_view_9': {'YBLOCK': 64, 'XBLOCK': 16, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_add_mul_rsqrt_sub_10': {'XBLOCK': 128, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_11': {'XBLOCK': 1024, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_12': {'YBLOCK': 32, 'XBLOCK': 32, 'num_warps': 4, 'num_stages': 1},
}


# ---- Triton kernel triton_poi_fused_add_mul_rsqrt_view_0 <- aten.add, aten.rsqrt, aten.mul, aten.view
@triton.jit
def triton_poi_fused_add_mul_rsqrt_view_0(in_ptr0, in_ptr1, in_ptr2, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 192
    xnumel = 9
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = yindex < ynumel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y3 = yindex
    y1 = yindex // 3
    y0 = yindex % 3
    tmp0 = tl.load(in_ptr0 + (x2 + 9 * y3), xmask & ymask, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + y1, ymask, eviction_policy='evict_last')
    tmp2 = tl.load(in_ptr2 + y1, ymask, eviction_policy='evict_last')
    tmp3 = tl.full([1, 1], 1e-05, tl.float32)
    tmp4 = tmp2 + tmp3
    tmp5 = libdevice.rsqrt(tmp4)
    tmp6 = tmp1 * tmp5
    tmp7 = tmp0 * tmp6
    tl.store(out_ptr0 + (y0 + 3 * x2 + 27 * y1), tmp7, xmask & ymask)


# ---- Triton kernel triton_poi_fused_add_convolution_mul_rsqrt_sub_view_1 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.sub, aten.convolution
@triton.jit
def triton_poi_fused_add_convolution_mul_rsqrt_sub_view_1(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 192
    xnumel = 16384
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = yindex < ynumel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = tl.full([XBLOCK], True, tl.int1)[None, :]
    x2 = xindex
    y3 = yindex
    y0 = yindex % 3
    y1 = yindex // 3
    tmp0 = tl.load(in_ptr0 + (x2 + 16384 * y3), ymask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 3 * x2 + 49152 * y1), tmp0, ymask)


# ---- Triton kernel triton_poi_fused_add_mul_rsqrt_sub_2 <- aten.add, aten.rsqrt, aten.mul, aten.sub
@triton.jit
def triton_poi_fused_add_mul_rsqrt_sub_2(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 64
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + x0, xmask)
    tmp1 = tl.load(in_ptr1 + x0, xmask)
    tmp3 = tl.load(in_ptr2 + x0, xmask)
    tmp4 = tl.load(in_ptr3 + x0, xmask)
    tmp10 = tl.load(in_ptr4 + x0, xmask)
    tmp2 = tmp0 - tmp1
    tmp5 = tl.full([1], 1e-05, tl.float32)
    tmp6 = tmp4 + tmp5
    tmp7 = libdevice.rsqrt(tmp6)
    tmp8 = tmp3 * tmp7
    tmp9 = tmp2 * tmp8
    tmp11 = tmp9 + tmp10
    tl.store(out_ptr0 + x0, tmp11, xmask)


# ---- Triton kernel triton_poi_fused_add_convolution_mul_rsqrt_sub_view_3 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.sub, aten.convolution
@triton.jit
def triton_poi_fused_add_convolution_mul_rsqrt_sub_view_3(in_out_ptr0, in_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 67108864
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x2 = xindex
    x0 = xindex % 64
    tmp0 = tl.load(in_out_ptr0 + x2, None)
    tmp1 = tl.load(in_ptr0 + x0, None, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tl.store(in_out_ptr0 + x2, tmp2, None)


# ---- Triton kernel triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_4 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.sub, aten.convolution, aten.max_pool2d_with_indices, aten.relu
@triton.jit
def triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_4(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 16777216
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex % 64
    x1 = xindex // 64 % 64
    x2 = xindex // 4096
    x3 = xindex
    tmp0 = tl.load(in_ptr0 + (x0 + 128 * x1 + 16384 * x2), None)
    tmp1 = tl.load(in_ptr0 + (64 + x0 + 128 * x1 + 16384 * x2), None)
    tmp3 = tl.load(in_ptr0 + (8192 + x0 + 128 * x1 + 16384 * x2), None)
    tmp5 = tl.load(in_ptr0 + (8256 + x0 + 128 * x1 + 16384 * x2), None)
    tmp2 = tl.maximum(tmp0, tmp1, propagate_nan=tl.PropagateNan.ALL)
    tmp4 = tl.maximum(tmp2, tmp3, propagate_nan=tl.PropagateNan.ALL)
    tmp6 = tl.maximum(tmp4, tmp5, propagate_nan=tl.PropagateNan.ALL)
    tmp7 = tl.full([1], 0, tl.int32)
    tmp8 = tl.maximum(tmp7, tmp6, propagate_nan=tl.PropagateNan.ALL)
    tl.store(out_ptr0 + x3, tmp8, None)


# ---- Triton kernel triton_poi_fused_add_mul_rsqrt_view_5 <- aten.add, aten.rsqrt, aten.mul, aten.view
@triton.jit
def triton_poi_fused_add_mul_rsqrt_view_5(in_ptr0, in_ptr1, in_ptr2, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
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
    y1 = yindex // 64
    y0 = yindex % 64
    tmp0 = tl.load(in_ptr0 + (x2 + 9 * y3), xmask, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + y1, None, eviction_policy='evict_last')
    tmp2 = tl.load(in_ptr2 + y1, None, eviction_policy='evict_last')
    tmp3 = tl.full([1, 1], 1e-05, tl.float32)
    tmp4 = tmp2 + tmp3
    tmp5 = libdevice.rsqrt(tmp4)
    tmp6 = tmp1 * tmp5
    tmp7 = tmp0 * tmp6
    tl.store(out_ptr0 + (y0 + 64 * x2 + 576 * y1), tmp7, xmask)


# ---- Triton kernel triton_poi_fused_add_mul_rsqrt_sub_6 <- aten.add, aten.rsqrt, aten.mul, aten.sub
@triton.jit
def triton_poi_fused_add_mul_rsqrt_sub_6(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 128
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + x0, xmask)
    tmp1 = tl.load(in_ptr1 + x0, xmask)
    tmp3 = tl.load(in_ptr2 + x0, xmask)
    tmp4 = tl.load(in_ptr3 + x0, xmask)
    tmp10 = tl.load(in_ptr4 + x0, xmask)
    tmp2 = tmp0 - tmp1
    tmp5 = tl.full([1], 1e-05, tl.float32)
    tmp6 = tmp4 + tmp5
    tmp7 = libdevice.rsqrt(tmp6)
    tmp8 = tmp3 * tmp7
    tmp9 = tmp2 * tmp8
    tmp11 = tmp9 + tmp10
    tl.store(out_ptr0 + x0, tmp11, xmask)


# ---- Triton kernel triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_7 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.sub, aten.convolution, aten.max_pool2d_with_indices, aten.relu
@triton.jit
def triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_7(in_out_ptr0, in_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 33554432
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x2 = xindex
    x0 = xindex % 128
    tmp0 = tl.load(in_out_ptr0 + x2, None)
    tmp1 = tl.load(in_ptr0 + x0, None, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tl.store(in_out_ptr0 + x2, tmp2, None)


# ---- Triton kernel triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_8 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.sub, aten.convolution, aten.max_pool2d_with_indices, aten.relu
@triton.jit
def triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_8(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 8388608
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex % 128
    x1 = xindex // 128 % 32
    x2 = xindex // 4096
    x3 = xindex
    tmp0 = tl.load(in_ptr0 + (x0 + 256 * x1 + 16384 * x2), None)
    tmp1 = tl.load(in_ptr0 + (128 + x0 + 256 * x1 + 16384 * x2), None)
    tmp3 = tl.load(in_ptr0 + (8192 + x0 + 256 * x1 + 16384 * x2), None)
    tmp5 = tl.load(in_ptr0 + (8320 + x0 + 256 * x1 + 16384 * x2), None)
    tmp2 = tl.maximum(tmp0, tmp1, propagate_nan=tl.PropagateNan.ALL)
    tmp4 = tl.maximum(tmp2, tmp3, propagate_nan=tl.PropagateNan.ALL)
    tmp6 = tl.maximum(tmp4, tmp5, propagate_nan=tl.PropagateNan.ALL)
    tmp7 = tl.full([1], 0, tl.int32)
    tmp8 = tl.maximum(tmp7, tmp6, propagate_nan=tl.PropagateNan.ALL)
    tl.store(out_ptr0 + x3, tmp8, None)


# ---- Triton kernel triton_poi_fused_add_mul_rsqrt_view_9 <- aten.add, aten.rsqrt, aten.mul, aten.view
@triton.jit
def triton_poi_fused_add_mul_rsqrt_view_9(in_ptr0, in_ptr1, in_ptr2, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 32768
    xnumel = 9
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y3 = yindex
    y1 = yindex // 128
    y0 = yindex % 128
    tmp0 = tl.load(in_ptr0 + (x2 + 9 * y3), xmask, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + y1, None, eviction_policy='evict_last')
    tmp2 = tl.load(in_ptr2 + y1, None, eviction_policy='evict_last')
    tmp3 = tl.full([1, 1], 1e-05, tl.float32)
    tmp4 = tmp2 + tmp3
    tmp5 = libdevice.rsqrt(tmp4)
    tmp6 = tmp1 * tmp5
    tmp7 = tmp0 * tmp6
    tl.store(out_ptr0 + (y0 + 128 * x2 + 1152 * y1), tmp7, xmask)


# ---- Triton kernel triton_poi_fused_add_mul_rsqrt_sub_10 <- aten.add, aten.rsqrt, aten.mul, aten.sub
@triton.jit
def triton_poi_fused_add_mul_rsqrt_sub_10(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 256
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + x0, xmask)
    tmp1 = tl.load(in_ptr1 + x0, xmask)
    tmp3 = tl.load(in_ptr2 + x0, xmask)
    tmp4 = tl.load(in_ptr3 + x0, xmask)
    tmp10 = tl.load(in_ptr4 + x0, xmask)
    tmp2 = tmp0 - tmp1
    tmp5 = tl.full([1], 1e-05, tl.float32)
    tmp6 = tmp4 + tmp5
    tmp7 = libdevice.rsqrt(tmp6)
    tmp8 = tmp3 * tmp7
    tmp9 = tmp2 * tmp8
    tmp11 = tmp9 + tmp10
    tl.store(out_ptr0 + x0, tmp11, xmask)


# ---- Triton kernel triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_11 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.sub, aten.convolution, aten.max_pool2d_with_indices, aten.relu
@triton.jit
def triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_11(in_out_ptr0, in_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 16777216
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x2 = xindex
    x0 = xindex % 256
    tmp0 = tl.load(in_out_ptr0 + x2, None)
    tmp1 = tl.load(in_ptr0 + x0, None, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tl.store(in_out_ptr0 + x2, tmp2, None)


# ---- Triton kernel triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_12 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.sub, aten.convolution, aten.max_pool2d_with_indices, aten.relu
@triton.jit
def triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_12(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 16384
    xnumel = 256
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x3 = xindex
    y0 = yindex % 16
    y4 = yindex // 16
    y2 = yindex // 256
    y5 = yindex % 256
    tmp0 = tl.load(in_ptr0 + (x3 + 512 * y0 + 16384 * y4), xmask, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr0 + (256 + x3 + 512 * y0 + 16384 * y4), xmask, eviction_policy='evict_last')
    tmp3 = tl.load(in_ptr0 + (8192 + x3 + 512 * y0 + 16384 * y4), xmask, eviction_policy='evict_last')
    tmp5 = tl.load(in_ptr0 + (8448 + x3 + 512 * y0 + 16384 * y4), xmask, eviction_policy='evict_last')
    tmp2 = tl.maximum(tmp0, tmp1, propagate_nan=tl.PropagateNan.ALL)
    tmp4 = tl.maximum(tmp2, tmp3, propagate_nan=tl.PropagateNan.ALL)
    tmp6 = tl.maximum(tmp4, tmp5, propagate_nan=tl.PropagateNan.ALL)
    tmp7 = tl.full([1, 1], 0, tl.int32)
    tmp8 = tl.maximum(tmp7, tmp6, propagate_nan=tl.PropagateNan.ALL)
    tl.store(out_ptr0 + (y5 + 256 * x3 + 65536 * y2), tmp8, xmask)


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
    arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, arg5_1, arg6_1, arg7_1, arg8_1, arg9_1, arg10_1, arg11_1, arg12_1, arg13_1, arg14_1, arg15_1, arg16_1, arg17_1, arg18_1, arg19_1, arg20_1, = args
    _device = arg6_1.device
    buf0 = torch.empty_strided((64, 3, 3, 3), (27, 1, 9, 3), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_mul_rsqrt_view_0 <- aten.add, aten.rsqrt, aten.mul, aten.view
    triton_poi_fused_add_mul_rsqrt_view_0[lambda meta: (triton.cdiv(9, meta['XBLOCK']), triton.cdiv(192, meta['YBLOCK']))](arg0_1, arg4_1, arg2_1, buf0, 192, 9, **LAUNCH_CONFIGS['triton_poi_fused_add_mul_rsqrt_view_0'])
    del arg0_1
    buf1 = torch.empty_strided((64, 3, 128, 128), (49152, 1, 384, 3), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_convolution_mul_rsqrt_sub_view_1 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.sub, aten.convolution
    triton_poi_fused_add_convolution_mul_rsqrt_sub_view_1[lambda meta: (triton.cdiv(16384, meta['XBLOCK']), triton.cdiv(192, meta['YBLOCK']))](arg6_1, buf1, 192, 16384, **LAUNCH_CONFIGS['triton_poi_fused_add_convolution_mul_rsqrt_sub_view_1'])
    del arg6_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.sub, aten.convolution
    buf2 = torch.convolution(buf1, buf0, stride=(1, 1), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del buf0
    del buf1
    buf3 = torch.empty_strided((64,), (1,), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_mul_rsqrt_sub_2 <- aten.add, aten.rsqrt, aten.mul, aten.sub
    triton_poi_fused_add_mul_rsqrt_sub_2[lambda meta: (triton.cdiv(64, meta['XBLOCK']),)](arg1_1, arg3_1, arg4_1, arg2_1, arg5_1, buf3, 64, **LAUNCH_CONFIGS['triton_poi_fused_add_mul_rsqrt_sub_2'])
    del arg1_1
    del arg2_1
    del arg3_1
    del arg4_1
    del arg5_1
    buf4 = buf2
    del buf2
    # Triton kernel triton_poi_fused_add_convolution_mul_rsqrt_sub_view_3 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.sub, aten.convolution
    triton_poi_fused_add_convolution_mul_rsqrt_sub_view_3[lambda meta: (triton.cdiv(67108864, meta['XBLOCK']),)](buf4, buf3, 67108864, **LAUNCH_CONFIGS['triton_poi_fused_add_convolution_mul_rsqrt_sub_view_3'])
    del buf3
    buf5 = torch.empty_strided((64, 64, 64, 64), (262144, 1, 4096, 64), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_4 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.sub, aten.convolution, aten.max_pool2d_with_indices, aten.relu
    triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_4[lambda meta: (triton.cdiv(16777216, meta['XBLOCK']),)](buf4, buf5, 16777216, **LAUNCH_CONFIGS['triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_4'])
    del buf4
    buf6 = torch.empty_strided((128, 64, 3, 3), (576, 1, 192, 64), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_mul_rsqrt_view_5 <- aten.add, aten.rsqrt, aten.mul, aten.view
    triton_poi_fused_add_mul_rsqrt_view_5[lambda meta: (triton.cdiv(9, meta['XBLOCK']), triton.cdiv(8192, meta['YBLOCK']))](arg7_1, arg11_1, arg9_1, buf6, 8192, 9, **LAUNCH_CONFIGS['triton_poi_fused_add_mul_rsqrt_view_5'])
    del arg7_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.sub, aten.convolution, aten.max_pool2d_with_indices, aten.relu
    buf7 = torch.convolution(buf5, buf6, stride=(1, 1), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del buf5
    del buf6
    buf8 = torch.empty_strided((128,), (1,), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_mul_rsqrt_sub_6 <- aten.add, aten.rsqrt, aten.mul, aten.sub
    triton_poi_fused_add_mul_rsqrt_sub_6[lambda meta: (triton.cdiv(128, meta['XBLOCK']),)](arg8_1, arg10_1, arg11_1, arg9_1, arg12_1, buf8, 128, **LAUNCH_CONFIGS['triton_poi_fused_add_mul_rsqrt_sub_6'])
    del arg10_1
    del arg11_1
    del arg12_1
    del arg8_1
    del arg9_1
    buf9 = buf7
    del buf7
    # Triton kernel triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_7 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.sub, aten.convolution, aten.max_pool2d_with_indices, aten.relu
    triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_7[lambda meta: (triton.cdiv(33554432, meta['XBLOCK']),)](buf9, buf8, 33554432, **LAUNCH_CONFIGS['triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_7'])
    del buf8
    buf10 = torch.empty_strided((64, 128, 32, 32), (131072, 1, 4096, 128), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_8 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.sub, aten.convolution, aten.max_pool2d_with_indices, aten.relu
    triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_8[lambda meta: (triton.cdiv(8388608, meta['XBLOCK']),)](buf9, buf10, 8388608, **LAUNCH_CONFIGS['triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_8'])
    del buf9
    buf11 = torch.empty_strided((256, 128, 3, 3), (1152, 1, 384, 128), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_mul_rsqrt_view_9 <- aten.add, aten.rsqrt, aten.mul, aten.view
    triton_poi_fused_add_mul_rsqrt_view_9[lambda meta: (triton.cdiv(9, meta['XBLOCK']), triton.cdiv(32768, meta['YBLOCK']))](arg13_1, arg17_1, arg15_1, buf11, 32768, 9, **LAUNCH_CONFIGS['triton_poi_fused_add_mul_rsqrt_view_9'])
    del arg13_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.sub, aten.convolution, aten.max_pool2d_with_indices, aten.relu
    buf12 = torch.convolution(buf10, buf11, stride=(1, 1), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del buf10
    del buf11
    buf13 = torch.empty_strided((256,), (1,), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_mul_rsqrt_sub_10 <- aten.add, aten.rsqrt, aten.mul, aten.sub
    triton_poi_fused_add_mul_rsqrt_sub_10[lambda meta: (triton.cdiv(256, meta['XBLOCK']),)](arg14_1, arg16_1, arg17_1, arg15_1, arg18_1, buf13, 256, **LAUNCH_CONFIGS['triton_poi_fused_add_mul_rsqrt_sub_10'])
    del arg14_1
    del arg15_1
    del arg16_1
    del arg17_1
    del arg18_1
    buf14 = buf12
    del buf12
    # Triton kernel triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_11 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.sub, aten.convolution, aten.max_pool2d_with_indices, aten.relu
    triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_11[lambda meta: (triton.cdiv(16777216, meta['XBLOCK']),)](buf14, buf13, 16777216, **LAUNCH_CONFIGS['triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_11'])
    del buf13
    buf15 = torch.empty_strided((64, 256, 16, 16), (65536, 256, 16, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_12 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.sub, aten.convolution, aten.max_pool2d_with_indices, aten.relu
    triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_12[lambda meta: (triton.cdiv(256, meta['XBLOCK']), triton.cdiv(16384, meta['YBLOCK']))](buf14, buf15, 16384, 256, **LAUNCH_CONFIGS['triton_poi_fused_add_convolution_max_pool2d_with_indices_mul_relu_rsqrt_sub_view_12'])
    del buf14
    buf16 = torch.empty_strided((64, 1000), (1000, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.addmm via cuBLAS <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.sub, aten.convolution, aten.max_pool2d_with_indices, aten.relu, aten.t, aten.addmm
    torch.addmm(arg20_1, reinterpret_tensor(buf15, (64, 65536), (65536, 1), 0), reinterpret_tensor(arg19_1, (65536, 1000), (1, 65536), 0), alpha=1, beta=1, out=buf16)
    del arg19_1
    del arg20_1
    del buf15
    return (buf16,)


class ModelNew(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'features.0.weight', (64, 3, 3, 3), torch.float32, True)
        _declare(self, 'features.0.bias', (64,), torch.float32, True)
        _declare(self, 'features.1.weight', (64,), torch.float32, True)
        _declare(self, 'features.1.bias', (64,), torch.float32, True)
        _declare(self, 'features.1.running_mean', (64,), torch.float32, False)
        _declare(self, 'features.1.running_var', (64,), torch.float32, False)
        _declare(self, 'features.1.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'features.4.weight', (128, 64, 3, 3), torch.float32, True)
        _declare(self, 'features.4.bias', (128,), torch.float32, True)
        _declare(self, 'features.5.weight', (128,), torch.float32, True)
        _declare(self, 'features.5.bias', (128,), torch.float32, True)
        _declare(self, 'features.5.running_mean', (128,), torch.float32, False)
        _declare(self, 'features.5.running_var', (128,), torch.float32, False)
        _declare(self, 'features.5.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'features.8.weight', (256, 128, 3, 3), torch.float32, True)
        _declare(self, 'features.8.bias', (256,), torch.float32, True)
        _declare(self, 'features.9.weight', (256,), torch.float32, True)
        _declare(self, 'features.9.bias', (256,), torch.float32, True)
        _declare(self, 'features.9.running_mean', (256,), torch.float32, False)
        _declare(self, 'features.9.running_var', (256,), torch.float32, False)
        _declare(self, 'features.9.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'head.weight', (1000, 65536), torch.float32, True)
        _declare(self, 'head.bias', (1000,), torch.float32, True)

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([self.get_parameter('features.0.weight'), self.get_parameter('features.0.bias'), self.get_buffer('features.1.running_var'), self.get_buffer('features.1.running_mean'), self.get_parameter('features.1.weight'), self.get_parameter('features.1.bias'), x, self.get_parameter('features.4.weight'), self.get_parameter('features.4.bias'), self.get_buffer('features.5.running_var'), self.get_buffer('features.5.running_mean'), self.get_parameter('features.5.weight'), self.get_parameter('features.5.bias'), self.get_parameter('features.8.weight'), self.get_parameter('features.8.bias'), self.get_buffer('features.9.running_var'), self.get_buffer('features.9.running_mean'), self.get_parameter('features.9.weight'), self.get_parameter('features.9.bias'), self.head.weight, self.head.bias])
        return outs[0]
