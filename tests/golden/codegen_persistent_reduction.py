"""Harvested from torch.compile (Inductor).

Editable candidate: each Triton kernel below is Inductor's generated code as a plain
@triton.jit function; vendor-library calls (cuBLAS/cuDNN) are kept and labelled.
Shapes are static: the code is specialised to the problem's input shapes.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

aten = torch.ops.aten

# Launch configurations (block sizes, warps, stages) per kernel: the Tuner edits
# only this dict; grids follow the block sizes through `meta`.
LAUNCH_CONFIGS = {
    'triton_poi_fused_add_convolution_relu_0': {'XBLOCK': 512, 'num_warps': 4, 'num_stages': 1},
    'triton_red_fused_sum_1': {'XBLOCK': 2, 'num_warps': 2, 'num_stages': 1},
}


# ---- Triton kernel triton_poi_fused_add_convolution_relu_0 <- aten.convolution, aten.relu, aten.add
@triton.jit
def triton_poi_fused_add_convolution_relu_0(in_out_ptr0, in_ptr0, in_ptr1, xnumel, XBLOCK: tl.constexpr):
    xnumel = 3136
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x3 = xindex
    x1 = xindex // 196 % 8
    tmp0 = tl.load(in_out_ptr0 + x3, xmask)
    tmp1 = tl.load(in_ptr0 + x1, xmask, eviction_policy='evict_last')
    tmp5 = tl.load(in_ptr1 + x1, xmask, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tmp3 = tl.full([1], 0, tl.int32)
    tmp4 = tl.maximum(tmp3, tmp2, propagate_nan=tl.PropagateNan.ALL)
    tmp6 = tmp4 + tmp5
    tl.store(in_out_ptr0 + x3, tmp6, xmask)


# ---- Triton kernel triton_red_fused_sum_1 <- aten.sum
@triton.jit
def triton_red_fused_sum_1(in_ptr0, out_ptr0, xnumel, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    xnumel = 16
    rnumel = 196
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    rbase = tl.arange(0, RBLOCK)[None, :]
    x0 = xindex
    _tmp2 = tl.full([XBLOCK, RBLOCK], 0, tl.float32)
    for roffset in range(0, rnumel, RBLOCK):
        rindex = roffset + rbase
        rmask = rindex < rnumel
        r1 = rindex
        tmp0 = tl.load(in_ptr0 + (r1 + 196 * x0), rmask & xmask, eviction_policy='evict_first', other=0.0)
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, RBLOCK])
        tmp3 = _tmp2 + tmp1
        _tmp2 = tl.where(rmask & xmask, tmp3, _tmp2)
    tmp2 = tl.sum(_tmp2, 1)[:, None]
    tl.store(out_ptr0 + x0, tmp2, xmask)


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
    _device = arg2_1.device
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution
    buf0 = torch.convolution(arg2_1, arg0_1, stride=(1, 1), padding=(0, 0), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del arg0_1
    buf1 = buf0
    del buf0
    # Triton kernel triton_poi_fused_add_convolution_relu_0 <- aten.convolution, aten.relu, aten.add
    triton_poi_fused_add_convolution_relu_0[lambda meta: (triton.cdiv(3136, meta['XBLOCK']),)](buf1, arg1_1, arg3_1, 3136, **LAUNCH_CONFIGS['triton_poi_fused_add_convolution_relu_0'])
    del arg1_1
    del arg3_1
    buf2 = torch.empty_strided((2, 8), (8, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_red_fused_sum_1 <- aten.sum
    triton_red_fused_sum_1[lambda meta: (triton.cdiv(16, meta['XBLOCK']),)](buf1, buf2, 16, 196, RBLOCK=256, **LAUNCH_CONFIGS['triton_red_fused_sum_1'])
    return (buf1, buf2)


class ModelNew(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'bias', (8, 1, 1), torch.float32, True)
        _declare(self, 'conv.weight', (8, 3, 3, 3), torch.float32, True)
        _declare(self, 'conv.bias', (8,), torch.float32, True)

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([self.conv.weight, self.conv.bias, x, self.bias])
        return tuple(outs[:2])
