"""KernelOPT's op-family kernels: scans (cumulative sum and product), max pooling,
normalisations (batch statistics included), arg-reductions and losses, written to be copied.

The same contract as :mod:`kernels`: each wrapper and the ``@triton.jit`` kernels it launches
need only ``torch``, ``triton`` and ``triton.language as tl``; a wrapper called on meta tensors
returns an empty output of the right shape and launches nothing; on the CPU the gates run the
kernels through Triton's interpreter. Each launch passes its block size and ``num_warps`` as
literals beside a ``lambda meta`` grid, so ``lift_launch_configs`` moves them into the
candidate's ``LAUNCH_CONFIGS`` and the Tuner searches them on the GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import triton
import triton.language as tl

from kernelopt_jupyter.agents.rewrites.epilogue import (
    EPILOGUE_HELPERS,
    own_broadcast_index,
    own_epilogue_apply,
    own_epilogue_program,
)

#: The most neighbouring columns one program of a scan, norm or arg-reduction takes where
#: the reduced dimension is not the last (a run of memory per row of its tile).
MAX_INNER_BLOCK = 16


@triton.jit
def own_column_tile(pid, L, INNER, PARTS, INNER_BLOCK: tl.constexpr):
    # Program ``pid`` of a grid over a tensor seen as (outer, L, inner), contiguous: one
    # program per (outer index, block of INNER_BLOCK neighbouring inner columns, part of L),
    # the part fastest. Its outer index, part, columns, which of those exist, and the
    # offset where its outer index starts.
    column_blocks = tl.cdiv(INNER, INNER_BLOCK)
    part = pid % PARTS
    outer = pid // (PARTS * column_blocks)
    cols = ((pid // PARTS) % column_blocks) * INNER_BLOCK + tl.arange(0, INNER_BLOCK)
    return outer, part, cols, cols < INNER, outer * L * INNER


def own_columns(shape, first, last):
    """``(outer, length, inner, inner_block)``: a tensor of ``shape`` seen as (outer, L,
    inner), ``L`` its dimensions ``first .. last - 1``, and the neighbouring inner columns
    one program takes (one where the reduced or scanned dimension runs along memory; else
    enough that each step along L reads a run of memory)."""
    length = 1
    for size in shape[first:last]:
        length *= size
    inner = 1
    for size in shape[last:]:
        inner *= size
    total = 1
    for size in shape:
        total *= size
    inner_block = 1 if inner == 1 else min(MAX_INNER_BLOCK, triton.next_power_of_2(inner))
    return total // max(1, length * inner), length, inner, inner_block


@triton.jit
def own_scan_kernel(
    x_ptr,
    m_ptr,
    out_ptr,
    L,
    INNER,
    PRODUCT: tl.constexpr,
    REVERSE: tl.constexpr,
    EXCLUSIVE: tl.constexpr,
    HAS_MASK: tl.constexpr,
    BLOCK: tl.constexpr,
    INNER_BLOCK: tl.constexpr,
):
    # The tensor seen as (outer, L, inner), contiguous; the scan runs along L. One program:
    # one outer index and INNER_BLOCK neighbouring inner columns, walking L in tiles of
    # BLOCK // INNER_BLOCK steps. Each tile is scanned in float32 and offset by the running
    # prefix (the previous tile's last row), so a row of any length is exact to the carry.
    # Scan order is along L, or from its end (REVERSE); EXCLUSIVE reads one step behind, so
    # the first output is the identity (0, or 1 for a product).
    STEPS: tl.constexpr = BLOCK // INNER_BLOCK
    pid = tl.program_id(0).to(tl.int64)
    _outer, _part, cols, col_ok, base = own_column_tile(pid, L, INNER, 1, INNER_BLOCK)
    col_ok = col_ok[None, :]
    steps = tl.arange(0, STEPS)
    identity = 1.0 if PRODUCT else 0.0
    carry = tl.zeros([INNER_BLOCK], dtype=tl.float32) + identity
    for start in range(0, L, STEPS):
        pos = start + steps  # positions in scan order
        src = pos - EXCLUSIVE
        if REVERSE:
            at = L - 1 - pos
            src_at = L - 1 - src
        else:
            at = pos
            src_at = src
        ok_in = ((src >= 0) & (src < L))[:, None] & col_ok
        offs_in = base + src_at.to(tl.int64)[:, None] * INNER + cols[None, :]
        v = tl.load(x_ptr + offs_in, mask=ok_in, other=identity).to(tl.float32)
        if HAS_MASK:
            v = v * tl.load(m_ptr + offs_in, mask=ok_in, other=identity).to(tl.float32)
        s = tl.cumprod(v, 0) * carry[None, :] if PRODUCT else tl.cumsum(v, 0) + carry[None, :]
        ok_out = (pos < L)[:, None] & col_ok
        offs_out = base + at.to(tl.int64)[:, None] * INNER + cols[None, :]
        tl.store(out_ptr + offs_out, s.to(out_ptr.dtype.element_ty), mask=ok_out)
        carry = tl.sum(tl.where((steps == STEPS - 1)[:, None], s, 0.0), 0)


def kernelopt_scan(x, dim, product, reverse, exclusive, mask):
    """The cumulative sum (``product=False``) or product of ``x`` (times ``mask``, elementwise,
    where given: ``torch.cumsum(x * mask, dim)``) along ``dim``, from the end of the dimension
    where ``reverse`` (``flip(cumsum(flip(x)))``), and exclusive of each element where
    ``exclusive`` (the first output is 0, or 1 for a product). Float32 accumulation; the output
    has ``x``'s shape and dtype.

    One Triton program scans one row (or a few neighbouring columns, where ``dim`` is not the
    last dimension) in tiles, carrying the running prefix from tile to tile: one read and one
    write of the tensor, with the mask and the flips folded into the addressing. A
    reassociation of the vendor's sequential sum.
    """
    out = torch.empty(x.shape, device=x.device, dtype=x.dtype)
    if x.device.type == "meta" or out.numel() == 0:
        return out
    d = dim % x.dim()
    outer, length, inner, inner_block = own_columns(x.shape, d, d + 1)
    has_mask = mask is not None
    x = x.contiguous()
    mask = mask.contiguous() if has_mask else x
    own_scan_kernel[lambda meta: (outer * triton.cdiv(inner, meta["INNER_BLOCK"]),)](
        x,
        mask,
        out,
        length,
        inner,
        PRODUCT=bool(product),
        REVERSE=bool(reverse),
        EXCLUSIVE=1 if exclusive else 0,
        HAS_MASK=has_mask,
        BLOCK=1024,
        INNER_BLOCK=inner_block,
        num_warps=4,
    )
    return out


@triton.jit
def own_max_pool_kernel(
    x_ptr,
    out_ptr,
    ep_ptr,
    TOTAL,
    D,
    H,
    W,
    D_OUT,
    H_OUT,
    W_OUT,
    SD: tl.constexpr,
    SH: tl.constexpr,
    SW: tl.constexpr,
    PD: tl.constexpr,
    PH: tl.constexpr,
    PW: tl.constexpr,
    DD: tl.constexpr,
    DH: tl.constexpr,
    DW: tl.constexpr,
    KD: tl.constexpr,
    KH: tl.constexpr,
    KW: tl.constexpr,
    BLOCK: tl.constexpr,
    EPILOGUE: tl.constexpr,
):
    # One program: BLOCK consecutive outputs, in order over all (image, channel) volumes (a
    # 1-D or 2-D pool is a 3-D one with size-1 leading dimensions), so small planes do not
    # leave programs mostly idle. The window's taps are unrolled; a tap outside the input is
    # the padding, which never wins. A NaN in the window wins, as in torch. Then the
    # pointwise EPILOGUE (epilogue.py) on each maximum.
    out_per_plane = D_OUT * H_OUT * W_OUT
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < TOTAL
    plane = offs // out_per_plane
    rest = offs % out_per_plane
    ow = rest % W_OUT
    oh = (rest // W_OUT) % H_OUT
    od = rest // (W_OUT * H_OUT)
    x_base = x_ptr + plane * D * H * W
    acc = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    for kd in tl.static_range(KD):
        iz = od * SD - PD + kd * DD
        z_ok = ok & (iz >= 0) & (iz < D)
        for kh in tl.static_range(KH):
            iy = oh * SH - PH + kh * DH
            y_ok = z_ok & (iy >= 0) & (iy < H)
            for kw in tl.static_range(KW):
                ix = ow * SW - PW + kw * DW
                tap_ok = y_ok & (ix >= 0) & (ix < W)
                v = tl.load(x_base + (iz * H + iy) * W + ix, mask=tap_ok, other=float("-inf"))
                v = v.to(tl.float32)
                acc = tl.where((v > acc) | (v != v), v, acc)
    if len(EPILOGUE) > 0:  # the pointwise ops after the pool, in float32
        acc = own_epilogue_apply(acc, offs, ok, ep_ptr, EPILOGUE)
    tl.store(out_ptr + offs, acc.to(out_ptr.dtype.element_ty), mask=ok)


def own_pool_out_size(size, kernel, stride, padding, dilation, ceil_mode):
    """The output length of a max pool along one dimension, as torch computes it (in ceil
    mode, a last window that would start in the right padding is dropped)."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


