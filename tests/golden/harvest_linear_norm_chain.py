# triton triton_per_fused__softmax_gelu_mean_mul_native_layer_norm_0: ops=aten.gelu, aten.native_layer_norm, aten._softmax, aten.mul, aten.mean launches=1 bytes=12800 flops=None
# vendor vendor_0_addmm: ops=aten.t, aten.addmm launches=1 bytes=None flops=None
"""Harvested from torch.compile (Inductor) for problem 'linear_norm_chain'.

Editable candidate: each Triton kernel below is Inductor's generated code as a plain
@triton.jit function; vendor-library calls (cuBLAS/cuDNN) are kept and labelled.
Shapes are static: the code is specialised to the problem's input shapes.
Harvested on cpu (torch <version>, triton <version>).
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
    'triton_per_fused__softmax_gelu_mean_mul_native_layer_norm_0': {'XBLOCK': 1, 'num_warps': 2, 'num_stages': 1},
}


# ---- helpers the kernels call (plain tl, NaN- and tie-exact as Inductor's)
@triton.jit
def _h_maximum(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _h_max2(a, dim):
    return tl.reduce(a, dim, _h_maximum)


# ---- Triton kernel triton_per_fused__softmax_gelu_mean_mul_native_layer_norm_0 <- aten.gelu, aten.native_layer_norm, aten._softmax, aten.mul, aten.mean
@triton.jit
def triton_per_fused__softmax_gelu_mean_mul_native_layer_norm_0(in_out_ptr1, in_out_ptr2, in_out_ptr3, in_ptr0, in_ptr1, xnumel, r0_numel, XBLOCK: tl.constexpr):
    xnumel = 16
    r0_numel = 48
    R0_BLOCK: tl.constexpr = 64
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = r0_index < r0_numel
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_out_ptr1 + (r0_1 + 48 * x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
    tmp26 = tl.load(in_ptr0 + r0_1, r0_mask, eviction_policy='evict_last', other=0.0)
    tmp28 = tl.load(in_ptr1 + r0_1, r0_mask, eviction_policy='evict_last', other=0.0)
    tmp1 = tl.full([1, 1], 0.5, tl.float32)
    tmp2 = tmp0 * tmp1
    tmp3 = tl.full([1, 1], 0.7071067811865476, tl.float32)
    tmp4 = tmp0 * tmp3
    tmp5 = libdevice.erf(tmp4)
    tmp6 = tl.full([1, 1], 1.0, tl.float32)
    tmp7 = tmp5 + tmp6
    tmp8 = tmp2 * tmp7
    tmp9 = tl.broadcast_to(tmp8, [XBLOCK, R0_BLOCK])
    tmp11 = tl.where(r0_mask & xmask, tmp9, 0)
    tmp12 = tl.sum(tmp11, 1)[:, None].to(tl.float32)
    tmp13 = tl.full([1, 1], 48.0, tl.float32)
    tmp14 = tmp12 / tmp13
    tmp15 = tmp8 - tmp14
    tmp16 = tmp15 * tmp15
    tmp17 = tl.broadcast_to(tmp16, [XBLOCK, R0_BLOCK])
    tmp19 = tl.where(r0_mask & xmask, tmp17, 0)
    tmp20 = tl.sum(tmp19, 1)[:, None].to(tl.float32)
    tmp21 = tmp20 / tmp13
    tmp22 = tl.full([1, 1], 1e-05, tl.float32)
    tmp23 = tmp21 + tmp22
    tmp24 = libdevice.rsqrt(tmp23)
    tmp25 = tmp15 * tmp24
    tmp27 = tmp25 * tmp26
    tmp29 = tmp27 + tmp28
    tmp30 = tl.broadcast_to(tmp29, [XBLOCK, R0_BLOCK])
    tmp32 = tl.where(r0_mask & xmask, tmp30, float('-inf'))
    tmp33 = _h_max2(tmp32, 1)[:, None].to(tl.float32)
    tmp34 = tmp29 * tmp29
    tmp35 = tl.broadcast_to(tmp34, [XBLOCK, R0_BLOCK])
    tmp37 = tl.where(r0_mask & xmask, tmp35, 0)
    tmp38 = tl.sum(tmp37, 1)[:, None].to(tl.float32)
    tmp39 = tmp29 - tmp33
    tmp40 = libdevice.exp(tmp39)
    tmp41 = tl.broadcast_to(tmp40, [XBLOCK, R0_BLOCK])
    tmp43 = tl.where(r0_mask & xmask, tmp41, 0)
    tmp44 = tl.sum(tmp43, 1)[:, None].to(tl.float32)
    tmp45 = tmp40 / tmp44
    tmp46 = tmp38 / tmp13
    tl.store(in_out_ptr2 + (r0_1 + 48 * x0), tmp45, r0_mask & xmask)
    tl.store(in_out_ptr3 + x0, tmp46, xmask)


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
    buf0 = torch.empty_strided((16, 48), (48, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.addmm via cuBLAS <- aten.t, aten.addmm
    torch.addmm(arg1_1, arg2_1, reinterpret_tensor(arg0_1, (64, 48), (1, 64), 0), alpha=1, beta=1, out=buf0)
    del arg0_1
    del arg1_1
    del arg2_1
    buf4 = buf0
    del buf0
    buf9 = torch.empty_strided((16,), (1,), dtype=torch.float32, device=_device)
    buf6 = torch.empty_strided((16, 48), (48, 1), dtype=torch.float32, device=_device)
    buf8 = buf6
    del buf6
    buf10 = buf9
    del buf9
    # Triton kernel triton_per_fused__softmax_gelu_mean_mul_native_layer_norm_0 <- aten.gelu, aten.native_layer_norm, aten._softmax, aten.mul, aten.mean
    triton_per_fused__softmax_gelu_mean_mul_native_layer_norm_0[lambda meta: (triton.cdiv(16, meta['XBLOCK']),)](buf4, buf8, buf10, arg3_1, arg4_1, 16, 48, **LAUNCH_CONFIGS['triton_per_fused__softmax_gelu_mean_mul_native_layer_norm_0'])
    del arg3_1
    del arg4_1
    return (buf8, buf10)


class ModelNew(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'fc.weight', (48, 64), torch.float32, True)
        _declare(self, 'fc.bias', (48,), torch.float32, True)
        _declare(self, 'norm.weight', (48,), torch.float32, True)
        _declare(self, 'norm.bias', (48,), torch.float32, True)

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([self.fc.weight, self.fc.bias, x, self.norm.weight, self.norm.bias])
        return tuple(outs[:2])
