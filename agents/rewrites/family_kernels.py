"""KernelOPT's op-family kernels: scans (cumulative sum and product), written to be copied.

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
    column_blocks = tl.cdiv(INNER, INNER_BLOCK)
    outer = pid // column_blocks
    cols = (pid % column_blocks) * INNER_BLOCK + tl.arange(0, INNER_BLOCK)
    col_ok = (cols < INNER)[None, :]
    base = outer * L * INNER
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
    length = x.shape[d]
    inner = 1
    for size in x.shape[d + 1 :]:
        inner *= size
    outer = x.numel() // (length * inner)
    has_mask = mask is not None
    x = x.contiguous()
    mask = mask.contiguous() if has_mask else x
    # A column per program where the scan runs along memory; else up to 16 neighbouring
    # columns, so each step of the scan reads a run of memory.
    inner_block = 1 if inner == 1 else min(16, triton.next_power_of_2(inner))
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


#: Each wrapper and the kernels it launches, in the order they are copied (merged into
#: ``kernels.KERNEL_HELPERS``).
FAMILY_KERNEL_HELPERS: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    kernelopt_scan.__name__: (kernelopt_scan, (own_scan_kernel,)),
}
