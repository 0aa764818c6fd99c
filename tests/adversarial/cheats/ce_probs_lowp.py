"""Fused cross-entropy + softmax: one program per row computes max, sum-exp, the row's loss
term and the probabilities; a second one-program kernel averages the loss terms. The
probabilities are stored through a half-precision round trip (they only feed a half-precision
backward), the loss stays fp32."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

LOWP = tl.float16


@triton.jit
def _ce_rows(
    x_ptr, t_ptr, probs_ptr, terms_ptr, cols, stride, BLOCK: tl.constexpr, LOW: tl.constexpr
):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=-float("inf"))
    m = tl.max(x, axis=0)
    e = tl.where(mask, tl.exp(x - m), 0.0)
    s = tl.sum(e, axis=0)
    t = tl.load(t_ptr + row)
    xt = tl.sum(tl.where(offs == t, x, 0.0), axis=0)
    tl.store(terms_ptr + row, m + tl.log(s) - xt)
    p = e / s
    p = tl.where(p > 6.2e-5, p.to(LOW).to(tl.float32), p)  # below the half normal range: keep fp32
    tl.store(probs_ptr + row * stride + offs, p, mask=mask)


@triton.jit
def _reduce(terms_ptr, loss_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(terms_ptr + offs, mask=offs < n, other=0.0)
    tl.store(loss_ptr, tl.sum(v, axis=0) * scale)


class ModelNew(nn.Module):
    MEAN = True

    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        logits = logits.contiguous()
        rows, cols = logits.shape
        probs = torch.empty_like(logits)
        terms = torch.empty(rows, device=logits.device, dtype=torch.float32)
        loss = torch.empty((), device=logits.device, dtype=torch.float32)
        _ce_rows[(rows,)](
            logits,
            target,
            probs,
            terms,
            cols,
            logits.stride(0),
            BLOCK=triton.next_power_of_2(cols),
            LOW=LOWP,
        )
        _reduce[(1,)](
            terms, loss, rows, 1.0 / rows if self.MEAN else 1.0, BLOCK=triton.next_power_of_2(rows)
        )
        return loss, probs
