# KernelOPT candidate c4 (agent: tuner; plan: c0.p0; kernel)
# Mode: eval (inference: optimized and verified with the reference in .eval())
# Gates: static=pass, correctness=pass, fp64=pass, performance=pass
# Timing: 3.7357 ms; 2.52x eager; 2.56x torch.compile
# source key bdc00d53d1f8259f
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

# --- KernelOPT: 3x3 convolutions by Winograd's F(2x2, 3x3) ---
import torch
import triton
import triton.language as tl


WINOGRAD_MIN_CHANNELS = 16


WINOGRAD_MIN_FLOPS = 16000000000.0


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
def own_winograd_in(i, size):
    # Whether column i lies inside the image (a column of zero padding otherwise), as a column.
    return ((i >= 0) & (i < size))[:, None]


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



aten = torch.ops.aten

# Launch configurations (block sizes, warps, stages) per kernel: the Tuner edits
# only this dict; grids follow the block sizes through `meta`.
LAUNCH_CONFIGS = {
    'triton_poi_fused_convolution_0': {'YBLOCK': 32, 'XBLOCK': 32, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_convolution_1': {'YBLOCK': 64, 'XBLOCK': 16, 'num_warps': 4, 'num_stages': 1},
    'triton_red_fused__native_batch_norm_legit_no_training_mean_relu_2': {'XBLOCK': 128, 'R0_BLOCK': 64, 'num_warps': 16, 'num_stages': 1},
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
    buf2 = kernelopt_winograd_convolution(buf0, buf1, stride=(1, 1), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
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


# ----------------------------------------------------------------------
# KernelOPT guard: the kernels above run only for the verified shapes, dtypes and
# device (cuda), in eval mode without autograd; any other call runs
# the reference. Use: model = kernelopt_guarded(Model(...)); model(x);
# model.kernelopt_path says which path the last call took.
# Verified shape sets: as given.
# `kernelopt export` verifies more shapes (docs/deploy.md).
# ----------------------------------------------------------------------

"""The guard: the verified kernels run only where they were verified, else the reference.

This file is rendered verbatim into ``best.py``, an accepted notebook cell and every export
(``render_guard`` in the guard module beside this one), so it imports only torch and the
standard library, passes the verifier's static rules (no try/except in functions, no
reflection, no reading of the environment, no string naming the harness) and has no
``from __future__`` import (it is appended below other code).

A call takes the kernel path only when every argument matches a verified *signature* (tensor
shape, dtype and contiguity; the value of a plain argument), the tensors are on the verified
device type, the module is in eval mode and no gradient is needed (the kernels have no
backward). Anything else runs the reference, and the guard says which path it took and why.
"""

from typing import Any

import torch

#: The dtypes a signature can name (its text is ``str(dtype)``); a table, not ``getattr``.
_KERNELOPT_DTYPES = {
    str(d): d
    for d in (
        torch.float64,
        torch.float32,
        torch.float16,
        torch.bfloat16,
        torch.int64,
        torch.int32,
        torch.int16,
        torch.int8,
        torch.uint8,
        torch.bool,
        torch.complex64,
        torch.complex128,
    )
}


def kernelopt_signature(args: Any) -> list[dict[str, Any]]:
    """One argument list as plain data: per tensor its shape, dtype and contiguity, per plain
    value (int, float, bool, None, str) the value itself, per anything else its type name."""
    spec: list[dict[str, Any]] = []
    for arg in args:
        if isinstance(arg, torch.Tensor):
            spec.append(
                {
                    "kind": "tensor",
                    "shape": [int(n) for n in arg.shape],
                    "dtype": str(arg.dtype),
                    "contiguous": bool(arg.is_contiguous()),
                }
            )
        elif arg is None or isinstance(arg, bool | int | float | str):
            spec.append({"kind": "value", "value": arg})
        else:
            spec.append({"kind": "other", "type": type(arg).__name__})
    return spec


def _kernelopt_spec_key(spec: dict[str, Any]) -> tuple[Any, ...]:
    """A hashable key of one argument's spec (the same for a call and a recorded signature)."""
    if spec["kind"] == "tensor":
        dtype = _KERNELOPT_DTYPES.get(spec["dtype"], spec["dtype"])
        return ("tensor", tuple(spec["shape"]), dtype, spec["contiguous"])
    if spec["kind"] == "value":
        return ("value", type(spec["value"]).__name__, spec["value"])
    return ("other", spec["type"])


def _kernelopt_call_key(args: Any) -> tuple[Any, ...]:
    """The key of a call's arguments, built without intermediate dicts (cheap per call)."""
    key: list[tuple[Any, ...]] = []
    for arg in args:
        if isinstance(arg, torch.Tensor):
            key.append(("tensor", tuple(arg.shape), arg.dtype, arg.is_contiguous()))
        elif arg is None or isinstance(arg, bool | int | float | str):
            key.append(("value", type(arg).__name__, arg))
        else:
            key.append(("other", type(arg).__name__))
    return tuple(key)


class KernelOPTGuard:
    """Decides per call whether the verified kernels may run; remembers the last decision.

    ``verified`` is plain data: ``{"device": "cuda" | "cpu", "signatures": [signature, ...]}``
    (a signature as :func:`kernelopt_signature` writes it). ``unavailable``, when given, is why
    no call may take the kernels here (an export says so on a CPU without Triton's
    interpreter).
    """

    def __init__(self, verified: dict[str, Any], unavailable: str | None = None) -> None:
        self.device = verified["device"]
        self.signatures = [list(s) for s in verified["signatures"]]
        self._index: dict[tuple[Any, ...], int] = {}
        for number, signature in enumerate(self.signatures):
            key = tuple(_kernelopt_spec_key(s) for s in signature)
            self._index.setdefault(key, number)
        self.unavailable = unavailable
        # The module mode the kernels were verified in: a problem's reference runs as
        # constructed (training mode, as KernelBench runs it) unless it declares eval.
        self.training = bool(verified.get("training", False))
        # The weights' dtypes the kernels were verified with (a module problem); a model
        # converted since (``.half()``) takes the reference until it is converted back.
        self.state_dtypes = set(verified.get("state_dtypes") or [])
        self.state_reason: str | None = None
        self.last_path: str | None = None
        self.last_reason = "not called yet"

    def choose(
        self, args: Any, *, training: bool = False, needs_grad: bool = False
    ) -> tuple[int, str]:
        """The verified signature's number for this call, or -1 and the reason to fall back."""
        reason: str | None = None
        number = -1
        devices = {a.device.type for a in args if isinstance(a, torch.Tensor)}
        if training != self.training:
            verified_in = "training" if self.training else "eval"
            now = "training" if training else "eval"
            reason = f"the module is in {now} mode; the kernels were verified in {verified_in} mode"
        elif needs_grad:
            reason = (
                "autograd needs gradients and the kernels have no backward "
                "(call it under torch.no_grad() or torch.inference_mode())"
            )
        elif devices and devices != {self.device}:
            reason = f"tensors on {sorted(devices)}; verified on {self.device}"
        elif self.state_reason is not None:
            reason = self.state_reason
        elif self.unavailable is not None:
            reason = self.unavailable
        else:
            number = self._index.get(_kernelopt_call_key(args), -1)
            if number < 0:
                reason = "these shapes, dtypes or values were not verified"
        self.last_path = "kernel" if number >= 0 else "reference"
        self.last_reason = "a verified signature" if reason is None else reason
        return number, self.last_reason

    def check_state(self, module: Any) -> None:
        """Note whether ``module``'s weights still have the verified dtypes (called when the
        guarded module is made and after each conversion, not per call)."""
        found = {str(t.dtype) for t in module.state_dict().values()}
        extra = found - self.state_dtypes
        self.state_reason = None
        if self.state_dtypes and extra:
            self.state_reason = (
                f"weights in {', '.join(sorted(extra))}; verified with "
                f"{', '.join(sorted(self.state_dtypes))}"
            )

    def describe(self) -> str:
        """The last call's path in one line: ``kernel`` or ``reference: <why>``."""
        if self.last_path is None:
            return self.last_reason
        if self.last_path == "kernel":
            return "kernel"
        return f"reference: {self.last_reason}"


def _kernelopt_tie(optimized: Any, reference: Any) -> None:
    """Make ``optimized`` use the reference's own parameter and buffer objects (one copy of the
    weights; later changes to the reference's weights are seen by the kernels too)."""
    for key, tensor in reference.state_dict(keep_vars=True).items():
        *path, leaf = key.split(".")
        owner = optimized
        for part in path:
            owner = owner._modules[part]
        if leaf in owner._parameters and isinstance(tensor, torch.nn.Parameter):
            owner._parameters[leaf] = tensor
        elif leaf in owner._buffers:
            owner._buffers[leaf] = tensor


class KernelOPTParts:
    """What a guarded module holds outside its module tree: the optimized module (its tensors
    are the reference's, tied, so the state_dict stays the reference's alone), an optional
    ``kernel_call(args, number)`` for the kernel path (an export routes it through its custom
    op) and an optional ``fallback`` standing in for the eager reference (a compiled one)."""

    def __init__(self, optimized: Any, kernel_call: Any = None, fallback: Any = None) -> None:
        self.optimized = optimized
        self.kernel_call = kernel_call
        self.fallback = fallback


class KernelOPTGuarded(torch.nn.Module):
    """A reference module whose calls take the verified kernels where the guard admits them;
    ``kernelopt_path`` says which path the last call took."""

    def __init__(self, reference: Any, optimized: Any, guard: Any, kernel_call: Any = None) -> None:
        super().__init__()
        self.reference = reference
        self.kernelopt_guard = guard
        self.kernelopt_parts = KernelOPTParts(optimized, kernel_call)
        guard.check_state(reference)

    @property
    def kernelopt_path(self) -> str:
        """The last call's path: ``kernel`` or ``reference: <why>``."""
        return self.kernelopt_guard.describe()

    def _apply(self, fn: Any, recurse: bool = True) -> Any:
        # .to()/.cuda()/.half() move the reference; the optimized module's own extra tensors
        # (anything not tied to the reference) must follow it, and buffers come back as new
        # tensor objects, so the tie is made again.
        self.kernelopt_parts.optimized._apply(fn, recurse)
        out = super()._apply(fn, recurse)
        _kernelopt_tie(self.kernelopt_parts.optimized, self.reference)
        self.kernelopt_guard.check_state(self.reference)
        return out

    def forward(self, *args: Any) -> Any:
        """Run the kernels on a verified call, the reference otherwise."""
        needs_grad = torch.is_grad_enabled() and (
            any(p.requires_grad for p in self.reference.parameters())
            or any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
        )
        training = self.reference.training
        number, _ = self.kernelopt_guard.choose(args, training=training, needs_grad=needs_grad)
        parts = self.kernelopt_parts
        if number < 0:
            return self.reference(*args) if parts.fallback is None else parts.fallback(*args)
        if parts.kernel_call is not None:
            return parts.kernel_call(args, number)
        return parts.optimized(*args)


class KernelOPTGuardedFunction:
    """A kernel problem's reference function guarded the same way (no weights, no modes)."""

    def __init__(self, reference: Any, optimized: Any, guard: Any, kernel_call: Any = None) -> None:
        self.reference = reference
        self.optimized = optimized
        self.kernelopt_guard = guard
        self.kernel_call = kernel_call
        self.fallback: Any = None

    @property
    def kernelopt_path(self) -> str:
        """The last call's path: ``kernel`` or ``reference: <why>``."""
        return self.kernelopt_guard.describe()

    def __call__(self, *args: Any) -> Any:
        """Run the kernels on a verified call, the reference otherwise."""
        needs_grad = torch.is_grad_enabled() and any(
            isinstance(a, torch.Tensor) and a.requires_grad for a in args
        )
        number, _ = self.kernelopt_guard.choose(args, needs_grad=needs_grad)
        if number < 0:
            fallback = self.fallback
            return self.reference(*args) if fallback is None else fallback(*args)
        if self.kernel_call is not None:
            return self.kernel_call(args, number)
        return self.optimized(*args)


def kernelopt_guard(
    reference: Any,
    optimized: Any,
    verified: dict[str, Any],
    init: Any = None,
    kernel_call: Any = None,
    unavailable: str | None = None,
) -> Any:
    """Guard ``reference`` (a module instance or the problem's function) with ``optimized``
    (the candidate's ``ModelNew`` class or its entry function) and the ``verified`` set.

    A module reference gets ``optimized(*init)`` with the reference's weights loaded strictly
    (as the verifier loaded them) and then tied to the reference's own tensors.
    ``unavailable`` as for :class:`KernelOPTGuard`.
    """
    guard = KernelOPTGuard(verified, unavailable)
    if not isinstance(reference, torch.nn.Module):
        if isinstance(optimized, type):
            optimized = optimized()
        return KernelOPTGuardedFunction(reference, optimized, guard, kernel_call)
    model = optimized(*(init or []))
    model.load_state_dict(reference.state_dict(), strict=True)
    _kernelopt_tie(model, reference)
    first = next(iter(reference.state_dict().values()), None)
    if first is not None:
        model.to(first.device)
    model.train(guard.training)  # as the verifier ran it: in the problem's mode
    return KernelOPTGuarded(reference, model, guard, kernel_call)


KERNELOPT_VERIFIED = {'device': 'cuda',
 'signatures': [[{'kind': 'tensor',
                  'shape': [64, 256, 56, 56],
                  'dtype': 'torch.float32',
                  'contiguous': True}]],
 'shapes': ['as given'],
 'state_dtypes': ['torch.float32', 'torch.int64'],
 'training': False}
KERNELOPT_INIT = [256, 16]


def kernelopt_guarded(reference, *init):
    """The reference (a module instance or the problem's function) with the verified
    kernels swapped in where the guard admits the call (the verified set above)."""
    args = list(init) if init else KERNELOPT_INIT
    return kernelopt_guard(reference, ModelNew, KERNELOPT_VERIFIED, args)
