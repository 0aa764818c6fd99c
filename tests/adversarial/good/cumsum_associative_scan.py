"""Prefix sum with tl.associative_scan and a user combine function, one program per chunk,
then a second kernel adds each chunk's carry (the exclusive scan of the chunk totals)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _chunk_scan(x_ptr, out_ptr, totals_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    scanned = tl.associative_scan(x, 0, _add)
    tl.store(out_ptr + offs, scanned, mask=mask)
    tl.store(totals_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def _add_carry(out_ptr, totals_ptr, n, n_chunks, BLOCK: tl.constexpr, CHUNKS: tl.constexpr):
    pid = tl.program_id(0)
    idx = tl.arange(0, CHUNKS)
    totals = tl.load(totals_ptr + idx, mask=idx < pid, other=0.0)
    carry = tl.sum(totals, axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(out_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, v + carry, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n = x.numel()
        block = 2048
        chunks = triton.cdiv(n, block)
        out = torch.empty_like(x)
        totals = torch.empty(chunks, device=x.device, dtype=x.dtype)
        _chunk_scan[(chunks,)](x, out, totals, n, BLOCK=block)
        _add_carry[(chunks,)](
            out, totals, n, chunks, BLOCK=block, CHUNKS=triton.next_power_of_2(chunks)
        )
        return out