def kernelopt_max_pool(
    x, kernel, stride, padding, dilation, ceil_mode, epilogue=(), operands=()
):  # fmt: skip
    """``F.max_pool1d/2d/3d(x, kernel, stride, padding, dilation, ceil_mode)`` (without
    indices) for a contiguous ``(N, C, *spatial)`` or ``(C, *spatial)`` input; ``kernel``,
    ``stride``, ``padding`` and ``dilation`` are tuples of the spatial rank; then the
    pointwise ``epilogue`` over ``operands`` (``epilogue.py``) on each maximum.

    One Triton program computes a block of consecutive outputs, its window unrolled: the
    input is read from memory once, the windows' overlap served from cache.
    The maximum is exact in any precision, so without an epilogue the result is the
    vendor's, bit for bit.
    """
    dims = len(kernel)
    spatial = list(x.shape[x.dim() - dims :])
    sizes = [
        own_pool_out_size(spatial[i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode)
        for i in range(dims)
    ]
    out = torch.empty((*x.shape[: x.dim() - dims], *sizes), device=x.device, dtype=x.dtype)
    if x.device.type == "meta" or out.numel() == 0:
        return out
    x = x.contiguous()
    lead = 3 - dims  # a 1-D or 2-D pool as a 3-D one with size-1 leading dimensions
    d, h, w = [1] * lead + spatial
    d_out, h_out, w_out = [1] * lead + sizes
    k = [1] * lead + list(kernel)
    s = [1] * lead + list(stride)
    p = [0] * lead + list(padding)
    dl = [1] * lead + list(dilation)
    total = out.numel()
    program, ep = own_epilogue_program(epilogue, operands, out.shape, out)
    own_max_pool_kernel[lambda meta: (triton.cdiv(total, meta["BLOCK"]),)](
        x, out, ep, total, d, h, w, d_out, h_out, w_out,
        SD=s[0], SH=s[1], SW=s[2], PD=p[0], PH=p[1], PW=p[2],
        DD=dl[0], DH=dl[1], DW=dl[2], KD=k[0], KH=k[1], KW=k[2],
        BLOCK=1024,
        EPILOGUE=program,
        num_warps=4,
    )  # fmt: skip
    return out


@triton.jit
def own_norm_moments(x_ptr, base, lo, hi, INNER, cols, col_ok, STEPS: tl.constexpr):
    # Mean and sum of squared deviations (M2) of rows lo..hi-1 of each column, tile by tile
    # in float32, each tile's combined into the running ones by Chan's formula.
    steps = tl.arange(0, STEPS)
    mean = tl.sum(tl.zeros([STEPS, cols.shape[0]], dtype=tl.float32), 0)
    m2 = mean
    count = 0.0
    for start in range(lo, hi, STEPS):
        rows = start + steps
        ok = (rows < hi)[:, None] & col_ok
        v = tl.load(x_ptr + base + rows.to(tl.int64)[:, None] * INNER + cols[None, :], mask=ok)
        v = v.to(tl.float32)
        n_b = tl.minimum(hi - start, STEPS).to(tl.float32)
        mean_b = tl.sum(tl.where(ok, v, 0.0), 0) / n_b
        d = tl.where(ok, v - mean_b[None, :], 0.0)
        m2_b = tl.sum(d * d, 0)
        total = count + n_b
        delta = mean_b - mean
        mean = mean + delta * (n_b / total)
        m2 = m2 + m2_b + delta * delta * (count * n_b / total)
        count = total
    return mean, m2


@triton.jit
def own_norm_stats_kernel(
    x_ptr, mean_ptr, m2_ptr, L, INNER, CHUNK, PARTS,
    BLOCK: tl.constexpr, INNER_BLOCK: tl.constexpr,
):  # fmt: skip
    # A long row split across programs: each program the moments of its CHUNK of rows, for
    # INNER_BLOCK columns, stored as partials (outer, PARTS, INNER).
    pid = tl.program_id(0).to(tl.int64)
    outer, part, cols, col_ok, base = own_column_tile(pid, L, INNER, PARTS, INNER_BLOCK)
    lo = part * CHUNK
    hi = tl.minimum(lo + CHUNK, L)
    mean, m2 = own_norm_moments(
        x_ptr, base, lo, hi, INNER, cols, col_ok[None, :], BLOCK // INNER_BLOCK
    )
    at = (outer * PARTS + part) * INNER + cols
    tl.store(mean_ptr + at, mean, mask=cols < INNER)
    tl.store(m2_ptr + at, m2, mask=cols < INNER)


@triton.jit
def own_norm_kernel(
    x_ptr, w_ptr, b_ptr, mean_ptr, m2_ptr, out_ptr, ep_ptr, L, INNER, CHUNK, PARTS, CHANNELS,
    eps, RMS: tl.constexpr, SPLIT: tl.constexpr, PARTS_BLOCK: tl.constexpr,
    AFFINE: tl.constexpr, HAS_BIAS: tl.constexpr, BLOCK: tl.constexpr,
    INNER_BLOCK: tl.constexpr, EPILOGUE: tl.constexpr,
):  # fmt: skip
    # The tensor seen as (outer, L, inner), normalised over L for each (outer, inner column).
    # One program: INNER_BLOCK columns, rows of its CHUNK (all L unless SPLIT). Unsplit, it
    # takes the moments itself, then normalises the same rows, their second read following
    # the first (from cache); SPLIT, it combines the row's partials first. RMS: divides by
    # the root mean square (mean of squares = M2 / n + mean^2), no centring. AFFINE: 1, a
    # weight (and bias) per position along L; 2, one per channel (outer % CHANNELS).
    STEPS: tl.constexpr = BLOCK // INNER_BLOCK
    pid = tl.program_id(0).to(tl.int64)
    outer, part, cols, col_ok, base = own_column_tile(pid, L, INNER, PARTS, INNER_BLOCK)
    col_ok = col_ok[None, :]
    lo = part * CHUNK
    hi = tl.minimum(lo + CHUNK, L)
    if SPLIT:
        parts = tl.arange(0, PARTS_BLOCK)
        part_ok = (parts < PARTS)[:, None] & col_ok
        at = (outer * PARTS + parts)[:, None] * INNER + cols[None, :]
        means = tl.load(mean_ptr + at, mask=part_ok, other=0.0)
        m2s = tl.load(m2_ptr + at, mask=part_ok, other=0.0)
        counts = tl.minimum(CHUNK, L - parts * CHUNK).to(tl.float32)[:, None]
        counts = tl.where(part_ok, counts, 0.0)
        mean = tl.sum(means * counts, 0) / L
        spread = means - mean[None, :]
        m2 = tl.sum(m2s, 0) + tl.sum(tl.where(part_ok, counts * spread * spread, 0.0), 0)
    else:
        mean, m2 = own_norm_moments(x_ptr, base, 0, L, INNER, cols, col_ok, STEPS)
    rstd = 1.0 / tl.sqrt(m2 / L + (mean * mean if RMS else 0.0) + eps)
    steps = tl.arange(0, STEPS)
    for start in range(lo, hi, STEPS):
        rows = start + steps
        ok = (rows < hi)[:, None] & col_ok
        offs = base + rows.to(tl.int64)[:, None] * INNER + cols[None, :]
        v = tl.load(x_ptr + offs, mask=ok, other=0.0).to(tl.float32)
        y = v * rstd[None, :] if RMS else (v - mean[None, :]) * rstd[None, :]
        if AFFINE == 1:
            y = y * tl.load(w_ptr + rows, mask=rows < hi, other=1.0).to(tl.float32)[:, None]
            if HAS_BIAS:
                y += tl.load(b_ptr + rows, mask=rows < hi, other=0.0).to(tl.float32)[:, None]
        if AFFINE == 2:
            channel = outer % CHANNELS
            y = y * tl.load(w_ptr + channel).to(tl.float32)
            if HAS_BIAS:
                y += tl.load(b_ptr + channel).to(tl.float32)
        if len(EPILOGUE) > 0:  # the pointwise ops after the norm (epilogue.py), in float32
            y = own_epilogue_apply(y, offs, ok, ep_ptr, EPILOGUE)
        tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=ok)


