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

from kernelopt_jupyter.agents.rewrites.conv_transpose import CONV_TRANSPOSE_KERNEL_HELPERS
from kernelopt_jupyter.agents.rewrites.epilogue import (
    EPILOGUE_HELPERS,
    own_epilogue_apply,
    own_epilogue_program,
)
from kernelopt_jupyter.agents.rewrites.family_kernels import (
    FAMILY_KERNEL_CONSTANTS,
    FAMILY_KERNEL_HELPERS,
)


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
    # of the bench problems on the H200 (BLOCK 128-2048 x 2/4/8 warps measured).
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
    ep_ptr,
    GROUPS,
    HW,
    CG,
    GROUP_SIZE,
    eps,
    HAS_AFFINE: tl.constexpr,
    BLOCK: tl.constexpr,
    EPILOGUE: tl.constexpr,
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
        if len(EPILOGUE) > 0:  # the pointwise ops after the norm (epilogue.py), in float32
            y = own_epilogue_apply(y, base + offs, mask, ep_ptr, EPILOGUE)
        tl.store(out_ptr + base + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def own_group_norm_rows_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    out_ptr,
    ep_ptr,
    ROWS_TOTAL,
    GROUPS,
    HW,
    CG,
    GROUP_SIZE,
    eps,
    HAS_AFFINE: tl.constexpr,
    ROWS: tl.constexpr,
    BLOCK: tl.constexpr,
    EPILOGUE: tl.constexpr,
):
    # Small groups: one program normalises ROWS (image, group) rows, each whole in one BLOCK
    # of registers (mean, then the squared deviations from it), where one program per group
    # would leave most of its lanes idle and launch a program per few elements.
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    ok = (rows < ROWS_TOTAL)[:, None] & (cols < GROUP_SIZE)[None, :]
    offs = rows[:, None] * GROUP_SIZE + cols[None, :]
    v = tl.load(x_ptr + offs, mask=ok, other=0.0).to(tl.float32)
    mean = tl.sum(v, 1) / GROUP_SIZE
    d = tl.where(ok, v - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, 1) / GROUP_SIZE + eps)
    y = d * rstd[:, None]
    if HAS_AFFINE:
        channel = (rows % GROUPS)[:, None] * CG + (cols // HW)[None, :]
        gamma = tl.load(w_ptr + channel, mask=ok, other=1.0).to(tl.float32)
        beta = tl.load(b_ptr + channel, mask=ok, other=0.0).to(tl.float32)
        y = y * gamma + beta
    if len(EPILOGUE) > 0:  # the pointwise ops after the norm (epilogue.py), in float32
        y = own_epilogue_apply(y, offs, ok, ep_ptr, EPILOGUE)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=ok)


#: Groups of at most this many elements are normalised many to a program
#: (``own_group_norm_rows_kernel``), about this many elements per program.
SMALL_GROUP = 256
ROWS_ELEMENTS = 2048


