"""Mobile-net stage: two inverted-residual blocks (1x1 expand, depthwise 3x3, 1x1 project, BN)."""

import os

import torch
import torch.nn as nn
import torch.nn.functional as F


def _trained_bn(channels: int) -> nn.BatchNorm2d:
    bn = nn.BatchNorm2d(channels)
    with torch.no_grad():  # trained-looking statistics, so eval-mode BN is not the identity
        bn.running_mean.normal_(0.0, 0.3)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.normal_(0.0, 0.1)
    return bn


class InvertedResidual(nn.Module):
    def __init__(self, channels: int, expand: int):
        super().__init__()
        hidden = channels * expand
        self.expand = nn.Conv2d(channels, hidden, 1, bias=False)
        self.bn1 = _trained_bn(hidden)
        self.dw = nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden, bias=False)
        self.bn2 = _trained_bn(hidden)
        self.project = nn.Conv2d(hidden, channels, 1, bias=False)
        self.bn3 = _trained_bn(channels)

    def forward(self, x):
        h = F.relu6(self.bn1(self.expand(x)))
        h = F.relu6(self.bn2(self.dw(h)))
        return x + self.bn3(self.project(h))


class _KernelOptReference(nn.Module):
    def __init__(self, channels: int, expand: int, blocks: int):
        super().__init__()
        self.blocks = nn.Sequential(*[InvertedResidual(channels, expand) for _ in range(blocks)])

    def forward(self, x):
        return self.blocks(x)


# --- KernelOPT graph rewrite: depthwise convolution as KernelOPT's own Triton kernel ---
import torch
import triton
import triton.language as tl


@triton.jit
def _kernelopt_depthwise_conv2d_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    out_ptr,
    C,
    H,
    W,
    H_OUT,
    W_OUT,
    M,
    SH: tl.constexpr,
    SW: tl.constexpr,
    PH: tl.constexpr,
    PW: tl.constexpr,
    DH: tl.constexpr,
    DW: tl.constexpr,
    KH: tl.constexpr,
    KW: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    MB: tl.constexpr,
    BLOCK: tl.constexpr,
):
    # One program: BLOCK output pixels of one (image, input channel) plane, for all M output
    # channels that read that input channel (acc is MB x BLOCK): the input is read once.
    plane = tl.program_id(0).to(tl.int64)  # image * C + input channel
    c = plane % C
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    hw_out = H_OUT * W_OUT
    in_pix = offs < hw_out
    oh = offs // W_OUT
    ow = offs % W_OUT
    ms = tl.arange(0, MB)
    in_m = ms < M
    oc = c * M + ms
    x_base = x_ptr + plane * H * W
    acc = tl.zeros((MB, BLOCK), dtype=tl.float32)
    for kh in tl.static_range(KH):
        ih = oh * SH - PH + kh * DH
        row_ok = in_pix & (ih >= 0) & (ih < H)
        for kw in tl.static_range(KW):
            iw = ow * SW - PW + kw * DW
            ok = row_ok & (iw >= 0) & (iw < W)
            v = tl.load(x_base + ih * W + iw, mask=ok, other=0.0).to(tl.float32)
            wv = tl.load(w_ptr + oc * (KH * KW) + (kh * KW + kw), mask=in_m, other=0.0)
            acc += wv.to(tl.float32)[:, None] * v[None, :]
    if HAS_BIAS:
        acc += tl.load(b_ptr + oc, mask=in_m, other=0.0).to(tl.float32)[:, None]
    image = plane // C
    rows = (image * C * M + oc) * hw_out
    ptrs = out_ptr + rows[:, None] + offs[None, :]
    tl.store(ptrs, acc.to(out_ptr.dtype.element_ty), mask=in_m[:, None] & in_pix[None, :])


