"""Harvested from torch.compile (Inductor) for problem 'conv_bn_silu'.

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
    'triton_poi_fused__native_batch_norm_legit_no_training_silu_0': {'XBLOCK': 1024, 'num_warps': 8, 'num_stages': 1},
}


# ---- Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_silu_0 <- aten._native_batch_norm_legit_no_training, aten.silu
@triton.jit
def triton_poi_fused__native_batch_norm_legit_no_training_silu_0(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, xnumel, XBLOCK: tl.constexpr):
    xnumel = 18874368
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x3 = xindex
    x1 = xindex // 9216 % 128
    tmp0 = tl.load(in_out_ptr0 + x3, None)
    tmp1 = tl.load(in_ptr0 + x1, None, eviction_policy='evict_last')
    tmp3 = tl.load(in_ptr1 + x1, None, eviction_policy='evict_last')
    tmp12 = tl.load(in_ptr2 + x1, None, eviction_policy='evict_last')
    tmp14 = tl.load(in_ptr3 + x1, None, eviction_policy='evict_last')
    tmp2 = tmp0 - tmp1
    tmp4 = tl.full([1], 1e-05, tl.float32)
    tmp5 = tmp3 + tmp4
    tmp6 = tl.sqrt_rn(tmp5)
    tmp7 = tl.full([1], 1, tl.int32)
    tmp8 = tmp7 / tmp6
    tmp9 = tl.full([1], 1.0, tl.float32)
    tmp10 = tmp8 * tmp9
    tmp11 = tmp2 * tmp10
    tmp13 = tmp11 * tmp12
    tmp15 = tmp13 + tmp14
    tmp16 = -tmp15
    tmp17 = libdevice.exp(tmp16)
    tmp18 = tmp17 + tmp9
    tmp19 = tmp15 / tmp18
    tl.store(in_out_ptr0 + x3, tmp19, None)


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
    arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, arg5_1, = args
    _device = arg1_1.device
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution
    buf0 = torch.convolution(arg1_1, arg0_1, stride=(1, 1), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del arg0_1
    del arg1_1
    buf1 = buf0
    del buf0
    buf2 = buf1
    del buf1
    # Triton kernel triton_poi_fused__native_batch_norm_legit_no_training_silu_0 <- aten._native_batch_norm_legit_no_training, aten.silu
    triton_poi_fused__native_batch_norm_legit_no_training_silu_0[lambda meta: (triton.cdiv(18874368, meta['XBLOCK']),)](buf2, arg2_1, arg3_1, arg4_1, arg5_1, 18874368, **LAUNCH_CONFIGS['triton_poi_fused__native_batch_norm_legit_no_training_silu_0'])
    del arg2_1
    del arg3_1
    del arg4_1
    del arg5_1
    return (buf2,)


class ModelNew(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'conv.weight', (128, 64, 3, 3), torch.float32, True)
        _declare(self, 'bn.weight', (128,), torch.float32, True)
        _declare(self, 'bn.bias', (128,), torch.float32, True)
        _declare(self, 'bn.running_mean', (128,), torch.float32, False)
        _declare(self, 'bn.running_var', (128,), torch.float32, False)
        _declare(self, 'bn.num_batches_tracked', (), torch.int64, False)

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([self.conv.weight, x, self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias])
        return outs[0]
