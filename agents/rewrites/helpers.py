"""Plain torch functions a rewritten forward calls; their source is copied into candidates.

Each function here must be self-contained (only ``torch`` and ``torch.nn.functional as F``) because
the renderer copies its text into the rewritten problem and the candidate, which import nothing
from KernelOPT.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def kernelopt_tril_matmul(a: torch.Tensor, b: torch.Tensor, diagonal: int = 0) -> torch.Tensor:
    """``tril(a @ b, diagonal)`` computing only the output blocks the lower triangle keeps.

    Rows are cut into bands; band ``[r0, r1)`` needs only columns ``< r1 + diagonal``, so about
    half the products of the dense GEMM are skipped. Every kept element is the same dot product
    (exact up to the GEMM's summation order).
    """
    n, m = a.shape[0], b.shape[1]
    bands = max(1, min(8, n // 512))
    parts = []
    for i in range(bands):
        r0, r1 = n * i // bands, n * (i + 1) // bands
        cols = min(m, max(0, r1 + diagonal))
        part = a[r0:r1] @ b[:, :cols]
        parts.append(F.pad(part, (0, m - cols)) if cols < m else part)
    return torch.tril(torch.cat(parts, dim=0), diagonal)


def kernelopt_triu_matmul(a: torch.Tensor, b: torch.Tensor, diagonal: int = 0) -> torch.Tensor:
    """``triu(a @ b, diagonal)`` computing only the output blocks the upper triangle keeps.

    Band ``[r0, r1)`` needs only columns ``>= r0 + diagonal``; the mirror of
    :func:`kernelopt_tril_matmul`, with the same exactness.
    """
    n, m = a.shape[0], b.shape[1]
    bands = max(1, min(8, n // 512))
    parts = []
    for i in range(bands):
        r0, r1 = n * i // bands, n * (i + 1) // bands
        first = min(m, max(0, r0 + diagonal))
        part = a[r0:r1] @ b[:, first:]
        parts.append(F.pad(part, (first, 0)) if first > 0 else part)
    return torch.triu(torch.cat(parts, dim=0), diagonal)


def kernelopt_gram(a: torch.Tensor) -> torch.Tensor:
    """``a @ a.mT`` (symmetric in its last two dimensions) computing only the blocks on and
    below the diagonal; the blocks above are the transposes of blocks already computed.

    Rows are cut into bands; band ``[r0, r1)`` multiplies only by rows ``< r1``, so about 44% of
    the dense GEMM's products are skipped at eight bands (every band stays a large GEMM), at
    the price of one copy of the upper triangle (and of the diagonal blocks' upper halves). Each computed element is the same dot product;
    a mirrored one is the dot product with its factors swapped: exact up to summation order.
    """
    n = a.shape[-2]
    bands = max(1, min(8, n // 512))
    if bands == 1:
        return a @ a.mT
    out = a.new_empty((*a.shape[:-1], n))
    for i in range(bands):
        r0, r1 = n * i // bands, n * (i + 1) // bands
        out[..., r0:r1, :r1] = a[..., r0:r1, :] @ a[..., :r1, :].mT
        # A GEMM need not give the diagonal block symmetric to the last bit (its (i, j) and
        # (j, i) may be summed in different orders, as on a 2-core CPU): its lower triangle
        # is mirrored, so the whole result is exactly symmetric, as a Gram matrix is.
        block = out[..., r0:r1, r0:r1]
        block.copy_(torch.tril(block) + torch.tril(block, -1).mT)
    for i in range(bands - 1):
        r0, r1 = n * i // bands, n * (i + 1) // bands
        out[..., r0:r1, r1:] = out[..., r1:, r0:r1].mT
    return out


HELPERS = {f.__name__: f for f in (kernelopt_tril_matmul, kernelopt_triu_matmul, kernelopt_gram)}