#: Column programs below which a long row is split across programs (about four waves of
#: programs on an H100's 132 SMs), the most parts a row is split into, and the fewest rows
#: of a part.
NORM_MIN_PROGRAMS = 512
NORM_MAX_PARTS = 256
NORM_MIN_CHUNK = 1024


def kernelopt_norm(x, first, last, weight, bias, eps, rms, per_channel, epilogue=(), operands=()):
    """``x`` normalised over its dimensions ``first .. last - 1`` (contiguous), separately for
    each index of the others: ``(x - mean) / sqrt(var + eps)`` (biased variance), or ``x /
    sqrt(mean(x^2) + eps)`` where ``rms``; then times ``weight`` and plus ``bias`` (either may
    be None), of the normalised dimensions' shape, or one per channel (dimension 1) where
    ``per_channel``; then the pointwise ``epilogue`` over ``operands`` (``epilogue.py``). LayerNorm (the last dimensions), InstanceNorm (the spatial ones, per
    channel) and RMSNorm (dimension 1, or the last ones) are all this.

    One Triton program takes a block of columns (neighbouring positions after the normalised
    dimensions) and computes their moments in float32 (blockwise, combined by Chan's formula)
    before normalising them, so the row's second read follows its first from cache. Where
    there are too few rows to fill the GPU (a LayerNorm over millions of elements per row),
    each row is split: a first kernel writes the parts' moments, the second combines them and
    normalises its part. A reassociation of the vendor's sums.
    """
    out = torch.empty(x.shape, device=x.device, dtype=x.dtype)
    if x.device.type == "meta" or out.numel() == 0:
        return out
    outer, length, inner, inner_block = own_columns(x.shape, first, last)
    x = x.contiguous()
    columns = outer * triton.cdiv(inner, inner_block)
    parts = 1
    if columns < NORM_MIN_PROGRAMS:
        parts = min(
            NORM_MAX_PARTS,
            triton.cdiv(NORM_MIN_PROGRAMS, columns),
            triton.cdiv(length, NORM_MIN_CHUNK),
        )
    chunk = triton.cdiv(length, parts)
    parts = triton.cdiv(length, chunk)
    partials = torch.empty((2, outer, parts, inner), device=x.device, dtype=torch.float32)
    if parts > 1:
        own_norm_stats_kernel[lambda meta: (columns * parts,)](
            x, partials[0], partials[1], length, inner, chunk, parts,
            BLOCK=1024, INNER_BLOCK=inner_block, num_warps=4,
        )  # fmt: skip
    affine = 0 if weight is None else 2 if per_channel else 1
    program, ep = own_epilogue_program(epilogue, operands, x.shape, out)
    own_norm_kernel[lambda meta: (columns * parts,)](
        x,
        x if weight is None else weight.contiguous(),
        x if bias is None else bias.contiguous(),
        partials[0],
        partials[1],
        out,
        ep,
        length,
        inner,
        chunk,
        parts,
        x.shape[1] if x.dim() > 1 else 1,
        float(eps),
        RMS=bool(rms),
        SPLIT=parts > 1,
        PARTS_BLOCK=triton.next_power_of_2(parts),
        AFFINE=affine,
        HAS_BIAS=bias is not None,
        BLOCK=1024,
        INNER_BLOCK=inner_block,
        EPILOGUE=program,
        num_warps=4,
    )
    return out


