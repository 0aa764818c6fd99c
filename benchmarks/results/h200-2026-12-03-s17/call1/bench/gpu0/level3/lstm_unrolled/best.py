# KernelOPT candidate c3 (agent: tuner; plan: c0.p1; kernel)
# Mode: as constructed (the reference's own mode, as KernelBench runs it)
# Gates: static=pass, correctness=pass, fp64=pass, performance=pass
# Timing: 4.4636 ms; 1.09x eager; 0.00x torch.compile
# source key 3c029bd511e3d9d5
"""Harvested from torch.compile (Inductor) for problem 'lstm_unrolled'.

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
    'triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_0': {'XBLOCK': 512, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1': {'XBLOCK': 256, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_2': {'XBLOCK': 1024, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_add_addmm_mul_sigmoid_split_stack_tanh_3': {'XBLOCK': 1024, 'num_warps': 4, 'num_stages': 1},
}


# ---- Triton kernel triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_0 <- aten.addmm, aten.add, aten.split, aten.sigmoid, aten.mul, aten.tanh
@triton.jit
def triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_0(in_ptr0, in_ptr1, in_ptr2, in_ptr3, out_ptr0, out_ptr1, xnumel, XBLOCK: tl.constexpr):
    xnumel = 1048576
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex % 2048
    x1 = xindex // 2048
    x2 = xindex
    tmp0 = tl.load(in_ptr0 + (2048 + x0), None, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + (2048 + x0 + 8192 * x1), None)
    tmp3 = tl.load(in_ptr2 + (2048 + x0 + 8192 * x1), None)
    tmp6 = tl.load(in_ptr3 + x2, None)
    tmp8 = tl.load(in_ptr0 + x0, None, eviction_policy='evict_last')
    tmp9 = tl.load(in_ptr1 + (x0 + 8192 * x1), None)
    tmp11 = tl.load(in_ptr2 + (x0 + 8192 * x1), None)
    tmp14 = tl.load(in_ptr0 + (4096 + x0), None, eviction_policy='evict_last')
    tmp15 = tl.load(in_ptr1 + (4096 + x0 + 8192 * x1), None)
    tmp17 = tl.load(in_ptr2 + (4096 + x0 + 8192 * x1), None)
    tmp22 = tl.load(in_ptr0 + (6144 + x0), None, eviction_policy='evict_last')
    tmp23 = tl.load(in_ptr1 + (6144 + x0 + 8192 * x1), None)
    tmp25 = tl.load(in_ptr2 + (6144 + x0 + 8192 * x1), None)
    tmp2 = tmp0 + tmp1
    tmp4 = tmp2 + tmp3
    tmp5 = tl.sigmoid(tmp4)
    tmp7 = tmp5 * tmp6
    tmp10 = tmp8 + tmp9
    tmp12 = tmp10 + tmp11
    tmp13 = tl.sigmoid(tmp12)
    tmp16 = tmp14 + tmp15
    tmp18 = tmp16 + tmp17
    tmp19 = libdevice.tanh(tmp18)
    tmp20 = tmp13 * tmp19
    tmp21 = tmp7 + tmp20
    tmp24 = tmp22 + tmp23
    tmp26 = tmp24 + tmp25
    tmp27 = tl.sigmoid(tmp26)
    tmp28 = libdevice.tanh(tmp21)
    tmp29 = tmp27 * tmp28
    tl.store(out_ptr0 + x2, tmp21, None)
    tl.store(out_ptr1 + x2, tmp29, None)


# ---- Triton kernel triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1 <- aten.addmm, aten.add, aten.split, aten.sigmoid, aten.mul, aten.tanh
@triton.jit
def triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 1048576
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex % 2048
    x1 = xindex // 2048
    x2 = xindex
    tmp0 = tl.load(in_ptr0 + (2048 + x0), None, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + (2048 + x0 + 8192 * x1), None)
    tmp3 = tl.load(in_ptr2 + (2048 + x0 + 8192 * x1), None)
    tmp6 = tl.load(in_out_ptr0 + x2, None)
    tmp8 = tl.load(in_ptr0 + x0, None, eviction_policy='evict_last')
    tmp9 = tl.load(in_ptr1 + (x0 + 8192 * x1), None)
    tmp11 = tl.load(in_ptr2 + (x0 + 8192 * x1), None)
    tmp14 = tl.load(in_ptr0 + (4096 + x0), None, eviction_policy='evict_last')
    tmp15 = tl.load(in_ptr1 + (4096 + x0 + 8192 * x1), None)
    tmp17 = tl.load(in_ptr2 + (4096 + x0 + 8192 * x1), None)
    tmp22 = tl.load(in_ptr0 + (6144 + x0), None, eviction_policy='evict_last')
    tmp23 = tl.load(in_ptr1 + (6144 + x0 + 8192 * x1), None)
    tmp25 = tl.load(in_ptr2 + (6144 + x0 + 8192 * x1), None)
    tmp2 = tmp0 + tmp1
    tmp4 = tmp2 + tmp3
    tmp5 = tl.sigmoid(tmp4)
    tmp7 = tmp5 * tmp6
    tmp10 = tmp8 + tmp9
    tmp12 = tmp10 + tmp11
    tmp13 = tl.sigmoid(tmp12)
    tmp16 = tmp14 + tmp15
    tmp18 = tmp16 + tmp17
    tmp19 = libdevice.tanh(tmp18)
    tmp20 = tmp13 * tmp19
    tmp21 = tmp7 + tmp20
    tmp24 = tmp22 + tmp23
    tmp26 = tmp24 + tmp25
    tmp27 = tl.sigmoid(tmp26)
    tmp28 = libdevice.tanh(tmp21)
    tmp29 = tmp27 * tmp28
    tl.store(in_out_ptr0 + x2, tmp21, None)
    tl.store(out_ptr0 + x2, tmp29, None)


# ---- Triton kernel triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_2 <- aten.addmm, aten.add, aten.split, aten.sigmoid, aten.mul, aten.tanh
@triton.jit
def triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_2(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, xnumel, XBLOCK: tl.constexpr):
    xnumel = 1048576
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex % 2048
    x1 = xindex // 2048
    x2 = xindex
    tmp0 = tl.load(in_ptr0 + (2048 + x0), None, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + (2048 + x0 + 8192 * x1), None)
    tmp3 = tl.load(in_ptr2 + (2048 + x0 + 8192 * x1), None)
    tmp6 = tl.load(in_out_ptr0 + x2, None)
    tmp8 = tl.load(in_ptr0 + x0, None, eviction_policy='evict_last')
    tmp9 = tl.load(in_ptr1 + (x0 + 8192 * x1), None)
    tmp11 = tl.load(in_ptr2 + (x0 + 8192 * x1), None)
    tmp14 = tl.load(in_ptr0 + (4096 + x0), None, eviction_policy='evict_last')
    tmp15 = tl.load(in_ptr1 + (4096 + x0 + 8192 * x1), None)
    tmp17 = tl.load(in_ptr2 + (4096 + x0 + 8192 * x1), None)
    tmp2 = tmp0 + tmp1
    tmp4 = tmp2 + tmp3
    tmp5 = tl.sigmoid(tmp4)
    tmp7 = tmp5 * tmp6
    tmp10 = tmp8 + tmp9
    tmp12 = tmp10 + tmp11
    tmp13 = tl.sigmoid(tmp12)
    tmp16 = tmp14 + tmp15
    tmp18 = tmp16 + tmp17
    tmp19 = libdevice.tanh(tmp18)
    tmp20 = tmp13 * tmp19
    tmp21 = tmp7 + tmp20
    tl.store(in_out_ptr0 + x2, tmp21, None)


# ---- Triton kernel triton_poi_fused_add_addmm_mul_sigmoid_split_stack_tanh_3 <- aten.addmm, aten.add, aten.split, aten.sigmoid, aten.tanh, aten.mul, aten.stack
@triton.jit
def triton_poi_fused_add_addmm_mul_sigmoid_split_stack_tanh_3(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, in_ptr5, in_ptr6, in_ptr7, in_ptr8, in_ptr9, in_ptr10, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 8388608
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex % 16384
    x1 = xindex // 16384
    x2 = xindex
    tmp0 = x0
    tmp1 = tl.full([1], 0, tl.int64)
    tmp2 = tmp0 >= tmp1
    tmp3 = tl.full([1], 2048, tl.int64)
    tmp4 = tmp0 < tmp3
    tmp5 = tl.load(in_ptr0 + (2048 * x1 + x0), tmp4, eviction_policy='evict_last', other=0.0)
    tmp6 = tmp0 >= tmp3
    tmp7 = tl.full([1], 4096, tl.int64)
    tmp8 = tmp0 < tmp7
    tmp9 = tmp6 & tmp8
    tmp10 = tl.load(in_ptr1 + (2048 * x1 + (-2048 + x0)), tmp9, eviction_policy='evict_last', other=0.0)
    tmp11 = tmp0 >= tmp7
    tmp12 = tl.full([1], 6144, tl.int64)
    tmp13 = tmp0 < tmp12
    tmp14 = tmp11 & tmp13
    tmp15 = tl.load(in_ptr2 + (2048 * x1 + (-4096 + x0)), tmp14, eviction_policy='evict_last', other=0.0)
    tmp16 = tmp0 >= tmp12
    tmp17 = tl.full([1], 8192, tl.int64)
    tmp18 = tmp0 < tmp17
    tmp19 = tmp16 & tmp18
    tmp20 = tl.load(in_ptr3 + (2048 * x1 + (-6144 + x0)), tmp19, eviction_policy='evict_last', other=0.0)
    tmp21 = tmp0 >= tmp17
    tmp22 = tl.full([1], 10240, tl.int64)
    tmp23 = tmp0 < tmp22
    tmp24 = tmp21 & tmp23
    tmp25 = tl.load(in_ptr4 + (2048 * x1 + (-8192 + x0)), tmp24, eviction_policy='evict_last', other=0.0)
    tmp26 = tmp0 >= tmp22
    tmp27 = tl.full([1], 12288, tl.int64)
    tmp28 = tmp0 < tmp27
    tmp29 = tmp26 & tmp28
    tmp30 = tl.load(in_ptr5 + (2048 * x1 + (-10240 + x0)), tmp29, eviction_policy='evict_last', other=0.0)
    tmp31 = tmp0 >= tmp27
    tmp32 = tl.full([1], 14336, tl.int64)
    tmp33 = tmp0 < tmp32
    tmp34 = tmp31 & tmp33
    tmp35 = tl.load(in_ptr6 + (2048 * x1 + (-12288 + x0)), tmp34, eviction_policy='evict_last', other=0.0)
    tmp36 = tmp0 >= tmp32
    tmp37 = tl.full([1], 16384, tl.int64)
    tmp38 = tmp0 < tmp37
    tmp39 = tl.load(in_ptr7 + (6144 + (-14336 + x0)), tmp36, eviction_policy='evict_last', other=0.0)
    tmp40 = tl.load(in_ptr8 + (6144 + 8192 * x1 + (-14336 + x0)), tmp36, eviction_policy='evict_last', other=0.0)
    tmp41 = tmp39 + tmp40
    tmp42 = tl.load(in_ptr9 + (6144 + 8192 * x1 + (-14336 + x0)), tmp36, eviction_policy='evict_last', other=0.0)
    tmp43 = tmp41 + tmp42
    tmp44 = tl.sigmoid(tmp43)
    tmp45 = tl.load(in_ptr10 + (2048 * x1 + (-14336 + x0)), tmp36, eviction_policy='evict_last', other=0.0)
    tmp46 = libdevice.tanh(tmp45)
    tmp47 = tmp44 * tmp46
    tmp48 = tl.full(tmp47.shape, 0.0, tmp47.dtype)
    tmp49 = tl.where(tmp36, tmp47, tmp48)
    tmp50 = tl.where(tmp34, tmp35, tmp49)
    tmp51 = tl.where(tmp29, tmp30, tmp50)
    tmp52 = tl.where(tmp24, tmp25, tmp51)
    tmp53 = tl.where(tmp19, tmp20, tmp52)
    tmp54 = tl.where(tmp14, tmp15, tmp53)
    tmp55 = tl.where(tmp9, tmp10, tmp54)
    tmp56 = tl.where(tmp4, tmp5, tmp55)
    tl.store(out_ptr0 + x2, tmp56, None)


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
    buf0 = torch.empty_strided((512, 8192), (8192, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.mm via cuBLAS <- aten.select, aten.t, aten.addmm
    torch.mm(reinterpret_tensor(arg0_1, (512, 1024), (8192, 1), 0), reinterpret_tensor(arg1_1, (1024, 8192), (1, 1024), 0), out=buf0)
    buf1 = torch.empty_strided((512, 8192), (8192, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.mm via cuBLAS <- aten.t, aten.mm
    torch.mm(arg4_1, reinterpret_tensor(arg3_1, (2048, 8192), (1, 2048), 0), out=buf1)
    del arg4_1
    buf2 = torch.empty_strided((512, 8192), (8192, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.mm via cuBLAS <- aten.select, aten.t, aten.addmm
    torch.mm(reinterpret_tensor(arg0_1, (512, 1024), (8192, 1), 1024), reinterpret_tensor(arg1_1, (1024, 8192), (1, 1024), 0), out=buf2)
    buf3 = torch.empty_strided((512, 2048), (2048, 1), dtype=torch.float32, device=_device)
    buf4 = torch.empty_strided((512, 2048), (2048, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_0 <- aten.addmm, aten.add, aten.split, aten.sigmoid, aten.mul, aten.tanh
    triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_0[lambda meta: (triton.cdiv(1048576, meta['XBLOCK']),)](arg2_1, buf0, buf1, arg5_1, buf3, buf4, 1048576, **LAUNCH_CONFIGS['triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_0'])
    del arg5_1
    buf5 = buf1
    del buf1
    # vendor call (kept): aten.mm via cuBLAS <- aten.t, aten.mm
    torch.mm(buf4, reinterpret_tensor(arg3_1, (2048, 8192), (1, 2048), 0), out=buf5)
    buf6 = buf0
    del buf0
    # vendor call (kept): aten.mm via cuBLAS <- aten.select, aten.t, aten.addmm
    torch.mm(reinterpret_tensor(arg0_1, (512, 1024), (8192, 1), 2048), reinterpret_tensor(arg1_1, (1024, 8192), (1, 1024), 0), out=buf6)
    buf7 = buf3
    del buf3
    buf8 = torch.empty_strided((512, 2048), (2048, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1 <- aten.addmm, aten.add, aten.split, aten.sigmoid, aten.mul, aten.tanh
    triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1[lambda meta: (triton.cdiv(1048576, meta['XBLOCK']),)](buf7, arg2_1, buf2, buf5, buf8, 1048576, **LAUNCH_CONFIGS['triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1'])
    buf9 = buf5
    del buf5
    # vendor call (kept): aten.mm via cuBLAS <- aten.t, aten.mm
    torch.mm(buf8, reinterpret_tensor(arg3_1, (2048, 8192), (1, 2048), 0), out=buf9)
    buf10 = buf2
    del buf2
    # vendor call (kept): aten.mm via cuBLAS <- aten.select, aten.t, aten.addmm
    torch.mm(reinterpret_tensor(arg0_1, (512, 1024), (8192, 1), 3072), reinterpret_tensor(arg1_1, (1024, 8192), (1, 1024), 0), out=buf10)
    buf11 = buf7
    del buf7
    buf12 = torch.empty_strided((512, 2048), (2048, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1 <- aten.addmm, aten.add, aten.split, aten.sigmoid, aten.mul, aten.tanh
    triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1[lambda meta: (triton.cdiv(1048576, meta['XBLOCK']),)](buf11, arg2_1, buf6, buf9, buf12, 1048576, **LAUNCH_CONFIGS['triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1'])
    buf13 = buf9
    del buf9
    # vendor call (kept): aten.mm via cuBLAS <- aten.t, aten.mm
    torch.mm(buf12, reinterpret_tensor(arg3_1, (2048, 8192), (1, 2048), 0), out=buf13)
    buf14 = buf6
    del buf6
    # vendor call (kept): aten.mm via cuBLAS <- aten.select, aten.t, aten.addmm
    torch.mm(reinterpret_tensor(arg0_1, (512, 1024), (8192, 1), 4096), reinterpret_tensor(arg1_1, (1024, 8192), (1, 1024), 0), out=buf14)
    buf15 = buf11
    del buf11
    buf16 = torch.empty_strided((512, 2048), (2048, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1 <- aten.addmm, aten.add, aten.split, aten.sigmoid, aten.mul, aten.tanh
    triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1[lambda meta: (triton.cdiv(1048576, meta['XBLOCK']),)](buf15, arg2_1, buf10, buf13, buf16, 1048576, **LAUNCH_CONFIGS['triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1'])
    buf17 = buf13
    del buf13
    # vendor call (kept): aten.mm via cuBLAS <- aten.t, aten.mm
    torch.mm(buf16, reinterpret_tensor(arg3_1, (2048, 8192), (1, 2048), 0), out=buf17)
    buf18 = buf10
    del buf10
    # vendor call (kept): aten.mm via cuBLAS <- aten.select, aten.t, aten.addmm
    torch.mm(reinterpret_tensor(arg0_1, (512, 1024), (8192, 1), 5120), reinterpret_tensor(arg1_1, (1024, 8192), (1, 1024), 0), out=buf18)
    buf19 = buf15
    del buf15
    buf20 = torch.empty_strided((512, 2048), (2048, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1 <- aten.addmm, aten.add, aten.split, aten.sigmoid, aten.mul, aten.tanh
    triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1[lambda meta: (triton.cdiv(1048576, meta['XBLOCK']),)](buf19, arg2_1, buf14, buf17, buf20, 1048576, **LAUNCH_CONFIGS['triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1'])
    buf21 = buf17
    del buf17
    # vendor call (kept): aten.mm via cuBLAS <- aten.t, aten.mm
    torch.mm(buf20, reinterpret_tensor(arg3_1, (2048, 8192), (1, 2048), 0), out=buf21)
    buf22 = buf14
    del buf14
    # vendor call (kept): aten.mm via cuBLAS <- aten.select, aten.t, aten.addmm
    torch.mm(reinterpret_tensor(arg0_1, (512, 1024), (8192, 1), 6144), reinterpret_tensor(arg1_1, (1024, 8192), (1, 1024), 0), out=buf22)
    buf23 = buf19
    del buf19
    buf24 = torch.empty_strided((512, 2048), (2048, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1 <- aten.addmm, aten.add, aten.split, aten.sigmoid, aten.mul, aten.tanh
    triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1[lambda meta: (triton.cdiv(1048576, meta['XBLOCK']),)](buf23, arg2_1, buf18, buf21, buf24, 1048576, **LAUNCH_CONFIGS['triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1'])
    buf25 = buf21
    del buf21
    # vendor call (kept): aten.mm via cuBLAS <- aten.t, aten.mm
    torch.mm(buf24, reinterpret_tensor(arg3_1, (2048, 8192), (1, 2048), 0), out=buf25)
    buf26 = buf18
    del buf18
    # vendor call (kept): aten.mm via cuBLAS <- aten.select, aten.t, aten.addmm
    torch.mm(reinterpret_tensor(arg0_1, (512, 1024), (8192, 1), 7168), reinterpret_tensor(arg1_1, (1024, 8192), (1, 1024), 0), out=buf26)
    del arg0_1
    del arg1_1
    buf27 = buf23
    del buf23
    buf28 = torch.empty_strided((512, 2048), (2048, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1 <- aten.addmm, aten.add, aten.split, aten.sigmoid, aten.mul, aten.tanh
    triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1[lambda meta: (triton.cdiv(1048576, meta['XBLOCK']),)](buf27, arg2_1, buf22, buf25, buf28, 1048576, **LAUNCH_CONFIGS['triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_1'])
    del buf22
    buf29 = buf25
    del buf25
    # vendor call (kept): aten.mm via cuBLAS <- aten.t, aten.mm
    torch.mm(buf28, reinterpret_tensor(arg3_1, (2048, 8192), (1, 2048), 0), out=buf29)
    del arg3_1
    buf30 = buf27
    del buf27
    # Triton kernel triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_2 <- aten.addmm, aten.add, aten.split, aten.sigmoid, aten.mul, aten.tanh
    triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_2[lambda meta: (triton.cdiv(1048576, meta['XBLOCK']),)](buf30, arg2_1, buf26, buf29, 1048576, **LAUNCH_CONFIGS['triton_poi_fused_add_addmm_mul_sigmoid_split_tanh_2'])
    buf31 = torch.empty_strided((512, 16384), (16384, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_addmm_mul_sigmoid_split_stack_tanh_3 <- aten.addmm, aten.add, aten.split, aten.sigmoid, aten.tanh, aten.mul, aten.stack
    triton_poi_fused_add_addmm_mul_sigmoid_split_stack_tanh_3[lambda meta: (triton.cdiv(8388608, meta['XBLOCK']),)](buf4, buf8, buf12, buf16, buf20, buf24, buf28, arg2_1, buf26, buf29, buf30, buf31, 8388608, **LAUNCH_CONFIGS['triton_poi_fused_add_addmm_mul_sigmoid_split_stack_tanh_3'])
    del arg2_1
    del buf12
    del buf16
    del buf20
    del buf24
    del buf26
    del buf28
    del buf29
    del buf30
    del buf4
    del buf8
    return (reinterpret_tensor(buf31, (512, 8, 2048), (16384, 2048, 1), 0),)


class _ModelNewEager(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'x2h.weight', (8192, 1024), torch.float32, True)
        _declare(self, 'x2h.bias', (8192,), torch.float32, True)
        _declare(self, 'h2h.weight', (8192, 2048), torch.float32, True)

    def forward(self, xs, h, c):
        with torch.no_grad():
            outs = _harvested_forward([xs, self.x2h.weight, self.x2h.bias, self.h2h.weight, h, c])
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


# ----------------------------------------------------------------------
# KernelOPT guard: the kernels above run only for the verified shapes, dtypes and
# device (cuda), in eval mode without autograd; any other call runs
# the reference. Use: model = kernelopt_guarded(Model(...)); model(x);
# model.kernelopt_path says which path the last call took.
# Verified shape sets: as given.
# `kernelopt export` verifies more shapes (docs/deploy.md).
# ----------------------------------------------------------------------

"""The guard: the verified kernels run only where they were verified, else the reference.

