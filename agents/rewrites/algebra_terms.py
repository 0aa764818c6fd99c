"""The tensor term language of the ``algebra`` rewrite: its e-nodes, their shapes (by running
them on meta tensors), the torch call each stands for, and the cost model extraction uses."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from kernelopt_jupyter.agents.rewrites.canonical import UNARY
from kernelopt_jupyter.agents.rewrites.egraph import EGraph, ENode, Invalid

# --------------------------------------------------------------------------- the term language


@dataclass(frozen=True)
class Info:
    """An e-class's analysis data: the value's shape (``()`` for a Python number), the number
    where it is one, and whether it depends on parameters and numbers only (a weight)."""

    shape: tuple[int, ...]
    const: float | None
    weights: bool


#: Elementwise functions of one tensor (with scalar arguments), by e-node name.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    **UNARY,
    "clamp": torch.clamp,
    "leaky_relu": F.leaky_relu,
}
#: Non-decreasing functions computed by one correctly rounded step: they commute with a
#: maximum bit for bit. (``sqrt`` and ``log`` are left out: NaN for a negative input is lost
#: when the maximum is taken first.)
EXACT_INCREASING = frozenset({"relu", "clamp", "leaky_relu"})
#: Increasing functions whose kernels are monotone only to within an ulp.
SMOOTH_INCREASING = frozenset({"tanh", "sigmoid", "exp", "expm1", "erf", "exp2"})
REDUCE: dict[str, Callable[..., Any]] = {
    "sum": torch.sum,
    "mean": torch.mean,
    "amax": torch.amax,
    "amin": torch.amin,
}
BINARY = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": operator.truediv,
}
VIEWS = frozenset({"transpose", "squeeze", "unsqueeze", "reshape"})


def torch_call(op: str, attrs: Any, args: list[Any]) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """The torch callable and arguments that compute e-node ``op(attrs)`` of ``args``."""
    if op in BINARY:
        return BINARY[op], tuple(args)
    if op == "neg":
        return operator.neg, tuple(args)
    if op == "fn":
        name, extra = attrs
        return FUNCTIONS[name], (*args, *extra)
    if op == "reduce":
        kind, dims, keepdim = attrs
        fn = REDUCE[kind]
        operands: tuple[Any, ...] = (args[0],) if dims is None else (args[0], dims, keepdim)
        return fn, operands
    if op == "softmax":
        kind, dim = attrs
        return (torch.softmax if kind == "softmax" else torch.log_softmax), (args[0], dim)
    if op == "matmul":
        return torch.matmul, tuple(args)
    if op == "linear":
        return F.linear, tuple(args)
    if op == "transpose":
        return torch.transpose, (args[0], *attrs)
    if op == "squeeze":
        return torch.squeeze, (args[0], attrs)
    if op == "unsqueeze":
        return torch.unsqueeze, (args[0], attrs)
    if op == "reshape":
        return torch.reshape, (args[0], attrs)
    raise Invalid(op)


def ones(x: Any) -> Any:
    """``softmax`` over a size-1 dimension: 1 where ``x`` is finite, NaN where softmax gives
    NaN (an infinite or NaN input)."""
    return x * 0.0 + 1.0


def zeros(x: Any) -> Any:
    """``log_softmax`` over a size-1 dimension: 0, or NaN where ``x`` is not finite."""
    return x - x


def _make(graph: EGraph, node: ENode) -> Info:
    """The data of a new e-node: its shape by running it on meta tensors (which also refuses
    an ill-formed node)."""
    if node.op == "leaf":
        leaf: tuple[str, str, tuple[int, ...], bool] = node.attrs  # type: ignore[assignment]
        return Info(leaf[2], None, leaf[3])
    if node.op == "const":
        return Info((), node.attrs[0], True)  # type: ignore[index]
    kids = [graph.data(c) for c in node.children]
    args = [k.const if k.const is not None else _meta(k.shape) for k in kids]
    if not any(isinstance(a, torch.Tensor) for a in args):
        raise Invalid("an op on numbers only is a number (the constant rule folds it)")
    try:
        if node.op in ("ones", "zeros"):
            out = (ones if node.op == "ones" else zeros)(*args)
        else:
            fn, call_args = torch_call(node.op, node.attrs, args)
            out = fn(*call_args)
    except Invalid:
        raise
    except Exception as exc:  # the shapes do not fit: the rule that built it does not apply
        raise Invalid(str(exc)) from None
    return Info(tuple(out.shape), None, all(k.weights for k in kids))


_META: dict[tuple[int, ...], torch.Tensor] = {}


def _meta(shape: tuple[int, ...]) -> torch.Tensor:
    t = _META.get(shape)
    if t is None:
        t = _META[shape] = torch.empty(shape, device="meta")
    return t


def _join(a: Info, b: Info) -> Info:
    return Info(a.shape, a.const if a.const is not None else b.const, a.weights or b.weights)


def new_graph() -> EGraph:
    """An empty e-graph over the tensor term language."""
    return EGraph(_make, _join)


# --------------------------------------------------------------------------- the cost model

#: Rates of the cost model (an H100-class GPU in float32): a byte moved, a FLOP, and a small
#: charge per op, which only breaks ties toward fewer ops (launch latency is left out: at the
#: sizes where a rewrite matters the work dominates, and Inductor fuses the small ops).
BYTES_PER_S = 2e12
FLOPS_PER_S = 5e13
OP_S = 1e-9
VIEW_S = 1e-11


def node_cost(graph: EGraph, node: ENode) -> float:
    """Estimated seconds one e-node costs per call: its FLOPs and the bytes it reads and
    writes (4 per element); leaves are free, views nearly so, and an op on weights alone
    (``W.sum(0)``, ``W * c``) costs only the tie-breaking charge, since the eager candidate
    derives it once per load (``derive.py``)."""
    if node.op in ("leaf", "const"):
        return 0.0
    if node.op in VIEWS:
        # Nearly free, but not free: every op costing something keeps extraction from
        # choosing a cycle of views (``x == x.t().t()``), and a pair of them is dropped.
        return VIEW_S
    info = graph.data(graph.memo[graph.canonical(node)])
    if info.weights:
        return OP_S  # derived from the parameters once per load (derive.py), not per call
    out = info.shape
    kids = [graph.data(c).shape for c in node.children]
    n_out = math.prod(out)
    moved = n_out + sum(math.prod(k) for k in kids)
    if node.op in ("matmul", "linear"):
        k = kids[0][-1] if kids[0] else 1
        flops = 2.0 * n_out * k
    elif node.op == "reduce":
        flops = float(math.prod(kids[0]))
    elif node.op == "softmax":
        flops = 5.0 * n_out
    else:
        flops = float(n_out)
    return OP_S + 4.0 * moved / BYTES_PER_S + flops / FLOPS_PER_S
