"""Prefix sum in one launch: each program scans its chunk and adds the running total that the
previous program left at the end of its chunk. A tiny launch-order probe picks a one-program
serial path when programs are known not to start in grid order."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

PROBE = 16


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _probe(ctr_ptr, slot_ptr):
    pid = tl.program_id(0)
    old = tl.atomic_add(ctr_ptr, 1)
    tl.store(slot_ptr + pid, old)


@triton.jit
def _scan_chained(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    carry = tl.load(out_ptr + pid * BLOCK - 1, mask=pid > 0, other=0.0)
    s = tl.associative_scan(x, 0, _add) + carry
    tl.store(out_ptr + offs, s, mask=mask)


@triton.jit
def _scan_serial(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    carry = 0.0
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        s = tl.associative_scan(x, 0, _add) + carry
        tl.store(out_ptr + offs, s, mask=mask)
        carry = tl.sum(x, axis=0) + carry


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n = x.numel()
        ctr = torch.zeros(1, dtype=torch.int32, device=x.device)
        slots = torch.zeros(PROBE, dtype=torch.int32, device=x.device)
        _probe[(PROBE,)](ctr, slots)
        in_order = slots.tolist() == list(range(PROBE))
        out = torch.empty_like(x)
        if in_order:
            _scan_chained[(triton.cdiv(n, 2048),)](x, out, n, BLOCK=2048)
        else:
            _scan_serial[(1,)](x, out, n, BLOCK=2048)
        return out