This file is rendered verbatim into ``best.py``, an accepted notebook cell and every export
(``render_guard`` in the guard module beside this one), so it imports only torch and the
standard library, passes the verifier's static rules (no try/except in functions, no
reflection, no reading of the environment, no string naming the harness) and has no
``from __future__`` import (it is appended below other code).

A call takes the kernel path only when every argument matches a verified *signature* (tensor
shape, dtype and contiguity; the value of a plain argument), the tensors are on the verified
device type, the module is in eval mode and no gradient is needed (the kernels have no
backward). Anything else runs the reference, and the guard says which path it took and why.
"""

from typing import Any

import torch

#: The dtypes a signature can name (its text is ``str(dtype)``); a table, not ``getattr``.
_KERNELOPT_DTYPES = {
    str(d): d
    for d in (
        torch.float64,
        torch.float32,
        torch.float16,
        torch.bfloat16,
        torch.int64,
        torch.int32,
        torch.int16,
        torch.int8,
        torch.uint8,
        torch.bool,
        torch.complex64,
        torch.complex128,
    )
}


def kernelopt_signature(args: Any) -> list[dict[str, Any]]:
    """One argument list as plain data: per tensor its shape, dtype and contiguity, per plain
    value (int, float, bool, None, str) the value itself, per anything else its type name."""
    spec: list[dict[str, Any]] = []
    for arg in args:
        if isinstance(arg, torch.Tensor):
            spec.append(
                {
                    "kind": "tensor",
                    "shape": [int(n) for n in arg.shape],
                    "dtype": str(arg.dtype),
                    "contiguous": bool(arg.is_contiguous()),
                }
            )
        elif arg is None or isinstance(arg, bool | int | float | str):
            spec.append({"kind": "value", "value": arg})
        else:
            spec.append({"kind": "other", "type": type(arg).__name__})
    return spec


def _kernelopt_spec_key(spec: dict[str, Any]) -> tuple[Any, ...]:
    """A hashable key of one argument's spec (the same for a call and a recorded signature)."""
    if spec["kind"] == "tensor":
        dtype = _KERNELOPT_DTYPES.get(spec["dtype"], spec["dtype"])
        return ("tensor", tuple(spec["shape"]), dtype, spec["contiguous"])
    if spec["kind"] == "value":
        return ("value", type(spec["value"]).__name__, spec["value"])
    return ("other", spec["type"])


