# triton triton_poi_fused_abs_add_erf_exp_mul_neg_pow_sigmoid_sub_tanh_0: ops=aten.tanh, aten.sigmoid, aten.mul, aten.erf, aten.add, aten.abs, aten.pow, aten.neg, aten.exp, aten.sub launches=1 bytes=73728 flops=None
"""Harvested from torch.compile (Inductor) for problem 'pointwise_chain'.

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
    'triton_poi_fused_abs_add_erf_exp_mul_neg_pow_sigmoid_sub_tanh_0': {'XBLOCK': 256, 'num_warps': 4, 'num_stages': 1},
}


# ---- Triton kernel triton_poi_fused_abs_add_erf_exp_mul_neg_pow_sigmoid_sub_tanh_0 <- aten.tanh, aten.sigmoid, aten.mul, aten.erf, aten.add, aten.abs, aten.pow, aten.neg, aten.exp, aten.sub
@triton.jit
def triton_poi_fused_abs_add_erf_exp_mul_neg_pow_sigmoid_sub_tanh_0(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 6144
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + x0, xmask)
    tmp2 = tl.load(in_ptr1 + x0, xmask)
    tmp1 = libdevice.tanh(tmp0)
    tmp3 = tl.sigmoid(tmp2)
    tmp4 = tmp1 * tmp3
    tmp5 = tl.full([1], 0.5, tl.float32)
    tmp6 = tmp0 * tmp5
    tmp7 = libdevice.erf(tmp6)
    tmp8 = tmp4 + tmp7
    tmp9 = tl.math.abs(tmp8)
    tmp10 = tl.full([1], 1.0, tl.float32)
    tmp11 = tmp9 + tmp10
    tmp12 = tl.full([1], 1.5, tl.float32)
    tmp13 = libdevice.pow(tmp11, tmp12)
    tmp14 = -tmp2
    tmp15 = tmp14 * tmp2
    tmp16 = libdevice.exp(tmp15)
    tmp17 = tmp13 - tmp16
    tl.store(out_ptr0 + x0, tmp17, xmask)


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
    buf0 = torch.empty_strided((64, 96), (96, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_abs_add_erf_exp_mul_neg_pow_sigmoid_sub_tanh_0 <- aten.tanh, aten.sigmoid, aten.mul, aten.erf, aten.add, aten.abs, aten.pow, aten.neg, aten.exp, aten.sub
    triton_poi_fused_abs_add_erf_exp_mul_neg_pow_sigmoid_sub_tanh_0[lambda meta: (triton.cdiv(6144, meta['XBLOCK']),)](arg0_1, arg1_1, buf0, 6144, **LAUNCH_CONFIGS['triton_poi_fused_abs_add_erf_exp_mul_neg_pow_sigmoid_sub_tanh_0'])
    del arg0_1
    del arg1_1
    return (buf0,)


class ModelNew(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x, y):
        with torch.no_grad():
            outs = _harvested_forward([x, y])
        return outs[0]
