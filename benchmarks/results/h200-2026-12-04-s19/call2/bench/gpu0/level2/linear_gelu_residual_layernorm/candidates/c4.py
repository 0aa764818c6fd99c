"""Harvested from torch.compile (Inductor) for problem 'linear_gelu_residual_layernorm'.

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
    'triton_per_fused_add_addmm_gelu_native_layer_norm_0': {'XBLOCK': 1, 'num_warps': 4, 'num_stages': 1},
}


# ---- Triton kernel triton_per_fused_add_addmm_gelu_native_layer_norm_0 <- aten.addmm, aten.gelu, aten.add, aten.native_layer_norm
@triton.jit
def triton_per_fused_add_addmm_gelu_native_layer_norm_0(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, xnumel, r0_numel, XBLOCK: tl.constexpr):
    xnumel = 8192
    r0_numel = 1024
    R0_BLOCK: tl.constexpr = 1024
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
    tmp0 = tl.load(in_ptr0 + (r0_1 + 1024 * x0), None)
    tmp1 = tl.load(in_ptr1 + r0_1, None, eviction_policy='evict_last')
    tmp2 = tl.load(in_out_ptr0 + (r0_1 + 1024 * x0), None)
    tmp33 = tl.load(in_ptr2 + r0_1, None, eviction_policy='evict_last')
    tmp35 = tl.load(in_ptr3 + r0_1, None, eviction_policy='evict_last')
    tmp3 = tmp1 + tmp2
    tmp4 = tl.full([1, 1], 0.5, tl.float32)
    tmp5 = tmp3 * tmp4
    tmp6 = tl.full([1, 1], 0.7071067811865476, tl.float32)
    tmp7 = tmp3 * tmp6
    tmp8 = libdevice.erf(tmp7)
    tmp9 = tl.full([1, 1], 1.0, tl.float32)
    tmp10 = tmp8 + tmp9
    tmp11 = tmp5 * tmp10
    tmp12 = tmp0 + tmp11
    tmp13 = tl.broadcast_to(tmp12, [XBLOCK, R0_BLOCK])
    tmp15 = tl.broadcast_to(tmp13, [XBLOCK, R0_BLOCK])
    tmp17 = tl.sum(tmp15, 1)[:, None].to(tl.float32)
    tmp18 = tl.full([1, 1], 1024, tl.int32)
    tmp19 = tmp18.to(tl.float32)
    tmp20 = tmp17 / tmp19
    tmp21 = tmp13 - tmp20
    tmp22 = tmp21 * tmp21
    tmp23 = tl.broadcast_to(tmp22, [XBLOCK, R0_BLOCK])
    tmp25 = tl.sum(tmp23, 1)[:, None].to(tl.float32)
    tmp26 = tmp12 - tmp20
    tmp27 = tl.full([1, 1], 1024.0, tl.float32)
    tmp28 = tmp25 / tmp27
    tmp29 = tl.full([1, 1], 1e-05, tl.float32)
    tmp30 = tmp28 + tmp29
    tmp31 = libdevice.rsqrt(tmp30)
    tmp32 = tmp26 * tmp31
    tmp34 = tmp32 * tmp33
    tmp36 = tmp34 + tmp35
    tl.store(in_out_ptr0 + (r0_1 + 1024 * x0), tmp36, None)


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
    arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, = args
    _device = arg2_1.device
    buf0 = torch.empty_strided((8192, 1024), (1024, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.mm via cuBLAS <- aten.t, aten.addmm
    torch.mm(arg2_1, reinterpret_tensor(arg0_1, (1024, 1024), (1, 1024), 0), out=buf0)
    del arg0_1
    buf4 = buf0
    del buf0
    # Triton kernel triton_per_fused_add_addmm_gelu_native_layer_norm_0 <- aten.addmm, aten.gelu, aten.add, aten.native_layer_norm
    triton_per_fused_add_addmm_gelu_native_layer_norm_0[lambda meta: (triton.cdiv(8192, meta['XBLOCK']),)](buf4, arg2_1, arg1_1, arg3_1, arg4_1, 8192, 1024, **LAUNCH_CONFIGS['triton_per_fused_add_addmm_gelu_native_layer_norm_0'])
    del arg1_1
    del arg2_1
    del arg3_1
    del arg4_1
    return (buf4,)


class ModelNew(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'proj.weight', (1024, 1024), torch.float32, True)
        _declare(self, 'proj.bias', (1024,), torch.float32, True)
        _declare(self, 'norm.weight', (1024,), torch.float32, True)
        _declare(self, 'norm.bias', (1024,), torch.float32, True)

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([self.proj.weight, self.proj.bias, x, self.norm.weight, self.norm.bias])
        return outs[0]