@triton.jit
def own_arg_reduce_kernel(
    x_ptr, out_ptr, L, INNER,
    LARGEST: tl.constexpr, BLOCK: tl.constexpr, INNER_BLOCK: tl.constexpr,
):  # fmt: skip
    # The tensor seen as (outer, L, inner): for each (outer, inner column), the index along L
    # of the largest (LARGEST) or smallest value, the first one where several tie; a NaN
    # counts as the extreme, as in torch. One program: INNER_BLOCK columns, L in tiles.
    STEPS: tl.constexpr = BLOCK // INNER_BLOCK
    pid = tl.program_id(0).to(tl.int64)
    outer, _part, cols, col_ok, base = own_column_tile(pid, L, INNER, 1, INNER_BLOCK)
    steps = tl.arange(0, STEPS)
    worst = float("-inf") if LARGEST else float("inf")
    best = tl.full([INNER_BLOCK], worst, dtype=tl.float32)
    best_at = tl.zeros([INNER_BLOCK], dtype=tl.int64)
    best_nan = tl.zeros([INNER_BLOCK], dtype=tl.int1)
    for start in range(0, L, STEPS):
        rows = start + steps
        ok = (rows < L)[:, None] & col_ok[None, :]
        offs = base + rows.to(tl.int64)[:, None] * INNER + cols[None, :]
        v = tl.load(x_ptr + offs, mask=ok, other=worst).to(tl.float32)
        nan = (v != v) & ok
        clean = tl.where(nan | ~ok, worst, v)
        top = tl.max(clean, 0) if LARGEST else tl.min(clean, 0)
        tile_nan = tl.max(nan.to(tl.int32), 0) > 0
        # The tile's first NaN where it has one, else its first extreme value.
        pick = tl.where(tile_nan[None, :], nan, ok & (clean == top[None, :]))
        at = tl.min(tl.where(pick, rows[:, None], L), 0).to(tl.int64)
        # Strictly better only: a tie keeps the earlier index. Starting from index 0 at the
        # worst value answers 0 for a row that holds nothing better, as torch does.
        better = top > best if LARGEST else top < best
        wins = ~best_nan & (tile_nan | better)
        best = tl.where(wins, top, best)
        best_at = tl.where(wins, at, best_at)
        best_nan = best_nan | tile_nan
    tl.store(out_ptr + outer * INNER + cols, best_at, mask=col_ok)


def kernelopt_arg_reduce(x, dim, keepdim, largest):
    """``torch.argmax(x, dim, keepdim)`` (``largest``) or ``torch.argmin``: the int64 index
    along ``dim`` of each extreme value, the first of ties, a NaN counting as the extreme.

    One Triton program reduces one row (or neighbouring columns, where ``dim`` is
    not the last dimension) in tiles, keeping the running extreme and its index in
    registers: one read of the tensor. Exact: comparisons only.
    """
    d = dim % x.dim()
    shape = list(x.shape)
    shape[d : d + 1] = [1] if keepdim else []
    out = torch.empty(shape, device=x.device, dtype=torch.int64)
    if x.device.type == "meta" or out.numel() == 0:
        return out
    outer, length, inner, inner_block = own_columns(x.shape, d, d + 1)
    x = x.contiguous()
    own_arg_reduce_kernel[lambda meta: (outer * triton.cdiv(inner, meta["INNER_BLOCK"]),)](
        x,
        out,
        length,
        inner,
        LARGEST=bool(largest),
        BLOCK=1024,
        INNER_BLOCK=inner_block,
        num_warps=4,
    )
    return out


@triton.jit
def own_batch_norm_offsets(start, steps, span, CS):
    # Where a channel's entries start .. start + STEPS - 1 lie (entry k of a channel at
    # (k // span) * C * span + k % span past the channel's first value, span = S). One
    # division per tile: where a tile spans at most one image boundary (span >= STEPS) each
    # entry is in the tile's first image or the next; else a 32-bit division per entry.
    n0 = start // span
    s = start - n0 * span + steps
    if span >= steps.shape[0]:
        wrap = (s >= span).to(tl.int64)
        n = n0 + wrap
        s = s - wrap * span
    else:
        q = s.to(tl.int32) // span
        n = n0 + q.to(tl.int64)
        s = s - q.to(tl.int64) * span
    return n * CS + s


@triton.jit
def own_batch_norm_moments(x_ptr, lo, hi, S, CS, chans, chan_ok, STEPS: tl.constexpr):
    # Mean and M2 of entries lo..hi-1 of each channel's (N * S) values, tile by tile in
    # float32, Chan's formula between, and the pivot the mean is taken about: the sums are
    # of v - pivot, the channel's first value, the same for every part of a split channel.
    # On values far from zero (an offset of 1e3 on values of spread 1) sums of the values
    # themselves round at the offset's scale, and that error lands on every normalised
    # output (torch's CPU kernel sums in float64; its CUDA kernel uses Welford's update).
    steps = tl.arange(0, STEPS).to(tl.int64)
    mean = tl.sum(tl.zeros([STEPS, chans.shape[0]], dtype=tl.float32), 0)
    m2 = mean
    count = 0.0
    pivot = own_batch_norm_pivot(x_ptr, chans, chan_ok, S)
    for start in range(lo, hi, STEPS):
        ok = ((start + steps) < hi)[:, None] & chan_ok
        at = own_batch_norm_offsets(start, steps, S, CS)
        offs = at[:, None] + chans.to(tl.int64)[None, :] * S
        v = tl.load(x_ptr + offs, mask=ok).to(tl.float32) - pivot[None, :]
        n_b = tl.minimum(hi - start, STEPS).to(tl.float32)
        mean_b = tl.sum(tl.where(ok, v, 0.0), 0) / n_b
        d = tl.where(ok, v - mean_b[None, :], 0.0)
        m2_b = tl.sum(d * d, 0)
        total = count + n_b
        delta = mean_b - mean
        mean = mean + delta * (n_b / total)
        m2 = m2 + m2_b + delta * delta * (count * n_b / total)
        count = total
    return mean, m2, pivot


@triton.jit
def own_batch_norm_pivot(x_ptr, chans, chan_ok, S):
    # Each channel's first value (entry 0), in float32.
    first = tl.load(x_ptr + (chans.to(tl.int64) * S)[None, :], mask=chan_ok, other=0.0)
    return tl.sum(first.to(tl.float32), 0)


