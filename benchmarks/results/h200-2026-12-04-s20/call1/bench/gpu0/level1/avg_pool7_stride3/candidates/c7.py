"""Harvested from torch.compile (Inductor) for problem 'avg_pool7_stride3'.

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
    'triton_poi_fused_avg_pool2d_0': {'XBLOCK': 512, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused_avg_pool2d_1': {'XBLOCK': 256, 'num_warps': 8, 'num_stages': 1},
}


# ---- Triton kernel triton_poi_fused_avg_pool2d_0 <- aten.avg_pool2d
@triton.jit
def triton_poi_fused_avg_pool2d_0(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 10485760
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex % 64
    x1 = xindex // 64 % 20
    x2 = xindex // 1280
    x3 = xindex
    tmp0 = tl.load(in_ptr0 + (x0 + 192 * x1 + 4096 * x2), None)
    tmp1 = tl.load(in_ptr0 + (64 + x0 + 192 * x1 + 4096 * x2), None)
    tmp3 = tl.load(in_ptr0 + (128 + x0 + 192 * x1 + 4096 * x2), None)
    tmp5 = tl.load(in_ptr0 + (192 + x0 + 192 * x1 + 4096 * x2), None)
    tmp7 = tl.load(in_ptr0 + (256 + x0 + 192 * x1 + 4096 * x2), None)
    tmp9 = tl.load(in_ptr0 + (320 + x0 + 192 * x1 + 4096 * x2), None)
    tmp11 = tl.load(in_ptr0 + (384 + x0 + 192 * x1 + 4096 * x2), None)
    tmp2 = tmp0 + tmp1
    tmp4 = tmp2 + tmp3
    tmp6 = tmp4 + tmp5
    tmp8 = tmp6 + tmp7
    tmp10 = tmp8 + tmp9
    tmp12 = tmp10 + tmp11
    tmp13 = tl.full([1], 7.0, tl.float32)
    tmp14 = tmp12 / tmp13
    tl.store(out_ptr0 + x3, tmp14, None)


# ---- Triton kernel triton_poi_fused_avg_pool2d_1 <- aten.avg_pool2d
@triton.jit
def triton_poi_fused_avg_pool2d_1(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 3276800
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex % 20
    x1 = xindex // 20
    x2 = xindex
    tmp0 = tl.load(in_ptr0 + (3 * x0 + 64 * x1), None, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr0 + (1 + 3 * x0 + 64 * x1), None, eviction_policy='evict_last')
    tmp3 = tl.load(in_ptr0 + (2 + 3 * x0 + 64 * x1), None, eviction_policy='evict_last')
    tmp5 = tl.load(in_ptr0 + (3 + 3 * x0 + 64 * x1), None, eviction_policy='evict_last')
    tmp7 = tl.load(in_ptr0 + (4 + 3 * x0 + 64 * x1), None, eviction_policy='evict_last')
    tmp9 = tl.load(in_ptr0 + (5 + 3 * x0 + 64 * x1), None, eviction_policy='evict_last')
    tmp11 = tl.load(in_ptr0 + (6 + 3 * x0 + 64 * x1), None, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tmp4 = tmp2 + tmp3
    tmp6 = tmp4 + tmp5
    tmp8 = tmp6 + tmp7
    tmp10 = tmp8 + tmp9
    tmp12 = tmp10 + tmp11
    tmp13 = tl.full([1], 7.0, tl.float32)
    tmp14 = tmp12 / tmp13
    tl.store(out_ptr0 + x2, tmp14, None)


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
    buf0 = torch.empty_strided((32, 256, 20, 64), (327680, 1280, 64, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_avg_pool2d_0 <- aten.avg_pool2d
    triton_poi_fused_avg_pool2d_0[lambda meta: (triton.cdiv(10485760, meta['XBLOCK']),)](arg0_1, buf0, 10485760, **LAUNCH_CONFIGS['triton_poi_fused_avg_pool2d_0'])
    del arg0_1
    buf1 = torch.empty_strided((32, 256, 20, 20), (102400, 400, 20, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_avg_pool2d_1 <- aten.avg_pool2d
    triton_poi_fused_avg_pool2d_1[lambda meta: (triton.cdiv(3276800, meta['XBLOCK']),)](buf0, buf1, 3276800, **LAUNCH_CONFIGS['triton_poi_fused_avg_pool2d_1'])
    del buf0
    return (buf1,)


class ModelNew(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([x])
        return outs[0]
