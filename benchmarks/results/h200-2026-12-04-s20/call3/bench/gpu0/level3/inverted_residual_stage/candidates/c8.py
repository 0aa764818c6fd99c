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
from triton.language.extra import libdevice

aten = torch.ops.aten

# Launch configurations (block sizes, warps, stages) per kernel: the Tuner edits
# only this dict; grids follow the block sizes through `meta`.
LAUNCH_CONFIGS = {
    'triton_poi_fused_add_mul_rsqrt_view_0': {'YBLOCK': 64, 'XBLOCK': 32, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused_add_convolution_mul_neg_rsqrt_view_1': {'YBLOCK': 32, 'XBLOCK': 32, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_2': {'XBLOCK': 512, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused_add_mul_rsqrt_view_3': {'YBLOCK': 64, 'XBLOCK': 16, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_add_mul_rsqrt_view_4': {'XBLOCK': 256, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_5': {'YBLOCK': 32, 'XBLOCK': 32, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_6': {'YBLOCK': 128, 'XBLOCK': 32, 'num_warps': 8, 'num_stages': 1},
}


# ---- Triton kernel triton_poi_fused_add_mul_rsqrt_view_0 <- aten.add, aten.rsqrt, aten.mul, aten.view
@triton.jit
def triton_poi_fused_add_mul_rsqrt_view_0(in_ptr0, in_ptr1, in_ptr2, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 192
    xnumel = 32
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = yindex < ynumel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x1 = xindex
    y0 = yindex
    tmp0 = tl.load(in_ptr0 + (x1 + 32 * y0), xmask & ymask, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + y0, ymask, eviction_policy='evict_last')
    tmp2 = tl.load(in_ptr2 + y0, ymask, eviction_policy='evict_last')
    tmp3 = tl.full([1, 1], 1e-05, tl.float32)
    tmp4 = tmp2 + tmp3
    tmp5 = libdevice.rsqrt(tmp4)
    tmp6 = tmp1 * tmp5
    tmp7 = tmp0 * tmp6
    tl.store(out_ptr0 + (x1 + 32 * y0), tmp7, xmask & ymask)


# ---- Triton kernel triton_poi_fused_add_convolution_mul_neg_rsqrt_view_1 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.neg, aten.convolution
@triton.jit
def triton_poi_fused_add_convolution_mul_neg_rsqrt_view_1(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
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


# ---- Triton kernel triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_2 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.neg, aten.convolution, aten.hardtanh
@triton.jit
def triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_2(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, xnumel, XBLOCK: tl.constexpr):
    xnumel = 19267584
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x2 = xindex
    x0 = xindex % 192
    tmp0 = tl.load(in_out_ptr0 + x2, None)
    tmp1 = tl.load(in_ptr0 + x0, None, eviction_policy='evict_last')
    tmp3 = tl.load(in_ptr1 + x0, None, eviction_policy='evict_last')
    tmp4 = tl.load(in_ptr2 + x0, None, eviction_policy='evict_last')
    tmp10 = tl.load(in_ptr3 + x0, None, eviction_policy='evict_last')
    tmp2 = -tmp1
    tmp5 = tl.full([1], 1e-05, tl.float32)
    tmp6 = tmp4 + tmp5
    tmp7 = libdevice.rsqrt(tmp6)
    tmp8 = tmp3 * tmp7
    tmp9 = tmp2 * tmp8
    tmp11 = tmp9 + tmp10
    tmp12 = tmp0 + tmp11
    tmp13 = tl.full([1], 0.0, tl.float32)
    tmp14 = tl.maximum(tmp12, tmp13, propagate_nan=tl.PropagateNan.ALL)
    tmp15 = tl.full([1], 6.0, tl.float32)
    tmp16 = tl.minimum(tmp14, tmp15, propagate_nan=tl.PropagateNan.ALL)
    tl.store(in_out_ptr0 + x2, tmp16, None)


# ---- Triton kernel triton_poi_fused_add_mul_rsqrt_view_3 <- aten.add, aten.rsqrt, aten.mul, aten.view
@triton.jit
def triton_poi_fused_add_mul_rsqrt_view_3(in_ptr0, in_ptr1, in_ptr2, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 192
    xnumel = 9
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = yindex < ynumel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x1 = xindex
    y0 = yindex
    tmp0 = tl.load(in_ptr0 + (x1 + 9 * y0), xmask & ymask, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + y0, ymask, eviction_policy='evict_last')
    tmp2 = tl.load(in_ptr2 + y0, ymask, eviction_policy='evict_last')
    tmp3 = tl.full([1, 1], 1e-05, tl.float32)
    tmp4 = tmp2 + tmp3
    tmp5 = libdevice.rsqrt(tmp4)
    tmp6 = tmp1 * tmp5
    tmp7 = tmp0 * tmp6
    tl.store(out_ptr0 + (x1 + 9 * y0), tmp7, xmask & ymask)


# ---- Triton kernel triton_poi_fused_add_mul_rsqrt_view_4 <- aten.add, aten.rsqrt, aten.mul, aten.view
@triton.jit
def triton_poi_fused_add_mul_rsqrt_view_4(in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 6144
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x2 = xindex
    x1 = xindex // 192
    tmp0 = tl.load(in_ptr0 + x2, xmask)
    tmp1 = tl.load(in_ptr1 + x1, xmask, eviction_policy='evict_last')
    tmp2 = tl.load(in_ptr2 + x1, xmask, eviction_policy='evict_last')
    tmp3 = tl.full([1], 1e-05, tl.float32)
    tmp4 = tmp2 + tmp3
    tmp5 = libdevice.rsqrt(tmp4)
    tmp6 = tmp1 * tmp5
    tmp7 = tmp0 * tmp6
    tl.store(out_ptr0 + x2, tmp7, xmask)


# ---- Triton kernel triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_5 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.neg, aten.convolution, aten.hardtanh
@triton.jit
def triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_5(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
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
    tmp5 = tl.load(in_ptr3 + x2, xmask, eviction_policy='evict_last')
    tmp11 = tl.load(in_ptr4 + x2, xmask, eviction_policy='evict_last')
    tmp3 = -tmp2
    tmp6 = tl.full([1, 1], 1e-05, tl.float32)
    tmp7 = tmp5 + tmp6
    tmp8 = libdevice.rsqrt(tmp7)
    tmp9 = tmp4 * tmp8
    tmp10 = tmp3 * tmp9
    tmp12 = tmp10 + tmp11
    tmp13 = tmp1 + tmp12
    tmp14 = tmp0 + tmp13
    tl.debug_barrier()
    tl.store(in_out_ptr0 + (x2 + 32 * y3), tmp14, xmask & ymask)


# ---- Triton kernel triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_6 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.neg, aten.convolution, aten.hardtanh
@triton.jit
def triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_6(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, in_ptr5, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
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
    tmp5 = tl.load(in_ptr4 + x2, xmask, eviction_policy='evict_last')
    tmp11 = tl.load(in_ptr5 + x2, xmask, eviction_policy='evict_last')
    tmp3 = -tmp2
    tmp6 = tl.full([1, 1], 1e-05, tl.float32)
    tmp7 = tmp5 + tmp6
    tmp8 = libdevice.rsqrt(tmp7)
    tmp9 = tmp4 * tmp8
    tmp10 = tmp3 * tmp9
    tmp12 = tmp10 + tmp11
    tmp13 = tmp1 + tmp12
    tmp14 = tmp0 + tmp13
    tl.store(out_ptr0 + (y0 + 3136 * x2 + 100352 * y1), tmp14, xmask & ymask)


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
    _device = arg5_1.device
    buf0 = torch.empty_strided((192, 32, 1, 1), (32, 1, 1, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_mul_rsqrt_view_0 <- aten.add, aten.rsqrt, aten.mul, aten.view
    triton_poi_fused_add_mul_rsqrt_view_0[lambda meta: (triton.cdiv(32, meta['XBLOCK']), triton.cdiv(192, meta['YBLOCK']))](arg0_1, arg3_1, arg1_1, buf0, 192, 32, **LAUNCH_CONFIGS['triton_poi_fused_add_mul_rsqrt_view_0'])
    del arg0_1
    buf1 = torch.empty_strided((32, 32, 56, 56), (100352, 1, 1792, 32), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_convolution_mul_neg_rsqrt_view_1 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.neg, aten.convolution
    triton_poi_fused_add_convolution_mul_neg_rsqrt_view_1[lambda meta: (triton.cdiv(32, meta['XBLOCK']), triton.cdiv(triton.cdiv(100352, meta['YBLOCK']), triton.cdiv(triton.cdiv(100352, meta['YBLOCK']), 65535)), triton.cdiv(triton.cdiv(100352, meta['YBLOCK']), 65535))](arg5_1, buf1, 100352, 32, **LAUNCH_CONFIGS['triton_poi_fused_add_convolution_mul_neg_rsqrt_view_1'])
    # vendor call (kept): aten.convolution via cuDNN <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.neg, aten.convolution
    buf2 = torch.convolution(buf1, buf0, stride=(1, 1), padding=(0, 0), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del buf1
    buf3 = buf2
    del buf2
    # Triton kernel triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_2 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.neg, aten.convolution, aten.hardtanh
    triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_2[lambda meta: (triton.cdiv(19267584, meta['XBLOCK']),)](buf3, arg2_1, arg3_1, arg1_1, arg4_1, 19267584, **LAUNCH_CONFIGS['triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_2'])
    del arg1_1
    del arg2_1
    del arg3_1
    del arg4_1
    buf4 = torch.empty_strided((192, 1, 3, 3), (9, 9, 3, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_mul_rsqrt_view_3 <- aten.add, aten.rsqrt, aten.mul, aten.view
    triton_poi_fused_add_mul_rsqrt_view_3[lambda meta: (triton.cdiv(9, meta['XBLOCK']), triton.cdiv(192, meta['YBLOCK']))](arg6_1, arg9_1, arg7_1, buf4, 192, 9, **LAUNCH_CONFIGS['triton_poi_fused_add_mul_rsqrt_view_3'])
    del arg6_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.neg, aten.convolution, aten.hardtanh
    buf5 = torch.convolution(buf3, buf4, stride=(1, 1), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=192, bias=None)
    del buf3
    buf6 = buf5
    del buf5
    # Triton kernel triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_2 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.neg, aten.convolution, aten.hardtanh
    triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_2[lambda meta: (triton.cdiv(19267584, meta['XBLOCK']),)](buf6, arg8_1, arg9_1, arg7_1, arg10_1, 19267584, **LAUNCH_CONFIGS['triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_2'])
    del arg10_1
    del arg7_1
    del arg8_1
    del arg9_1
    buf7 = reinterpret_tensor(buf0, (32, 192, 1, 1), (192, 1, 1, 1), 0)
    del buf0
    # Triton kernel triton_poi_fused_add_mul_rsqrt_view_4 <- aten.add, aten.rsqrt, aten.mul, aten.view
    triton_poi_fused_add_mul_rsqrt_view_4[lambda meta: (triton.cdiv(6144, meta['XBLOCK']),)](arg11_1, arg14_1, arg12_1, buf7, 6144, **LAUNCH_CONFIGS['triton_poi_fused_add_mul_rsqrt_view_4'])
    del arg11_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.neg, aten.convolution, aten.hardtanh
    buf8 = torch.convolution(buf6, buf7, stride=(1, 1), padding=(0, 0), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del buf6
    buf9 = buf8
    del buf8
    # Triton kernel triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_5 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.neg, aten.convolution, aten.hardtanh
    triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_5[lambda meta: (triton.cdiv(32, meta['XBLOCK']), triton.cdiv(triton.cdiv(100352, meta['YBLOCK']), triton.cdiv(triton.cdiv(100352, meta['YBLOCK']), 65535)), triton.cdiv(triton.cdiv(100352, meta['YBLOCK']), 65535))](buf9, arg5_1, arg13_1, arg14_1, arg12_1, arg15_1, 100352, 32, **LAUNCH_CONFIGS['triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_5'])
    del arg12_1
    del arg13_1
    del arg14_1
    del arg15_1
    del arg5_1
    buf10 = reinterpret_tensor(buf7, (192, 32, 1, 1), (32, 1, 1, 1), 0)
    del buf7
    # Triton kernel triton_poi_fused_add_mul_rsqrt_view_0 <- aten.add, aten.rsqrt, aten.mul, aten.view
    triton_poi_fused_add_mul_rsqrt_view_0[lambda meta: (triton.cdiv(32, meta['XBLOCK']), triton.cdiv(192, meta['YBLOCK']))](arg16_1, arg19_1, arg17_1, buf10, 192, 32, **LAUNCH_CONFIGS['triton_poi_fused_add_mul_rsqrt_view_0'])
    del arg16_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.neg, aten.convolution
    buf11 = torch.convolution(buf9, buf10, stride=(1, 1), padding=(0, 0), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del buf10
    buf12 = buf11
    del buf11
    # Triton kernel triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_2 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.neg, aten.convolution, aten.hardtanh
    triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_2[lambda meta: (triton.cdiv(19267584, meta['XBLOCK']),)](buf12, arg18_1, arg19_1, arg17_1, arg20_1, 19267584, **LAUNCH_CONFIGS['triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_2'])
    del arg17_1
    del arg18_1
    del arg19_1
    del arg20_1
    buf13 = buf4
    del buf4
    # Triton kernel triton_poi_fused_add_mul_rsqrt_view_3 <- aten.add, aten.rsqrt, aten.mul, aten.view
    triton_poi_fused_add_mul_rsqrt_view_3[lambda meta: (triton.cdiv(9, meta['XBLOCK']), triton.cdiv(192, meta['YBLOCK']))](arg21_1, arg24_1, arg22_1, buf13, 192, 9, **LAUNCH_CONFIGS['triton_poi_fused_add_mul_rsqrt_view_3'])
    del arg21_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.neg, aten.convolution, aten.hardtanh
    buf14 = torch.convolution(buf12, buf13, stride=(1, 1), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=192, bias=None)
    del buf12
    del buf13
    buf15 = buf14
    del buf14
    # Triton kernel triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_2 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.neg, aten.convolution, aten.hardtanh
    triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_2[lambda meta: (triton.cdiv(19267584, meta['XBLOCK']),)](buf15, arg23_1, arg24_1, arg22_1, arg25_1, 19267584, **LAUNCH_CONFIGS['triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_2'])
    del arg22_1
    del arg23_1
    del arg24_1
    del arg25_1
    buf16 = torch.empty_strided((32, 192, 1, 1), (192, 1, 1, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_mul_rsqrt_view_4 <- aten.add, aten.rsqrt, aten.mul, aten.view
    triton_poi_fused_add_mul_rsqrt_view_4[lambda meta: (triton.cdiv(6144, meta['XBLOCK']),)](arg26_1, arg29_1, arg27_1, buf16, 6144, **LAUNCH_CONFIGS['triton_poi_fused_add_mul_rsqrt_view_4'])
    del arg26_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.neg, aten.convolution, aten.hardtanh
    buf17 = torch.convolution(buf15, buf16, stride=(1, 1), padding=(0, 0), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del buf15
    del buf16
    buf18 = torch.empty_strided((32, 32, 56, 56), (100352, 3136, 56, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_6 <- aten.add, aten.rsqrt, aten.mul, aten.view, aten.neg, aten.convolution, aten.hardtanh
    triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_6[lambda meta: (triton.cdiv(32, meta['XBLOCK']), triton.cdiv(triton.cdiv(100352, meta['YBLOCK']), triton.cdiv(triton.cdiv(100352, meta['YBLOCK']), 65535)), triton.cdiv(triton.cdiv(100352, meta['YBLOCK']), 65535))](buf9, buf17, arg28_1, arg29_1, arg27_1, arg30_1, buf18, 100352, 32, **LAUNCH_CONFIGS['triton_poi_fused_add_convolution_hardtanh_mul_neg_rsqrt_view_6'])
    del arg27_1
    del arg28_1
    del arg29_1
    del arg30_1
    del buf17
    del buf9
    return (buf18,)


class ModelNew(nn.Module):
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
            outs = _harvested_forward([self.get_parameter('blocks.0.expand.weight'), self.get_buffer('blocks.0.bn1.running_var'), self.get_buffer('blocks.0.bn1.running_mean'), self.get_parameter('blocks.0.bn1.weight'), self.get_parameter('blocks.0.bn1.bias'), x, self.get_parameter('blocks.0.dw.weight'), self.get_buffer('blocks.0.bn2.running_var'), self.get_buffer('blocks.0.bn2.running_mean'), self.get_parameter('blocks.0.bn2.weight'), self.get_parameter('blocks.0.bn2.bias'), self.get_parameter('blocks.0.project.weight'), self.get_buffer('blocks.0.bn3.running_var'), self.get_buffer('blocks.0.bn3.running_mean'), self.get_parameter('blocks.0.bn3.weight'), self.get_parameter('blocks.0.bn3.bias'), self.get_parameter('blocks.1.expand.weight'), self.get_buffer('blocks.1.bn1.running_var'), self.get_buffer('blocks.1.bn1.running_mean'), self.get_parameter('blocks.1.bn1.weight'), self.get_parameter('blocks.1.bn1.bias'), self.get_parameter('blocks.1.dw.weight'), self.get_buffer('blocks.1.bn2.running_var'), self.get_buffer('blocks.1.bn2.running_mean'), self.get_parameter('blocks.1.bn2.weight'), self.get_parameter('blocks.1.bn2.bias'), self.get_parameter('blocks.1.project.weight'), self.get_buffer('blocks.1.bn3.running_var'), self.get_buffer('blocks.1.bn3.running_mean'), self.get_parameter('blocks.1.bn3.weight'), self.get_parameter('blocks.1.bn3.bias')])
        return outs[0]
