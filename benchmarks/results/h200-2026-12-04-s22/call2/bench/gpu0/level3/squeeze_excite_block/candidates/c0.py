"""Harvested from torch.compile (Inductor) for problem 'squeeze_excite_block'.

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
    'triton_poi_fused_convolution_0': {'YBLOCK': 32, 'XBLOCK': 32, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_convolution_1': {'YBLOCK': 64, 'XBLOCK': 16, 'num_warps': 4, 'num_stages': 1},
    'triton_red_fused__native_batch_norm_legit_no_training_mean_relu_2': {'XBLOCK': 64, 'R0_BLOCK': 64, 'num_warps': 16, 'num_stages': 1},
    'triton_poi_fused_addmm_relu_3': {'XBLOCK': 128, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_add_addmm_mul_sigmoid_unsqueeze_4': {'YBLOCK': 64, 'XBLOCK': 64, 'num_warps': 8, 'num_stages': 1},
}


# ---- Triton kernel triton_poi_fused_convolution_0 <- aten.convolution
@triton.jit
def triton_poi_fused_convolution_0(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 16384
    xnumel = 3136
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y3 = yindex
    y0 = yindex % 256
    y1 = yindex // 256
    tmp0 = tl.load(in_ptr0 + (x2 + 3136 * y3), xmask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 256 * x2 + 802816 * y1), tmp0, xmask)


# ---- Triton kernel triton_poi_fused_convolution_1 <- aten.convolution
@triton.jit
def triton_poi_fused_convolution_1(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 65536
    xnumel = 9
    yoffset = (tl.program_id(1) + tl.program_id(2) * tl.num_programs(1)) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = yindex < ynumel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y3 = yindex
    y0 = yindex % 256
    y1 = yindex // 256
    tmp0 = tl.load(in_ptr0 + (x2 + 9 * y3), xmask & ymask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 256 * x2 + 2304 * y1), tmp0, xmask & ymask)


# ---- Triton kernel triton_red_fused__native_batch_norm_legit_no_training_mean_relu_2 <- aten._native_batch_norm_legit_no_training, aten.relu, aten.mean
@triton.jit
def triton_red_fused__native_batch_norm_legit_no_training_mean_relu_2(in_out_ptr0, in_out_ptr1, in_ptr0, in_ptr1, in_ptr2, in_ptr3, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    xnumel = 16384
    r0_numel = 3136
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = xindex % 256
    x1 = xindex // 256
    tmp1 = tl.load(in_ptr0 + x0, None, eviction_policy='evict_last')
    tmp3 = tl.load(in_ptr1 + x0, None, eviction_policy='evict_last')
    tmp12 = tl.load(in_ptr2 + x0, None, eviction_policy='evict_last')
    tmp14 = tl.load(in_ptr3 + x0, None, eviction_policy='evict_last')
    _tmp19 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    x3 = xindex
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_2 = r0_index
        tmp0 = tl.load(in_out_ptr0 + (x0 + 256 * r0_2 + 802816 * x1), r0_mask, eviction_policy='evict_first', other=0.0)
        tmp2 = tmp0 - tmp1
        tmp4 = tl.full([1, 1], 1e-05, tl.float32)
        tmp5 = tmp3 + tmp4
        tmp6 = tl.sqrt_rn(tmp5)
        tmp7 = tl.full([1, 1], 1, tl.int32)
        tmp8 = tmp7 / tmp6
        tmp9 = tl.full([1, 1], 1.0, tl.float32)
        tmp10 = tmp8 * tmp9
        tmp11 = tmp2 * tmp10
        tmp13 = tmp11 * tmp12
        tmp15 = tmp13 + tmp14
        tmp16 = tl.full([1, 1], 0, tl.int32)
        tmp17 = tl.maximum(tmp16, tmp15, propagate_nan=tl.PropagateNan.ALL)
        tmp18 = tl.broadcast_to(tmp17, [XBLOCK, R0_BLOCK])
        tmp20 = _tmp19 + tmp18
        _tmp19 = tl.where(r0_mask, tmp20, _tmp19)
        tl.store(in_out_ptr0 + (x0 + 256 * r0_2 + 802816 * x1), tmp17, r0_mask)
    tmp19 = tl.sum(_tmp19, 1)[:, None]
    tmp21 = tl.full([1, 1], 3136.0, tl.float32)
    tmp22 = tmp19 / tmp21
    tl.debug_barrier()
    tl.store(in_out_ptr1 + x3, tmp22, None)


# ---- Triton kernel triton_poi_fused_addmm_relu_3 <- aten.addmm, aten.relu
@triton.jit
def triton_poi_fused_addmm_relu_3(in_out_ptr0, in_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 1024
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex % 16
    x2 = xindex
    tmp0 = tl.load(in_ptr0 + x0, xmask, eviction_policy='evict_last')
    tmp1 = tl.load(in_out_ptr0 + x2, xmask)
    tmp2 = tmp0 + tmp1
    tmp3 = tl.full([1], 0, tl.int32)
    tmp4 = tl.maximum(tmp3, tmp2, propagate_nan=tl.PropagateNan.ALL)
    tl.store(in_out_ptr0 + x2, tmp4, xmask)


# ---- Triton kernel triton_poi_fused_add_addmm_mul_sigmoid_unsqueeze_4 <- aten.addmm, aten.sigmoid, aten.unsqueeze, aten.mul, aten.add
@triton.jit
def triton_poi_fused_add_addmm_mul_sigmoid_unsqueeze_4(in_ptr0, in_ptr1, in_ptr2, in_ptr3, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 16384
    xnumel = 3136
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y0 = yindex % 256
    y1 = yindex // 256
    y3 = yindex
    tmp0 = tl.load(in_ptr0 + (y0 + 256 * x2 + 802816 * y1), xmask, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + y0, None, eviction_policy='evict_last')
    tmp2 = tl.load(in_ptr2 + y3, None, eviction_policy='evict_last')
    tmp6 = tl.load(in_ptr3 + (x2 + 3136 * y3), xmask, eviction_policy='evict_last')
    tmp3 = tmp1 + tmp2
    tmp4 = tl.sigmoid(tmp3)
    tmp5 = tmp0 * tmp4
    tmp7 = tmp5 + tmp6
    tl.store(out_ptr0 + (x2 + 3136 * y3), tmp7, xmask)


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
    arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, arg5_1, arg6_1, arg7_1, arg8_1, arg9_1, = args
    _device = arg1_1.device
    buf0 = torch.empty_strided((64, 256, 56, 56), (802816, 1, 14336, 256), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_0 <- aten.convolution
    triton_poi_fused_convolution_0[lambda meta: (triton.cdiv(3136, meta['XBLOCK']), triton.cdiv(16384, meta['YBLOCK']))](arg1_1, buf0, 16384, 3136, **LAUNCH_CONFIGS['triton_poi_fused_convolution_0'])
    buf1 = torch.empty_strided((256, 256, 3, 3), (2304, 1, 768, 256), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_1 <- aten.convolution
    triton_poi_fused_convolution_1[lambda meta: (triton.cdiv(9, meta['XBLOCK']), triton.cdiv(triton.cdiv(65536, meta['YBLOCK']), triton.cdiv(triton.cdiv(65536, meta['YBLOCK']), 65535)), triton.cdiv(triton.cdiv(65536, meta['YBLOCK']), 65535))](arg0_1, buf1, 65536, 9, **LAUNCH_CONFIGS['triton_poi_fused_convolution_1'])
    del arg0_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution
    buf2 = torch.convolution(buf0, buf1, stride=(1, 1), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del buf0
    del buf1
    buf3 = buf2
    del buf2
    buf4 = torch.empty_strided((64, 256), (256, 1), dtype=torch.float32, device=_device)
    buf5 = buf4
    del buf4
    # Triton kernel triton_red_fused__native_batch_norm_legit_no_training_mean_relu_2 <- aten._native_batch_norm_legit_no_training, aten.relu, aten.mean
    triton_red_fused__native_batch_norm_legit_no_training_mean_relu_2[lambda meta: (triton.cdiv(16384, meta['XBLOCK']),)](buf3, buf5, arg2_1, arg3_1, arg4_1, arg5_1, 16384, 3136, **LAUNCH_CONFIGS['triton_red_fused__native_batch_norm_legit_no_training_mean_relu_2'])
    del arg2_1
    del arg3_1
    del arg4_1
    del arg5_1
    buf6 = torch.empty_strided((64, 16), (16, 1), dtype=torch.float32, device=_device)
    # vendor call (kept): aten.mm via cuBLAS <- aten.mean, aten.t, aten.addmm
    torch.mm(buf5, reinterpret_tensor(arg6_1, (256, 16), (1, 256), 0), out=buf6)
    del arg6_1
    buf7 = buf6
    del buf6
    # Triton kernel triton_poi_fused_addmm_relu_3 <- aten.addmm, aten.relu
    triton_poi_fused_addmm_relu_3[lambda meta: (triton.cdiv(1024, meta['XBLOCK']),)](buf7, arg7_1, 1024, **LAUNCH_CONFIGS['triton_poi_fused_addmm_relu_3'])
    del arg7_1
    buf8 = buf5
    del buf5
    # vendor call (kept): aten.mm via cuBLAS <- aten.addmm, aten.relu, aten.t
    torch.mm(buf7, reinterpret_tensor(arg8_1, (16, 256), (1, 16), 0), out=buf8)
    del arg8_1
    del buf7
    buf9 = torch.empty_strided((64, 256, 56, 56), (802816, 3136, 56, 1), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_add_addmm_mul_sigmoid_unsqueeze_4 <- aten.addmm, aten.sigmoid, aten.unsqueeze, aten.mul, aten.add
    triton_poi_fused_add_addmm_mul_sigmoid_unsqueeze_4[lambda meta: (triton.cdiv(3136, meta['XBLOCK']), triton.cdiv(16384, meta['YBLOCK']))](buf3, arg9_1, buf8, arg1_1, buf9, 16384, 3136, **LAUNCH_CONFIGS['triton_poi_fused_add_addmm_mul_sigmoid_unsqueeze_4'])
    del arg1_1
    del arg9_1
    del buf3
    del buf8
    return (buf9,)


class ModelNew(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'conv.weight', (256, 256, 3, 3), torch.float32, True)
        _declare(self, 'bn.weight', (256,), torch.float32, True)
        _declare(self, 'bn.bias', (256,), torch.float32, True)
        _declare(self, 'bn.running_mean', (256,), torch.float32, False)
        _declare(self, 'bn.running_var', (256,), torch.float32, False)
        _declare(self, 'bn.num_batches_tracked', (), torch.int64, False)
        _declare(self, 'fc1.weight', (16, 256), torch.float32, True)
        _declare(self, 'fc1.bias', (16,), torch.float32, True)
        _declare(self, 'fc2.weight', (256, 16), torch.float32, True)
        _declare(self, 'fc2.bias', (256,), torch.float32, True)

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([self.conv.weight, x, self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias, self.fc1.weight, self.fc1.bias, self.fc2.weight, self.fc2.bias])
        return outs[0]
