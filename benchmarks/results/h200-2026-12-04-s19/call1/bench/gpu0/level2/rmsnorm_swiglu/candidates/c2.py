"""Harvested from torch.compile (Inductor) for problem 'rmsnorm_swiglu'.

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
    'triton_per_fused_add_mean_mul_pow_rsqrt_0': {'XBLOCK': 1, 'num_warps': 1, 'num_stages': 1},
    'triton_poi_fused_mul_silu_split_1': {'XBLOCK': 2048, 'num_warps': 8, 'num_stages': 1},
}


# ---- Triton kernel triton_per_fused_add_mean_mul_pow_rsqrt_0 <- aten.pow, aten.mean, aten.add, aten.rsqrt, aten.mul
@triton.jit
def triton_per_fused_add_mean_mul_pow_rsqrt_0(in_ptr0, in_ptr1, out_ptr1, xnumel, r0_numel, XBLOCK: tl.constexpr):
    xnumel = 2048
    r0_numel = 1024
    R0_BLOCK: tl.constexpr = 1024
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 1024 * x0), xmask, other=0.0)
    tmp12 = tl.load(in_ptr1 + r0_1, None, eviction_policy='evict_last')
    tmp1 = tmp0 * tmp0
    tmp2 = tl.broadcast_to(tmp1, [XBLOCK, R0_BLOCK])
    tmp4 = tl.where(xmask, tmp2, 0)
    tmp5 = tl.sum(tmp4, 1)[:, None].to(tl.float32)
    tmp6 = tl.full([1, 1], 1024.0, tl.float32)
    tmp7 = tmp5 / tmp6
    tmp8 = tl.full([1, 1], 1e-06, tl.float32)
    tmp9 = tmp7 + tmp8
    tmp10 = libdevice.rsqrt(tmp9)
    tmp11 = tmp0 * tmp10
    tmp13 = tmp11 * tmp12
    tl.store(out_ptr1 + (r0_1 + 1024 * x0), tmp13, xmask)


# ---- Triton kernel triton_poi_fused_mul_silu_split_1 <- aten.split, aten.silu, aten.mul
@triton.jit
def triton_poi_fused_mul_silu_split_1(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 5767168
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex % 2816
    x1 = xindex // 2816
    x2 = xindex
    tmp0 = tl.load(in_ptr0 + (x0 + 5632 * x1), None)
    tmp6 = tl.load(in_ptr0 + (2816 + x0 + 5632 * x1), None)
    tmp1 = -tmp0
    tmp2 = libdevice.exp(tmp1)
    tmp3 = tl.full([1], 1.0, tl.float32)
    tmp4 = tmp2 + tmp3
    tmp5 = tmp0 / tmp4
    tmp7 = tmp5 * tmp6
    tl.store(out_ptr0 + x2, tmp7, None)


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
    buf1 = torch.empty_strided((2048, 1024), (1024, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_per_fused_add_mean_mul_pow_rsqrt_0 <- aten.pow, aten.mean, aten.add, aten.rsqrt, aten.mul
    triton_per_fused_add_mean_mul_pow_rsqrt_0[lambda meta: (triton.cdiv(2048, meta['XBLOCK']),)](arg0_1, arg1_1, buf1, 2048, 1024, **LAUNCH_CONFIGS['triton_per_fused_add_mean_mul_pow_rsqrt_0'])
    del arg0_1
    del arg1_1
    buf2 = torch.empty_strided((2048, 5632), (5632, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.mm via cuBLAS <- aten.pow, aten.mean, aten.add, aten.rsqrt, aten.mul, aten.t, aten.mm
    torch.mm(buf1, reinterpret_tensor(arg2_1, (1024, 5632), (1, 1024), 0), out=buf2)
    del arg2_1
    del buf1
    buf3 = torch.empty_strided((2048, 2816), (2816, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_mul_silu_split_1 <- aten.split, aten.silu, aten.mul
    triton_poi_fused_mul_silu_split_1[lambda meta: (triton.cdiv(5767168, meta['XBLOCK']),)](buf2, buf3, 5767168, **LAUNCH_CONFIGS['triton_poi_fused_mul_silu_split_1'])
    del buf2
    return (buf3,)


class ModelNew(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'norm_weight', (1024,), torch.float32, True)
        _declare(self, 'gate_up.weight', (5632, 1024), torch.float32, True)

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([x, self.norm_weight, self.gate_up.weight])
        return outs[0]