def _kernelopt_call_key(args: Any) -> tuple[Any, ...]:
    """The key of a call's arguments, built without intermediate dicts (cheap per call)."""
    key: list[tuple[Any, ...]] = []
    for arg in args:
        if isinstance(arg, torch.Tensor):
            key.append(("tensor", tuple(arg.shape), arg.dtype, arg.is_contiguous()))
        elif arg is None or isinstance(arg, bool | int | float | str):
            key.append(("value", type(arg).__name__, arg))
        else:
            key.append(("other", type(arg).__name__))
    return tuple(key)


class KernelOPTGuard:
    """Decides per call whether the verified kernels may run; remembers the last decision.

    ``verified`` is plain data: ``{"device": "cuda" | "cpu", "signatures": [signature, ...]}``
    (a signature as :func:`kernelopt_signature` writes it). ``unavailable``, when given, is why
    no call may take the kernels here (an export says so on a CPU without Triton's
    interpreter).
    """

    def __init__(self, verified: dict[str, Any], unavailable: str | None = None) -> None:
        self.device = verified["device"]
        self.signatures = [list(s) for s in verified["signatures"]]
        self._index: dict[tuple[Any, ...], int] = {}
        for number, signature in enumerate(self.signatures):
            key = tuple(_kernelopt_spec_key(s) for s in signature)
            self._index.setdefault(key, number)
        self.unavailable = unavailable
        # The module mode the kernels were verified in: a problem's reference runs as
        # constructed (training mode, as KernelBench runs it) unless it declares eval.
        self.training = bool(verified.get("training", False))
        # The weights' dtypes the kernels were verified with (a module problem); a model
        # converted since (``.half()``) takes the reference until it is converted back.
        self.state_dtypes = set(verified.get("state_dtypes") or [])
        self.state_reason: str | None = None
        self.last_path: str | None = None
        self.last_reason = "not called yet"

    def choose(
        self, args: Any, *, training: bool = False, needs_grad: bool = False
    ) -> tuple[int, str]:
        """The verified signature's number for this call, or -1 and the reason to fall back."""
        reason: str | None = None
        number = -1
        devices = {a.device.type for a in args if isinstance(a, torch.Tensor)}
        if training != self.training:
            verified_in = "training" if self.training else "eval"
            now = "training" if training else "eval"
            reason = f"the module is in {now} mode; the kernels were verified in {verified_in} mode"
        elif needs_grad:
            reason = (
                "autograd needs gradients and the kernels have no backward "
                "(call it under torch.no_grad() or torch.inference_mode())"
            )
        elif devices and devices != {self.device}:
            reason = f"tensors on {sorted(devices)}; verified on {self.device}"
        elif self.state_reason is not None:
            reason = self.state_reason
        elif self.unavailable is not None:
            reason = self.unavailable
        else:
            number = self._index.get(_kernelopt_call_key(args), -1)
            if number < 0:
                reason = "these shapes, dtypes or values were not verified"
        self.last_path = "kernel" if number >= 0 else "reference"
        self.last_reason = "a verified signature" if reason is None else reason
        return number, self.last_reason

    def check_state(self, module: Any) -> None:
        """Note whether ``module``'s weights still have the verified dtypes (called when the
        guarded module is made and after each conversion, not per call)."""
        found = {str(t.dtype) for t in module.state_dict().values()}
        extra = found - self.state_dtypes
        self.state_reason = None
        if self.state_dtypes and extra:
            self.state_reason = (
                f"weights in {', '.join(sorted(extra))}; verified with "
                f"{', '.join(sorted(self.state_dtypes))}"
            )

    def describe(self) -> str:
        """The last call's path in one line: ``kernel`` or ``reference: <why>``."""
        if self.last_path is None:
            return self.last_reason
        if self.last_path == "kernel":
            return "kernel"
        return f"reference: {self.last_reason}"


