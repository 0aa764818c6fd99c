"""Harvested from torch.compile (Inductor) for problem 'pointwise_chain_small'.

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
    'triton_poi_fused_abs_add_clamp_exp_gt_mul_neg_rsub_sigmoid_tanh_where_0': {'XBLOCK': 256, 'num_warps': 8, 'num_stages': 1},
}


# ---- Triton kernel triton_poi_fused_abs_add_clamp_exp_gt_mul_neg_rsub_sigmoid_tanh_where_0 <- aten.mul, aten.add, aten.sigmoid, aten.rsub, aten.tanh, aten.abs, aten.neg, aten.exp, aten.clamp, aten.gt, aten.where
@triton.jit
def triton_poi_fused_abs_add_clamp_exp_gt_mul_neg_rsub_sigmoid_tanh_where_0(in_ptr0, in_ptr1, in_ptr2, in_ptr3, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 131072
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x2 = xindex
    x0 = xindex % 512
    tmp0 = tl.load(in_ptr0 + x2, None, eviction_policy='evict_first')
    tmp1 = tl.load(in_ptr1 + x0, None, eviction_policy='evict_last')
    tmp3 = tl.load(in_ptr2 + x0, None, eviction_policy='evict_last')
    tmp6 = tl.load(in_ptr3 + x2, None, eviction_policy='evict_first')
    tmp2 = tmp0 * tmp1
    tmp4 = tmp2 + tmp3
    tmp5 = tl.sigmoid(tmp4)
    tmp7 = tmp5 * tmp6
    tmp8 = tl.full([1], 1.0, tl.float32)
    tmp9 = tmp8 - tmp5
    tmp10 = tl.full([1], 0.5, tl.float32)
    tmp11 = tmp4 * tmp10
    tmp12 = tmp11 + tmp6
    tmp13 = libdevice.tanh(tmp12)
    tmp14 = tmp9 * tmp13
    tmp15 = tmp7 + tmp14
    tmp16 = tl.math.abs(tmp15)
    tmp17 = -tmp16
    tmp18 = libdevice.exp(tmp17)
    tmp19 = tmp15 * tmp18
    tmp20 = tl.full([1], -0.75, tl.float32)
    tmp21 = tl.maximum(tmp19, tmp20, propagate_nan=tl.PropagateNan.ALL)
    tmp22 = tl.full([1], 0.75, tl.float32)
    tmp23 = tl.minimum(tmp21, tmp22, propagate_nan=tl.PropagateNan.ALL)
    tmp24 = tl.full([1], 0.0, tl.float32)
    tmp25 = tmp23 > tmp24
    tmp26 = tl.full([1], 0.1, tl.float32)
    tmp27 = tmp23 * tmp26
    tmp28 = tl.where(tmp25, tmp23, tmp27)
    tl.store(out_ptr0 + x2, tmp28, None)


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
    arg0_1, arg1_1, arg2_1, arg3_1, = args
    _device = arg1_1.device
    buf0 = torch.empty_strided((256, 512), (512, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_abs_add_clamp_exp_gt_mul_neg_rsub_sigmoid_tanh_where_0 <- aten.mul, aten.add, aten.sigmoid, aten.rsub, aten.tanh, aten.abs, aten.neg, aten.exp, aten.clamp, aten.gt, aten.where
    triton_poi_fused_abs_add_clamp_exp_gt_mul_neg_rsub_sigmoid_tanh_where_0[lambda meta: (triton.cdiv(131072, meta['XBLOCK']),)](arg1_1, arg0_1, arg2_1, arg3_1, buf0, 131072, **LAUNCH_CONFIGS['triton_poi_fused_abs_add_clamp_exp_gt_mul_neg_rsub_sigmoid_tanh_where_0'])
    del arg0_1
    del arg1_1
    del arg2_1
    del arg3_1
    return (buf0,)


class ModelNew(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'scale', (512,), torch.float32, True)
        _declare(self, 'shift', (512,), torch.float32, True)

    def forward(self, x, state):
        with torch.no_grad():
            outs = _harvested_forward([self.scale, x, self.shift, state])
        return outs[0]