@triton.jit
def own_batch_norm_stats_kernel(
    x_ptr, mean_ptr, m2_ptr, K, S, C, CHUNK, PARTS,
    BLOCK: tl.constexpr, CHANNEL_BLOCK: tl.constexpr,
):  # fmt: skip
    # A channel's K = N * S values split across PARTS programs: each stores the moments of
    # its CHUNK for CHANNEL_BLOCK neighbouring channels, as partials (PARTS, C).
    pid = tl.program_id(0).to(tl.int64)
    part = pid % PARTS
    chans = (pid // PARTS) * CHANNEL_BLOCK + tl.arange(0, CHANNEL_BLOCK)
    chan_ok = (chans < C)[None, :]
    lo = part * CHUNK
    hi = tl.minimum(lo + CHUNK, K)
    mean, m2, _ = own_batch_norm_moments(  # the mean about the channel's first value
        x_ptr, lo, hi, S, C * S, chans, chan_ok, BLOCK // CHANNEL_BLOCK
    )
    tl.store(mean_ptr + part * C + chans, mean, mask=chans < C)
    tl.store(m2_ptr + part * C + chans, m2, mask=chans < C)


@triton.jit
def own_batch_norm_kernel(
    x_ptr, w_ptr, b_ptr, mean_ptr, m2_ptr, rmean_ptr, rvar_ptr, count_ptr, out_ptr, ep_ptr,
    K, S, C, CHUNK, PARTS, eps, momentum,
    BATCH_STATS: tl.constexpr, UPDATE: tl.constexpr, CUMULATIVE: tl.constexpr,
    SPLIT: tl.constexpr, PARTS_BLOCK: tl.constexpr, HAS_WEIGHT: tl.constexpr,
    HAS_BIAS: tl.constexpr, BLOCK: tl.constexpr, CHANNEL_BLOCK: tl.constexpr,
    EPILOGUE: tl.constexpr,
):  # fmt: skip
    # x as (N, C, S): each channel normalised over its K = N * S values. One program:
    # CHANNEL_BLOCK channels, entries of its CHUNK (all K unless SPLIT). BATCH_STATS: the
    # batch's mean and biased variance (combined from the parts' partials where SPLIT, else
    # taken here, the second read following the first from cache), and where UPDATE the
    # part-0 program moves the running statistics towards them (the unbiased variance; the
    # factor is 1 / batches seen where CUMULATIVE, read before this call's count is added).
    # Else the running statistics normalise. Then the pointwise EPILOGUE (epilogue.py).
    STEPS: tl.constexpr = BLOCK // CHANNEL_BLOCK
    pid = tl.program_id(0).to(tl.int64)
    part = pid % PARTS
    chans = (pid // PARTS) * CHANNEL_BLOCK + tl.arange(0, CHANNEL_BLOCK)
    chan_ok = (chans < C)[None, :]
    ok_c = chans < C
    lo = part * CHUNK
    hi = tl.minimum(lo + CHUNK, K)
    if BATCH_STATS:
        if SPLIT:
            parts = tl.arange(0, PARTS_BLOCK)
            part_ok = (parts < PARTS)[:, None] & chan_ok
            slots = parts.to(tl.int64)[:, None] * C + chans[None, :]
            means = tl.load(mean_ptr + slots, mask=part_ok, other=0.0)
            m2s = tl.load(m2_ptr + slots, mask=part_ok, other=0.0)
            counts = tl.minimum(CHUNK, K - parts * CHUNK).to(tl.float32)[:, None]
            counts = tl.where(part_ok, counts, 0.0)
            # The parts' means are about the channel's first value (own_batch_norm_moments).
            about = tl.sum(means * counts, 0) / K
            spread = means - about[None, :]
            m2 = tl.sum(m2s, 0) + tl.sum(tl.where(part_ok, counts * spread * spread, 0.0), 0)
            pivot = own_batch_norm_pivot(x_ptr, chans, chan_ok, S)
        else:
            about, m2, pivot = own_batch_norm_moments(x_ptr, 0, K, S, C * S, chans, chan_ok, STEPS)
        mean = pivot + about
        var = m2 / K
        if UPDATE:  # noqa: SIM102 - a constexpr test, pruned at compile time, then a runtime one
            if part == 0:
                factor = momentum
                if CUMULATIVE:
                    factor = 1.0 / (tl.load(count_ptr).to(tl.float32) + 1.0)
                rm = tl.load(rmean_ptr + chans, mask=ok_c, other=0.0).to(tl.float32)
                rv = tl.load(rvar_ptr + chans, mask=ok_c, other=0.0).to(tl.float32)
                rm = (1.0 - factor) * rm + factor * mean
                rv = (1.0 - factor) * rv + factor * (m2 / (K - 1))
                tl.store(rmean_ptr + chans, rm.to(rmean_ptr.dtype.element_ty), mask=ok_c)
                tl.store(rvar_ptr + chans, rv.to(rvar_ptr.dtype.element_ty), mask=ok_c)
    else:
        about = tl.load(rmean_ptr + chans, mask=ok_c, other=0.0).to(tl.float32)
        pivot = about * 0.0
        var = tl.load(rvar_ptr + chans, mask=ok_c, other=1.0).to(tl.float32)
    # (x - mean) first, as torch does: folding the mean into the shift (x * scale - mean *
    # scale) cancels two large products where x is near the mean, losing the small values.
    # With batch statistics, as (x - pivot) - (mean - pivot): exact where x is near the
    # pivot, and the mean about the pivot is not rounded at the pivot's scale.
    scale = 1.0 / tl.sqrt(var + eps)
    if HAS_WEIGHT:
        scale = scale * tl.load(w_ptr + chans, mask=ok_c, other=1.0).to(tl.float32)
    shift = tl.zeros([CHANNEL_BLOCK], dtype=tl.float32)
    if HAS_BIAS:
        shift += tl.load(b_ptr + chans, mask=ok_c, other=0.0).to(tl.float32)
    steps = tl.arange(0, STEPS).to(tl.int64)
    for start in range(lo, hi, STEPS):
        ok = ((start + steps) < hi)[:, None] & chan_ok
        at = own_batch_norm_offsets(start, steps, S, C * S)
        offs = at[:, None] + chans.to(tl.int64)[None, :] * S
        v = tl.load(x_ptr + offs, mask=ok, other=0.0).to(tl.float32)
        y = ((v - pivot[None, :]) - about[None, :]) * scale[None, :] + shift[None, :]
        if len(EPILOGUE) > 0:  # the pointwise ops after the norm, in float32
            y = own_epilogue_apply(y, offs, ok, ep_ptr, EPILOGUE)
        tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=ok)


@triton.jit
def own_batch_count_kernel(count_ptr):
    # The batches a BatchNorm has seen, one more (after the call that read the old count).
    tl.store(count_ptr, tl.load(count_ptr) + 1)


def kernelopt_batch_norm(
    x, running_mean, running_var, weight, bias, training, momentum, eps, batches=None,
    epilogue=(), operands=(),
):  # fmt: skip
    """``F.batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps)``
    on ``(N, C, *)``: in training, each channel normalised by its mean and biased variance
    over the batch and spatial positions, and the running statistics (where given) moved
    towards the mean and the unbiased variance by ``momentum``; else normalised by the
    running statistics. ``batches`` (a BatchNorm layer's ``num_batches_tracked``) is counted
    up in training, and where ``momentum`` is None the factor is 1 / that count, as the
    layer does. Then the pointwise ``epilogue`` over ``operands`` (``epilogue.py``) is
    applied to each normalised value before its store.

    One Triton program takes a block of channels (several side by side where each image
    holds one value per channel) and computes their moments in float32 (tiles combined by
    Chan's formula) before normalising them; where there are too few channels to fill the
    GPU, each channel's values are split across programs (partial moments, then a combine,
    update and normalise pass). A reassociation of the vendor's sums.
    """
    out = torch.empty(x.shape, device=x.device, dtype=x.dtype)
    if x.device.type == "meta" or out.numel() == 0:
        return out
    channels = x.shape[1] if x.dim() > 1 else 1
    spatial = x.numel() // (x.shape[0] * channels)
    count = x.numel() // channels
    if training and count <= 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {x.shape}"
        )
    x = x.contiguous()
    update = bool(training) and running_mean is not None and running_var is not None
    cumulative = update and momentum is None and batches is not None
    channel_block = 1 if spatial > 1 else min(MAX_INNER_BLOCK, triton.next_power_of_2(channels))
    blocks = triton.cdiv(channels, channel_block)
    parts = 1
    if blocks < NORM_MIN_PROGRAMS:
        parts = min(
            NORM_MAX_PARTS,
            triton.cdiv(NORM_MIN_PROGRAMS, blocks),
            triton.cdiv(count, NORM_MIN_CHUNK),
        )
    chunk = triton.cdiv(count, parts)
    parts = triton.cdiv(count, chunk)
    partials = torch.empty((2, parts, channels), device=x.device, dtype=torch.float32)
    program, ep = own_epilogue_program(epilogue, operands, x.shape, out)
    if training and parts > 1:
        own_batch_norm_stats_kernel[lambda meta: (blocks * parts,)](
            x, partials[0], partials[1], count, spatial, channels, chunk, parts,
            BLOCK=1024, CHANNEL_BLOCK=channel_block, num_warps=4,
        )  # fmt: skip
    own_batch_norm_kernel[lambda meta: (blocks * parts,)](
        x,
        x if weight is None else weight,
        x if bias is None else bias,
        partials[0],
        partials[1],
        running_mean if running_mean is not None else x,
        running_var if running_var is not None else x,
        batches if cumulative else x,
        out,
        ep,
        count,
        spatial,
        channels,
        chunk,
        parts,
        float(eps),
        0.0 if momentum is None else float(momentum),
        BATCH_STATS=bool(training),
        UPDATE=update,
        CUMULATIVE=cumulative,
        SPLIT=parts > 1,
        PARTS_BLOCK=triton.next_power_of_2(parts),
        HAS_WEIGHT=weight is not None,
        HAS_BIAS=bias is not None,
        BLOCK=1024,
        CHANNEL_BLOCK=channel_block,
        EPILOGUE=program,
        num_warps=4,
    )
    if training and batches is not None:
        own_batch_count_kernel[(1,)](batches)
    return out


