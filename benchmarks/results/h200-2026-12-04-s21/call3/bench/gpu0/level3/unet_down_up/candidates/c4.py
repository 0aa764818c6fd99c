"""Harvested from torch.compile (Inductor) for problem 'unet_down_up'.

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
    'triton_poi_fused_convolution_1': {'YBLOCK': 64, 'XBLOCK': 16, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_convolution_relu_2': {'YBLOCK': 64, 'XBLOCK': 64, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused_convolution_max_pool2d_with_indices_relu_3': {'YBLOCK': 32, 'XBLOCK': 32, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_convolution_max_pool2d_with_indices_relu_4': {'YBLOCK': 64, 'XBLOCK': 16, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_convolution_max_pool2d_with_indices_relu_5': {'XBLOCK': 1024, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_convolution_max_pool2d_with_indices_relu_6': {'YBLOCK': 256, 'XBLOCK': 4, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_convolution_max_pool2d_with_indices_relu_7': {'YBLOCK': 64, 'XBLOCK': 64, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused_convolution_8': {'YBLOCK': 32, 'XBLOCK': 32, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_convolution_9': {'YBLOCK': 64, 'XBLOCK': 16, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_convolution_relu_10': {'XBLOCK': 1024, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_convolution_relu_11': {'XBLOCK': 1024, 'num_warps': 4, 'num_stages': 1},
}


# ---- Triton kernel triton_poi_fused_convolution_0 <- aten.convolution
@triton.jit
def triton_poi_fused_convolution_0(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 48
    xnumel = 65536
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
    tmp0 = tl.load(in_ptr0 + (x2 + 65536 * y3), ymask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 3 * x2 + 196608 * y1), tmp0, ymask)


# ---- Triton kernel triton_poi_fused_convolution_1 <- aten.convolution
@triton.jit
def triton_poi_fused_convolution_1(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
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
    y0 = yindex % 3
    y1 = yindex // 3
    tmp0 = tl.load(in_ptr0 + (x2 + 9 * y3), xmask & ymask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 3 * x2 + 27 * y1), tmp0, xmask & ymask)


# ---- Triton kernel triton_poi_fused_convolution_relu_2 <- aten.convolution, aten.relu
@triton.jit
def triton_poi_fused_convolution_relu_2(in_ptr0, in_ptr1, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 1024
    xnumel = 65536
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = tl.full([XBLOCK], True, tl.int1)[None, :]
    x2 = xindex
    y0 = yindex % 64
    y1 = yindex // 64
    tmp0 = tl.load(in_ptr0 + (y0 + 64 * x2 + 4194304 * y1), None, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + y0, None, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tmp3 = tl.full([1, 1], 0, tl.int32)
    tmp4 = tl.maximum(tmp3, tmp2, propagate_nan=tl.PropagateNan.ALL)
    tl.store(out_ptr0 + (x2 + 65536 * y0 + 8388608 * y1), tmp4, None)


# ---- Triton kernel triton_poi_fused_convolution_max_pool2d_with_indices_relu_3 <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
@triton.jit
def triton_poi_fused_convolution_max_pool2d_with_indices_relu_3(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 1024
    xnumel = 16384
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = tl.full([XBLOCK], True, tl.int1)[None, :]
    x2 = xindex % 128
    x3 = xindex // 128
    y0 = yindex % 64
    y1 = yindex // 64
    x4 = xindex
    tmp0 = tl.load(in_ptr0 + (2 * x2 + 512 * x3 + 65536 * y0 + 8388608 * y1), None, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr0 + (1 + 2 * x2 + 512 * x3 + 65536 * y0 + 8388608 * y1), None, eviction_policy='evict_last')
    tmp3 = tl.load(in_ptr0 + (256 + 2 * x2 + 512 * x3 + 65536 * y0 + 8388608 * y1), None, eviction_policy='evict_last')
    tmp5 = tl.load(in_ptr0 + (257 + 2 * x2 + 512 * x3 + 65536 * y0 + 8388608 * y1), None, eviction_policy='evict_last')
    tmp2 = tl.maximum(tmp0, tmp1, propagate_nan=tl.PropagateNan.ALL)
    tmp4 = tl.maximum(tmp2, tmp3, propagate_nan=tl.PropagateNan.ALL)
    tmp6 = tl.maximum(tmp4, tmp5, propagate_nan=tl.PropagateNan.ALL)
    tl.store(out_ptr0 + (y0 + 64 * x4 + 1048576 * y1), tmp6, None)


# ---- Triton kernel triton_poi_fused_convolution_max_pool2d_with_indices_relu_4 <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
@triton.jit
def triton_poi_fused_convolution_max_pool2d_with_indices_relu_4(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
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


# ---- Triton kernel triton_poi_fused_convolution_max_pool2d_with_indices_relu_5 <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
@triton.jit
def triton_poi_fused_convolution_max_pool2d_with_indices_relu_5(in_out_ptr0, in_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 33554432
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x2 = xindex
    x0 = xindex % 128
    tmp0 = tl.load(in_out_ptr0 + x2, None)
    tmp1 = tl.load(in_ptr0 + x0, None, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tmp3 = tl.full([1], 0, tl.int32)
    tmp4 = tl.maximum(tmp3, tmp2, propagate_nan=tl.PropagateNan.ALL)
    tl.store(in_out_ptr0 + x2, tmp4, None)


# ---- Triton kernel triton_poi_fused_convolution_max_pool2d_with_indices_relu_6 <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
@triton.jit
def triton_poi_fused_convolution_max_pool2d_with_indices_relu_6(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 8192
    xnumel = 4
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
    tmp0 = tl.load(in_ptr0 + (x2 + 4 * y3), xmask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 64 * x2 + 256 * y1), tmp0, xmask)


# ---- Triton kernel triton_poi_fused_convolution_max_pool2d_with_indices_relu_7 <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
@triton.jit
def triton_poi_fused_convolution_max_pool2d_with_indices_relu_7(in_ptr0, in_ptr1, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 1024
    xnumel = 65536
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = tl.full([XBLOCK], True, tl.int1)[None, :]
    x2 = xindex
    y0 = yindex % 64
    y1 = yindex // 64
    tmp0 = tl.load(in_ptr0 + (y0 + 64 * x2 + 4194304 * y1), None, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + y0, None, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tl.store(out_ptr0 + (x2 + 65536 * y0 + 8388608 * y1), tmp2, None)


# ---- Triton kernel triton_poi_fused_convolution_8 <- aten.convolution
@triton.jit
def triton_poi_fused_convolution_8(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 2048
    xnumel = 65536
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = tl.full([XBLOCK], True, tl.int1)[None, :]
    x2 = xindex
    y3 = yindex
    y0 = yindex % 128
    y1 = yindex // 128
    tmp0 = tl.load(in_ptr0 + (x2 + 65536 * y3), None, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 128 * x2 + 8388608 * y1), tmp0, None)


# ---- Triton kernel triton_poi_fused_convolution_9 <- aten.convolution
@triton.jit
def triton_poi_fused_convolution_9(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
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
    y0 = yindex % 128
    y1 = yindex // 128
    tmp0 = tl.load(in_ptr0 + (x2 + 9 * y3), xmask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 128 * x2 + 1152 * y1), tmp0, xmask)


# ---- Triton kernel triton_poi_fused_convolution_relu_10 <- aten.convolution, aten.relu
@triton.jit
def triton_poi_fused_convolution_relu_10(in_out_ptr0, in_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 67108864
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x2 = xindex
    x0 = xindex % 64
    tmp0 = tl.load(in_out_ptr0 + x2, None)
    tmp1 = tl.load(in_ptr0 + x0, None, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tmp3 = tl.full([1], 0, tl.int32)
    tmp4 = tl.maximum(tmp3, tmp2, propagate_nan=tl.PropagateNan.ALL)
    tl.store(in_out_ptr0 + x2, tmp4, None)


# ---- Triton kernel triton_poi_fused_convolution_relu_11 <- aten.convolution, aten.relu
@triton.jit
def triton_poi_fused_convolution_relu_11(in_out_ptr0, in_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 1048576
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex
    tmp0 = tl.load(in_out_ptr0 + x0, None)
    tmp1 = tl.load(in_ptr0 + 0)
    tmp2 = tl.broadcast_to(tmp1, [XBLOCK])
    tmp3 = tmp0 + tmp2
    tl.store(in_out_ptr0 + x0, tmp3, None)


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
    _device = arg2_1.device
    buf0 = torch.empty_strided((16, 3, 256, 256), (196608, 1, 768, 3), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_0 <- aten.convolution
    triton_poi_fused_convolution_0[lambda meta: (triton.cdiv(65536, meta['XBLOCK']), triton.cdiv(48, meta['YBLOCK']))](arg2_1, buf0, 48, 65536, **LAUNCH_CONFIGS['triton_poi_fused_convolution_0'])
    del arg2_1
    buf1 = torch.empty_strided((64, 3, 3, 3), (27, 1, 9, 3), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_1 <- aten.convolution
    triton_poi_fused_convolution_1[lambda meta: (triton.cdiv(9, meta['XBLOCK']), triton.cdiv(192, meta['YBLOCK']))](arg0_1, buf1, 192, 9, **LAUNCH_CONFIGS['triton_poi_fused_convolution_1'])
    del arg0_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution
    buf2 = torch.convolution(buf0, buf1, stride=(1, 1), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del buf0
    del buf1
    buf11 = torch.empty_strided((16, 128, 256, 256), (8388608, 65536, 256, 1), dtype=torch.float32, device=_device)
    buf3 = reinterpret_tensor(buf11, (16, 64, 256, 256), (8388608, 65536, 256, 1), 4194304)
    # Triton kernel triton_poi_fused_convolution_relu_2 <- aten.convolution, aten.relu
    triton_poi_fused_convolution_relu_2[lambda meta: (triton.cdiv(65536, meta['XBLOCK']), triton.cdiv(1024, meta['YBLOCK']))](buf2, arg1_1, buf3, 1024, 65536, **LAUNCH_CONFIGS['triton_poi_fused_convolution_relu_2'])
    del arg1_1
    del buf2
    buf4 = torch.empty_strided((16, 64, 128, 128), (1048576, 1, 8192, 64), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_max_pool2d_with_indices_relu_3 <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
    triton_poi_fused_convolution_max_pool2d_with_indices_relu_3[lambda meta: (triton.cdiv(16384, meta['XBLOCK']), triton.cdiv(1024, meta['YBLOCK']))](buf3, buf4, 1024, 16384, **LAUNCH_CONFIGS['triton_poi_fused_convolution_max_pool2d_with_indices_relu_3'])
    buf5 = torch.empty_strided((128, 64, 3, 3), (576, 1, 192, 64), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_max_pool2d_with_indices_relu_4 <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
    triton_poi_fused_convolution_max_pool2d_with_indices_relu_4[lambda meta: (triton.cdiv(9, meta['XBLOCK']), triton.cdiv(8192, meta['YBLOCK']))](arg3_1, buf5, 8192, 9, **LAUNCH_CONFIGS['triton_poi_fused_convolution_max_pool2d_with_indices_relu_4'])
    del arg3_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
    buf6 = torch.convolution(buf4, buf5, stride=(1, 1), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del buf4
    del buf5
    buf7 = buf6
    del buf6
    # Triton kernel triton_poi_fused_convolution_max_pool2d_with_indices_relu_5 <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
    triton_poi_fused_convolution_max_pool2d_with_indices_relu_5[lambda meta: (triton.cdiv(33554432, meta['XBLOCK']),)](buf7, arg4_1, 33554432, **LAUNCH_CONFIGS['triton_poi_fused_convolution_max_pool2d_with_indices_relu_5'])
    del arg4_1
    buf8 = torch.empty_strided((128, 64, 2, 2), (256, 1, 128, 64), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_max_pool2d_with_indices_relu_6 <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
    triton_poi_fused_convolution_max_pool2d_with_indices_relu_6[lambda meta: (triton.cdiv(4, meta['XBLOCK']), triton.cdiv(8192, meta['YBLOCK']))](arg5_1, buf8, 8192, 4, **LAUNCH_CONFIGS['triton_poi_fused_convolution_max_pool2d_with_indices_relu_6'])
    del arg5_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
    buf9 = torch.convolution(buf7, buf8, stride=(2, 2), padding=(0, 0), dilation=(1, 1), transposed=True, output_padding=(0, 0), groups=1, bias=None)
    del buf7
    del buf8
    buf10 = reinterpret_tensor(buf11, (16, 64, 256, 256), (8388608, 65536, 256, 1), 0)
    # Triton kernel triton_poi_fused_convolution_max_pool2d_with_indices_relu_7 <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
    triton_poi_fused_convolution_max_pool2d_with_indices_relu_7[lambda meta: (triton.cdiv(65536, meta['XBLOCK']), triton.cdiv(1024, meta['YBLOCK']))](buf9, arg6_1, buf10, 1024, 65536, **LAUNCH_CONFIGS['triton_poi_fused_convolution_max_pool2d_with_indices_relu_7'])
    del arg6_1
    del buf9
    buf12 = torch.empty_strided((16, 128, 256, 256), (8388608, 1, 32768, 128), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_8 <- aten.convolution
    triton_poi_fused_convolution_8[lambda meta: (triton.cdiv(65536, meta['XBLOCK']), triton.cdiv(2048, meta['YBLOCK']))](buf11, buf12, 2048, 65536, **LAUNCH_CONFIGS['triton_poi_fused_convolution_8'])
    del buf10
    del buf11
    del buf3
    buf13 = torch.empty_strided((64, 128, 3, 3), (1152, 1, 384, 128), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_9 <- aten.convolution
    triton_poi_fused_convolution_9[lambda meta: (triton.cdiv(9, meta['XBLOCK']), triton.cdiv(8192, meta['YBLOCK']))](arg7_1, buf13, 8192, 9, **LAUNCH_CONFIGS['triton_poi_fused_convolution_9'])
    del arg7_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution
    buf14 = torch.convolution(buf12, buf13, stride=(1, 1), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del buf12
    del buf13
    buf15 = buf14
    del buf14
    # Triton kernel triton_poi_fused_convolution_relu_10 <- aten.convolution, aten.relu
    triton_poi_fused_convolution_relu_10[lambda meta: (triton.cdiv(67108864, meta['XBLOCK']),)](buf15, arg8_1, 67108864, **LAUNCH_CONFIGS['triton_poi_fused_convolution_relu_10'])
    del arg8_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution, aten.relu
    buf16 = torch.convolution(buf15, arg9_1, stride=(1, 1), padding=(0, 0), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del arg9_1
    del buf15
    buf17 = reinterpret_tensor(buf16, (16, 1, 256, 256), (65536, 65536, 256, 1), 0)
    del buf16
    # Triton kernel triton_poi_fused_convolution_relu_11 <- aten.convolution, aten.relu
    triton_poi_fused_convolution_relu_11[lambda meta: (triton.cdiv(1048576, meta['XBLOCK']),)](buf17, arg10_1, 1048576, **LAUNCH_CONFIGS['triton_poi_fused_convolution_relu_11'])
    del arg10_1
    return (buf17,)


class _ModelNewEager(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'enc.0.weight', (64, 3, 3, 3), torch.float32, True)
        _declare(self, 'enc.0.bias', (64,), torch.float32, True)
        _declare(self, 'mid.0.weight', (128, 64, 3, 3), torch.float32, True)
        _declare(self, 'mid.0.bias', (128,), torch.float32, True)
        _declare(self, 'up.weight', (128, 64, 2, 2), torch.float32, True)
        _declare(self, 'up.bias', (64,), torch.float32, True)
        _declare(self, 'dec.0.weight', (64, 128, 3, 3), torch.float32, True)
        _declare(self, 'dec.0.bias', (64,), torch.float32, True)
        _declare(self, 'head.weight', (1, 64, 1, 1), torch.float32, True)
        _declare(self, 'head.bias', (1,), torch.float32, True)

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([self.get_parameter('enc.0.weight'), self.get_parameter('enc.0.bias'), x, self.get_parameter('mid.0.weight'), self.get_parameter('mid.0.bias'), self.up.weight, self.up.bias, self.get_parameter('dec.0.weight'), self.get_parameter('dec.0.bias'), self.head.weight, self.head.bias])
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
