"""Harvested from torch.compile (Inductor) for problem 'linear_rowsum_logsumexp'.

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
    'triton_red_fused_logsumexp_relu_sum_0': {'XBLOCK': 1, 'R0_BLOCK': 2048, 'num_warps': 16, 'num_stages': 1},
}


# ---- Triton kernel triton_red_fused_logsumexp_relu_sum_0 <- aten.sum, aten.logsumexp, aten.relu
@triton.jit
def triton_red_fused_logsumexp_relu_sum_0(in_out_ptr0, in_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    xnumel = 8192
    r0_numel = 8192
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = xindex
    _tmp2 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_1 = r0_index
        tmp0 = tl.load(in_ptr0 + (r0_1 + 8192 * x0), r0_mask, eviction_policy='evict_first', other=0.0)
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
        tmp3 = _tmp2 + tmp1
        _tmp2 = tl.where(r0_mask, tmp3, _tmp2)
    tmp2 = tl.sum(_tmp2, 1)[:, None]
    tmp4 = tl.math.abs(tmp2)
    tmp5 = tl.full([1, 1], float('inf'), tl.float32)
    tmp6 = tmp4 == tmp5
    tmp7 = tl.full([1, 1], 0.0, tl.float32)
    tmp8 = tl.where(tmp6, tmp7, tmp2)
    tmp9 = tmp2 - tmp8
    tmp10 = libdevice.exp(tmp9)
    tmp11 = tl.math.log(tmp10)
    tmp12 = tmp11 + tmp8
    tmp13 = tl.full([1, 1], 0, tl.int32)
    tmp14 = tl.maximum(tmp13, tmp12, propagate_nan=tl.PropagateNan.ALL)
    tl.debug_barrier()
    tl.store(in_out_ptr0 + x0, tmp14, None)


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
    _device = arg2_1.device
    buf0 = torch.empty_strided((8192, 8192), (8192, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.addmm via cuBLAS <- aten.t, aten.addmm
    torch.addmm(arg1_1, arg2_1, reinterpret_tensor(arg0_1, (8192, 8192), (1, 8192), 0), alpha=1, beta=1, out=buf0)
    del arg0_1
    del arg1_1
    del arg2_1
    buf1 = torch.empty_strided((8192, 1), (1, 8192), dtype=torch.float32, device=_device)
    buf2 = reinterpret_tensor(buf1, (8192, 1), (1, 1), 0)
    del buf1
    # Triton kernel triton_red_fused_logsumexp_relu_sum_0 <- aten.sum, aten.logsumexp, aten.relu
    triton_red_fused_logsumexp_relu_sum_0[lambda meta: (triton.cdiv(8192, meta['XBLOCK']),)](buf2, buf0, 8192, 8192, **LAUNCH_CONFIGS['triton_red_fused_logsumexp_relu_sum_0'])
    del buf0
    return (buf2,)


class ModelNew(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'linear.weight', (8192, 8192), torch.float32, True)
        _declare(self, 'linear.bias', (8192,), torch.float32, True)

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([self.linear.weight, self.linear.bias, x])
        return outs[0]
