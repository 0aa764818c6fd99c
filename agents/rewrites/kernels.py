"""KernelOPT's own Triton kernels that a rewritten forward calls; copied into candidates.

Like :mod:`helpers`, every function here is written to be copied: a wrapper and the
``@triton.jit`` kernels it launches need only ``torch``, ``triton`` and ``triton.language as
tl``. A wrapper called on meta tensors (the rewrite scan checks output shapes on the meta
device) returns an empty output of the right shape and launches nothing. On the CPU the gates
run the kernel through Triton's interpreter, so the CPU tests check the kernel itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import triton
import triton.language as tl


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


MAX_GRID_Y = 65535  # CUDA's limit on a grid's second dimension


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
    own_depthwise_conv2d_kernel[grid](
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
        num_warps=2,
    )
    return out


def kernelopt_avg_pool2d(x, kernel, stride, padding, divisor):
    """``F.avg_pool2d(x, kernel, stride, padding)`` without ceil mode, zero padding counted
    (the window's sum over ``divisor``), NCHW: the depthwise kernel's window loop with a
    constant weight, one program per block of output pixels of one plane. Each input plane is
    read from memory once and its overlapping windows are served from cache. Sums in float32
    in tap order, then scales by ``1 / divisor`` (a reassociation of the vendor's sum).
    """
    n, c, h, w = x.shape
    kh, kw = kernel
    sh, sw = stride
    ph, pw = padding
    h_out = (h + 2 * ph - kh) // sh + 1
    w_out = (w + 2 * pw - kw) // sw + 1
    out = torch.empty((n, c, h_out, w_out), device=x.device, dtype=x.dtype)
    if x.device.type == "meta" or out.numel() == 0:
        return out
    x = x.contiguous()
    block = max(16, min(256, triton.next_power_of_2(h_out * w_out)))
    while triton.cdiv(h_out * w_out, block) > MAX_GRID_Y and block < 4096:
        block *= 2
    if triton.cdiv(h_out * w_out, block) > MAX_GRID_Y:
        return torch.nn.functional.avg_pool2d(x, kernel, stride, padding, False, True, divisor)
    grid = (n * c, triton.cdiv(h_out * w_out, block))
    own_depthwise_conv2d_kernel[grid](
        x,
        x,
        x,
        out,
        c,
        h,
        w,
        h_out,
        w_out,
        1,
        SH=sh,
        SW=sw,
        PH=ph,
        PW=pw,
        DH=1,
        DW=1,
        KH=kh,
        KW=kw,
        HAS_BIAS=False,
        MB=1,
        BLOCK=block,
        AVG=True,
        SCALE=1.0 / divisor,
        num_warps=2,
    )
    return out


@triton.jit
def own_group_norm_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    out_ptr,
    GROUPS,
    HW,
    CG,
    GROUP_SIZE,
    eps,
    HAS_AFFINE: tl.constexpr,
    BLOCK: tl.constexpr,
):
    # One program: one (image, group), whose CG channels x HW elements are contiguous. The
    # statistics and the normalisation in one kernel: the second read of the group comes
    # right after the first, while its lines are likely still in L2.
    row = tl.program_id(0).to(tl.int64)  # image * GROUPS + group
    base = row * GROUP_SIZE
    first_channel = (row % GROUPS) * CG
    zero = tl.sum(tl.zeros([BLOCK], dtype=tl.float32), 0)
    mean, m2, count = zero, zero, zero
    for start in range(0, GROUP_SIZE, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < GROUP_SIZE
        v = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
        n_b = tl.minimum(GROUP_SIZE - start, BLOCK).to(tl.float32)
        mean_b = tl.sum(v, 0) / n_b
        d = tl.where(mask, v - mean_b, 0.0)
        m2_b = tl.sum(d * d, 0)
        # Chan's combination of the running (count, mean, M2) with this block's.
        total = count + n_b
        delta = mean_b - mean
        mean = mean + delta * (n_b / total)
        m2 = m2 + m2_b + delta * delta * (count * n_b / total)
        count = total
    rstd = 1.0 / tl.sqrt(m2 / count + eps)
    for start in range(0, GROUP_SIZE, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < GROUP_SIZE
        v = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
        y = (v - mean) * rstd
        if HAS_AFFINE:
            channel = first_channel + offs // HW
            gamma = tl.load(w_ptr + channel, mask=mask, other=1.0).to(tl.float32)
            beta = tl.load(b_ptr + channel, mask=mask, other=0.0).to(tl.float32)
            y = y * gamma + beta
        tl.store(out_ptr + base + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernelopt_group_norm(x, num_groups, weight, bias, eps):
    """``F.group_norm(x, num_groups, weight, bias, eps)`` (``x`` of shape ``(N, C, *)``) in
    one Triton kernel: one program per image and group computes the group's mean and variance
    (blockwise, combined by Chan's formula, in float32) and then normalises it, so the group is
    read twice back to back (the second time mostly from L2) and written once, where the usual
    two kernels (statistics, then normalisation) read it twice from memory. A reassociation of
    the vendor's sums.
    """
    n, c = x.shape[0], x.shape[1]
    hw = x.numel() // max(1, n * c)
    out = torch.empty(x.shape, device=x.device, dtype=x.dtype)
    if x.device.type == "meta" or out.numel() == 0:
        return out
    x = x.contiguous()
    cg = c // num_groups
    affine = weight is not None and bias is not None
    block = max(16, min(4096, triton.next_power_of_2(cg * hw)))
    own_group_norm_kernel[(n * num_groups,)](
        x,
        weight.contiguous() if affine else x,
        bias.contiguous() if affine else x,
        out,
        num_groups,
        hw,
        cg,
        cg * hw,
        float(eps),
        HAS_AFFINE=affine,
        BLOCK=block,
        num_warps=8 if block >= 2048 else 4,
    )
    return out


#: Each wrapper and the kernels it launches, in the order they are copied.
KERNEL_HELPERS: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    kernelopt_depthwise_conv2d.__name__: (
        kernelopt_depthwise_conv2d,
        (own_depthwise_conv2d_kernel,),
    ),
    kernelopt_avg_pool2d.__name__: (kernelopt_avg_pool2d, (own_depthwise_conv2d_kernel,)),
    kernelopt_group_norm.__name__: (kernelopt_group_norm, (own_group_norm_kernel,)),
}

#: Module constants the wrappers read, copied with them.
KERNEL_CONSTANTS = {"MAX_GRID_Y": MAX_GRID_Y}