def kernelopt_batch_norm_layer(x, layer, epilogue=(), operands=()):
    """``layer(x)`` for an ``nn.BatchNorm1d/2d/3d`` ``layer``, read when called as its own
    forward reads it (training or not, momentum, running statistics, the batch counter),
    computed by :func:`kernelopt_batch_norm`, with its pointwise ``epilogue``."""
    training = layer.training or (layer.running_mean is None and layer.running_var is None)
    track = not layer.training or layer.track_running_stats
    counting = layer.training and layer.track_running_stats
    return kernelopt_batch_norm(
        x,
        layer.running_mean if track else None,
        layer.running_var if track else None,
        layer.weight,
        layer.bias,
        training,
        layer.momentum if layer.momentum is not None or counting else 0.0,
        layer.eps,
        layer.num_batches_tracked if counting else None,
        epilogue,
        operands,
    )


@triton.jit
def own_pointwise_kernel(x_ptr, out_ptr, ep_ptr, TOTAL, BLOCK: tl.constexpr,
                         EPILOGUE: tl.constexpr):  # fmt: skip
    # One program: BLOCK consecutive values, read once, the EPILOGUE program (epilogue.py)
    # applied in float32, stored once.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < TOTAL
    v = tl.load(x_ptr + offs, mask=ok, other=0.0).to(tl.float32)
    v = own_epilogue_apply(v, offs, ok, ep_ptr, EPILOGUE)
    tl.store(out_ptr + offs, v.to(out_ptr.dtype.element_ty), mask=ok)


def kernelopt_pointwise(x, epilogue=(), operands=()):
    """The pointwise ``epilogue`` program over ``operands`` (``epilogue.py``) applied to each
    value of ``x``: a chain of activations and arithmetic with numbers, parameters and
    tensors of one block of ``x``'s dimensions, in one pass that reads ``x`` and writes the
    result once (PyTorch writes and reads every intermediate). A reassociation: each op is
    computed in float32 with no rounding between them."""
    out = torch.empty(x.shape, device=x.device, dtype=x.dtype)
    if x.device.type == "meta" or out.numel() == 0:
        return out
    x = x.contiguous()
    program, ep = own_epilogue_program(epilogue, operands, x.shape, out)
    total = out.numel()
    own_pointwise_kernel[lambda meta: (triton.cdiv(total, meta["BLOCK"]),)](
        x, out, ep, total, BLOCK=1024, EPILOGUE=program, num_warps=4
    )
    return out


#: The losses of one value per element (of the broadcast operands), summed: the kernels'
#: ``FORM``, by the index of its name here.
POINTWISE_LOSSES = (
    "mse", "l1", "smooth_l1", "huber", "hinge", "kl", "kl_log_target", "kl_written",
)  # fmt: skip


@triton.jit
def own_loss_term(a, b, param, FORM: tl.constexpr, LOG_A: tl.constexpr):
    # The loss of each element pair, in float32. LOG_A: ``a`` is replaced by its log (a KL
    # divergence of probabilities).
    a = a.to(tl.float32)
    b = b.to(tl.float32)
    if LOG_A:
        a = tl.log(a)
    if FORM == 0:  # squared error
        v = (a - b) * (a - b)
    elif FORM == 1:  # absolute error
        v = tl.abs(a - b)
    elif FORM == 2:  # smooth L1, beta = param (0: absolute error)
        d = tl.abs(a - b)
        v = tl.where(d < param, 0.5 * d * d / param, d - 0.5 * param)
    elif FORM == 3:  # Huber, delta = param
        d = tl.abs(a - b)
        v = tl.where(d < param, 0.5 * d * d, param * (d - 0.5 * param))
    elif FORM == 4:  # hinge, margin = param (a NaN stays one, as in torch's clamp)
        v = param - a * b
        v = tl.where(v < 0.0, 0.0, v)
    elif FORM == 5:  # KL divergence, b probabilities: xlogy(b, b) - b * a
        v = tl.where(b == 0.0, 0.0, b * tl.log(b)) - b * a
    elif FORM == 6:  # KL divergence, b log-probabilities
        v = tl.exp(b) * (b - a)
    else:  # KL divergence written out: b (log b - a), NaN where b is 0 as torch gives it
        v = b * (tl.log(b) - a)
    return v


