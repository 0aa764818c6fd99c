# KernelOPT candidate c3 (agent: tuner; plan: c0.p0; kernel)
# Mode: as constructed (the reference's own mode, as KernelBench runs it)
# Gates: static=pass, correctness=pass, fp64=pass, performance=pass
# Timing: 6.7133 ms; 1.12x eager; 1.20x torch.compile
# source key da771f0c19ff95ae
"""Harvested from torch.compile (Inductor) for problem 'unet_down_up'.

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
    a = tl.load(ptr + (w0 * s_w)[:, None], mask=row_ok & (w0 >= 0)[:, None], other=0.0)
    b = tl.load(ptr + ((w0 + 1) * s_w)[:, None], mask=row_ok, other=0.0)
    c = tl.load(ptr + ((w0 + 2) * s_w)[:, None], mask=row_ok & (w0 + 2 < W)[:, None], other=0.0)
    d = tl.load(ptr + ((w0 + 3) * s_w)[:, None], mask=row_ok & (w0 + 3 < W)[:, None], other=0.0)
    return a.to(tl.float32), b.to(tl.float32), c.to(tl.float32), d.to(tl.float32)


@triton.jit
def own_winograd_input_kernel(
    x_ptr, v_ptr, C, H, W, TH, TW, P,
    s_n, s_c, s_h, s_w, s_xi, s_vc, s_vp,
    BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr,
):  # fmt: skip
    # One program: BLOCK_P tiles x BLOCK_C channels. Each 4x4 input tile (rows and columns
    # 2i-1 .. 2i+2) becomes V = B^T d B, written as the 16 planes v[xi, c, p].
    p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    ok = (p < P)[:, None] & (c < C)[None, :]
    tw = p % TW
    th = (p // TW) % TH
    n = p // (TW * TH)
    base = x_ptr + (n.to(tl.int64) * s_n)[:, None] + (c.to(tl.int64) * s_c)[None, :]
    h0 = th * 2 - 1
    w0 = tw * 2 - 1
    a0, a1, a2, a3 = own_winograd_load_row(base, h0, w0, H, W, s_h, s_w, ok)
    b0, b1, b2, b3 = own_winograd_load_row(base, h0 + 1, w0, H, W, s_h, s_w, ok)
    c0, c1, c2, c3 = own_winograd_load_row(base, h0 + 2, w0, H, W, s_h, s_w, ok)
    d0, d1, d2, d3 = own_winograd_load_row(base, h0 + 3, w0, H, W, s_h, s_w, ok)
    out = v_ptr + (c.to(tl.int64) * s_vc)[None, :] + (p.to(tl.int64) * s_vp)[:, None]
    # B^T across the rows (row i of B^T d), then along each of those rows.
    r0, r1, r2, r3 = own_winograd_rows(a0 - c0, a1 - c1, a2 - c2, a3 - c3)
    own_winograd_store4(out, 0, s_xi, r0, r1, r2, r3, ok)
    r0, r1, r2, r3 = own_winograd_rows(b0 + c0, b1 + c1, b2 + c2, b3 + c3)
    own_winograd_store4(out, 4, s_xi, r0, r1, r2, r3, ok)
    r0, r1, r2, r3 = own_winograd_rows(c0 - b0, c1 - b1, c2 - b2, c3 - b3)
    own_winograd_store4(out, 8, s_xi, r0, r1, r2, r3, ok)
    r0, r1, r2, r3 = own_winograd_rows(b0 - d0, b1 - d1, b2 - d2, b3 - d3)
    own_winograd_store4(out, 12, s_xi, r0, r1, r2, r3, ok)


@triton.jit
def own_winograd_filter_kernel(w_ptr, u_ptr, KC, BLOCK: tl.constexpr):
    # U = G g G^T for BLOCK (output, input) channel pairs of 3x3 filters, as u[xi, k * C + c].
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = i < KC
    g = w_ptr + i.to(tl.int64) * 9
    g00 = tl.load(g + 0, mask=ok, other=0.0).to(tl.float32)
    g01 = tl.load(g + 1, mask=ok, other=0.0).to(tl.float32)
    g02 = tl.load(g + 2, mask=ok, other=0.0).to(tl.float32)
    g10 = tl.load(g + 3, mask=ok, other=0.0).to(tl.float32)
    g11 = tl.load(g + 4, mask=ok, other=0.0).to(tl.float32)
    g12 = tl.load(g + 5, mask=ok, other=0.0).to(tl.float32)
    g20 = tl.load(g + 6, mask=ok, other=0.0).to(tl.float32)
    g21 = tl.load(g + 7, mask=ok, other=0.0).to(tl.float32)
    g22 = tl.load(g + 8, mask=ok, other=0.0).to(tl.float32)
    # G g, column by column (a, b, c: the filter's three columns, four rows each) ...
    a0, a1, a2, a3 = own_winograd_g(g00, g10, g20)
    b0, b1, b2, b3 = own_winograd_g(g01, g11, g21)
    c0, c1, c2, c3 = own_winograd_g(g02, g12, g22)
    # ... then G along each of its rows.
    t0, t1, t2, t3 = own_winograd_g(a0, b0, c0)
    own_winograd_store4(u_ptr + i, 0, KC, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_g(a1, b1, c1)
    own_winograd_store4(u_ptr + i, 4, KC, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_g(a2, b2, c2)
    own_winograd_store4(u_ptr + i, 8, KC, t0, t1, t2, t3, ok)
    t0, t1, t2, t3 = own_winograd_g(a3, b3, c3)
    own_winograd_store4(u_ptr + i, 12, KC, t0, t1, t2, t3, ok)


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
    top0, bot0 = own_winograd_at_column(src, 0, s_mxi, ok)
    top1, bot1 = own_winograd_at_column(src, 1, s_mxi, ok)
    top2, bot2 = own_winograd_at_column(src, 2, s_mxi, ok)
    top3, bot3 = own_winograd_at_column(src, 3, s_mxi, ok)
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
    # A^T along each of the two rows.
    tl.store(first, (top0 + top1 + top2 + bias).to(ty), mask=ok)
    tl.store(first + s_w, (top1 - top2 - top3 + bias).to(ty), mask=ok & right)
    tl.store(first + s_h, (bot0 + bot1 + bot2 + bias).to(ty), mask=ok & below)
    tl.store(first + s_h + s_w, (bot1 - bot2 - bot3 + bias).to(ty), mask=ok & below & right)


def kernelopt_winograd_convolution(
    input, weight, bias, stride, padding, dilation, transposed, output_padding, groups
):
    """``torch.convolution`` (same arguments) for a 3x3, stride-1, padding-1 convolution of
    float32 NCHW images by Winograd's minimal filtering, F(2x2, 3x3); any other convolution
    goes to the vendor call unchanged, as does one too small to gain (``WINOGRAD_MIN_FLOPS``).

    Each 2x2 block of outputs takes 16 multiplies per input channel instead of 36: the 4x4
    input tile and the 3x3 filter are transformed (Triton kernels), multiplied plane by plane
    as 16 GEMMs over the channels (one cuBLAS batched GEMM, 2.25x fewer FLOPs than the direct
    convolution), and transformed back with the bias added. The transforms' constants are 0,
    +-1 and 1/2, so the arithmetic stays in float32 and the result is the same sum in another
    order: a reassociation, which the float64 referee judges.
    """
    x = input
    fits = (
        x.dim() == 4
        and weight.dim() == 4
        and tuple(weight.shape[2:]) == (3, 3)
        and tuple(stride) == (1, 1)
        and tuple(padding) == (1, 1)
        and tuple(dilation) == (1, 1)
        and not transposed
        and groups == 1
        and x.dtype == torch.float32
        and weight.dtype == torch.float32
        and min(x.shape[1], weight.shape[0]) >= WINOGRAD_MIN_CHANNELS
        and 18 * x.numel() * weight.shape[0] >= WINOGRAD_MIN_FLOPS
        and x.device.type != "meta"
    )
    if not fits:
        return torch.convolution(
            x, weight, bias, stride, padding, dilation, transposed, output_padding, groups
        )
    n, c, h, w = x.shape
    k = weight.shape[0]
    # The vendor's output layout: channels-last when the input or the filter is (the harvest
    # hard-codes the strides that the convolution call returns).
    last = any(
        t.is_contiguous(memory_format=torch.channels_last) and not t.is_contiguous()
        for t in (x, weight)
    )
    fmt = torch.channels_last if last else torch.contiguous_format
    out = torch.empty((n, k, h, w), device=x.device, dtype=x.dtype, memory_format=fmt)
    if out.numel() == 0:
        return out
    th, tw = (h + 1) // 2, (w + 1) // 2
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
        x, v, c, h, w, th, tw, p, *x.stride(), *sv, BLOCK_P=block_p, BLOCK_C=block_c, num_warps=4
    )
    if last:
        m = torch.bmm(v, u.transpose(1, 2))  # (16, P, K)
        sm = (p * k, 1, k)
    else:
        m = torch.bmm(u, v)  # (16, K, P)
        sm = (k * p, p, 1)
    own_winograd_output_kernel[(triton.cdiv(p, block_p), triton.cdiv(k, block_c))](
        m,
        m if bias is None else bias,
        out,
        k,
        h,
        w,
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
    'triton_poi_fused_convolution_relu_2': {'YBLOCK': 64, 'XBLOCK': 64, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused_convolution_max_pool2d_with_indices_relu_3': {'YBLOCK': 32, 'XBLOCK': 32, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_convolution_max_pool2d_with_indices_relu_4': {'YBLOCK': 64, 'XBLOCK': 16, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_convolution_max_pool2d_with_indices_relu_5': {'XBLOCK': 1024, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_convolution_max_pool2d_with_indices_relu_6': {'YBLOCK': 256, 'XBLOCK': 4, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_convolution_max_pool2d_with_indices_relu_7': {'YBLOCK': 64, 'XBLOCK': 64, 'num_warps': 8, 'num_stages': 1},
    'triton_poi_fused_convolution_8': {'YBLOCK': 32, 'XBLOCK': 32, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_convolution_9': {'YBLOCK': 64, 'XBLOCK': 16, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_convolution_relu_10': {'XBLOCK': 512, 'num_warps': 4, 'num_stages': 1},
    'triton_poi_fused_convolution_relu_11': {'XBLOCK': 1024, 'num_warps': 4, 'num_stages': 1},
}


# ---- Triton kernel triton_poi_fused_convolution_0 <- aten.convolution
@triton.jit
def triton_poi_fused_convolution_0(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 48
    xnumel = 65536
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = yindex < ynumel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = tl.full([XBLOCK], True, tl.int1)[None, :]
    x2 = xindex
    y3 = yindex
    y0 = yindex % 3
    y1 = yindex // 3
    tmp0 = tl.load(in_ptr0 + (x2 + 65536 * y3), ymask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 3 * x2 + 196608 * y1), tmp0, ymask)


# ---- Triton kernel triton_poi_fused_convolution_1 <- aten.convolution
@triton.jit
def triton_poi_fused_convolution_1(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 192
    xnumel = 9
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = yindex < ynumel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y3 = yindex
    y0 = yindex % 3
    y1 = yindex // 3
    tmp0 = tl.load(in_ptr0 + (x2 + 9 * y3), xmask & ymask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 3 * x2 + 27 * y1), tmp0, xmask & ymask)


# ---- Triton kernel triton_poi_fused_convolution_relu_2 <- aten.convolution, aten.relu
@triton.jit
def triton_poi_fused_convolution_relu_2(in_ptr0, in_ptr1, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 1024
    xnumel = 65536
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = tl.full([XBLOCK], True, tl.int1)[None, :]
    x2 = xindex
    y0 = yindex % 64
    y1 = yindex // 64
    tmp0 = tl.load(in_ptr0 + (y0 + 64 * x2 + 4194304 * y1), None, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + y0, None, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tmp3 = tl.full([1, 1], 0, tl.int32)
    tmp4 = tl.maximum(tmp3, tmp2, propagate_nan=tl.PropagateNan.ALL)
    tl.store(out_ptr0 + (x2 + 65536 * y0 + 8388608 * y1), tmp4, None)


# ---- Triton kernel triton_poi_fused_convolution_max_pool2d_with_indices_relu_3 <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
@triton.jit
def triton_poi_fused_convolution_max_pool2d_with_indices_relu_3(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 1024
    xnumel = 16384
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = tl.full([XBLOCK], True, tl.int1)[None, :]
    x2 = xindex % 128
    x3 = xindex // 128
    y0 = yindex % 64
    y1 = yindex // 64
    x4 = xindex
    tmp0 = tl.load(in_ptr0 + (2 * x2 + 512 * x3 + 65536 * y0 + 8388608 * y1), None, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr0 + (1 + 2 * x2 + 512 * x3 + 65536 * y0 + 8388608 * y1), None, eviction_policy='evict_last')
    tmp3 = tl.load(in_ptr0 + (256 + 2 * x2 + 512 * x3 + 65536 * y0 + 8388608 * y1), None, eviction_policy='evict_last')
    tmp5 = tl.load(in_ptr0 + (257 + 2 * x2 + 512 * x3 + 65536 * y0 + 8388608 * y1), None, eviction_policy='evict_last')
    tmp2 = tl.maximum(tmp0, tmp1, propagate_nan=tl.PropagateNan.ALL)
    tmp4 = tl.maximum(tmp2, tmp3, propagate_nan=tl.PropagateNan.ALL)
    tmp6 = tl.maximum(tmp4, tmp5, propagate_nan=tl.PropagateNan.ALL)
    tl.store(out_ptr0 + (y0 + 64 * x4 + 1048576 * y1), tmp6, None)


# ---- Triton kernel triton_poi_fused_convolution_max_pool2d_with_indices_relu_4 <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
@triton.jit
def triton_poi_fused_convolution_max_pool2d_with_indices_relu_4(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 8192
    xnumel = 9
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y3 = yindex
    y0 = yindex % 64
    y1 = yindex // 64
    tmp0 = tl.load(in_ptr0 + (x2 + 9 * y3), xmask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 64 * x2 + 576 * y1), tmp0, xmask)


# ---- Triton kernel triton_poi_fused_convolution_max_pool2d_with_indices_relu_5 <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
@triton.jit
def triton_poi_fused_convolution_max_pool2d_with_indices_relu_5(in_out_ptr0, in_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 33554432
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x2 = xindex
    x0 = xindex % 128
    tmp0 = tl.load(in_out_ptr0 + x2, None)
    tmp1 = tl.load(in_ptr0 + x0, None, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tmp3 = tl.full([1], 0, tl.int32)
    tmp4 = tl.maximum(tmp3, tmp2, propagate_nan=tl.PropagateNan.ALL)
    tl.store(in_out_ptr0 + x2, tmp4, None)


# ---- Triton kernel triton_poi_fused_convolution_max_pool2d_with_indices_relu_6 <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
@triton.jit
def triton_poi_fused_convolution_max_pool2d_with_indices_relu_6(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 8192
    xnumel = 4
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y3 = yindex
    y0 = yindex % 64
    y1 = yindex // 64
    tmp0 = tl.load(in_ptr0 + (x2 + 4 * y3), xmask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 64 * x2 + 256 * y1), tmp0, xmask)


# ---- Triton kernel triton_poi_fused_convolution_max_pool2d_with_indices_relu_7 <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
@triton.jit
def triton_poi_fused_convolution_max_pool2d_with_indices_relu_7(in_ptr0, in_ptr1, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 1024
    xnumel = 65536
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = tl.full([XBLOCK], True, tl.int1)[None, :]
    x2 = xindex
    y0 = yindex % 64
    y1 = yindex // 64
    tmp0 = tl.load(in_ptr0 + (y0 + 64 * x2 + 4194304 * y1), None, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + y0, None, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tl.store(out_ptr0 + (x2 + 65536 * y0 + 8388608 * y1), tmp2, None)


# ---- Triton kernel triton_poi_fused_convolution_8 <- aten.convolution
@triton.jit
def triton_poi_fused_convolution_8(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 2048
    xnumel = 65536
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = tl.full([XBLOCK], True, tl.int1)[None, :]
    x2 = xindex
    y3 = yindex
    y0 = yindex % 128
    y1 = yindex // 128
    tmp0 = tl.load(in_ptr0 + (x2 + 65536 * y3), None, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 128 * x2 + 8388608 * y1), tmp0, None)


# ---- Triton kernel triton_poi_fused_convolution_9 <- aten.convolution
@triton.jit
def triton_poi_fused_convolution_9(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    ynumel = 8192
    xnumel = 9
    yoffset = tl.program_id(1) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = tl.full([YBLOCK], True, tl.int1)[:, None]
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x2 = xindex
    y3 = yindex
    y0 = yindex % 128
    y1 = yindex // 128
    tmp0 = tl.load(in_ptr0 + (x2 + 9 * y3), xmask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (y0 + 128 * x2 + 1152 * y1), tmp0, xmask)


# ---- Triton kernel triton_poi_fused_convolution_relu_10 <- aten.convolution, aten.relu
@triton.jit
def triton_poi_fused_convolution_relu_10(in_out_ptr0, in_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 67108864
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x2 = xindex
    x0 = xindex % 64
    tmp0 = tl.load(in_out_ptr0 + x2, None)
    tmp1 = tl.load(in_ptr0 + x0, None, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tmp3 = tl.full([1], 0, tl.int32)
    tmp4 = tl.maximum(tmp3, tmp2, propagate_nan=tl.PropagateNan.ALL)
    tl.store(in_out_ptr0 + x2, tmp4, None)


# ---- Triton kernel triton_poi_fused_convolution_relu_11 <- aten.convolution, aten.relu
@triton.jit
def triton_poi_fused_convolution_relu_11(in_out_ptr0, in_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 1048576
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex
    tmp0 = tl.load(in_out_ptr0 + x0, None)
    tmp1 = tl.load(in_ptr0 + 0)
    tmp2 = tl.broadcast_to(tmp1, [XBLOCK])
    tmp3 = tmp0 + tmp2
    tl.store(in_out_ptr0 + x0, tmp3, None)


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
    arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, arg5_1, arg6_1, arg7_1, arg8_1, arg9_1, arg10_1, = args
    _device = arg2_1.device
    buf0 = torch.empty_strided((16, 3, 256, 256), (196608, 1, 768, 3), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_0 <- aten.convolution
    triton_poi_fused_convolution_0[lambda meta: (triton.cdiv(65536, meta['XBLOCK']), triton.cdiv(48, meta['YBLOCK']))](arg2_1, buf0, 48, 65536, **LAUNCH_CONFIGS['triton_poi_fused_convolution_0'])
    del arg2_1
    buf1 = torch.empty_strided((64, 3, 3, 3), (27, 1, 9, 3), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_1 <- aten.convolution
    triton_poi_fused_convolution_1[lambda meta: (triton.cdiv(9, meta['XBLOCK']), triton.cdiv(192, meta['YBLOCK']))](arg0_1, buf1, 192, 9, **LAUNCH_CONFIGS['triton_poi_fused_convolution_1'])
    del arg0_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution
    buf2 = kernelopt_winograd_convolution(buf0, buf1, stride=(1, 1), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del buf0
    del buf1
    buf11 = torch.empty_strided((16, 128, 256, 256), (8388608, 65536, 256, 1), dtype=torch.float32, device=_device)
    buf3 = reinterpret_tensor(buf11, (16, 64, 256, 256), (8388608, 65536, 256, 1), 4194304)
    # Triton kernel triton_poi_fused_convolution_relu_2 <- aten.convolution, aten.relu
    triton_poi_fused_convolution_relu_2[lambda meta: (triton.cdiv(65536, meta['XBLOCK']), triton.cdiv(1024, meta['YBLOCK']))](buf2, arg1_1, buf3, 1024, 65536, **LAUNCH_CONFIGS['triton_poi_fused_convolution_relu_2'])
    del arg1_1
    del buf2
    buf4 = torch.empty_strided((16, 64, 128, 128), (1048576, 1, 8192, 64), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_max_pool2d_with_indices_relu_3 <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
    triton_poi_fused_convolution_max_pool2d_with_indices_relu_3[lambda meta: (triton.cdiv(16384, meta['XBLOCK']), triton.cdiv(1024, meta['YBLOCK']))](buf3, buf4, 1024, 16384, **LAUNCH_CONFIGS['triton_poi_fused_convolution_max_pool2d_with_indices_relu_3'])
    buf5 = torch.empty_strided((128, 64, 3, 3), (576, 1, 192, 64), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_max_pool2d_with_indices_relu_4 <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
    triton_poi_fused_convolution_max_pool2d_with_indices_relu_4[lambda meta: (triton.cdiv(9, meta['XBLOCK']), triton.cdiv(8192, meta['YBLOCK']))](arg3_1, buf5, 8192, 9, **LAUNCH_CONFIGS['triton_poi_fused_convolution_max_pool2d_with_indices_relu_4'])
    del arg3_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
    buf6 = kernelopt_winograd_convolution(buf4, buf5, stride=(1, 1), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del buf4
    del buf5
    buf7 = buf6
    del buf6
    # Triton kernel triton_poi_fused_convolution_max_pool2d_with_indices_relu_5 <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
    triton_poi_fused_convolution_max_pool2d_with_indices_relu_5[lambda meta: (triton.cdiv(33554432, meta['XBLOCK']),)](buf7, arg4_1, 33554432, **LAUNCH_CONFIGS['triton_poi_fused_convolution_max_pool2d_with_indices_relu_5'])
    del arg4_1
    buf8 = torch.empty_strided((128, 64, 2, 2), (256, 1, 128, 64), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_max_pool2d_with_indices_relu_6 <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
    triton_poi_fused_convolution_max_pool2d_with_indices_relu_6[lambda meta: (triton.cdiv(4, meta['XBLOCK']), triton.cdiv(8192, meta['YBLOCK']))](arg5_1, buf8, 8192, 4, **LAUNCH_CONFIGS['triton_poi_fused_convolution_max_pool2d_with_indices_relu_6'])
    del arg5_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
    buf9 = torch.convolution(buf7, buf8, stride=(2, 2), padding=(0, 0), dilation=(1, 1), transposed=True, output_padding=(0, 0), groups=1, bias=None)
    del buf7
    del buf8
    buf10 = reinterpret_tensor(buf11, (16, 64, 256, 256), (8388608, 65536, 256, 1), 0)
    # Triton kernel triton_poi_fused_convolution_max_pool2d_with_indices_relu_7 <- aten.convolution, aten.relu, aten.max_pool2d_with_indices
    triton_poi_fused_convolution_max_pool2d_with_indices_relu_7[lambda meta: (triton.cdiv(65536, meta['XBLOCK']), triton.cdiv(1024, meta['YBLOCK']))](buf9, arg6_1, buf10, 1024, 65536, **LAUNCH_CONFIGS['triton_poi_fused_convolution_max_pool2d_with_indices_relu_7'])
    del arg6_1
    del buf9
    buf12 = torch.empty_strided((16, 128, 256, 256), (8388608, 1, 32768, 128), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_8 <- aten.convolution
    triton_poi_fused_convolution_8[lambda meta: (triton.cdiv(65536, meta['XBLOCK']), triton.cdiv(2048, meta['YBLOCK']))](buf11, buf12, 2048, 65536, **LAUNCH_CONFIGS['triton_poi_fused_convolution_8'])
    del buf10
    del buf11
    del buf3
    buf13 = torch.empty_strided((64, 128, 3, 3), (1152, 1, 384, 128), dtype=torch.float32, device=_device)
    # Triton kernel triton_poi_fused_convolution_9 <- aten.convolution
    triton_poi_fused_convolution_9[lambda meta: (triton.cdiv(9, meta['XBLOCK']), triton.cdiv(8192, meta['YBLOCK']))](arg7_1, buf13, 8192, 9, **LAUNCH_CONFIGS['triton_poi_fused_convolution_9'])
    del arg7_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution
    buf14 = kernelopt_winograd_convolution(buf12, buf13, stride=(1, 1), padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del buf12
    del buf13
    buf15 = buf14
    del buf14
    # Triton kernel triton_poi_fused_convolution_relu_10 <- aten.convolution, aten.relu
    triton_poi_fused_convolution_relu_10[lambda meta: (triton.cdiv(67108864, meta['XBLOCK']),)](buf15, arg8_1, 67108864, **LAUNCH_CONFIGS['triton_poi_fused_convolution_relu_10'])
    del arg8_1
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution, aten.relu
    buf16 = torch.convolution(buf15, arg9_1, stride=(1, 1), padding=(0, 0), dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)
    del arg9_1
    del buf15
    buf17 = reinterpret_tensor(buf16, (16, 1, 256, 256), (65536, 65536, 256, 1), 0)
    del buf16
    # Triton kernel triton_poi_fused_convolution_relu_11 <- aten.convolution, aten.relu
    triton_poi_fused_convolution_relu_11[lambda meta: (triton.cdiv(1048576, meta['XBLOCK']),)](buf17, arg10_1, 1048576, **LAUNCH_CONFIGS['triton_poi_fused_convolution_relu_11'])
    del arg10_1
    return (buf17,)


class ModelNew(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'enc.0.weight', (64, 3, 3, 3), torch.float32, True)
        _declare(self, 'enc.0.bias', (64,), torch.float32, True)
        _declare(self, 'mid.0.weight', (128, 64, 3, 3), torch.float32, True)
        _declare(self, 'mid.0.bias', (128,), torch.float32, True)
        _declare(self, 'up.weight', (128, 64, 2, 2), torch.float32, True)
        _declare(self, 'up.bias', (64,), torch.float32, True)
        _declare(self, 'dec.0.weight', (64, 128, 3, 3), torch.float32, True)
        _declare(self, 'dec.0.bias', (64,), torch.float32, True)
        _declare(self, 'head.weight', (1, 64, 1, 1), torch.float32, True)
        _declare(self, 'head.bias', (1,), torch.float32, True)

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([self.get_parameter('enc.0.weight'), self.get_parameter('enc.0.bias'), x, self.get_parameter('mid.0.weight'), self.get_parameter('mid.0.bias'), self.up.weight, self.up.bias, self.get_parameter('dec.0.weight'), self.get_parameter('dec.0.bias'), self.head.weight, self.head.bias])
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
                  'shape': [16, 3, 256, 256],
                  'dtype': 'torch.float32',
                  'contiguous': True}]],
 'shapes': ['as given'],
 'state_dtypes': ['torch.float32'],
 'training': True}
KERNELOPT_INIT = [3, 64]


def kernelopt_guarded(reference, *init):
    """The reference (a module instance or the problem's function) with the verified
    kernels swapped in where the guard admits the call (the verified set above)."""
    args = list(init) if init else KERNELOPT_INIT
    return kernelopt_guard(reference, ModelNew, KERNELOPT_VERIFIED, args)
