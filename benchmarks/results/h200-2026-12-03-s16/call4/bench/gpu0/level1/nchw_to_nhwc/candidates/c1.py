"""Harvested from torch.compile (Inductor) for problem 'nchw_to_nhwc'.

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
    'triton_poi_fused_clone_permute_0': {'YBLOCK': 64, 'XBLOCK': 16, 'num_warps': 4, 'num_stages': 1},
}


# ---- Triton kernel triton_poi_fused_clone_permute_0 <- aten.permute, aten.clone
@triton.jit
def triton_poi_fused_clone_permute_0(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 254016
    xnumel = 200
    yoffset = (tl.program_id(1) + tl.program_id(2) * tl.num_programs(1)) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = yindex < ynumel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y0 = yindex % 3969
    y1 = yindex // 3969
    y3 = yindex
    tmp0 = tl.load(in_ptr0 + (y0 + 3969 * x2 + 793800 * y1), xmask & ymask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (x2 + 200 * y3), tmp0, xmask & ymask)


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
    buf0 = torch.empty_strided((64, 63, 63, 200), (793800, 12600, 200, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_clone_permute_0 <- aten.permute, aten.clone
    triton_poi_fused_clone_permute_0[lambda meta: (triton.cdiv(200, meta['XBLOCK']), triton.cdiv(triton.cdiv(254016, meta['YBLOCK']), triton.cdiv(triton.cdiv(254016, meta['YBLOCK']), 65535)), triton.cdiv(triton.cdiv(254016, meta['YBLOCK']), 65535))](arg0_1, buf0, 254016, 200, **LAUNCH_CONFIGS['triton_poi_fused_clone_permute_0'])
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
