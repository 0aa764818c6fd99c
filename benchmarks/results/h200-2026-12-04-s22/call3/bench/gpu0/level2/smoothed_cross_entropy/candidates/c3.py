"""Harvested from torch.compile (Inductor) for problem 'smoothed_cross_entropy'.

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
    'triton_red_fused__log_softmax_amax_div_mul_sub_sum_0': {'XBLOCK': 1, 'R0_BLOCK': 8192, 'num_warps': 32, 'num_stages': 1},
    'triton_red_fused__log_softmax_add_bitwise_not_div_eq_masked_fill_mul_neg_nll_loss_forward_sub_sum_1': {'XBLOCK': 1, 'R0_BLOCK': 2048, 'num_warps': 16, 'num_stages': 1},
}


# ---- helpers the kernels call (plain tl, NaN- and tie-exact as Inductor's)
@triton.jit
def _h_maximum(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _h_max2(a, dim):
    return tl.reduce(a, dim, _h_maximum)


# ---- Triton kernel triton_red_fused__log_softmax_amax_div_mul_sub_sum_0 <- aten.mul, aten.amax, aten.sub, aten.div, aten._log_softmax, aten.sum
@triton.jit
def triton_red_fused__log_softmax_amax_div_mul_sub_sum_0(in_ptr0, out_ptr0, out_ptr1, out_ptr2, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    xnumel = 2048
    r0_numel = 32003
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = xindex
    _tmp4 = tl.full([XBLOCK, R0_BLOCK], float('-inf'), tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_1 = r0_index
        tmp0 = tl.load(in_ptr0 + (r0_1 + 32003 * x0), r0_mask & xmask, eviction_policy='evict_last', other=0.0)
        tmp1 = tl.full([1, 1], 1.0, tl.float32)
        tmp2 = tmp0 * tmp1
        tmp3 = tl.broadcast_to(tmp2, [XBLOCK, R0_BLOCK])
        tmp5 = tl.maximum(_tmp4, tmp3, propagate_nan=tl.PropagateNan.ALL)
        _tmp4 = tl.where(r0_mask & xmask, tmp5, _tmp4)
    tmp4 = _h_max2(_tmp4, 1)[:, None]
    tl.store(out_ptr0 + x0, tmp4, xmask)
    _tmp14 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_1 = r0_index
        tmp6 = tl.load(in_ptr0 + (r0_1 + 32003 * x0), r0_mask & xmask, eviction_policy='evict_last', other=0.0)
        tmp7 = tl.full([1, 1], 1.0, tl.float32)
        tmp8 = tmp6 * tmp7
        tmp9 = tmp8 - tmp4
        tmp10 = tl.full([1, 1], 1.4285714285714286, tl.float32)
        tmp11 = tmp9 * tmp10
        tmp12 = libdevice.exp(tmp11)
        tmp13 = tl.broadcast_to(tmp12, [XBLOCK, R0_BLOCK])
        tmp15 = _tmp14 + tmp13
        _tmp14 = tl.where(r0_mask & xmask, tmp15, _tmp14)
    tmp14 = tl.sum(_tmp14, 1)[:, None]
    tl.store(out_ptr1 + x0, tmp14, xmask)
    _tmp25 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_1 = r0_index
        tmp16 = tl.load(in_ptr0 + (r0_1 + 32003 * x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
        tmp17 = tl.full([1, 1], 1.0, tl.float32)
        tmp18 = tmp16 * tmp17
        tmp19 = tmp18 - tmp4
        tmp20 = tl.full([1, 1], 1.4285714285714286, tl.float32)
        tmp21 = tmp19 * tmp20
        tmp22 = tl.math.log(tmp14)
        tmp23 = tmp21 - tmp22
        tmp24 = tl.broadcast_to(tmp23, [XBLOCK, R0_BLOCK])
        tmp26 = _tmp25 + tmp24
        _tmp25 = tl.where(r0_mask & xmask, tmp26, _tmp25)
    tmp25 = tl.sum(_tmp25, 1)[:, None]
    tl.store(out_ptr2 + x0, tmp25, xmask)


# ---- Triton kernel triton_red_fused__log_softmax_add_bitwise_not_div_eq_masked_fill_mul_neg_nll_loss_forward_sub_sum_1 <- aten.nll_loss_forward, aten.mul, aten.sub, aten.div, aten._log_softmax, aten.eq, aten.masked_fill, aten.neg, aten.sum, aten.bitwise_not, aten.add
@triton.jit
def triton_red_fused__log_softmax_add_bitwise_not_div_eq_masked_fill_mul_neg_nll_loss_forward_sub_sum_1(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    xnumel = 1
    r0_numel = 2048
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    _tmp24 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    _tmp28 = tl.full([XBLOCK, R0_BLOCK], 0, tl.int64)
    _tmp35 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    _tmp40 = tl.full([XBLOCK, R0_BLOCK], 0, tl.int64)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_0 = r0_index
        tmp0 = tl.load(in_ptr0 + r0_0, r0_mask, eviction_policy='evict_first', other=0.0)
        tmp13 = tl.load(in_ptr2 + r0_0, r0_mask, eviction_policy='evict_first', other=0.0)
        tmp17 = tl.load(in_ptr3 + r0_0, r0_mask, eviction_policy='evict_first', other=0.0)
        tmp31 = tl.load(in_ptr4 + r0_0, r0_mask, eviction_policy='evict_first', other=0.0)
        tmp1 = tl.full([1, 1], -100, tl.int64)
        tmp2 = tmp0 != tmp1
        tmp3 = tl.full([1, 1], 0, tl.int64)
        tmp4 = tl.where(tmp2, tmp0, tmp3)
        tmp5 = tl.full([1, 1], 32003, tl.int32)
        tmp6 = tmp4 + tmp5
        tmp7 = tmp4 < 0
        tmp8 = tl.where(tmp7, tmp6, tmp4)
        tl.device_assert((0 <= tmp8) & (tmp8 < 32003) | ~r0_mask, 'index out of bounds: 0 <= tmp8 < 32003')
        tmp10 = tl.load(in_ptr1 + (tmp8 + 32003 * r0_0), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp11 = tl.full([1, 1], 1.0, tl.float32)
        tmp12 = tmp10 * tmp11
        tmp14 = tmp12 - tmp13
        tmp15 = tl.full([1, 1], 1.4285714285714286, tl.float32)
        tmp16 = tmp14 * tmp15
        tmp18 = tl.math.log(tmp17)
        tmp19 = tmp16 - tmp18
        tmp20 = -tmp19
        tmp21 = tl.full([1, 1], 0.0, tl.float32)
        tmp22 = tl.where(tmp2, tmp20, tmp21)
        tmp23 = tl.broadcast_to(tmp22, [XBLOCK, R0_BLOCK])
        tmp25 = _tmp24 + tmp23
        _tmp24 = tl.where(r0_mask, tmp25, _tmp24)
        tmp26 = tmp2.to(tl.int64)
        tmp27 = tl.broadcast_to(tmp26, [XBLOCK, R0_BLOCK])
        tmp29 = _tmp28 + tmp27
        _tmp28 = tl.where(r0_mask, tmp29, _tmp28)
        tmp30 = tmp0 == tmp1
        tmp32 = -tmp31
        tmp33 = tl.where(tmp30, tmp21, tmp32)
        tmp34 = tl.broadcast_to(tmp33, [XBLOCK, R0_BLOCK])
        tmp36 = _tmp35 + tmp34
        _tmp35 = tl.where(r0_mask, tmp36, _tmp35)
        tmp37 = tmp30 == 0
        tmp38 = tmp37.to(tl.int64)
        tmp39 = tl.broadcast_to(tmp38, [XBLOCK, R0_BLOCK])
        tmp41 = _tmp40 + tmp39
        _tmp40 = tl.where(r0_mask, tmp41, _tmp40)
    tmp24 = tl.sum(_tmp24, 1)[:, None]
    tmp28 = tl.sum(_tmp28, 1)[:, None]
    tmp35 = tl.sum(_tmp35, 1)[:, None]
    tmp40 = tl.sum(_tmp40, 1)[:, None]
    tmp42 = tmp28.to(tl.float32)
    tmp43 = tmp24 / tmp42
    tmp44 = tl.full([1, 1], 0.9, tl.float32)
    tmp45 = tmp43 * tmp44
    tmp46 = tmp40.to(tl.float32)
    tmp47 = tmp35 / tmp46
    tmp48 = tl.full([1, 1], 3.1247070587132457e-06, tl.float32)
    tmp49 = tmp47 * tmp48
    tmp50 = tmp45 + tmp49
    tl.debug_barrier()
    tl.store(in_out_ptr0 + tl.full([1, 1], 0, tl.int32).broadcast_to(XBLOCK, 1), tmp50, None)


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
    arg0_1, arg1_1, = args
    _device = arg0_1.device
    buf0 = torch.empty_strided((2048, 1), (1, 2048), dtype=torch.float32, device=_device)
    buf1 = torch.empty_strided((2048, 1), (1, 2048), dtype=torch.float32, device=_device)
    buf4 = torch.empty_strided((2048,), (1,), dtype=torch.float32, device=_device)
    # Triton kernel triton_red_fused__log_softmax_amax_div_mul_sub_sum_0 <- aten.mul, aten.amax, aten.sub, aten.div, aten._log_softmax, aten.sum
    triton_red_fused__log_softmax_amax_div_mul_sub_sum_0[lambda meta: (triton.cdiv(2048, meta['XBLOCK']),)](arg0_1, buf0, buf1, buf4, 2048, 32003, **LAUNCH_CONFIGS['triton_red_fused__log_softmax_amax_div_mul_sub_sum_0'])
    buf2 = torch.empty_strided((), (), dtype=torch.float32, device=_device)
    buf7 = buf2
    del buf2
    # Triton kernel triton_red_fused__log_softmax_add_bitwise_not_div_eq_masked_fill_mul_neg_nll_loss_forward_sub_sum_1 <- aten.nll_loss_forward, aten.mul, aten.sub, aten.div, aten._log_softmax, aten.eq, aten.masked_fill, aten.neg, aten.sum, aten.bitwise_not, aten.add
    triton_red_fused__log_softmax_add_bitwise_not_div_eq_masked_fill_mul_neg_nll_loss_forward_sub_sum_1[lambda meta: (triton.cdiv(1, meta['XBLOCK']),)](buf7, arg1_1, arg0_1, buf0, buf1, buf4, 1, 2048, **LAUNCH_CONFIGS['triton_red_fused__log_softmax_add_bitwise_not_div_eq_masked_fill_mul_neg_nll_loss_forward_sub_sum_1'])
    del arg0_1
    del arg1_1
    del buf0
    del buf1
    del buf4
    return (buf7,)


class ModelNew(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, logits, targets):
        with torch.no_grad():
            outs = _harvested_forward([logits, targets])
        return outs[0]
