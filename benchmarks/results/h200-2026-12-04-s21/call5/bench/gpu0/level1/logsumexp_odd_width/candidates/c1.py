"""Harvested from torch.compile (Inductor) for problem 'logsumexp_odd_width'.

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
    'triton_red_fused_logsumexp_0': {'XBLOCK': 1, 'R0_BLOCK': 2048, 'num_warps': 16, 'num_stages': 1},
}


# ---- helpers the kernels call (plain tl, NaN- and tie-exact as Inductor's)
@triton.jit
def _h_maximum(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _h_max2(a, dim):
    return tl.reduce(a, dim, _h_maximum)


# ---- Triton kernel triton_red_fused_logsumexp_0 <- aten.logsumexp
@triton.jit
def triton_red_fused_logsumexp_0(in_out_ptr0, in_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    xnumel = 12288
    r0_numel = 5003
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = xindex
    _tmp2 = tl.full([XBLOCK, R0_BLOCK], float('-inf'), tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_1 = r0_index
        tmp0 = tl.load(in_ptr0 + (r0_1 + 5003 * x0), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
        tmp3 = tl.maximum(_tmp2, tmp1, propagate_nan=tl.PropagateNan.ALL)
        _tmp2 = tl.where(r0_mask, tmp3, _tmp2)
    tmp2 = _h_max2(_tmp2, 1)[:, None]
    _tmp13 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_1 = r0_index
        tmp4 = tl.load(in_ptr0 + (r0_1 + 5003 * x0), r0_mask, eviction_policy='evict_first', other=0.0)
        tmp5 = tl.math.abs(tmp2)
        tmp6 = tl.full([1, 1], float('inf'), tl.float32)
        tmp7 = tmp5 == tmp6
        tmp8 = tl.full([1, 1], 0.0, tl.float32)
        tmp9 = tl.where(tmp7, tmp8, tmp2)
        tmp10 = tmp4 - tmp9
        tmp11 = libdevice.exp(tmp10)
        tmp12 = tl.broadcast_to(tmp11, [XBLOCK, R0_BLOCK])
        tmp14 = _tmp13 + tmp12
        _tmp13 = tl.where(r0_mask, tmp14, _tmp13)
    tmp13 = tl.sum(_tmp13, 1)[:, None]
    tmp15 = tl.math.log(tmp13)
    tmp16 = tl.math.abs(tmp2)
    tmp17 = tl.full([1, 1], float('inf'), tl.float32)
    tmp18 = tmp16 == tmp17
    tmp19 = tl.full([1, 1], 0.0, tl.float32)
    tmp20 = tl.where(tmp18, tmp19, tmp2)
    tmp21 = tmp15 + tmp20
    tl.debug_barrier()
    tl.store(in_out_ptr0 + x0, tmp21, None)


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
    arg0_1, = args
    _device = arg0_1.device
    buf1 = torch.empty_strided((12288,), (1,), dtype=torch.float32, device=_device)
    buf2 = buf1
    del buf1
    # Triton kernel triton_red_fused_logsumexp_0 <- aten.logsumexp
    triton_red_fused_logsumexp_0[lambda meta: (triton.cdiv(12288, meta['XBLOCK']),)](buf2, arg0_1, 12288, 5003, **LAUNCH_CONFIGS['triton_red_fused_logsumexp_0'])
    del arg0_1
    return (buf2,)


class ModelNew(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([x])
        return outs[0]
