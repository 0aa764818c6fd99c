"""KernelOPT's transposed convolution (1-, 2- and 3-D), written to be copied.

The contract of :mod:`family_kernels`: the wrapper and the ``@triton.jit`` kernel it launches
need only ``torch``, ``triton`` and ``triton.language as tl``; called on meta tensors it
returns an empty output of the right shape and launches nothing; on the CPU the gates run the
kernel through Triton's interpreter. The launch passes its row block, ``num_warps`` and
``num_stages`` as literals beside a ``lambda meta`` grid, so ``lift_launch_configs`` moves
them into the candidate's ``LAUNCH_CONFIGS`` and the Tuner searches them on the GPU.

The kernel gathers rather than scatters: output ``o`` of a transposed convolution sums the
inputs ``i`` and taps ``k`` with ``i * stride - padding + k * dilation == o``. Splitting the
outputs by ``o mod stride`` (the stride phases) makes the taps that reach a phase the same
for all its outputs, and each input they read a fixed offset from the output's index within
the phase: every phase is a dense convolution, computed as an implicit GEMM (phase outputs x
output channels, over input channels x the phase's taps) with no tap wasted on the zeros a
scatter would insert between inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import triton
import triton.language as tl

from kernelopt_jupyter.agents.rewrites.epilogue import (
    EPILOGUE_HELPERS,
    own_epilogue_apply,
    own_epilogue_program,
)


@triton.jit
def own_conv_transpose_taps(shift, S: tl.constexpr, DIL: tl.constexpr, STEP: tl.constexpr,
                            K: tl.constexpr):  # fmt: skip
    # Along one dimension, the taps k that reach the outputs of phase r (shift = r + pad):
    # those with shift - k * DIL a multiple of the stride S, which recur every
    # STEP = S / gcd(S, DIL) taps. Returns the first (below STEP) and how many there are
    # below K (0 where none: then shift is no multiple of the gcd).
    first = shift * 0 + STEP
    for j in tl.static_range(STEP):
        first = tl.where(((shift - j * DIL) % S == 0) & (first == STEP), j, first)
    count = tl.where((first < STEP) & (first < K), (K - first + STEP - 1) // STEP, 0)
    return first, count


@triton.jit
def own_conv_transpose_kernel(
    x_ptr, w_ptr, b_ptr, out_ptr, ep_ptr,
    ROWS, GROUPS, C_IN_G, C_OUT_G, D, H, W, D_OUT, H_OUT, W_OUT, QD, QH, QW,
    SD: tl.constexpr, SH: tl.constexpr, SW: tl.constexpr,
    PD: tl.constexpr, PH: tl.constexpr, PW: tl.constexpr,
    DD: tl.constexpr, DH: tl.constexpr, DW: tl.constexpr,
    KD: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr,
    STEP_D: tl.constexpr, STEP_H: tl.constexpr, STEP_W: tl.constexpr,
    HAS_BIAS: tl.constexpr, W_TILE: tl.constexpr, M_BLOCK: tl.constexpr,
    N_BLOCK: tl.constexpr, K_BLOCK: tl.constexpr, EPILOGUE: tl.constexpr,
):  # fmt: skip
    # A 1-D or 2-D convolution is a 3-D one with size-1 leading dimensions. Program axes: a
    # tile of M_BLOCK outputs of one stride phase, a block of N_BLOCK output channels of one
    # group, and the phase. Outputs are indexed within the phase (o = q * stride + phase);
    # the tile is TW neighbouring q along the width by M_BLOCK // TW rows (image, q along
    # depth and height), so its input reads run along memory (coalesced) for any length.
    # Tap k reaches the phase where (phase + pad - k * dil) is a multiple of the stride,
    # reading input q + (phase + pad - k * dil) / stride; only those taps are visited (every
    # STEP_D, STEP_H, STEP_W-th along each dimension), in one loop with the input-channel blocks, so
    # the loads pipeline. Each step adds (outputs x input channels) @ (input channels x
    # output channels) to a float32 tile, in IEEE float32 (no TF32).
    TW: tl.constexpr = W_TILE if W_TILE < M_BLOCK else M_BLOCK
    TH: tl.constexpr = M_BLOCK // TW
    width_blocks = tl.cdiv(QW, TW)
    pid_m = tl.program_id(0)
    channel_blocks = tl.cdiv(C_OUT_G, N_BLOCK)
    group = tl.program_id(1) // channel_blocks
    co = (tl.program_id(1) % channel_blocks) * N_BLOCK + tl.arange(0, N_BLOCK)
    co_ok = co < C_OUT_G
    phase = tl.program_id(2)
    rw = phase % SW
    rh = (phase // SW) % SH
    rd = phase // (SW * SH)
    local = tl.arange(0, M_BLOCK)
    qw = (pid_m % width_blocks) * TW + local % TW
    row = (pid_m // width_blocks).to(tl.int64) * TH + local // TW
    qh = row % QH
    rest = row // QH
    qd = rest % QD
    image = rest // QD
    od = qd * SD + rd
    oh = qh * SH + rh
    ow = qw * SW + rw
    out_ok = (row < ROWS) & (qw < QW) & (od < D_OUT) & (oh < H_OUT) & (ow < W_OUT)
    c_in = GROUPS * C_IN_G
    x_rows = (image * c_in + group * C_IN_G) * (D * H * W)  # each output's image and group
    kd0, nkd = own_conv_transpose_taps(rd + PD, SD, DD, STEP_D, KD)
    kh0, nkh = own_conv_transpose_taps(rh + PH, SH, DH, STEP_H, KH)
    kw0, nkw = own_conv_transpose_taps(rw + PW, SW, DW, STEP_W, KW)
    chunks = tl.cdiv(C_IN_G, K_BLOCK)
    ks = tl.arange(0, K_BLOCK)
    acc = tl.zeros((M_BLOCK, N_BLOCK), dtype=tl.float32)
    for step in range(nkd * nkh * nkw * chunks):
        ci = (step % chunks) * K_BLOCK + ks
        tap = step // chunks
        kw = kw0 + (tap % nkw) * STEP_W
        kh = kh0 + (tap // nkw % nkh) * STEP_H
        kd = kd0 + (tap // (nkw * nkh)) * STEP_D
        iz = qd + (rd + PD - kd * DD) // SD  # exact divisions
        iy = qh + (rh + PH - kh * DH) // SH
        ix = qw + (rw + PW - kw * DW) // SW
        row_ok = out_ok & (iz >= 0) & (iz < D) & (iy >= 0) & (iy < H) & (ix >= 0) & (ix < W)
        ci_ok = ci < C_IN_G
        a = tl.load(
            x_ptr
            + (x_rows + (iz * H + iy) * W + ix)[:, None]
            + ci.to(tl.int64)[None, :] * (D * H * W),
            mask=row_ok[:, None] & ci_ok[None, :],
            other=0.0,
        )
        w_at = (((kd * KH + kh) * KW + kw) * c_in + group * C_IN_G) * C_OUT_G
        b = tl.load(
            w_ptr + w_at + ci[:, None] * C_OUT_G + co[None, :],
            mask=ci_ok[:, None] & co_ok[None, :],
            other=0.0,
        )
        acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
    channel = group * C_OUT_G + co
    if HAS_BIAS:
        acc += tl.load(b_ptr + channel, mask=co_ok, other=0.0).to(tl.float32)[None, :]
    spatial = (od * H_OUT + oh) * W_OUT + ow
    out_at = (image * GROUPS * C_OUT_G)[:, None] + channel[None, :]
    out_at = out_at * (D_OUT * H_OUT * W_OUT) + spatial[:, None]
    ok = out_ok[:, None] & co_ok[None, :]
    if len(EPILOGUE) > 0:  # the pointwise ops after the convolution (epilogue.py), in float32
        acc = own_epilogue_apply(acc, out_at, ok, ep_ptr, EPILOGUE)
    tl.store(out_ptr + out_at, acc.to(out_ptr.dtype.element_ty), mask=ok)


def kernelopt_conv_transpose(
    x, weight, bias, stride, padding, output_padding, groups, dilation, epilogue=(), operands=()
):
    """``F.conv_transpose1d/2d/3d(x, weight, bias, stride, padding, output_padding, groups,
    dilation)``, then the pointwise ``epilogue`` (``epilogue.py``: a program over the tensor
    ``operands``, applied to each output in float32 before it is stored), for an ``(N, C_in, *spatial)`` or ``(C_in, *spatial)`` input, ``weight`` of
    shape ``(C_in, C_out / groups, *kernel)``; ``stride``, ``padding``, ``output_padding`` and
    ``dilation`` are tuples of the spatial rank. Float32 accumulation (IEEE products, no
    TF32); the output has ``x``'s dtype.

    Per stride phase of the outputs, an implicit GEMM over (input channels of the group x
    the taps that reach the phase): each output is computed once from the inputs it reads,
    where the scatter form writes every tap's product (``stride ** dims`` times the taps that
    count) or the vendor inserts zeros between the inputs. A reassociation of the vendor's
    sums. The weight is laid out once per call as (taps, C_in, C_out / groups), so a tile
    of the reduction reads rows of neighbouring output channels.
    """
    dims = weight.dim() - 2
    unbatched = x.dim() == dims + 1
    if unbatched:
        x = x.unsqueeze(0)
    n, c_in = x.shape[0], x.shape[1]
    spatial = list(x.shape[2:])
    kernel = list(weight.shape[2:])
    c_out_g = weight.shape[1]
    sizes = [
        (spatial[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel[i] - 1)
        + output_padding[i] + 1
        for i in range(dims)
    ]  # fmt: skip
    out = torch.empty((n, c_out_g * groups, *sizes), device=x.device, dtype=x.dtype)
    if x.device.type != "meta" and out.numel() > 0:
        lead = 3 - dims  # a 1-D or 2-D convolution as a 3-D one with size-1 leading dimensions
        d, h, w = [1] * lead + spatial
        d_out, h_out, w_out = [1] * lead + sizes
        k = [1] * lead + kernel
        s = [1] * lead + list(stride)
        p = [0] * lead + list(padding)
        dl = [1] * lead + list(dilation)
        q = [triton.cdiv(size, step) for size, step in zip((d_out, h_out, w_out), s, strict=True)]
        rows = n * q[0] * q[1]
        w_tile = min(64, triton.next_power_of_2(q[2]))
        # Along each dimension the taps that reach a phase recur every stride / gcd(stride,
        # dilation) taps: the fewest taps whose offset is a whole number of strides.
        steps = [
            next(t for t in range(1, step + 1) if t * gap % step == 0)
            for step, gap in zip(s, dl, strict=True)
        ]
        x = x.contiguous()
        taps_first = weight.reshape(c_in, c_out_g, -1).permute(2, 0, 1).contiguous()
        c_in_g = c_in // groups
        # The channel blocks of the GEMM follow the channels (tl.dot takes 16 at least).
        n_block = min(64, max(16, triton.next_power_of_2(c_out_g)))
        # The input channels in blocks of 32, or 16 where that pads fewer (48 channels).
        k_block = 16 if triton.cdiv(c_in_g, 16) * 16 < triton.cdiv(c_in_g, 32) * 32 else 32
        shape = out.shape[1:] if unbatched else out.shape
        program, ep = own_epilogue_program(epilogue, operands, shape, out)
        own_conv_transpose_kernel[
            lambda meta: (
                triton.cdiv(rows, meta["M_BLOCK"] // min(w_tile, meta["M_BLOCK"]))
                * triton.cdiv(q[2], min(w_tile, meta["M_BLOCK"])),
                groups * triton.cdiv(c_out_g, meta["N_BLOCK"]),
                s[0] * s[1] * s[2],
            )
        ](
            x, taps_first, taps_first if bias is None else bias.contiguous(), out, ep,
            rows, groups, c_in_g, c_out_g, d, h, w, d_out, h_out, w_out, q[0], q[1], q[2],
            SD=s[0], SH=s[1], SW=s[2], PD=p[0], PH=p[1], PW=p[2],
            DD=dl[0], DH=dl[1], DW=dl[2], KD=k[0], KH=k[1], KW=k[2],
            STEP_D=steps[0], STEP_H=steps[1], STEP_W=steps[2],
            HAS_BIAS=bias is not None, W_TILE=w_tile, N_BLOCK=n_block, K_BLOCK=k_block,
            EPILOGUE=program, M_BLOCK=64, num_warps=4, num_stages=2,
        )  # fmt: skip
    return out.squeeze(0) if unbatched else out


#: The wrapper and the kernels it launches, in the order they are copied (merged into
#: ``kernels.KERNEL_HELPERS``).
CONV_TRANSPOSE_KERNEL_HELPERS: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    kernelopt_conv_transpose.__name__: (
        kernelopt_conv_transpose,
        (*EPILOGUE_HELPERS, own_conv_transpose_taps, own_conv_transpose_kernel),
    ),
}