def _kernelopt_tie(optimized: Any, reference: Any) -> None:
    """Make ``optimized`` use the reference's own parameter and buffer objects (one copy of the
    weights; later changes to the reference's weights are seen by the kernels too)."""
    for key, tensor in reference.state_dict(keep_vars=True).items():
        *path, leaf = key.split(".")
        owner = optimized
        for part in path:
            owner = owner._modules[part]
        if leaf in owner._parameters and isinstance(tensor, torch.nn.Parameter):
            owner._parameters[leaf] = tensor
        elif leaf in owner._buffers:
            owner._buffers[leaf] = tensor


class KernelOPTParts:
    """What a guarded module holds outside its module tree: the optimized module (its tensors
    are the reference's, tied, so the state_dict stays the reference's alone), an optional
    ``kernel_call(args, number)`` for the kernel path (an export routes it through its custom
    op) and an optional ``fallback`` standing in for the eager reference (a compiled one)."""

    def __init__(self, optimized: Any, kernel_call: Any = None, fallback: Any = None) -> None:
        self.optimized = optimized
        self.kernel_call = kernel_call
        self.fallback = fallback


class KernelOPTGuarded(torch.nn.Module):
    """A reference module whose calls take the verified kernels where the guard admits them;
    ``kernelopt_path`` says which path the last call took."""

    def __init__(self, reference: Any, optimized: Any, guard: Any, kernel_call: Any = None) -> None:
        super().__init__()
        self.reference = reference
        self.kernelopt_guard = guard
        self.kernelopt_parts = KernelOPTParts(optimized, kernel_call)
        guard.check_state(reference)

    @property
    def kernelopt_path(self) -> str:
        """The last call's path: ``kernel`` or ``reference: <why>``."""
        return self.kernelopt_guard.describe()

    def _apply(self, fn: Any, recurse: bool = True) -> Any:
        # .to()/.cuda()/.half() move the reference; the optimized module's own extra tensors
        # (anything not tied to the reference) must follow it, and buffers come back as new
        # tensor objects, so the tie is made again.
        self.kernelopt_parts.optimized._apply(fn, recurse)
        out = super()._apply(fn, recurse)
        _kernelopt_tie(self.kernelopt_parts.optimized, self.reference)
        self.kernelopt_guard.check_state(self.reference)
        return out

    def forward(self, *args: Any) -> Any:
        """Run the kernels on a verified call, the reference otherwise."""
        needs_grad = torch.is_grad_enabled() and (
            any(p.requires_grad for p in self.reference.parameters())
            or any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
        )
        training = self.reference.training
        number, _ = self.kernelopt_guard.choose(args, training=training, needs_grad=needs_grad)
        parts = self.kernelopt_parts
        if number < 0:
            return self.reference(*args) if parts.fallback is None else parts.fallback(*args)
        if parts.kernel_call is not None:
            return parts.kernel_call(args, number)
        return parts.optimized(*args)