@triton.jit
def own_pointwise_loss_kernel(
    a_ptr, b_ptr, part_ptr, N, CHUNK, A_INNER, A_LEN, B_INNER, B_LEN, R, C, ROWS_PER,
    COL_CHUNK, COL_PARTS, param,
    FORM: tl.constexpr, LAYOUT: tl.constexpr, A_FULL: tl.constexpr, B_FULL: tl.constexpr,
    LOG_A: tl.constexpr, BLOCK: tl.constexpr,
):  # fmt: skip
    # One program: the sum of the loss over its part of the broadcast shape, in float32
    # lanes of BLOCK, stored as its partial. LAYOUT 0: elements lo..hi-1 of the flat shape;
    # an operand that is not of the full shape reads element (i // INNER) % LEN (a block of
    # the output's dimensions). LAYOUT 1 and 2: the shape as (R, C), ``a`` of the full
    # shape, a block of ROWS_PER rows by COL_CHUNK columns per program, ``b`` one value per
    # column (1) or per row (2, row % B_LEN): no division per element.
    pid = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    lanes = tl.arange(0, BLOCK).to(tl.int64)
    if LAYOUT == 0:
        lo = pid * CHUNK
        hi = tl.minimum(lo + CHUNK, N)
        for start in range(lo, hi, BLOCK):
            i = start + lanes
            ok = i < hi
            a_at = i if A_FULL else (i // A_INNER) % A_LEN
            b_at = i if B_FULL else (i // B_INNER) % B_LEN
            a = tl.load(a_ptr + a_at, mask=ok, other=1.0)
            b = tl.load(b_ptr + b_at, mask=ok, other=1.0)
            acc += tl.where(ok, own_loss_term(a, b, param, FORM, LOG_A), 0.0)
    else:
        r0 = (pid // COL_PARTS) * ROWS_PER
        r1 = tl.minimum(r0 + ROWS_PER, R)
        c0 = (pid % COL_PARTS) * COL_CHUNK
        c1 = tl.minimum(c0 + COL_CHUNK, C)
        for r in range(r0, r1):
            for start in range(c0, c1, BLOCK):
                cols = start + lanes
                ok = cols < c1
                a = tl.load(a_ptr + r * C + cols, mask=ok, other=1.0)
                if LAYOUT == 1:
                    b = tl.load(b_ptr + cols, mask=ok, other=1.0)
                else:
                    b = tl.load(b_ptr + r % B_LEN)
                acc += tl.where(ok, own_loss_term(a, b, param, FORM, LOG_A), 0.0)
    tl.store(part_ptr + pid, tl.sum(acc, 0))


@triton.jit
def own_loss_sum_kernel(
    part_ptr, count_ptr, out_ptr, P, divisor, HAS_COUNT: tl.constexpr, BLOCK: tl.constexpr
):
    # One program: the P partial sums added in a fixed order (the result does not depend on
    # the launch), divided by ``divisor`` or, HAS_COUNT, by the sum of the counts.
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    counted = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, P, BLOCK):
        i = start + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + i, mask=i < P, other=0.0)
        if HAS_COUNT:
            counted += tl.load(count_ptr + i, mask=i < P, other=0.0)
    total = tl.sum(acc, 0) / (tl.sum(counted, 0) if HAS_COUNT else divisor)
    tl.store(out_ptr, total.to(out_ptr.dtype.element_ty))


#: The fewest elements one program of a pointwise loss sums, and the most programs.
LOSS_MIN_CHUNK = 4096
LOSS_MAX_PARTS = 2048


def kernelopt_pointwise_loss(a, b, form, param, log_a, reduction):
    """A loss of one value per element of ``a`` and ``b`` (broadcast), reduced to a scalar of
    ``a``'s dtype: its sum (``reduction="sum"``), mean (``"mean"``) or sum over ``a.shape[0]``
    (``"batchmean"``). ``form`` (``POINTWISE_LOSSES``): ``mse`` (``(a - b)^2``), ``l1``,
    ``smooth_l1`` (``beta = param``), ``huber`` (``delta = param``), ``hinge``
    (``max(param - a * b, 0)``), ``kl`` (``b (log b - a)``, 0 where ``b`` is 0) and
    ``kl_log_target`` (``exp(b) (b - a)``), ``kl_written`` (``b (log b - a)`` as written,
    NaN where ``b`` is 0); ``log_a``: ``a`` is replaced by its log.

    Programs each sum a chunk of the elements in float32 lanes (the operands read once, a
    broadcast one indexed in place), and one program adds the partial sums in a fixed
    order: two launches, where the vendor's loss writes the elementwise terms and then
    reduces them. A reassociation of the sum.
    """
    shape = torch.broadcast_shapes(a.shape, b.shape)
    out = torch.empty((), device=a.device, dtype=a.dtype)
    if a.device.type == "meta":
        return out
    a_at = own_broadcast_index(a, shape)
    b_at = own_broadcast_index(b, shape)
    if a_at is None or b_at is None:
        raise ValueError(f"operands of shapes {tuple(a.shape)} and {tuple(b.shape)}")
    total = 1
    for size in shape:
        total *= size
    # Where only ``b`` repeats (KernelBench's hinge: targets along the last dimension), the
    # shape as rows by columns, ``b`` by column or by row; else the flat shape.
    layout, cols = 0, 1
    if a_at[2] and not b_at[2] and total:
        inner, length = b_at[0], b_at[1]
        layout, cols = (1, length) if inner == 1 and length > 1 else (2, inner)
        cols = total if length == 1 else cols  # a scalar: one row
    rows = total // cols
    col_parts = max(1, min(LOSS_MAX_PARTS, triton.cdiv(cols, LOSS_MIN_CHUNK)))
    col_chunk = triton.cdiv(cols, col_parts)
    col_parts = triton.cdiv(cols, col_chunk)
    rows_per = max(
        triton.cdiv(rows, max(1, LOSS_MAX_PARTS // col_parts)),
        triton.cdiv(LOSS_MIN_CHUNK, col_chunk),
    )
    parts = triton.cdiv(rows, rows_per) * col_parts
    chunk = 1
    if layout == 0:
        parts = max(1, min(LOSS_MAX_PARTS, triton.cdiv(total, LOSS_MIN_CHUNK)))
        chunk = max(1, triton.cdiv(total, parts))
    partials = torch.empty(parts, device=a.device, dtype=torch.float32)
    a, b = a.contiguous(), b.contiguous()
    own_pointwise_loss_kernel[lambda meta: (parts,)](
        a, b, partials, total, chunk, a_at[0], a_at[1], b_at[0], b_at[1], rows, cols,
        rows_per, col_chunk, col_parts, float(param),
        FORM=POINTWISE_LOSSES.index(form), LAYOUT=layout, A_FULL=a_at[2], B_FULL=b_at[2],
        LOG_A=bool(log_a), BLOCK=1024, num_warps=4,
    )  # fmt: skip
    divisor = {"sum": 1.0, "mean": float(total), "batchmean": float(shape[0] if shape else 1)}
    own_loss_sum_kernel[lambda meta: (1,)](
        partials, partials, out, parts, divisor[reduction], HAS_COUNT=False,
        BLOCK=1024, num_warps=4,
    )  # fmt: skip
    return out


#: The losses of one value per row (a reduction along one dimension first): the kernel's
#: ``FORM``, by the index of its name here.
ROW_LOSSES = ("cross_entropy", "cosine", "triplet")


@triton.jit
def own_row_loss_kernel(
    a_ptr, b_ptr, c_ptr, row_ptr, valid_ptr, L, INNER, param, eps,
    FORM: tl.constexpr, BLOCK: tl.constexpr, INNER_BLOCK: tl.constexpr,
):  # fmt: skip
    # The operands seen as (outer, L, inner); one loss per (outer, inner column), from the
    # reduction along L. One program: INNER_BLOCK columns, L in tiles. FORM 0, cross entropy:
    # logsumexp of the row (running maximum and rescaled sum) minus the logit b names (b the
    # class indices, param the ignored one: its row counts 0 and is not counted). 1, cosine
    # loss: 1 - a.b / (max(|a|, eps) max(|b|, eps)). 2, triplet margin loss: max(|a - b +
    # eps| - |a - c + eps| + param, 0), Euclidean norms.
    STEPS: tl.constexpr = BLOCK // INNER_BLOCK
    pid = tl.program_id(0).to(tl.int64)
    outer, _part, cols, col_ok, base = own_column_tile(pid, L, INNER, 1, INNER_BLOCK)
    steps = tl.arange(0, STEPS)
    s1 = tl.zeros([INNER_BLOCK], dtype=tl.float32)
    s2 = tl.zeros([INNER_BLOCK], dtype=tl.float32)
    s3 = tl.zeros([INNER_BLOCK], dtype=tl.float32)
    top = tl.full([INNER_BLOCK], float("-inf"), dtype=tl.float32)
    for start in range(0, L, STEPS):
        rows = start + steps
        ok = (rows < L)[:, None] & col_ok[None, :]
        offs = base + rows.to(tl.int64)[:, None] * INNER + cols[None, :]
        a = tl.load(a_ptr + offs, mask=ok, other=0.0).to(tl.float32)
        if FORM == 0:
            a = tl.where(ok, a, float("-inf"))
            new_top = tl.maximum(top, tl.max(a, 0))
            pivot = tl.where(new_top == float("-inf"), 0.0, new_top)
            s1 = s1 * tl.exp(top - pivot) + tl.sum(tl.exp(a - pivot[None, :]), 0)
            top = new_top
        elif FORM == 1:
            b = tl.load(b_ptr + offs, mask=ok, other=0.0).to(tl.float32)
            s1 += tl.sum(a * b, 0)
            s2 += tl.sum(a * a, 0)
            s3 += tl.sum(b * b, 0)
        else:
            b = tl.load(b_ptr + offs, mask=ok, other=0.0).to(tl.float32)
            c = tl.load(c_ptr + offs, mask=ok, other=0.0).to(tl.float32)
            dp = tl.where(ok, a - b + eps, 0.0)
            dn = tl.where(ok, a - c + eps, 0.0)
            s1 += tl.sum(dp * dp, 0)
            s2 += tl.sum(dn * dn, 0)
    row = outer * INNER + cols
    if FORM == 0:
        target = tl.load(b_ptr + row, mask=col_ok, other=0)
        valid = col_ok & (target != param.to(tl.int64))
        known = valid & (target >= 0) & (target < L)
        picked = tl.load(a_ptr + base + target * INNER + cols, mask=known, other=0.0)
        loss = tl.where(valid, top + tl.log(s1) - picked.to(tl.float32), 0.0)
        tl.store(valid_ptr + row, valid.to(tl.float32), mask=col_ok)
    elif FORM == 1:
        loss = 1.0 - s1 / (tl.maximum(tl.sqrt(s2), eps) * tl.maximum(tl.sqrt(s3), eps))
    else:
        loss = tl.sqrt(s1) - tl.sqrt(s2) + param
        loss = tl.where(loss < 0.0, 0.0, loss)
    tl.store(row_ptr + row, loss, mask=col_ok)


def kernelopt_row_loss(a, b, c, dim, form, param, eps, reduction):
    """A loss of one value per row along ``dim`` (``ROW_LOSSES``), reduced to a scalar of
    ``a``'s dtype: the sum (``reduction="sum"``) or mean of the rows' losses.
    ``cross_entropy``: ``F.cross_entropy(a, b, ignore_index=param)`` with ``a`` the logits
    (classes along ``dim``) and ``b`` the class indices (the mean is over the rows not
    ignored); ``cosine``: ``1 - F.cosine_similarity(a, b, dim, eps)``; ``triplet``:
    ``F.triplet_margin_loss(a, b, c, margin=param, p=2, eps=eps)`` (``dim`` the last).

    One Triton program reduces a row (or neighbouring columns, where ``dim`` is not the
    last) in tiles, every operand read once, and one program adds the rows' losses in a
    fixed order: where the vendor writes the logsumexp, the norms or the distances, and
    then their combination, before reducing. A reassociation of the sums.
    """
    out = torch.empty((), device=a.device, dtype=a.dtype)
    if a.device.type == "meta":
        return out
    d = dim % a.dim()
    outer, length, inner, inner_block = own_columns(a.shape, d, d + 1)
    rows = outer * inner
    losses = torch.empty((2, max(1, rows)), device=a.device, dtype=torch.float32)
    a, b = a.contiguous(), b.contiguous()
    c = c.contiguous() if c is not None else a
    if rows:
        own_row_loss_kernel[lambda meta: (outer * triton.cdiv(inner, meta["INNER_BLOCK"]),)](
            a, b, c, losses[0], losses[1], length, inner, param, float(eps),
            FORM=ROW_LOSSES.index(form), BLOCK=1024, INNER_BLOCK=inner_block, num_warps=4,
        )  # fmt: skip
    counted = form == "cross_entropy" and reduction == "mean"
    own_loss_sum_kernel[lambda meta: (1,)](
        losses[0], losses[1], out, rows, float(rows) if reduction == "mean" else 1.0,
        HAS_COUNT=counted, BLOCK=1024, num_warps=4,
    )  # fmt: skip
    return out


#: Module constants the wrappers read, copied with them (merged into
#: ``kernels.KERNEL_CONSTANTS``).
FAMILY_KERNEL_CONSTANTS = {
    "MAX_INNER_BLOCK": MAX_INNER_BLOCK,
    "NORM_MIN_PROGRAMS": NORM_MIN_PROGRAMS,
    "NORM_MAX_PARTS": NORM_MAX_PARTS,
    "NORM_MIN_CHUNK": NORM_MIN_CHUNK,
    "POINTWISE_LOSSES": POINTWISE_LOSSES,
    "ROW_LOSSES": ROW_LOSSES,
    "LOSS_MIN_CHUNK": LOSS_MIN_CHUNK,
    "LOSS_MAX_PARTS": LOSS_MAX_PARTS,
}

#: Each wrapper and the kernels it launches, in the order they are copied (merged into
#: ``kernels.KERNEL_HELPERS``).
FAMILY_KERNEL_HELPERS: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    kernelopt_scan.__name__: (kernelopt_scan, (own_columns, own_column_tile, own_scan_kernel)),
    kernelopt_max_pool.__name__: (
        kernelopt_max_pool,
        (*EPILOGUE_HELPERS, own_pool_out_size, own_max_pool_kernel),
    ),
    kernelopt_norm.__name__: (
        kernelopt_norm,
        (
            *EPILOGUE_HELPERS,
            own_columns,
            own_column_tile,
            own_norm_moments,
            own_norm_stats_kernel,
            own_norm_kernel,
        ),
    ),
    kernelopt_arg_reduce.__name__: (
        kernelopt_arg_reduce,
        (own_columns, own_column_tile, own_arg_reduce_kernel),
    ),
    kernelopt_batch_norm.__name__: (
        kernelopt_batch_norm,
        (
            *EPILOGUE_HELPERS,
            own_batch_norm_offsets,
            own_batch_norm_moments,
            own_batch_norm_pivot,
            own_batch_norm_stats_kernel,
            own_batch_norm_kernel,
            own_batch_count_kernel,
        ),
    ),
    kernelopt_batch_norm_layer.__name__: (
        kernelopt_batch_norm_layer,
        (
            *EPILOGUE_HELPERS,
            own_batch_norm_offsets,
            own_batch_norm_moments,
            own_batch_norm_pivot,
            own_batch_norm_stats_kernel,
            own_batch_norm_kernel,
            own_batch_count_kernel,
            kernelopt_batch_norm,
        ),
    ),
    kernelopt_pointwise.__name__: (kernelopt_pointwise, (*EPILOGUE_HELPERS, own_pointwise_kernel)),
    kernelopt_pointwise_loss.__name__: (
        kernelopt_pointwise_loss,
        (own_loss_term, own_pointwise_loss_kernel, own_loss_sum_kernel, own_broadcast_index),
    ),
    kernelopt_row_loss.__name__: (
        kernelopt_row_loss,
        (own_columns, own_column_tile, own_row_loss_kernel, own_loss_sum_kernel),
    ),
}
