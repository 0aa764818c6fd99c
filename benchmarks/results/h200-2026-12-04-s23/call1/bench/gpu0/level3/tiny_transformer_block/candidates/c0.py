"""Harvested from torch.compile (Inductor) for problem 'tiny_transformer_block'.

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
    'triton_per_fused_native_layer_norm_0': {'XBLOCK': 2, 'num_warps': 1, 'num_stages': 1},
    'triton_per_fused_add_addmm_native_layer_norm_view_1': {'XBLOCK': 2, 'num_warps': 1, 'num_stages': 1},
    'triton_poi_fused_addmm_gelu_view_2': {'XBLOCK': 512, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused_add_addmm_view_3': {'XBLOCK': 512, 'num_warps': 8, 'num_stages': 1},
}


# ---- Triton kernel triton_per_fused_native_layer_norm_0 <- aten.native_layer_norm
@triton.jit
def triton_per_fused_native_layer_norm_0(in_ptr0, in_ptr1, in_ptr2, out_ptr2, xnumel, r0_numel, XBLOCK: tl.constexpr):
    xnumel = 4096
    r0_numel = 512
    R0_BLOCK: tl.constexpr = 512
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 512 * x0), None)
    tmp21 = tl.load(in_ptr1 + r0_1, None, eviction_policy='evict_last')
    tmp23 = tl.load(in_ptr2 + r0_1, None, eviction_policy='evict_last')
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.broadcast_to(tmp1, [XBLOCK, R0_BLOCK])
    tmp5 = tl.sum(tmp3, 1)[:, None].to(tl.float32)
    tmp6 = tl.full([1, 1], 512, tl.int32)
    tmp7 = tmp6.to(tl.float32)
    tmp8 = tmp5 / tmp7
    tmp9 = tmp1 - tmp8
    tmp10 = tmp9 * tmp9
    tmp11 = tl.broadcast_to(tmp10, [XBLOCK, R0_BLOCK])
    tmp13 = tl.sum(tmp11, 1)[:, None].to(tl.float32)
    tmp14 = tmp0 - tmp8
    tmp15 = tl.full([1, 1], 512.0, tl.float32)
    tmp16 = tmp13 / tmp15
    tmp17 = tl.full([1, 1], 1e-05, tl.float32)
    tmp18 = tmp16 + tmp17
    tmp19 = libdevice.rsqrt(tmp18)
    tmp20 = tmp14 * tmp19
    tmp22 = tmp20 * tmp21
    tmp24 = tmp22 + tmp23
    tl.store(out_ptr2 + (r0_1 + 512 * x0), tmp24, None)


# ---- Triton kernel triton_per_fused_add_addmm_native_layer_norm_view_1 <- aten.addmm, aten.view, aten.add, aten.native_layer_norm
@triton.jit
def triton_per_fused_add_addmm_native_layer_norm_view_1(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, out_ptr2, xnumel, r0_numel, XBLOCK: tl.constexpr):
    xnumel = 4096
    r0_numel = 512
    R0_BLOCK: tl.constexpr = 512
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 512 * x0), None)
    tmp1 = tl.load(in_ptr1 + r0_1, None, eviction_policy='evict_last')
    tmp2 = tl.load(in_ptr2 + (r0_1 + 512 * x0), None)
    tmp25 = tl.load(in_ptr3 + r0_1, None, eviction_policy='evict_last')
    tmp27 = tl.load(in_ptr4 + r0_1, None, eviction_policy='evict_last')
    tmp3 = tmp1 + tmp2
    tmp4 = tmp0 + tmp3
    tmp5 = tl.broadcast_to(tmp4, [XBLOCK, R0_BLOCK])
    tmp7 = tl.broadcast_to(tmp5, [XBLOCK, R0_BLOCK])
    tmp9 = tl.sum(tmp7, 1)[:, None].to(tl.float32)
    tmp10 = tl.full([1, 1], 512, tl.int32)
    tmp11 = tmp10.to(tl.float32)
    tmp12 = tmp9 / tmp11
    tmp13 = tmp5 - tmp12
    tmp14 = tmp13 * tmp13
    tmp15 = tl.broadcast_to(tmp14, [XBLOCK, R0_BLOCK])
    tmp17 = tl.sum(tmp15, 1)[:, None].to(tl.float32)
    tmp18 = tmp4 - tmp12
    tmp19 = tl.full([1, 1], 512.0, tl.float32)
    tmp20 = tmp17 / tmp19
    tmp21 = tl.full([1, 1], 1e-05, tl.float32)
    tmp22 = tmp20 + tmp21
    tmp23 = libdevice.rsqrt(tmp22)
    tmp24 = tmp18 * tmp23
    tmp26 = tmp24 * tmp25
    tmp28 = tmp26 + tmp27
    tl.store(out_ptr2 + (r0_1 + 512 * x0), tmp28, None)


# ---- Triton kernel triton_poi_fused_addmm_gelu_view_2 <- aten.addmm, aten.view, aten.gelu
@triton.jit
def triton_poi_fused_addmm_gelu_view_2(in_out_ptr0, in_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 8388608
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex % 2048
    x2 = xindex
    tmp0 = tl.load(in_ptr0 + x0, None, eviction_policy='evict_last')
    tmp1 = tl.load(in_out_ptr0 + x2, None)
    tmp2 = tmp0 + tmp1
    tmp3 = tl.full([1], 0.5, tl.float32)
    tmp4 = tmp2 * tmp3
    tmp5 = tl.full([1], 0.7071067811865476, tl.float32)
    tmp6 = tmp2 * tmp5
    tmp7 = libdevice.erf(tmp6)
    tmp8 = tl.full([1], 1.0, tl.float32)
    tmp9 = tmp7 + tmp8
    tmp10 = tmp4 * tmp9
    tl.store(in_out_ptr0 + x2, tmp10, None)


# ---- Triton kernel triton_poi_fused_add_addmm_view_3 <- aten.addmm, aten.view, aten.add
@triton.jit
def triton_poi_fused_add_addmm_view_3(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, xnumel, XBLOCK: tl.constexpr):
    xnumel = 2097152
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x2 = xindex
    x0 = xindex % 512
    tmp0 = tl.load(in_ptr0 + x2, None)
    tmp1 = tl.load(in_ptr1 + x0, None, eviction_policy='evict_last')
    tmp2 = tl.load(in_out_ptr0 + x2, None)
    tmp5 = tl.load(in_ptr2 + x0, None, eviction_policy='evict_last')
    tmp6 = tl.load(in_ptr3 + x2, None)
    tmp3 = tmp1 + tmp2
    tmp4 = tmp0 + tmp3
    tmp7 = tmp5 + tmp6
    tmp8 = tmp4 + tmp7
    tl.store(in_out_ptr0 + x2, tmp8, None)


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
    arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, arg5_1, arg6_1, arg7_1, arg8_1, arg9_1, arg10_1, arg11_1, arg12_1, = args
    _device = arg0_1.device
    buf3 = torch.empty_strided((8, 512, 512), (262144, 512, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_per_fused_native_layer_norm_0 <- aten.native_layer_norm
    triton_per_fused_native_layer_norm_0[lambda meta: (triton.cdiv(4096, meta['XBLOCK']),)](arg0_1, arg1_1, arg2_1, buf3, 4096, 512, **LAUNCH_CONFIGS['triton_per_fused_native_layer_norm_0'])
    del arg1_1
    del arg2_1
    buf4 = torch.empty_strided((4096, 1536), (1536, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.addmm via cuBLAS <- aten.native_layer_norm, aten.view, aten.t, aten.addmm
    torch.addmm(arg4_1, reinterpret_tensor(buf3, (4096, 512), (512, 1), 0), reinterpret_tensor(arg3_1, (512, 1536), (1, 512), 0), alpha=1, beta=1, out=buf4)
    del arg3_1
    del arg4_1
    # vendor call (kept): aten._scaled_dot_product_efficient_attention via attention kernel (flash/efficient/cuDNN)
    buf5 = torch.ops.aten._scaled_dot_product_efficient_attention.default(reinterpret_tensor(buf4, (8, 8, 512, 64), (786432, 64, 1536, 1), 0), reinterpret_tensor(buf4, (8, 8, 512, 64), (786432, 64, 1536, 1), 512), reinterpret_tensor(buf4, (8, 8, 512, 64), (786432, 64, 1536, 1), 1024), None, False, 0.0, True)
    del buf4
    buf6 = buf5[0]
    del buf5
    buf10 = reinterpret_tensor(buf3, (4096, 512), (512, 1), 0)
    del buf3
    # vendor call (kept): aten.mm via cuBLAS <- aten.transpose, aten.view, aten.t, aten.addmm
    torch.mm(reinterpret_tensor(buf6, (4096, 512), (512, 1), 0), reinterpret_tensor(arg5_1, (512, 512), (1, 512), 0), out=buf10)
    del arg5_1
    buf14 = reinterpret_tensor(buf6, (8, 512, 512), (262144, 512, 1), 0)
    del buf6
    # Triton kernel triton_per_fused_add_addmm_native_layer_norm_view_1 <- aten.addmm, aten.view, aten.add, aten.native_layer_norm
    triton_per_fused_add_addmm_native_layer_norm_view_1[lambda meta: (triton.cdiv(4096, meta['XBLOCK']),)](arg0_1, arg6_1, buf10, arg7_1, arg8_1, buf14, 4096, 512, **LAUNCH_CONFIGS['triton_per_fused_add_addmm_native_layer_norm_view_1'])
    del arg7_1
    del arg8_1
    buf15 = torch.empty_strided((4096, 2048), (2048, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.mm via cuBLAS <- aten.addmm, aten.view, aten.add, aten.native_layer_norm, aten.t
    torch.mm(reinterpret_tensor(buf14, (4096, 512), (512, 1), 0), reinterpret_tensor(arg9_1, (512, 2048), (1, 512), 0), out=buf15)
    del arg9_1
    del buf14
    buf16 = reinterpret_tensor(buf15, (8, 512, 2048), (1048576, 2048, 1), 0)
    del buf15
    # Triton kernel triton_poi_fused_addmm_gelu_view_2 <- aten.addmm, aten.view, aten.gelu
    triton_poi_fused_addmm_gelu_view_2[lambda meta: (triton.cdiv(8388608, meta['XBLOCK']),)](buf16, arg10_1, 8388608, **LAUNCH_CONFIGS['triton_poi_fused_addmm_gelu_view_2'])
    del arg10_1
    buf17 = torch.empty_strided((4096, 512), (512, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.mm via cuBLAS <- aten.addmm, aten.view, aten.gelu, aten.t
    torch.mm(reinterpret_tensor(buf16, (4096, 2048), (2048, 1), 0), reinterpret_tensor(arg11_1, (2048, 512), (1, 2048), 0), out=buf17)
    del arg11_1
    del buf16
    buf18 = reinterpret_tensor(buf10, (8, 512, 512), (262144, 512, 1), 0)
    del buf10
    # Triton kernel triton_poi_fused_add_addmm_view_3 <- aten.addmm, aten.view, aten.add
    triton_poi_fused_add_addmm_view_3[lambda meta: (triton.cdiv(2097152, meta['XBLOCK']),)](buf18, arg0_1, arg6_1, arg12_1, buf17, 2097152, **LAUNCH_CONFIGS['triton_poi_fused_add_addmm_view_3'])
    del arg0_1
    del arg12_1
    del arg6_1
    del buf17
    return (buf18,)


class ModelNew(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'ln1.weight', (512,), torch.float32, True)
        _declare(self, 'ln1.bias', (512,), torch.float32, True)
        _declare(self, 'qkv.weight', (1536, 512), torch.float32, True)
        _declare(self, 'qkv.bias', (1536,), torch.float32, True)
        _declare(self, 'out.weight', (512, 512), torch.float32, True)
        _declare(self, 'out.bias', (512,), torch.float32, True)
        _declare(self, 'ln2.weight', (512,), torch.float32, True)
        _declare(self, 'ln2.bias', (512,), torch.float32, True)
        _declare(self, 'fc1.weight', (2048, 512), torch.float32, True)
        _declare(self, 'fc1.bias', (2048,), torch.float32, True)
        _declare(self, 'fc2.weight', (512, 2048), torch.float32, True)
        _declare(self, 'fc2.bias', (512,), torch.float32, True)

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([x, self.ln1.weight, self.ln1.bias, self.qkv.weight, self.qkv.bias, self.out.weight, self.out.bias, self.ln2.weight, self.ln2.bias, self.fc1.weight, self.fc1.bias, self.fc2.weight, self.fc2.bias])
        return outs[0]
