"""Harvested from torch.compile (Inductor) for problem 'cumsum_rows'.

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
    'triton_red_fused_cumsum_0': {'XBLOCK': 4, 'R0_BLOCK': 1024, 'num_warps': 16, 'num_stages': 1},
}


# ---- helpers the kernels call (plain tl, NaN- and tie-exact as Inductor's)
@triton.jit
def _h_select_one(x, mask, dim, keep_dims=False):
    # The one element along dim where mask holds: every other lane adds an exact zero.
    picked = tl.sum(tl.where(mask, x, 0), dim, keep_dims=keep_dims)
    return picked.to(x.dtype)


# ---- Triton kernel triton_red_fused_cumsum_0 <- aten.cumsum
@triton.jit
def _triton_helper_fn_add0(arg0_0, arg1_0):
    tmp0 = arg0_0 + arg1_0
    return tmp0


@triton.jit
def triton_red_fused_cumsum_0(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    xnumel = 32768
    r0_numel = 1999
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = xindex
    tmp3 = tl.full([XBLOCK, 1], float('nan'), tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_1 = r0_index
        tmp0 = tl.load(in_ptr0 + (r0_1 + 1999 * x0), r0_mask, eviction_policy='evict_first', other=0.0)
        tmp1 = tmp0.to(tl.float32)
        tmp2 = tl.broadcast_to(tmp1, [XBLOCK, R0_BLOCK])
        tmp4, = tl.associative_scan((tmp2,), 1, _triton_helper_fn_add0)
        tmp5 = _h_select_one(tmp4, rbase == RBLOCK - 1, dim=-1, keep_dims=True)
        tmp6 = tmp3 + tmp5
        tmp7 = tmp3 + tmp4
        tmp8 = tl.where(roffset > 0, tmp7, tmp4)
        tmp3 = tl.where(roffset > 0, tmp6, tmp5)
        tl.store(out_ptr0 + (r0_1 + 1999 * x0), tmp8, r0_mask)


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
    buf0 = torch.empty_strided((32768, 1999), (1999, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_red_fused_cumsum_0 <- aten.cumsum
    triton_red_fused_cumsum_0[lambda meta: (triton.cdiv(32768, meta['XBLOCK']),)](arg0_1, buf0, 32768, 1999, **LAUNCH_CONFIGS['triton_red_fused_cumsum_0'])
    del arg0_1
    return (buf0,)


class ModelNew(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([x])
        return outs[0]
