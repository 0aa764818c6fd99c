"""Harvested from torch.compile (Inductor) for problem 'masked_scores_softmax'.

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
    'triton_red_fused__softmax_bitwise_not_exp_masked_fill_mul_prepare_softmax_online_sub_unsqueeze_0': {'XBLOCK': 4, 'R0_BLOCK': 1024, 'num_warps': 4, 'num_stages': 1},
}


# ---- helpers the kernels call (plain tl, NaN- and tie-exact as Inductor's)
@triton.jit
def _h_maximum(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _h_exp(x, use_fast_math: tl.constexpr):
    if use_fast_math:
        return tl.math.exp(x)
    else:
        return libdevice.exp(x)


@triton.jit
def _h_online_softmax_combine(lhs_max, lhs_sum, rhs_max, use_fast_math: tl.constexpr):
    # Fold one new element (rhs_max, with weight exp(0) = 1) into a running (max, sum).
    out_max = _h_maximum(lhs_max, rhs_max)
    lhs_scale = tl.where(out_max == float("-inf"), 1.0, _h_exp(lhs_max - out_max, use_fast_math))
    rhs_scale = tl.where(out_max == float("-inf"), 1.0, _h_exp(rhs_max - out_max, use_fast_math))
    return out_max, lhs_sum * lhs_scale + rhs_scale


@triton.jit
def _h_max2(a, dim):
    return tl.reduce(a, dim, _h_maximum)


@triton.jit
def _h_online_softmax_reduce(lhs_max, lhs_sum, dim, use_fast_math: tl.constexpr):
    # Collapse per-lane (max, sum of exp(x - max)) pairs along dim to one pair.
    out_max = _h_max2(lhs_max, dim)
    out_max_keep = tl.expand_dims(out_max, dim)
    delta = tl.where(out_max_keep == float("-inf"), 0, lhs_max - out_max_keep)
    out_sum = tl.sum(lhs_sum * _h_exp(delta, use_fast_math), dim)
    return out_max, out_sum


# ---- Triton kernel triton_red_fused__softmax_bitwise_not_exp_masked_fill_mul_prepare_softmax_online_sub_unsqueeze_0 <- aten.unsqueeze, aten.bitwise_not, aten.masked_fill, aten.mul, prims.prepare_softmax_online, aten.sub, aten.exp, aten._softmax
@triton.jit
def triton_red_fused__softmax_bitwise_not_exp_masked_fill_mul_prepare_softmax_online_sub_unsqueeze_0(in_out_ptr0, in_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    xnumel = 65536
    r0_numel = 1024
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x1 = xindex // 1024
    x3 = xindex
    _tmp8_max = tl.full([XBLOCK, R0_BLOCK], float('-inf'), tl.float32)
    _tmp8_sum = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_2 = r0_index
        tmp0 = tl.load(in_ptr0 + (r0_2 + 1024 * x1), r0_mask, eviction_policy='evict_last', other=0.0).to(tl.int1)
        tmp2 = tl.load(in_out_ptr0 + (r0_2 + 1024 * x3), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp1 = tmp0 == 0
        tmp3 = tl.full([1, 1], 0.125, tl.float32)
        tmp4 = tmp2 * tmp3
        tmp5 = tl.full([1, 1], float('-inf'), tl.float32)
        tmp6 = tl.where(tmp1, tmp5, tmp4)
        tmp7 = tl.broadcast_to(tmp6, [XBLOCK, R0_BLOCK])
        _tmp8_max_next, _tmp8_sum_next = _h_online_softmax_combine(_tmp8_max, _tmp8_sum, tmp7, False)
        _tmp8_max = tl.where(r0_mask, _tmp8_max_next, _tmp8_max)
        _tmp8_sum = tl.where(r0_mask, _tmp8_sum_next, _tmp8_sum)
    tmp8, tmp9 = _h_online_softmax_reduce(_tmp8_max, _tmp8_sum, 1, False)
    tmp8 = tmp8[:, None]
    tmp9 = tmp9[:, None]
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_2 = r0_index
        tmp10 = tl.load(in_ptr0 + (r0_2 + 1024 * x1), r0_mask, eviction_policy='evict_last', other=0.0).to(tl.int1)
        tmp12 = tl.load(in_out_ptr0 + (r0_2 + 1024 * x3), r0_mask, eviction_policy='evict_first', other=0.0)
        tmp11 = tmp10 == 0
        tmp13 = tl.full([1, 1], 0.125, tl.float32)
        tmp14 = tmp12 * tmp13
        tmp15 = tl.full([1, 1], float('-inf'), tl.float32)
        tmp16 = tl.where(tmp11, tmp15, tmp14)
        tmp17 = tmp16 - tmp8
        tmp18 = libdevice.exp(tmp17)
        tmp19 = tmp18 / tmp9
        tl.store(in_out_ptr0 + (r0_2 + 1024 * x3), tmp19, r0_mask)


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
    arg0_1, arg1_1, arg2_1, = args
    _device = arg0_1.device
    buf0 = torch.empty_strided((64, 1024, 1024), (1048576, 1024, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.bmm via cuBLAS <- aten.transpose, aten.bmm
    torch.bmm(arg1_1, reinterpret_tensor(arg0_1, (64, 64, 1024), (65536, 1, 64), 0), out=buf0)
    del arg0_1
    del arg1_1
    buf3 = buf0
    del buf0
    # Triton kernel triton_red_fused__softmax_bitwise_not_exp_masked_fill_mul_prepare_softmax_online_sub_unsqueeze_0 <- aten.unsqueeze, aten.bitwise_not, aten.masked_fill, aten.mul, prims.prepare_softmax_online, aten.sub, aten.exp, aten._softmax
    triton_red_fused__softmax_bitwise_not_exp_masked_fill_mul_prepare_softmax_online_sub_unsqueeze_0[lambda meta: (triton.cdiv(65536, meta['XBLOCK']),)](buf3, arg2_1, 65536, 1024, **LAUNCH_CONFIGS['triton_red_fused__softmax_bitwise_not_exp_masked_fill_mul_prepare_softmax_online_sub_unsqueeze_0'])
    del arg2_1
    return (buf3,)


class ModelNew(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, q, k, key_valid):
        with torch.no_grad():
            outs = _harvested_forward([k, q, key_valid])
        return outs[0]