def kernelopt_group_norm(x, num_groups, weight, bias, eps, epilogue=(), operands=()):
    """``F.group_norm(x, num_groups, weight, bias, eps)`` (``x`` of shape ``(N, C, *)``), then
    the pointwise ``epilogue`` over ``operands`` (``epilogue.py``), in one Triton kernel: one program per image and group computes the group's mean and variance
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
    program, ep = own_epilogue_program(epilogue, operands, x.shape, out)
    if cg * hw <= SMALL_GROUP:
        rows = max(1, ROWS_ELEMENTS // block)
        own_group_norm_rows_kernel[(triton.cdiv(n * num_groups, rows),)](
            x,
            weight.contiguous() if affine else x,
            bias.contiguous() if affine else x,
            out,
            ep,
            n * num_groups,
            num_groups,
            hw,
            cg,
            cg * hw,
            float(eps),
            HAS_AFFINE=affine,
            ROWS=rows,
            BLOCK=block,
            EPILOGUE=program,
            num_warps=4,
        )
        return out
    own_group_norm_kernel[(n * num_groups,)](
        x,
        weight.contiguous() if affine else x,
        bias.contiguous() if affine else x,
        out,
        ep,
        num_groups,
        hw,
        cg,
        cg * hw,
        float(eps),
        HAS_AFFINE=affine,
        BLOCK=block,
        EPILOGUE=program,
        num_warps=8 if block >= 2048 else 4,
    )
    return out


@triton.jit
def own_winograd_rows(d0, d1, d2, d3):
    # B^T of Winograd F(2x2, 3x3) along one axis of a 4x4 input tile.
    return d0 - d2, d1 + d2, d2 - d1, d1 - d3


@triton.jit
def own_winograd_g(t0, t1, t2):
    # G of F(2x2, 3x3) along one axis of a 3x3 filter (four values from three).
    return t0, (t0 + t1 + t2) * 0.5, (t0 - t1 + t2) * 0.5, t2


@triton.jit
def own_winograd_store4(ptr, first, stride, t0, t1, t2, t3, ok):
    # Planes first..first+3 of a transformed tile.
    ty = ptr.dtype.element_ty
    tl.store(ptr + first * stride, t0.to(ty), mask=ok)
    tl.store(ptr + (first + 1) * stride, t1.to(ty), mask=ok)
    tl.store(ptr + (first + 2) * stride, t2.to(ty), mask=ok)
    tl.store(ptr + (first + 3) * stride, t3.to(ty), mask=ok)


@triton.jit
def own_winograd_load_row(base, h, w0, H, W, s_h, s_w, ok):
    # Four neighbouring input values of one row of the tiles (zero outside the image).
    row_ok = ok & ((h >= 0) & (h < H))[:, None]
    ptr = base + (h.to(tl.int64) * s_h)[:, None]
    a = tl.load(ptr + (w0 * s_w)[:, None], mask=row_ok & own_winograd_in(w0, W), other=0.0)
    b = tl.load(
        ptr + ((w0 + 1) * s_w)[:, None], mask=row_ok & own_winograd_in(w0 + 1, W), other=0.0
    )
    c = tl.load(
        ptr + ((w0 + 2) * s_w)[:, None], mask=row_ok & own_winograd_in(w0 + 2, W), other=0.0
    )
    d = tl.load(
        ptr + ((w0 + 3) * s_w)[:, None], mask=row_ok & own_winograd_in(w0 + 3, W), other=0.0
    )
    return a.to(tl.float32), b.to(tl.float32), c.to(tl.float32), d.to(tl.float32)


@triton.jit
def own_winograd_in(i, size):
    # Whether column i lies inside the image (a column of zero padding otherwise), as a column.
    return ((i >= 0) & (i < size))[:, None]


@triton.jit
def own_winograd_input_kernel(
    x_ptr, v_ptr, C, H, W, PH, PW, TH, TW, P,
    s_n, s_c, s_h, s_w, s_xi, s_vc, s_vp,
    BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr,
):  # fmt: skip
    # One program: BLOCK_P tiles x BLOCK_C channels. Each 4x4 input tile (rows and columns
    # 2i-P .. 2i-P+3 for padding P) becomes V = B^T d B, written as the 16 planes v[xi, c, p].
    p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    ok = (p < P)[:, None] & (c < C)[None, :]
    tw = p % TW
    th = (p // TW) % TH
    n = p // (TW * TH)
    base = x_ptr + (n.to(tl.int64) * s_n)[:, None] + (c.to(tl.int64) * s_c)[None, :]
    h0 = th * 2 - PH
    w0 = tw * 2 - PW
    t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14, t15 = own_winograd_slice_in(
        base, h0, w0, H, W, s_h, s_w, ok
    )
    out = v_ptr + (c.to(tl.int64) * s_vc)[None, :] + (p.to(tl.int64) * s_vp)[:, None]
    own_winograd_store4(out, 0, s_xi, t0, t1, t2, t3, ok)
    own_winograd_store4(out, 4, s_xi, t4, t5, t6, t7, ok)
    own_winograd_store4(out, 8, s_xi, t8, t9, t10, t11, ok)
    own_winograd_store4(out, 12, s_xi, t12, t13, t14, t15, ok)


@triton.jit
def own_winograd_filter_kernel(w_ptr, u_ptr, KC, BLOCK: tl.constexpr):
    # U = G g G^T for BLOCK (output, input) channel pairs of 3x3 filters, as u[xi, k * C + c].
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = i < KC
    g = w_ptr + i.to(tl.int64) * 9
    t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14, t15 = own_winograd_slice_g(
        g, ok
    )
    own_winograd_store4(u_ptr + i, 0, KC, t0, t1, t2, t3, ok)
    own_winograd_store4(u_ptr + i, 4, KC, t4, t5, t6, t7, ok)
    own_winograd_store4(u_ptr + i, 8, KC, t8, t9, t10, t11, ok)
    own_winograd_store4(u_ptr + i, 12, KC, t12, t13, t14, t15, ok)


@triton.jit
def own_winograd_at_column(src, col, s_mxi, ok):
    # A^T across the four rows of M in one column: (m0 + m1 + m2, m1 - m2 - m3).
    m0 = tl.load(src + col * s_mxi, mask=ok, other=0.0).to(tl.float32)
    m1 = tl.load(src + (4 + col) * s_mxi, mask=ok, other=0.0).to(tl.float32)
    m2 = tl.load(src + (8 + col) * s_mxi, mask=ok, other=0.0).to(tl.float32)
    m3 = tl.load(src + (12 + col) * s_mxi, mask=ok, other=0.0).to(tl.float32)
    return m0 + m1 + m2, m1 - m2 - m3


@triton.jit
def own_winograd_output_kernel(
    m_ptr, b_ptr, out_ptr, K, H, W, TH, TW, P,
    s_mxi, s_mk, s_mp, s_n, s_k, s_h, s_w,
    HAS_BIAS: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    # One program: BLOCK_P tiles x BLOCK_K output channels. Y = A^T M A (2x2 outputs per
    # tile) from the 16 planes m[xi, k, p], plus the bias, stored at the output's strides.
    p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    k = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    ok = (p < P)[:, None] & (k < K)[None, :]
    src = m_ptr + (k.to(tl.int64) * s_mk)[None, :] + (p.to(tl.int64) * s_mp)[:, None]
    y00, y01, y10, y11 = own_winograd_slice_out(src, s_mxi, ok)
    bias = tl.zeros((BLOCK_P, BLOCK_K), dtype=tl.float32)
    if HAS_BIAS:
        bias += tl.load(b_ptr + k, mask=k < K, other=0.0).to(tl.float32)[None, :]
    tw = p % TW
    th = (p // TW) % TH
    n = p // (TW * TH)
    h = th * 2
    w = tw * 2
    first = out_ptr + (n.to(tl.int64) * s_n + h.to(tl.int64) * s_h + w.to(tl.int64) * s_w)[:, None]
    first += (k.to(tl.int64) * s_k)[None, :]
    right = (w + 1 < W)[:, None]
    below = (h + 1 < H)[:, None]
    ty = out_ptr.dtype.element_ty
    tl.store(first, (y00 + bias).to(ty), mask=ok)
    tl.store(first + s_w, (y01 + bias).to(ty), mask=ok & right)
    tl.store(first + s_h, (y10 + bias).to(ty), mask=ok & below)
    tl.store(first + s_h + s_w, (y11 + bias).to(ty), mask=ok & below & right)


@triton.jit
def own_winograd_slice_in(base, h0, w0, H, W, s_h, s_w, ok):
    # B^T d B of one 4x4 slice of the input tiles: 16 values, row-major.
    a0, a1, a2, a3 = own_winograd_load_row(base, h0, w0, H, W, s_h, s_w, ok)
    b0, b1, b2, b3 = own_winograd_load_row(base, h0 + 1, w0, H, W, s_h, s_w, ok)
    c0, c1, c2, c3 = own_winograd_load_row(base, h0 + 2, w0, H, W, s_h, s_w, ok)
    d0, d1, d2, d3 = own_winograd_load_row(base, h0 + 3, w0, H, W, s_h, s_w, ok)
    r0, r1, r2, r3 = own_winograd_rows(a0 - c0, a1 - c1, a2 - c2, a3 - c3)
    r4, r5, r6, r7 = own_winograd_rows(b0 + c0, b1 + c1, b2 + c2, b3 + c3)
    r8, r9, r10, r11 = own_winograd_rows(c0 - b0, c1 - b1, c2 - b2, c3 - b3)
    r12, r13, r14, r15 = own_winograd_rows(b0 - d0, b1 - d1, b2 - d2, b3 - d3)
    return r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11, r12, r13, r14, r15


@triton.jit
def own_winograd_depth_slice(base, z, D, s_d, h0, w0, H, W, s_h, s_w, ok):
    # B^T d B of the tiles' slice at depth z (zero outside the volume).
    ptr = base + (z.to(tl.int64) * s_d)[:, None]
    return own_winograd_slice_in(ptr, h0, w0, H, W, s_h, s_w, ok & own_winograd_in(z, D))


@triton.jit
def own_winograd3d_input_kernel(
    x_ptr, v_ptr, C, D, H, W, PD, PH, PW, TD, TH, TW, P,
    s_n, s_c, s_d, s_h, s_w, s_xi, s_vc, s_vp,
    BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr,
):  # fmt: skip
    # F(2x2x2, 3x3x3): each 4x4x4 input tile becomes the 64 planes v[16 * depth + j, c, p]:
    # B^T on each of its four depth slices (j: the slice's 16 values), then across them.
    p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    ok = (p < P)[:, None] & (c < C)[None, :]
    tw = p % TW
    th = (p // TW) % TH
    td = (p // (TW * TH)) % TD
    n = p // (TW * TH * TD)
    base = x_ptr + (n.to(tl.int64) * s_n)[:, None] + (c.to(tl.int64) * s_c)[None, :]
    z0 = td * 2 - PD
    h0 = th * 2 - PH
    w0 = tw * 2 - PW
    a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15 = own_winograd_depth_slice(
        base, z0 + 0, D, s_d, h0, w0, H, W, s_h, s_w, ok
    )
    b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15 = own_winograd_depth_slice(
        base, z0 + 1, D, s_d, h0, w0, H, W, s_h, s_w, ok
    )
    c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15 = own_winograd_depth_slice(
        base, z0 + 2, D, s_d, h0, w0, H, W, s_h, s_w, ok
    )
    d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13, d14, d15 = own_winograd_depth_slice(
        base, z0 + 3, D, s_d, h0, w0, H, W, s_h, s_w, ok
    )
    out = v_ptr + (c.to(tl.int64) * s_vc)[None, :] + (p.to(tl.int64) * s_vp)[:, None]
    t0, t1, t2, t3 = own_winograd_rows(a0, b0, c0, d0)
    own_winograd_store4(out + 0 * s_xi, 0, 16 * s_xi, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_rows(a1, b1, c1, d1)
    own_winograd_store4(out + 1 * s_xi, 0, 16 * s_xi, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_rows(a2, b2, c2, d2)
    own_winograd_store4(out + 2 * s_xi, 0, 16 * s_xi, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_rows(a3, b3, c3, d3)
    own_winograd_store4(out + 3 * s_xi, 0, 16 * s_xi, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_rows(a4, b4, c4, d4)
    own_winograd_store4(out + 4 * s_xi, 0, 16 * s_xi, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_rows(a5, b5, c5, d5)
    own_winograd_store4(out + 5 * s_xi, 0, 16 * s_xi, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_rows(a6, b6, c6, d6)
    own_winograd_store4(out + 6 * s_xi, 0, 16 * s_xi, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_rows(a7, b7, c7, d7)
    own_winograd_store4(out + 7 * s_xi, 0, 16 * s_xi, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_rows(a8, b8, c8, d8)
    own_winograd_store4(out + 8 * s_xi, 0, 16 * s_xi, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_rows(a9, b9, c9, d9)
    own_winograd_store4(out + 9 * s_xi, 0, 16 * s_xi, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_rows(a10, b10, c10, d10)
    own_winograd_store4(out + 10 * s_xi, 0, 16 * s_xi, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_rows(a11, b11, c11, d11)
    own_winograd_store4(out + 11 * s_xi, 0, 16 * s_xi, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_rows(a12, b12, c12, d12)
    own_winograd_store4(out + 12 * s_xi, 0, 16 * s_xi, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_rows(a13, b13, c13, d13)
    own_winograd_store4(out + 13 * s_xi, 0, 16 * s_xi, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_rows(a14, b14, c14, d14)
    own_winograd_store4(out + 14 * s_xi, 0, 16 * s_xi, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_rows(a15, b15, c15, d15)
    own_winograd_store4(out + 15 * s_xi, 0, 16 * s_xi, t0, t1, t2, t3, ok)


@triton.jit
def own_winograd_slice_g(g, ok):
    # G g G^T of one 3x3 slice of filters (nine values at g): 16 values, row-major.
    g00 = tl.load(g + 0, mask=ok, other=0.0).to(tl.float32)
    g01 = tl.load(g + 1, mask=ok, other=0.0).to(tl.float32)
    g02 = tl.load(g + 2, mask=ok, other=0.0).to(tl.float32)
    g10 = tl.load(g + 3, mask=ok, other=0.0).to(tl.float32)
    g11 = tl.load(g + 4, mask=ok, other=0.0).to(tl.float32)
    g12 = tl.load(g + 5, mask=ok, other=0.0).to(tl.float32)
    g20 = tl.load(g + 6, mask=ok, other=0.0).to(tl.float32)
    g21 = tl.load(g + 7, mask=ok, other=0.0).to(tl.float32)
    g22 = tl.load(g + 8, mask=ok, other=0.0).to(tl.float32)
    a0, a1, a2, a3 = own_winograd_g(g00, g10, g20)
    b0, b1, b2, b3 = own_winograd_g(g01, g11, g21)
    c0, c1, c2, c3 = own_winograd_g(g02, g12, g22)
    r0, r1, r2, r3 = own_winograd_g(a0, b0, c0)
    r4, r5, r6, r7 = own_winograd_g(a1, b1, c1)
    r8, r9, r10, r11 = own_winograd_g(a2, b2, c2)
    r12, r13, r14, r15 = own_winograd_g(a3, b3, c3)
    return r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11, r12, r13, r14, r15


@triton.jit
def own_winograd3d_filter_kernel(w_ptr, u_ptr, KC, BLOCK: tl.constexpr):
    # U for 3x3x3 filters: G G^T on each of the three depth slices, then G across them, as
    # u[16 * depth + j, k * C + c].
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = i < KC
    g = w_ptr + i.to(tl.int64) * 27
    a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15 = own_winograd_slice_g(
        g, ok
    )
    b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15 = own_winograd_slice_g(
        g + 9, ok
    )
    c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15 = own_winograd_slice_g(
        g + 18, ok
    )
    t0, t1, t2, t3 = own_winograd_g(a0, b0, c0)
    own_winograd_store4(u_ptr + i + 0 * KC, 0, 16 * KC, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_g(a1, b1, c1)
    own_winograd_store4(u_ptr + i + 1 * KC, 0, 16 * KC, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_g(a2, b2, c2)
    own_winograd_store4(u_ptr + i + 2 * KC, 0, 16 * KC, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_g(a3, b3, c3)
    own_winograd_store4(u_ptr + i + 3 * KC, 0, 16 * KC, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_g(a4, b4, c4)
    own_winograd_store4(u_ptr + i + 4 * KC, 0, 16 * KC, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_g(a5, b5, c5)
    own_winograd_store4(u_ptr + i + 5 * KC, 0, 16 * KC, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_g(a6, b6, c6)
    own_winograd_store4(u_ptr + i + 6 * KC, 0, 16 * KC, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_g(a7, b7, c7)
    own_winograd_store4(u_ptr + i + 7 * KC, 0, 16 * KC, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_g(a8, b8, c8)
    own_winograd_store4(u_ptr + i + 8 * KC, 0, 16 * KC, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_g(a9, b9, c9)
    own_winograd_store4(u_ptr + i + 9 * KC, 0, 16 * KC, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_g(a10, b10, c10)
    own_winograd_store4(u_ptr + i + 10 * KC, 0, 16 * KC, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_g(a11, b11, c11)
    own_winograd_store4(u_ptr + i + 11 * KC, 0, 16 * KC, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_g(a12, b12, c12)
    own_winograd_store4(u_ptr + i + 12 * KC, 0, 16 * KC, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_g(a13, b13, c13)
    own_winograd_store4(u_ptr + i + 13 * KC, 0, 16 * KC, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_g(a14, b14, c14)
    own_winograd_store4(u_ptr + i + 14 * KC, 0, 16 * KC, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_g(a15, b15, c15)
    own_winograd_store4(u_ptr + i + 15 * KC, 0, 16 * KC, t0, t1, t2, t3, ok)


@triton.jit
def own_winograd_slice_out(src, s_mxi, ok):
    # A^T M A of one 4x4 slice of planes (at src, src + s_mxi, ...): the 2x2 outputs.
    top0, bot0 = own_winograd_at_column(src, 0, s_mxi, ok)
    top1, bot1 = own_winograd_at_column(src, 1, s_mxi, ok)
    top2, bot2 = own_winograd_at_column(src, 2, s_mxi, ok)
    top3, bot3 = own_winograd_at_column(src, 3, s_mxi, ok)
    return (
        top0 + top1 + top2,
        top1 - top2 - top3,
        bot0 + bot1 + bot2,
        bot1 - bot2 - bot3,
    )


@triton.jit
def own_winograd3d_output_kernel(
    m_ptr, b_ptr, out_ptr, K, D, H, W, TD, TH, TW, P,
    s_mxi, s_mk, s_mp, s_n, s_k, s_d, s_h, s_w,
    HAS_BIAS: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    # The 2x2x2 outputs of each tile: A^T on each of the four depth slices of planes, then
    # across them, plus the bias, stored at the output's strides.
    p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    k = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    ok = (p < P)[:, None] & (k < K)[None, :]
    src = m_ptr + (k.to(tl.int64) * s_mk)[None, :] + (p.to(tl.int64) * s_mp)[:, None]
    a0, a1, a2, a3 = own_winograd_slice_out(src, s_mxi, ok)
    b0, b1, b2, b3 = own_winograd_slice_out(src + 16 * s_mxi, s_mxi, ok)
    c0, c1, c2, c3 = own_winograd_slice_out(src + 32 * s_mxi, s_mxi, ok)
    d0, d1, d2, d3 = own_winograd_slice_out(src + 48 * s_mxi, s_mxi, ok)
    bias = tl.zeros((BLOCK_P, BLOCK_K), dtype=tl.float32)
    if HAS_BIAS:
        bias += tl.load(b_ptr + k, mask=k < K, other=0.0).to(tl.float32)[None, :]
    tw = p % TW
    th = (p // TW) % TH
    td = (p // (TW * TH)) % TD
    n = p // (TW * TH * TD)
    z = td * 2
    h = th * 2
    w = tw * 2
    first = (
        out_ptr
        + (
            n.to(tl.int64) * s_n
            + z.to(tl.int64) * s_d
            + h.to(tl.int64) * s_h
            + w.to(tl.int64) * s_w
        )[:, None]
    )
    first += (k.to(tl.int64) * s_k)[None, :]
    right = (w + 1 < W)[:, None]
    below = (h + 1 < H)[:, None]
    behind = (z + 1 < D)[:, None]
    ty = out_ptr.dtype.element_ty
    # A^T across the depth slices: the front slice (a + b + c) and the back one (b - c - d).
    tl.store(first, (a0 + b0 + c0 + bias).to(ty), mask=ok)
    tl.store(first + s_w, (a1 + b1 + c1 + bias).to(ty), mask=ok & right)
    tl.store(first + s_h, (a2 + b2 + c2 + bias).to(ty), mask=ok & below)
    tl.store(first + s_h + s_w, (a3 + b3 + c3 + bias).to(ty), mask=ok & below & right)
    back = first + s_d
    tl.store(back, (b0 - c0 - d0 + bias).to(ty), mask=ok & behind)
    tl.store(back + s_w, (b1 - c1 - d1 + bias).to(ty), mask=ok & behind & right)
    tl.store(back + s_h, (b2 - c2 - d2 + bias).to(ty), mask=ok & behind & below)
    tl.store(back + s_h + s_w, (b3 - c3 - d3 + bias).to(ty), mask=ok & behind & below & right)


#: Channels below which a 3x3 convolution stays with the vendor: the transforms' traffic
#: is then large against the GEMM work they save.
WINOGRAD_MIN_CHANNELS = 16
#: The direct convolution's FLOPs below which it stays with the vendor. Measured on the H200
#: (ten shapes of the bench's networks, fp32 without TF32): Winograd
#: won 1.2-4x at 22-237 GFLOP and lost 2.3x at 7.4 GFLOP (a 28x28 map, where cuDNN ran at
#: 56 TFLOP/s and the four launches and the transforms' traffic dominate).
WINOGRAD_MIN_FLOPS = 1.6e10
#: Whether 3x3x3 convolutions are taken (F(2x2x2, 3x3x3)). Off: on the H200
#: (``conv3d_volume``'s 8x32x32x96x96 by 64x32x3x3x3, TF32 off) it ran 6.11 ms against
#: cuDNN's 6.50 ms alone (1.06x) and 0.998x eager in the search, while its 64-plane transforms
#: took the candidate's peak memory to 9.4 GB, 10x the problem's footprint (cuDNN's: 2.2 GB).
#: The kernels stay, tested under the interpreter, for a tiled form that bounds the workspace.
WINOGRAD_3D = False


def own_winograd_sizes(x_shape, w_shape, stride, padding, dilation, transposed, groups):
    """The output's spatial sizes where KernelOPT's Winograd convolution takes a convolution of
    these shapes and arguments, else None: a 3x3 (or 3x3x3) filter, stride 1, zero padding of
    0-2, dilation 1, one group, at least ``WINOGRAD_MIN_CHANNELS`` channels on each side and
    ``WINOGRAD_MIN_FLOPS`` of direct convolution (the dtype is the caller's to check)."""
    dims = len(x_shape) - 2
    pads = tuple(padding)
    if not (
        (dims == 2 or (dims == 3 and WINOGRAD_3D))
        and len(w_shape) == len(x_shape)
        and tuple(w_shape[2:]) == (3,) * dims
        and tuple(stride) == (1,) * dims
        and len(pads) == dims
        and all(p in (0, 1, 2) for p in pads)
        and tuple(dilation) == (1,) * dims
        and not transposed
        and groups == 1
        and min(x_shape[1], w_shape[0]) >= WINOGRAD_MIN_CHANNELS
    ):
        return None
    sizes = [x_shape[2 + i] + 2 * pads[i] - 2 for i in range(dims)]
    work = 2 * 3**dims * x_shape[0] * x_shape[1] * w_shape[0]
    for size in sizes:
        work *= size
    return sizes if min(sizes) > 0 and work >= WINOGRAD_MIN_FLOPS else None


def kernelopt_winograd_convolution(
    input, weight, bias, stride, padding, dilation, transposed, output_padding, groups
):
    """``torch.convolution`` (same arguments) for a float32 3x3 (or 3x3x3), stride-1
    convolution (zero padding of 0, 1 or 2 on each side) by Winograd's minimal filtering,
    F(2x2, 3x3) (or F(2x2x2, 3x3x3)); any other convolution goes to the vendor call unchanged,
    as does one too small to gain (``WINOGRAD_MIN_FLOPS``).

    Each 2x2 block of outputs takes 16 multiplies per input channel instead of 36: the 4x4
    input tile and the 3x3 filter are transformed (Triton kernels), multiplied plane by plane
    as 16 GEMMs over the channels (one cuBLAS batched GEMM, 2.25x fewer FLOPs than the direct
    convolution), and transformed back with the bias added. In 3-D, 64 planes for each 2x2x2
    block instead of 216 multiplies (3.375x fewer). The transforms' constants are 0, +-1 and
    1/2, so the arithmetic stays in float32 and the result is the same sum in another order: a
    reassociation, which the float64 referee judges.
    """
    x = input
    pads = tuple(padding)
    dims = x.dim() - 2
    sizes = None
    if x.dtype == torch.float32 and weight.dtype == torch.float32 and x.device.type != "meta":
        sizes = own_winograd_sizes(
            tuple(x.shape), tuple(weight.shape), stride, padding, dilation, transposed, groups
        )
    if sizes is None:
        return torch.convolution(
            x, weight, bias, stride, padding, dilation, transposed, output_padding, groups
        )
    if dims == 3:
        n, c, d, h, w = x.shape
        k = weight.shape[0]
        d_out, h_out, w_out = sizes
        last = any(
            t.is_contiguous(memory_format=torch.channels_last_3d) and not t.is_contiguous()
            for t in (x, weight)
        )
        fmt = torch.channels_last_3d if last else torch.contiguous_format
        out = torch.empty(
            (n, k, d_out, h_out, w_out), device=x.device, dtype=x.dtype, memory_format=fmt
        )
        if out.numel() == 0:
            return out
        td, th, tw = (d_out + 1) // 2, (h_out + 1) // 2, (w_out + 1) // 2
        p = n * td * th * tw
        u = torch.empty((64, k, c), device=x.device, dtype=x.dtype)
        own_winograd3d_filter_kernel[(triton.cdiv(k * c, 128),)](
            weight.contiguous(), u, k * c, BLOCK=128
        )
        if last:
            v = torch.empty((64, p, c), device=x.device, dtype=x.dtype)
            sv = (p * c, 1, c)
        else:
            v = torch.empty((64, c, p), device=x.device, dtype=x.dtype)
            sv = (c * p, p, 1)
        # 16x16 blocks: each element holds a 4x4x4 tile's 64 values at once.
        own_winograd3d_input_kernel[(triton.cdiv(p, 16), triton.cdiv(c, 16))](
            x, v, c, d, h, w, *pads, td, th, tw, p, *x.stride(), *sv,
            BLOCK_P=16, BLOCK_C=16, num_warps=4,
        )  # fmt: skip
        if last:
            m = torch.bmm(v, u.transpose(1, 2))
            sm = (p * k, 1, k)
        else:
            m = torch.bmm(u, v)
            sm = (k * p, p, 1)
        own_winograd3d_output_kernel[(triton.cdiv(p, 16), triton.cdiv(k, 16))](
            m, m if bias is None else bias.contiguous(), out, k, d_out, h_out, w_out,
            td, th, tw, p, *sm, *out.stride(),
            HAS_BIAS=bias is not None, BLOCK_P=16, BLOCK_K=16, num_warps=4,
        )  # fmt: skip
        return out
    h_out, w_out = sizes
    n, c, h, w = x.shape
    k = weight.shape[0]
    ph, pw = pads
    # The vendor's output layout: channels-last when the input or the filter is (the harvest
    # hard-codes the strides that the convolution call returns).
    last = any(
        t.is_contiguous(memory_format=torch.channels_last) and not t.is_contiguous()
        for t in (x, weight)
    )
    fmt = torch.channels_last if last else torch.contiguous_format
    out = torch.empty((n, k, h_out, w_out), device=x.device, dtype=x.dtype, memory_format=fmt)
    if out.numel() == 0:
        return out
    th, tw = (h_out + 1) // 2, (w_out + 1) // 2
    p = n * th * tw
    u = torch.empty((16, k, c), device=x.device, dtype=x.dtype)
    own_winograd_filter_kernel[(triton.cdiv(k * c, 256),)](weight.contiguous(), u, k * c, BLOCK=256)
    # Channels innermost where the images are channels-last (every load and store of the
    # transforms then runs along memory), tiles innermost otherwise.
    if last:
        v = torch.empty((16, p, c), device=x.device, dtype=x.dtype)
        sv = (p * c, 1, c)  # (plane, channel, tile)
    else:
        v = torch.empty((16, c, p), device=x.device, dtype=x.dtype)
        sv = (c * p, p, 1)
    block_p, block_c = 32, 32
    own_winograd_input_kernel[(triton.cdiv(p, block_p), triton.cdiv(c, block_c))](
        x,
        v,
        c,
        h,
        w,
        ph,
        pw,
        th,
        tw,
        p,
        *x.stride(),
        *sv,
        BLOCK_P=block_p,
        BLOCK_C=block_c,
        num_warps=4,
    )
    if last:
        m = torch.bmm(v, u.transpose(1, 2))  # (16, P, K)
        sm = (p * k, 1, k)
    else:
        m = torch.bmm(u, v)  # (16, K, P)
        sm = (k * p, p, 1)
    own_winograd_output_kernel[(triton.cdiv(p, block_p), triton.cdiv(k, block_c))](
        m,
        m if bias is None else bias.contiguous(),
        out,
        k,
        h_out,
        w_out,
        th,
        tw,
        p,
        *sm,
        *out.stride(),
        HAS_BIAS=bias is not None,
        BLOCK_P=block_p,
        BLOCK_K=block_c,
        num_warps=4,
    )
    return out


#: Each wrapper and the kernels it launches, in the order they are copied.
KERNEL_HELPERS: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    **FAMILY_KERNEL_HELPERS,
    **CONV_TRANSPOSE_KERNEL_HELPERS,
    kernelopt_depthwise_conv2d.__name__: (
        kernelopt_depthwise_conv2d,
        (own_depthwise_conv2d_kernel,),
    ),
    kernelopt_avg_pool2d.__name__: (kernelopt_avg_pool2d, (own_depthwise_conv2d_kernel,)),
    kernelopt_group_norm.__name__: (
        kernelopt_group_norm,
        (*EPILOGUE_HELPERS, own_group_norm_kernel, own_group_norm_rows_kernel),
    ),
    kernelopt_winograd_convolution.__name__: (
        kernelopt_winograd_convolution,
        (
            own_winograd_sizes,
            own_winograd_rows,
            own_winograd_g,
            own_winograd_store4,
            own_winograd_in,
            own_winograd_load_row,
            own_winograd_input_kernel,
            own_winograd_filter_kernel,
            own_winograd_at_column,
            own_winograd_output_kernel,
            own_winograd_slice_in,
            own_winograd_depth_slice,
            own_winograd3d_input_kernel,
            own_winograd_slice_g,
            own_winograd3d_filter_kernel,
            own_winograd_slice_out,
            own_winograd3d_output_kernel,
        ),
    ),
}

#: Module constants the wrappers read, copied with them.
KERNEL_CONSTANTS = {
    **FAMILY_KERNEL_CONSTANTS,
    "MAX_GRID_Y": MAX_GRID_Y,
    "SMALL_GROUP": SMALL_GROUP,
    "ROWS_ELEMENTS": ROWS_ELEMENTS,
    "WINOGRAD_MIN_CHANNELS": WINOGRAD_MIN_CHANNELS,
    "WINOGRAD_MIN_FLOPS": WINOGRAD_MIN_FLOPS,
}
