"""Depthwise 3x3 conv, channel multiplier 2 (Xception-style); torch.compile is weak here."""

import os

import torch
import torch.nn as nn

LAUNCH_CONFIGS = {
    'own_depthwise_conv2d_kernel': {'num_warps': 4, 'num_stages': 2},
}



class _KernelOptReference(nn.Module):
    def __init__(self, channels: int, multiplier: int, kernel: int):
        super().__init__()
        # groups == in_channels with twice the output channels: each input channel feeds two
        # filters. Measured on an H200 (torch 2.11): Inductor's version is ~5x slower than eager.
        self.dw = nn.Conv2d(
            channels, channels * multiplier, kernel, padding=kernel // 2, groups=channels
        )

    def forward(self, x):
        return self.dw(x)


# --- KernelOPT graph rewrite: depthwise convolution as KernelOPT's own Triton kernel ---
import torch
import triton
import triton.language as tl


MAX_GRID_Y = 65535


@triton.jit
def own_depthwise_conv2d_kernel(
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
    AVG: tl.constexpr = False,
    SCALE: tl.constexpr = 1.0,
):
    # One program: BLOCK output pixels of one (image, input channel) plane, for all M output
    # channels that read that input channel (acc is MB x BLOCK): the input is read once.
    # AVG: an average pool instead (M = 1, no weights): the window's sum times SCALE.
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
            if AVG:
                acc += v[None, :]
            else:
                wv = tl.load(w_ptr + oc * (KH * KW) + (kh * KW + kw), mask=in_m, other=0.0)
                acc += wv.to(tl.float32)[:, None] * v[None, :]
    if AVG:
        acc = acc * SCALE
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
    # 256 pixels and two warps per program: the fastest launch on all three depthwise convs
    # of the bench problems on the H200 (nineteenth session, BLOCK 128-2048 x 2/4/8 warps).
    block = max(16, min(256, triton.next_power_of_2(h_out * w_out)))
    while triton.cdiv(h_out * w_out, block) > MAX_GRID_Y and block < 4096:
        block *= 2  # a very large plane: fewer, larger programs (the grid's y limit)
    if triton.cdiv(h_out * w_out, block) > MAX_GRID_Y:
        return torch.conv2d(x, weight, bias, stride, padding, dilation, c)  # the vendor call
    grid = (n * c, triton.cdiv(h_out * w_out, block))
    own_depthwise_conv2d_kernel[grid](x, weight, weight if bias is None else bias.contiguous(), out, c, h, w, h_out, w_out, m, SH=sh, SW=sw, PH=ph, PW=pw, DH=dh, DW=dw, KH=kh, KW=kw, HAS_BIAS=bias is not None, MB=triton.next_power_of_2(m), BLOCK=block, **LAUNCH_CONFIGS['own_depthwise_conv2d_kernel'])
    return out


kernelopt_jupyter_agents_rewrites_kernels_kernelopt_depthwise_conv2d = kernelopt_depthwise_conv2d



class ModelNew(_KernelOptReference):
    """The reference with its forward rewritten: depthwise convolution as KernelOPT's own Triton kernel."""

    def forward(self, x):
        dw_weight = self.dw.weight
        dw_bias = self.dw.bias
        kernelopt_depthwise_conv2d = kernelopt_jupyter_agents_rewrites_kernels_kernelopt_depthwise_conv2d(x, dw_weight, dw_bias, (1, 1), (1, 1), (1, 1));  x = dw_weight = dw_bias = None
        return kernelopt_depthwise_conv2d
    
