"""Harvested from torch.compile (Inductor) for problem 'linear_affine_chain'.

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
    'triton_poi_fused_mul_0': {'XBLOCK': 1024, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_add_mul_1': {'XBLOCK': 256, 'num_warps': 4, 'num_stages': 1},
}


# ---- Triton kernel triton_poi_fused_mul_0 <- aten.mul
@triton.jit
def triton_poi_fused_mul_0(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 16777216
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + x0, None)
    tmp1 = tl.full([1], 0.5833333333333333, tl.float32)
    tmp2 = tmp0 * tmp1
    tl.store(out_ptr0 + x0, tmp2, None)


# ---- Triton kernel triton_poi_fused_add_mul_1 <- aten.mul, aten.add
@triton.jit
def triton_poi_fused_add_mul_1(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 8192
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + x0, None)
    tmp1 = tl.full([1], 0.5833333333333333, tl.float32)
    tmp2 = tmp0 * tmp1
    tmp3 = tl.full([1], -0.08333333333333334, tl.float32)
    tmp4 = tmp2 + tmp3
    tl.store(out_ptr0 + x0, tmp4, None)


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
    buf0 = torch.empty_strided((8192, 2048), (2048, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_mul_0 <- aten.mul
    triton_poi_fused_mul_0[lambda meta: (triton.cdiv(16777216, meta['XBLOCK']),)](arg0_1, buf0, 16777216, **LAUNCH_CONFIGS['triton_poi_fused_mul_0'])
    del arg0_1
    buf1 = torch.empty_strided((8192,), (1,), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_mul_1 <- aten.mul, aten.add
    triton_poi_fused_add_mul_1[lambda meta: (triton.cdiv(8192, meta['XBLOCK']),)](arg1_1, buf1, 8192, **LAUNCH_CONFIGS['triton_poi_fused_add_mul_1'])
    del arg1_1
    buf2 = torch.empty_strided((8192, 8192), (8192, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.addmm via cuBLAS <- aten.mul, aten.add, aten.t, aten.addmm
    torch.addmm(buf1, arg2_1, reinterpret_tensor(buf0, (2048, 8192), (1, 2048), 0), alpha=1, beta=1, out=buf2)
    del arg2_1
    del buf0
    del buf1
    return (buf2,)


class ModelNew(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'linear.weight', (8192, 2048), torch.float32, True)
        _declare(self, 'linear.bias', (8192,), torch.float32, True)

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([self.linear.weight, self.linear.bias, x])
        return outs[0]