class KernelOPTGuardedFunction:
    """A kernel problem's reference function guarded the same way (no weights, no modes)."""

    def __init__(self, reference: Any, optimized: Any, guard: Any, kernel_call: Any = None) -> None:
        self.reference = reference
        self.optimized = optimized
        self.kernelopt_guard = guard
        self.kernel_call = kernel_call
        self.fallback: Any = None

    @property
    def kernelopt_path(self) -> str:
        """The last call's path: ``kernel`` or ``reference: <why>``."""
        return self.kernelopt_guard.describe()

    def __call__(self, *args: Any) -> Any:
        """Run the kernels on a verified call, the reference otherwise."""
        needs_grad = torch.is_grad_enabled() and any(
            isinstance(a, torch.Tensor) and a.requires_grad for a in args
        )
        number, _ = self.kernelopt_guard.choose(args, needs_grad=needs_grad)
        if number < 0:
            fallback = self.fallback
            return self.reference(*args) if fallback is None else fallback(*args)
        if self.kernel_call is not None:
            return self.kernel_call(args, number)
        return self.optimized(*args)


def kernelopt_guard(
    reference: Any,
    optimized: Any,
    verified: dict[str, Any],
    init: Any = None,
    kernel_call: Any = None,
    unavailable: str | None = None,
) -> Any:
    """Guard ``reference`` (a module instance or the problem's function) with ``optimized``
    (the candidate's ``ModelNew`` class or its entry function) and the ``verified`` set.

    A module reference gets ``optimized(*init)`` with the reference's weights loaded strictly
    (as the verifier loaded them) and then tied to the reference's own tensors.
    ``unavailable`` as for :class:`KernelOPTGuard`.
    """
    guard = KernelOPTGuard(verified, unavailable)
    if not isinstance(reference, torch.nn.Module):
        if isinstance(optimized, type):
            optimized = optimized()
        return KernelOPTGuardedFunction(reference, optimized, guard, kernel_call)
    model = optimized(*(init or []))
    model.load_state_dict(reference.state_dict(), strict=True)
    _kernelopt_tie(model, reference)
    first = next(iter(reference.state_dict().values()), None)
    if first is not None:
        model.to(first.device)
    model.train(guard.training)  # as the verifier ran it: in the problem's mode
    return KernelOPTGuarded(reference, model, guard, kernel_call)


KERNELOPT_VERIFIED = {'device': 'cuda',
 'signatures': [[{'kind': 'tensor',
                  'shape': [512, 8, 1024],
                  'dtype': 'torch.float32',
                  'contiguous': True},
                 {'kind': 'tensor',
                  'shape': [512, 2048],
                  'dtype': 'torch.float32',
                  'contiguous': True},
                 {'kind': 'tensor',
                  'shape': [512, 2048],
                  'dtype': 'torch.float32',
                  'contiguous': True}]],
 'shapes': ['as given'],
 'state_dtypes': ['torch.float32'],
 'training': True}
KERNELOPT_INIT = [1024, 2048]


def kernelopt_guarded(reference, *init):
    """The reference (a module instance or the problem's function) with the verified
    kernels swapped in where the guard admits the call (the verified set above)."""
    args = list(init) if init else KERNELOPT_INIT
    return kernelopt_guard(reference, ModelNew, KERNELOPT_VERIFIED, args)