def kernelopt_depthwise_conv2d(x, weight, bias, stride, padding, dilation):
    """``F.conv2d(x, weight, bias, stride, padding, dilation, groups=C)`` for a depthwise
    convolution (``C`` input channels, ``M * C`` output channels, zero padding), NCHW.

    One Triton program computes a block of output pixels of one image and input channel for
    all ``M`` output channels fed by it, so the input is read from memory once and each
    filter tap is a shifted, mostly coalesced load that the cache serves. Accumulates in
    float32 in tap order (a reassociation of the vendor kernel's sum).
    """
    n, c, h, w = x.shape
    c_out, _, kh, kw = weight.shape
    m = c_out // c
    sh, sw = stride
    ph, pw = padding
    dh, dw = dilation
    h_out = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    w_out = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = torch.empty((n, c_out, h_out, w_out), device=x.device, dtype=x.dtype)
    if x.device.type == "meta" or out.numel() == 0:
        return out
    x = x.contiguous()
    weight = weight.contiguous()
    block = max(16, min(512, triton.next_power_of_2(h_out * w_out)))
    grid = (n * c, triton.cdiv(h_out * w_out, block))
    _kernelopt_depthwise_conv2d_kernel[grid](
        x,
        weight,
        weight if bias is None else bias.contiguous(),
        out,
        c,
        h,
        w,
        h_out,
        w_out,
        m,
        SH=sh,
        SW=sw,
        PH=ph,
        PW=pw,
        DH=dh,
        DW=dw,
        KH=kh,
        KW=kw,
        HAS_BIAS=bias is not None,
        MB=triton.next_power_of_2(m),
        BLOCK=block,
        num_warps=4,
    )
    return out


kernelopt_jupyter_agents_rewrites_kernels_kernelopt_depthwise_conv2d = kernelopt_depthwise_conv2d



class ModelNew(_KernelOptReference):
    """The reference with its forward rewritten: depthwise convolution as KernelOPT's own Triton kernel."""

    def forward(self, x):
        blocks_0_expand_weight_1 = getattr(self.blocks, "0").expand.weight;  blocks_0_expand_weight_1 = None
        blocks_0_expand = getattr(self.blocks, "0").expand(x)
        blocks_0_bn1 = getattr(self.blocks, "0").bn1(blocks_0_expand);  blocks_0_expand = None
        relu6 = torch.nn.functional.relu6(blocks_0_bn1, inplace = False);  blocks_0_bn1 = None
        blocks_0_dw_weight = getattr(self.blocks, "0").dw.weight
        kernelopt_depthwise_conv2d = kernelopt_jupyter_agents_rewrites_kernels_kernelopt_depthwise_conv2d(relu6, blocks_0_dw_weight, None, (1, 1), (1, 1), (1, 1));  relu6 = blocks_0_dw_weight = None
        blocks_0_bn2 = getattr(self.blocks, "0").bn2(kernelopt_depthwise_conv2d);  kernelopt_depthwise_conv2d = None
        relu6_1 = torch.nn.functional.relu6(blocks_0_bn2, inplace = False);  blocks_0_bn2 = None
        blocks_0_project_weight_1 = getattr(self.blocks, "0").project.weight;  blocks_0_project_weight_1 = None
        blocks_0_project = getattr(self.blocks, "0").project(relu6_1);  relu6_1 = None
        blocks_0_bn3 = getattr(self.blocks, "0").bn3(blocks_0_project);  blocks_0_project = None
        add = x + blocks_0_bn3;  x = blocks_0_bn3 = None
        blocks_1_expand_weight_1 = getattr(self.blocks, "1").expand.weight;  blocks_1_expand_weight_1 = None
        blocks_1_expand = getattr(self.blocks, "1").expand(add)
        blocks_1_bn1 = getattr(self.blocks, "1").bn1(blocks_1_expand);  blocks_1_expand = None
        relu6_2 = torch.nn.functional.relu6(blocks_1_bn1, inplace = False);  blocks_1_bn1 = None
        blocks_1_dw_weight = getattr(self.blocks, "1").dw.weight
        kernelopt_depthwise_conv2d_1 = kernelopt_jupyter_agents_rewrites_kernels_kernelopt_depthwise_conv2d(relu6_2, blocks_1_dw_weight, None, (1, 1), (1, 1), (1, 1));  relu6_2 = blocks_1_dw_weight = None
        blocks_1_bn2 = getattr(self.blocks, "1").bn2(kernelopt_depthwise_conv2d_1);  kernelopt_depthwise_conv2d_1 = None
        relu6_3 = torch.nn.functional.relu6(blocks_1_bn2, inplace = False);  blocks_1_bn2 = None
        blocks_1_project_weight_1 = getattr(self.blocks, "1").project.weight;  blocks_1_project_weight_1 = None
        blocks_1_project = getattr(self.blocks, "1").project(relu6_3);  relu6_3 = None
        blocks_1_bn3 = getattr(self.blocks, "1").bn3(blocks_1_project);  blocks_1_project = None
        add_1 = add + blocks_1_bn3;  add = blocks_1_bn3 = None
        return add_1
    
