"""Pointwise epilogues applied inside KernelOPT's own kernels, just before their final store.

A kernel that takes an epilogue gets ``EPILOGUE: tl.constexpr``, a flat tuple of plain numbers
(the verifier's compile check takes such a tuple as it is), and ``ep_ptr``, a float32 buffer
holding the epilogue's tensor operands one after another. The tuple is a small register
program, five numbers a step: ``(op, dst, p, q, r)`` computes op on registers and constants
and writes register ``dst``; the kernel's value starts in register 0 and the program's result
is register 0. Every op is computed in float32 and the whole program is unrolled at compile
time (``tl.static_range`` over a constexpr), so an absent op costs nothing.

``EPILOGUE_OPS`` is the table the graph pass (``epilogue_rule.py``) and the Triton side share:
one code per op; :func:`own_epilogue_op` holds each op's Triton expression.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

#: Op codes: the graph pass writes them, :func:`own_epilogue_op` reads them. ``p`` and ``q``
#: name registers (``x`` is register ``p``) or hold constants, as each op's note says.
EPILOGUE_OPS = {
    "load": 0,  # x = operand elements: p = offset in ep_ptr, q = inner, r = length
    "add": 1,  # x + reg q
    "sub": 2,  # x - reg q
    "mul": 3,  # x * reg q
    "div": 4,  # x / reg q
    "add_c": 5,  # x + q
    "sub_c": 6,  # x - q
    "rsub_c": 7,  # q - x
    "mul_c": 8,  # x * q
    "div_c": 9,  # x / q
    "rdiv_c": 10,  # q / x
    "relu": 11,
    "leaky_relu": 12,  # slope q
    "gelu": 13,  # exact (erf)
    "gelu_tanh": 14,
    "sigmoid": 15,
    "tanh": 16,
    "silu": 17,
    "mish": 18,
    "softplus": 19,  # beta q, threshold r
    "clamp": 20,  # to [q, r]
    "clamp_min": 21,  # q
    "clamp_max": 22,  # q
    "hardswish": 23,
    "hardsigmoid": 24,
    "elu": 25,  # alpha q
    "exp": 26,
    "abs": 27,
    "neg": 28,
    "copy": 29,
}
#: Registers a program may use (each a value the size of the kernel's output tile).
EPILOGUE_REGISTERS = 4
#: Numbers per step of a program.
EPILOGUE_STEP = 5


@triton.jit
def own_epilogue_pick(r0, r1, r2, r3, i: tl.constexpr):
    if i == 0:
        x = r0
    elif i == 1:
        x = r1
    elif i == 2:
        x = r2
    else:
        x = r3
    return x


@triton.jit
def own_epilogue_tanh(x):
    # tanh from one exponential of -2|x| (never overflows), the sign put back.
    t = tl.exp(-2.0 * tl.abs(x))
    y = (1.0 - t) / (1.0 + t)
    return tl.where(x < 0, -y, y)


@triton.jit
def own_epilogue_softplus(x, beta, threshold):
    # torch's softplus: x where beta * x > threshold, else log(1 + exp(beta * x)) / beta,
    # taken as max(bx, 0) + log(1 + exp(-|bx|)) so that exp never overflows.
    bx = x * beta
    soft = (tl.maximum(bx, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(bx)))) / beta
    return tl.where(bx > threshold, x, soft)


@triton.jit
def own_epilogue_op(r0, r1, r2, r3, at, ok, ep_ptr, OP: tl.constexpr, P: tl.constexpr,
                    Q: tl.constexpr, R: tl.constexpr):  # fmt: skip
    # One step of the program (codes: EPILOGUE_OPS); only the branch of OP is compiled.
    if OP == 0:
        y = tl.load(ep_ptr + P + (at // Q) % R, mask=ok, other=0.0)
    else:
        x = own_epilogue_pick(r0, r1, r2, r3, P)
        if OP == 1:
            y = x + own_epilogue_pick(r0, r1, r2, r3, Q)
        elif OP == 2:
            y = x - own_epilogue_pick(r0, r1, r2, r3, Q)
        elif OP == 3:
            y = x * own_epilogue_pick(r0, r1, r2, r3, Q)
        elif OP == 4:
            y = x / own_epilogue_pick(r0, r1, r2, r3, Q)
        elif OP == 5:
            y = x + Q
        elif OP == 6:
            y = x - Q
        elif OP == 7:
            y = Q - x
        elif OP == 8:
            y = x * Q
        elif OP == 9:
            y = x / Q
        elif OP == 10:
            y = Q / x
        elif OP == 11:
            y = tl.where(x < 0, 0.0, x)
        elif OP == 12:
            y = tl.where(x > 0, x, x * Q)
        elif OP == 13:
            y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
        elif OP == 14:
            y = 0.5 * x * (1.0 + own_epilogue_tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
        elif OP == 15:
            y = tl.sigmoid(x)
        elif OP == 16:
            y = own_epilogue_tanh(x)
        elif OP == 17:
            y = x * tl.sigmoid(x)
        elif OP == 18:
            y = x * own_epilogue_tanh(own_epilogue_softplus(x, 1.0, 20.0))
        elif OP == 19:
            y = own_epilogue_softplus(x, Q, R)
        elif OP == 20:
            y = tl.where(x < Q, Q, tl.where(x > R, R, x))
        elif OP == 21:
            y = tl.where(x < Q, Q, x)
        elif OP == 22:
            y = tl.where(x > Q, Q, x)
        elif OP == 23:
            y = x * (tl.minimum(tl.maximum(x + 3.0, 0.0), 6.0) / 6.0)
        elif OP == 24:
            y = tl.minimum(tl.maximum(x + 3.0, 0.0), 6.0) / 6.0
        elif OP == 25:
            y = tl.where(x > 0, x, Q * (tl.exp(x) - 1.0))
        elif OP == 26:
            y = tl.exp(x)
        elif OP == 27:
            y = tl.abs(x)
        elif OP == 28:
            y = -x
        else:
            y = x
    return y


@triton.jit
def own_epilogue_apply(v, at, ok, ep_ptr, EPILOGUE: tl.constexpr):
    # ``v``: the kernel's float32 values; ``at``: each one's flat index in the (contiguous)
    # output, where the operands are read (element (at // inner) % length); ``ok``: its mask.
    r0 = v
    r1 = v
    r2 = v
    r3 = v
    for i in tl.static_range(len(EPILOGUE) // 5):
        y = own_epilogue_op(
            r0, r1, r2, r3, at, ok, ep_ptr, EPILOGUE[5 * i], EPILOGUE[5 * i + 2],
            EPILOGUE[5 * i + 3], EPILOGUE[5 * i + 4],
        )  # fmt: skip
        if EPILOGUE[5 * i + 1] == 0:
            r0 = y
        elif EPILOGUE[5 * i + 1] == 1:
            r1 = y
        elif EPILOGUE[5 * i + 1] == 2:
            r2 = y
        else:
            r3 = y
    return r0


def own_epilogue_program(epilogue, operands, shape, like):
    """``(program, buffer)`` for a kernel's ``EPILOGUE`` and ``ep_ptr``: the graph's program
    with each ``load`` step's operand number replaced by where that operand sits in
    ``buffer`` (the operands, float32, one after another) and how element ``i`` of the output
    ``shape`` reads it; ``like``: a tensor on the output's device (the buffer when there are
    no operands)."""
    program = list(epilogue)
    parts = []
    offset = 0
    for step in range(0, len(program), 5):
        if program[step] != 0:  # not a load
            continue
        operand = operands[program[step + 2]]
        inner, length, _ = own_broadcast_index(operand, shape)
        parts.append(operand.to(torch.float32).contiguous().reshape(-1))
        program[step + 2 : step + 5] = [offset, inner, length]
        offset += length
    buffer = torch.cat(parts).to(like.device) if parts else like
    return tuple(program), buffer


def own_broadcast_index(operand, shape):
    """``(inner, length, full)``: element ``i`` of the broadcast ``shape`` reads ``operand``'s
    element ``(i // inner) % length`` (``full``: the operand has the whole shape); None where
    ``operand``'s sizes are not one block of ``shape``'s dimensions."""
    sizes = [1] * (len(shape) - operand.dim()) + list(operand.shape)
    if sizes == list(shape):
        return 1, max(1, operand.numel()), True
    kept = [d for d, size in enumerate(sizes) if size != 1]
    if kept and kept != list(range(kept[0], kept[-1] + 1)):
        return None
    if any(sizes[d] != shape[d] for d in kept):
        return None
    inner = 1
    for size in shape[kept[-1] + 1 :] if kept else []:
        inner *= size
    return inner, max(1, operand.numel()), False


#: What a wrapper that takes an epilogue copies beside its own kernels.
EPILOGUE_HELPERS = (
    own_epilogue_pick,
    own_epilogue_tanh,
    own_epilogue_softplus,
    own_epilogue_op,
    own_epilogue_apply,
    own_broadcast_index,
    own_epilogue_program,
)
