"""Exact tensor algebra by equality saturation: the ``algebra`` rewrite.

The canonical FX graph (``canonical.py``) is lifted into an e-graph (``egraph.py``): matrix
products and linear layers, arithmetic by tensors and scalars, sum/mean/amax/amin, softmax and
log_softmax, transposes, squeeze/unsqueeze/reshape by literal sizes, and elementwise functions
become e-nodes; placeholders, parameters, Python numbers and every op the engine does not model
are leaves. The rules in :data:`RULES` add the equal terms they prove, each in one of the two
exactness classes of ``rules.py`` (its docstring says which). Because they act on the lifted
terms, not on FX spellings, they fire however the user wrote the op, and they compose: a scale
moved into a weight, a mean folded through the GEMM, and a maximum over a size-1 dimension
dropped are three steps of one saturation.

Extraction picks, per e-class, the term of least estimated cost (:func:`node_cost`: FLOPs,
bytes moved and launches, from the propagated shapes). A region (a connected part of the lifted
graph) is lowered back to FX only where that cost falls by :data:`MIN_GAIN` of the region's
cost, so a rewrite with no gain changes nothing. Weight-only subterms (``W.sum(0)``, ``W * c``)
are computed from the parameters, never copied, so a candidate stays right when its
``state_dict`` is reloaded (the eager candidate derives them once per load, ``derive.py``).

Shapes decide a rule (a dimension of size 1, a bias that spans the reduced dimension) but are
never written into the rewritten graph, except where the user's own reshape wrote them.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from kernelopt_jupyter.agents.rewrites.canonical import UNARY
from kernelopt_jupyter.agents.rewrites.egraph import (
    EGraph,
    ENode,
    Invalid,
    Pat,
    Rule,
    Saturation,
    Subst,
    Var,
    extract,
    saturate,
    selection_cost,
)
from kernelopt_jupyter.agents.rewrites.graph import cleanup, module_of, plain_torch_layer, scalar

#: A region is rewritten only where its estimated cost falls by at least this fraction.
MIN_GAIN = 0.10
#: Saturation limits: e-nodes in the graph, and rule-application rounds.
MAX_NODES = 20_000
MAX_ITERATIONS = 12

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
_REDUCE: dict[str, Callable[..., Any]] = {
    "sum": torch.sum,
    "mean": torch.mean,
    "amax": torch.amax,
    "amin": torch.amin,
}
_BINARY = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": operator.truediv,
}
_VIEWS = frozenset({"transpose", "squeeze", "unsqueeze", "reshape"})


def _call(op: str, attrs: Any, args: list[Any]) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """The torch callable and arguments that compute e-node ``op(attrs)`` of ``args``."""
    if op in _BINARY:
        return _BINARY[op], tuple(args)
    if op == "neg":
        return operator.neg, tuple(args)
    if op == "fn":
        name, extra = attrs
        return FUNCTIONS[name], (*args, *extra)
    if op == "reduce":
        kind, dims, keepdim = attrs
        fn = _REDUCE[kind]
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


def _ones(x: Any) -> Any:
    """``softmax`` over a size-1 dimension: 1 where ``x`` is finite, NaN where softmax gives
    NaN (an infinite or NaN input)."""
    return x * 0.0 + 1.0


def _zeros(x: Any) -> Any:
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
            out = (_ones if node.op == "ones" else _zeros)(*args)
        else:
            fn, call_args = _call(node.op, node.attrs, args)
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
    if node.op in _VIEWS:
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


# --------------------------------------------------------------------------- rules

X, Y, A, B, C, W, D = (Var(n) for n in ("x", "y", "a", "b", "c", "w", "d"))


def _shape(g: EGraph, cid: int) -> tuple[int, ...]:
    return g.data(cid).shape  # type: ignore[no-any-return]


def _num(g: EGraph, cid: int) -> float:
    """The number class ``cid`` holds; :class:`Invalid` when it is a tensor."""
    value = g.data(cid).const
    if value is None:
        raise Invalid("not a number")
    return float(value)


def _const(g: EGraph, value: float) -> int:
    return g.add("const", (float(value),))


def _same_shape(g: EGraph, cid: int, root: int) -> int:
    """``cid`` where it has the root's shape (an identity must not change a broadcast)."""
    if _shape(g, cid) != _shape(g, root):
        raise Invalid("the shape would change")
    return cid


def _when(ok: bool) -> None:
    if not ok:
        raise Invalid("side condition")


def _fold(g: EGraph, op: str, operands: list[int]) -> int:
    """Constant folding of scalar arithmetic (reassociation: done in float64, where the tensor
    op rounds in its dtype)."""
    values = [_num(g, c) for c in operands]
    if op == "neg":
        return _const(g, -values[0])
    if op == "div" and values[1] == 0.0:
        raise Invalid("division by zero")
    return _const(g, _BINARY[op](*values))


def _rules() -> list[Rule]:
    """The rules, each with its exactness class."""
    rules: list[Rule] = []

    def rule(name: str, exact: str, lhs: Pat) -> Callable[[Callable[..., int]], Callable[..., int]]:
        def register(rhs: Callable[..., int]) -> Callable[..., int]:
            rules.append(Rule(name, exact, lhs, rhs))
            return rhs

        return register

    # ---- identities (bit-exact)
    rule("neg_neg", "bit-exact", Pat("neg", (Pat("neg", (X,)),)))(lambda g, s, r: s["x"])
    rule(
        "transpose_pair",
        "bit-exact",
        Pat("transpose", (Pat("transpose", (X,), D),), D),
    )(lambda g, s, r: s["x"])

    @rule("mul_one", "bit-exact", Pat("mul", (X, C)))
    def _mul_one(g: EGraph, s: Subst, r: int) -> int:
        """``x * 1 == x`` (and ``x / 1``): bit-exact, NaN and signed zeros included."""
        _when(_num(g, s["c"]) == 1.0)
        return _same_shape(g, s["x"], r)

    rule("div_one", "bit-exact", Pat("div", (X, C)))(_mul_one)

    @rule("sub_zero", "bit-exact", Pat("sub", (X, C)))
    def _sub_zero(g: EGraph, s: Subst, r: int) -> int:
        """``x - 0 == x`` bit for bit (``-0.0 - 0.0`` is ``-0.0``)."""
        _when(_num(g, s["c"]) == 0.0)
        return _same_shape(g, s["x"], r)

    @rule("add_zero", "reassociation", Pat("add", (X, C)))
    def _add_zero(g: EGraph, s: Subst, r: int) -> int:
        """``x + 0 == x`` except for the sign of a zero (``-0.0 + 0.0`` is ``+0.0``)."""
        _when(_num(g, s["c"]) == 0.0)
        return _same_shape(g, s["x"], r)

    # ---- scalar chains and their normal form
    for op in ("add", "sub", "mul", "div"):
        rule(f"fold_{op}", "reassociation", Pat(op, (A, B)))(
            lambda g, s, r, op=op: _fold(g, op, [s["a"], s["b"]])
        )
    rule("fold_neg", "reassociation", Pat("neg", (A,)))(lambda g, s, r: _fold(g, "neg", [s["a"]]))

    for op in ("add", "mul"):

        @rule(f"{op}_commute", "bit-exact", Pat(op, (X, Y)))
        def _commute(g: EGraph, s: Subst, r: int, op: str = op) -> int:
            """``x + y == y + x`` and ``x * y == y * x``: IEEE sums and products commute."""
            return g.add(op, (), (s["y"], s["x"]))

    @rule("sub_as_add", "bit-exact", Pat("sub", (X, C)))
    def _sub_as_add(g: EGraph, s: Subst, r: int) -> int:
        """``x - c == x + (-c)``: IEEE subtraction is addition of the negation."""
        return g.add("add", (), (s["x"], _const(g, -_num(g, s["c"]))))

    @rule("div_as_mul", "reassociation", Pat("div", (X, C)))
    def _div_as_mul(g: EGraph, s: Subst, r: int) -> int:
        """``x / c == x * (1/c)``: the reciprocal rounds once more."""
        c = _num(g, s["c"])
        _when(c != 0.0 and math.isfinite(1.0 / c))
        return g.add("mul", (), (s["x"], _const(g, 1.0 / c)))

    for op, combine in (("mul", operator.mul), ("add", operator.add)):

        @rule(f"{op}_chain", "reassociation", Pat(op, (Pat(op, (X, A)), B)))
        def _chain(g: EGraph, s: Subst, r: int, op: str = op, combine: Any = combine) -> int:
            """``(x * a) * b == x * (a b)`` and ``(x + a) + b == x + (a + b)``."""
            return g.add(op, (), (s["x"], _const(g, combine(_num(g, s["a"]), _num(g, s["b"])))))

    # ---- size-1 dimensions (bit-exact)
    @rule("reduce_size_one", "bit-exact", Pat("reduce", (X,), D))
    def _reduce_one(g: EGraph, s: Subst, r: int) -> int:
        """sum/mean/amax/amin over dimensions that all have size 1 are the value itself
        (squeezed unless ``keepdim``)."""
        _, dims, keepdim = s["d"]
        shape = _shape(g, s["x"])
        _when(dims is not None and all(shape[d] == 1 for d in dims))
        return s["x"] if keepdim else g.add("squeeze", dims, (s["x"],))

    @rule("softmax_size_one", "bit-exact", Pat("softmax", (X,), D))
    def _softmax_one(g: EGraph, s: Subst, r: int) -> int:
        """softmax over a size-1 dimension is 1 and log_softmax 0 (NaN kept where the input is
        not finite, as the originals give)."""
        kind, dim = s["d"]
        _when(_shape(g, s["x"])[dim] == 1)
        return g.add("ones" if kind == "softmax" else "zeros", (), (s["x"],))

    # ---- monotone functions through a maximum
    def monotone(g: EGraph, s: Subst, names: frozenset[str]) -> int:
        kind = s["d"][0]
        name = s["f"][0]
        _when(kind in ("amax", "amin") and name in names)
        if name == "clamp":
            lo, hi = s["f"][1]
            _when(lo is None or hi is None or lo <= hi)
        if name == "leaky_relu":
            _when(s["f"][1][0] > 0)
        inner = g.add("reduce", s["d"], (s["x"],))
        return g.add("fn", s["f"], (inner,))

    rule("max_through_monotone", "bit-exact", Pat("reduce", (Pat("fn", (X,), Var("f")),), D))(
        lambda g, s, r: monotone(g, s, EXACT_INCREASING)
    )
    rule("max_through_smooth", "reassociation", Pat("reduce", (Pat("fn", (X,), Var("f")),), D))(
        lambda g, s, r: monotone(g, s, SMOOTH_INCREASING)
    )

    def swapped(kind: str) -> str:
        return {"amax": "amin", "amin": "amax"}[kind]

    @rule("max_through_neg", "bit-exact", Pat("reduce", (Pat("neg", (X,)),), D))
    def _max_neg(g: EGraph, s: Subst, r: int) -> int:
        """``max(-x) == -min(x)``."""
        kind, dims, keepdim = s["d"]
        _when(kind in ("amax", "amin"))
        return g.add("neg", (), (g.add("reduce", (swapped(kind), dims, keepdim), (s["x"],)),))

    for op in ("add", "mul", "div"):

        @rule(f"max_through_{op}", "bit-exact", Pat("reduce", (Pat(op, (X, C)),), D))
        def _max_scalar(g: EGraph, s: Subst, r: int, op: str = op) -> int:
            """``max(x + c) == max(x) + c``; ``max(x * c) == max(x) * c`` for ``c > 0`` (a
            minimum for ``c < 0``); one correctly rounded step is monotone."""
            kind, dims, keepdim = s["d"]
            c = _num(g, s["c"])
            _when(kind in ("amax", "amin"))
            if op != "add":
                _when(c != 0.0 and math.isfinite(c))
                kind = kind if c > 0 else swapped(kind)
            inner = g.add("reduce", (kind, dims, keepdim), (s["x"],))
            return g.add(op, (), (inner, s["c"]))

    # ---- linearity (reassociation: the same sums in another order)
    @rule("linear_expand", "reassociation", Pat("linear", (X, W)))
    def _linear_expand(g: EGraph, s: Subst, r: int) -> int:
        """``linear(x, W) == x @ W^T``."""
        _when(len(_shape(g, s["w"])) == 2)
        return g.add("matmul", (), (s["x"], g.add("transpose", (0, 1), (s["w"],))))

    @rule("linear_bias_expand", "reassociation", Pat("linear", (X, W, B)))
    def _linear_bias_expand(g: EGraph, s: Subst, r: int) -> int:
        """``linear(x, W, b) == x @ W^T + b``."""
        return g.add("add", (), (_linear_expand(g, s, r), s["b"]))

    @rule("linear_collapse", "reassociation", Pat("matmul", (X, Pat("transpose", (W,), (0, 1)))))
    def _linear_collapse(g: EGraph, s: Subst, r: int) -> int:
        """``x @ W^T == linear(x, W)`` for a matrix ``W``."""
        _when(len(_shape(g, s["w"])) == 2 and len(_shape(g, s["x"])) >= 1)
        return g.add("linear", (), (s["x"], s["w"]))

    @rule(
        "linear_bias_collapse",
        "reassociation",
        Pat("add", (Pat("linear", (X, W)), B)),
    )
    def _linear_bias_collapse(g: EGraph, s: Subst, r: int) -> int:
        """``linear(x, W) + b == linear(x, W, b)`` for a bias of one value per output."""
        _when(_shape(g, s["b"]) == (_shape(g, s["w"])[0],))
        return g.add("linear", (), (s["x"], s["w"], s["b"]))

    @rule("reduce_matmul", "reassociation", Pat("reduce", (Pat("matmul", (A, B)),), D))
    def _reduce_matmul(g: EGraph, s: Subst, r: int) -> int:
        """``(A @ B).sum(-1) == A @ B.sum(-1)`` and ``(A @ B).sum(-2) == A.sum(-2) @ B``
        (``mean`` likewise): the GEMM becomes a matrix-vector product."""
        kind, dims, keepdim = s["d"]
        a, b = _shape(g, s["a"]), _shape(g, s["b"])
        out = len(_shape(g, r)) if keepdim else len(_shape(g, r)) + 1
        _when(kind in ("sum", "mean") and dims is not None and len(dims) == 1)
        _when(len(a) >= 2 and len(b) >= 2)
        if dims[0] == out - 1:
            reduced = g.add("reduce", (kind, (len(b) - 1,), True), (s["b"],))
            new = g.add("matmul", (), (s["a"], reduced))
        else:
            _when(dims[0] == out - 2)
            reduced = g.add("reduce", (kind, (len(a) - 2,), True), (s["a"],))
            new = g.add("matmul", (), (reduced, s["b"]))
        return new if keepdim else g.add("squeeze", dims, (new,))

    @rule("reduce_bias", "reassociation", Pat("reduce", (Pat("add", (Y, B)),), D))
    def _reduce_bias(g: EGraph, s: Subst, r: int) -> int:
        """``(y + b).sum(-1) == y.sum(-1) + b.sum()`` for a bias ``b`` along the reduced last
        dimension (``mean`` likewise; a number ``c``: ``mean(y + c) == mean(y) + c``)."""
        kind, dims, keepdim = s["d"]
        y = _shape(g, s["y"])
        _when(kind in ("sum", "mean") and dims == (len(y) - 1,) and len(y) >= 1)
        bias = g.data(s["b"])
        inner = g.add("reduce", s["d"], (s["y"],))
        if bias.const is not None:
            _when(kind == "mean")
            return g.add("add", (), (inner, s["b"]))
        _when(bias.shape == (y[-1],))
        return g.add("add", (), (inner, g.add("reduce", (kind, (0,), keepdim), (s["b"],))))

    @rule("reduce_scale", "reassociation", Pat("reduce", (Pat("mul", (X, C)),), D))
    def _reduce_scale(g: EGraph, s: Subst, r: int) -> int:
        """``sum(x * c) == sum(x) * c`` (``mean`` likewise): the scale runs on the reduced
        tensor."""
        _when(s["d"][0] in ("sum", "mean"))
        _num(g, s["c"])
        return g.add("mul", (), (g.add("reduce", s["d"], (s["x"],)), s["c"]))

    @rule("scale_out_of_matmul_a", "reassociation", Pat("matmul", (Pat("mul", (A, C)), B)))
    def _scale_a(g: EGraph, s: Subst, r: int) -> int:
        """``(c A) @ B == c (A @ B) == A @ (c B)``: extraction puts ``c`` on the smallest."""
        _num(g, s["c"])
        return g.add("mul", (), (g.add("matmul", (), (s["a"], s["b"])), s["c"]))

    @rule("scale_out_of_matmul_b", "reassociation", Pat("matmul", (A, Pat("mul", (B, C)))))
    def _scale_b(g: EGraph, s: Subst, r: int) -> int:
        _num(g, s["c"])
        return g.add("mul", (), (g.add("matmul", (), (s["a"], s["b"])), s["c"]))

    @rule("scale_into_matmul", "reassociation", Pat("mul", (Pat("matmul", (A, B)), C)))
    def _scale_in(g: EGraph, s: Subst, r: int) -> int:
        _num(g, s["c"])
        g.add("matmul", (), (g.add("mul", (), (s["a"], s["c"])), s["b"]))
        return g.add("matmul", (), (s["a"], g.add("mul", (), (s["b"], s["c"]))))

    @rule("scale_into_matmul_a", "reassociation", Pat("mul", (Pat("matmul", (A, B)), C)))
    def _scale_in_a(g: EGraph, s: Subst, r: int) -> int:
        _num(g, s["c"])
        return g.add("matmul", (), (g.add("mul", (), (s["a"], s["c"])), s["b"]))

    @rule("scale_into_linear", "reassociation", Pat("linear", (Pat("mul", (X, C)), W)))
    def _scale_linear(g: EGraph, s: Subst, r: int) -> int:
        """``linear(c x, W) == linear(x, c W)``: the scale goes on the (smaller) weight."""
        _num(g, s["c"])
        return g.add("linear", (), (s["x"], g.add("mul", (), (s["w"], s["c"]))))

    @rule("scale_into_linear_bias", "reassociation", Pat("linear", (Pat("mul", (X, C)), W, B)))
    def _scale_linear_bias(g: EGraph, s: Subst, r: int) -> int:
        _num(g, s["c"])
        return g.add("linear", (), (s["x"], g.add("mul", (), (s["w"], s["c"])), s["b"]))

    @rule("scale_after_linear", "reassociation", Pat("mul", (Pat("linear", (X, W, B)), C)))
    def _scale_after_linear(g: EGraph, s: Subst, r: int) -> int:
        """``linear(x, W, b) * c == linear(x, c W, c b)``."""
        _num(g, s["c"])
        w = g.add("mul", (), (s["w"], s["c"]))
        return g.add("linear", (), (s["x"], w, g.add("mul", (), (s["b"], s["c"]))))

    @rule("scale_after_linear_nobias", "reassociation", Pat("mul", (Pat("linear", (X, W)), C)))
    def _scale_after_linear_nobias(g: EGraph, s: Subst, r: int) -> int:
        """``linear(x, W) * c == linear(x, c W)``."""
        _num(g, s["c"])
        return g.add("linear", (), (s["x"], g.add("mul", (), (s["w"], s["c"]))))

    @rule("shift_into_bias", "reassociation", Pat("add", (Pat("linear", (X, W, B)), C)))
    def _shift_into_bias(g: EGraph, s: Subst, r: int) -> int:
        """``linear(x, W, b) + c == linear(x, W, b + c)`` for a number ``c`` or a vector of one
        value per output feature: the shift rides on the GEMM's bias."""
        shift = g.data(s["c"])
        _when(shift.const is not None or shift.shape == _shape(g, s["b"]))
        return g.add("linear", (), (s["x"], s["w"], g.add("add", (), (s["b"], s["c"]))))

    @rule("add_self", "bit-exact", Pat("add", (X, X)))
    def _add_self(g: EGraph, s: Subst, r: int) -> int:
        """``x + x == x * 2`` bit for bit (doubling is exact)."""
        return g.add("mul", (), (s["x"], _const(g, 2.0)))

    def positive_scale(g: EGraph, s: Subst) -> float:
        c = _num(g, s["c"])
        _when(c > 0 and math.isfinite(c))
        _when(s["f"][0] in ("relu", "leaky_relu"))
        return c

    @rule("scale_into_relu", "reassociation", Pat("mul", (Pat("fn", (X,), Var("f")), C)))
    def _scale_into_relu(g: EGraph, s: Subst, r: int) -> int:
        """``relu(x) * c == relu(x * c)`` for ``c > 0`` (LeakyReLU likewise): positively
        homogeneous, so a scale after it can reach the GEMM before it (the sign of a zero
        may differ)."""
        positive_scale(g, s)
        return g.add("fn", s["f"], (g.add("mul", (), (s["x"], s["c"])),))

    @rule("scale_out_of_relu", "reassociation", Pat("fn", (Pat("mul", (X, C)),), Var("f")))
    def _scale_out_of_relu(g: EGraph, s: Subst, r: int) -> int:
        positive_scale(g, s)
        return g.add("mul", (), (g.add("fn", s["f"], (s["x"],)), s["c"]))

    # ---- distributivity where it saves a GEMM (reassociation)
    @rule(
        "factor_left", "reassociation", Pat("add", (Pat("matmul", (A, B)), Pat("matmul", (A, C))))
    )
    def _factor_left(g: EGraph, s: Subst, r: int) -> int:
        """``A @ B + A @ C == A @ (B + C)`` (same-shaped ``B`` and ``C``): one GEMM."""
        _when(_shape(g, s["b"]) == _shape(g, s["c"]))
        return g.add("matmul", (), (s["a"], g.add("add", (), (s["b"], s["c"]))))

    @rule(
        "factor_right", "reassociation", Pat("add", (Pat("matmul", (A, C)), Pat("matmul", (B, C))))
    )
    def _factor_right(g: EGraph, s: Subst, r: int) -> int:
        """``A @ C + B @ C == (A + B) @ C`` (same-shaped ``A`` and ``B``): one GEMM."""
        _when(_shape(g, s["a"]) == _shape(g, s["b"]))
        return g.add("matmul", (), (g.add("add", (), (s["a"], s["b"])), s["c"]))

    @rule(
        "factor_linear",
        "reassociation",
        Pat("add", (Pat("linear", (X, A, B)), Pat("linear", (X, C, D)))),
    )
    def _factor_linear(g: EGraph, s: Subst, r: int) -> int:
        """``linear(x, W1, b1) + linear(x, W2, b2) == linear(x, W1 + W2, b1 + b2)`` for
        same-shaped weights: one GEMM, the sum of the weights derived in forward."""
        _when(_shape(g, s["a"]) == _shape(g, s["c"]) and _shape(g, s["b"]) == _shape(g, s["d"]))
        weight = g.add("add", (), (s["a"], s["c"]))
        return g.add("linear", (), (s["x"], weight, g.add("add", (), (s["b"], s["d"]))))

    @rule(
        "factor_linear_nobias",
        "reassociation",
        Pat("add", (Pat("linear", (X, A)), Pat("linear", (X, C)))),
    )
    def _factor_linear_nobias(g: EGraph, s: Subst, r: int) -> int:
        _when(_shape(g, s["a"]) == _shape(g, s["c"]))
        return g.add("linear", (), (s["x"], g.add("add", (), (s["a"], s["c"]))))

    @rule("factor_scale", "reassociation", Pat("add", (Pat("mul", (X, C)), Pat("mul", (Y, C)))))
    def _factor_scale(g: EGraph, s: Subst, r: int) -> int:
        """``x c + y c == (x + y) c``: one pass fewer."""
        _num(g, s["c"])
        _when(_shape(g, s["x"]) == _shape(g, s["y"]))
        return g.add("mul", (), (g.add("add", (), (s["x"], s["y"])), s["c"]))

    return rules


#: Every rule of the engine (``Rule.exact`` is its exactness class).
RULES: list[Rule] = _rules()


# --------------------------------------------------------------------------- lifting from FX


@dataclass
class Lifted:
    """The e-graph of a canonical FX graph: the class of each lifted node, its e-node as
    lifted, and the FX value each leaf stands for."""

    graph: EGraph
    classes: dict[fx.Node, int]
    enodes: dict[fx.Node, ENode]
    leaves: dict[str, Any]  # leaf key -> an fx.Node, or a get_attr target (str)
    operands: dict[fx.Node, list[Any]]  # what each lifted node reads, in e-node order


def _tensor_meta(node: Any) -> Any:
    return node.meta.get("tensor_meta") if isinstance(node, fx.Node) else None


def _rank(value: Any) -> int:
    """The propagated rank of a tensor operand; -1 (no dimension index fits) when unknown."""
    meta = _tensor_meta(value)
    shape = getattr(meta, "shape", None)
    return len(shape) if shape is not None else -1


def _floating(node: Any) -> bool:
    meta = _tensor_meta(node)
    dtype = getattr(meta, "dtype", None)
    return dtype is not None and dtype.is_floating_point and not dtype.is_complex


def _term(gm: fx.GraphModule, node: fx.Node) -> tuple[str, Any, list[Any]] | None:
    """``(op, attrs, operands)`` of a node the engine models; operands are FX values (an
    ``("attr", target)`` pair for a layer's parameter); None for any other node."""
    args, kw = node.args, node.kwargs
    if node.op == "call_module":
        mod = module_of(gm, node)
        if isinstance(mod, nn.Linear) and plain_torch_layer(mod) and len(args) == 1 and not kw:
            t = str(node.target)
            bias = [("attr", f"{t}.bias")] if mod.bias is not None else []
            return "linear", (), [args[0], ("attr", f"{t}.weight"), *bias]
        return None
    views = {torch.squeeze: "squeeze", torch.unsqueeze: "unsqueeze", torch.reshape: "reshape"}
    if node.op == "call_method" or (node.op == "call_function" and node.target in views):
        # The function forms are what this rewrite writes back: a later pass reads them too.
        target = views.get(node.target, node.target)  # type: ignore[arg-type]
        if target == "squeeze" and len(args) == 2 and not kw:
            dims = args[1] if isinstance(args[1], tuple) else (args[1],)
            rank = _rank(args[0])
            if all(type(d) is int and -rank <= d < rank for d in dims):
                return "squeeze", tuple(sorted({d % rank for d in dims})), [args[0]]
        if target == "unsqueeze" and len(args) == 2 and type(args[1]) is int and not kw:
            rank = _rank(args[0]) + 1
            return ("unsqueeze", args[1] % rank, [args[0]]) if -rank <= args[1] < rank else None
        if target in ("reshape", "view") and len(args) >= 2 and not kw:
            sizes = args[1] if len(args) == 2 and isinstance(args[1], tuple | list) else args[1:]
            if all(type(v) is int for v in sizes):
                return "reshape", tuple(sizes), [args[0]]
        return None
    if node.op != "call_function":
        return None
    fn = node.target
    for name, op in _BINARY.items():
        if fn is op and len(args) == 2 and not kw:
            return name, (), list(args)
    if fn is operator.neg and len(args) == 1 and not kw:
        return "neg", (), list(args)
    for name, unary in UNARY.items():
        if fn is unary and len(args) == 1 and not kw:
            return "fn", (name, ()), [args[0]]
    numbers = all(v is None or scalar(v) is not None for v in args[1:])
    if fn is torch.clamp and len(args) == 3 and not kw and numbers:
        return "fn", ("clamp", tuple(args[1:])), [args[0]]
    if fn is F.leaky_relu and len(args) == 1 and set(kw) == {"negative_slope"}:
        slope = scalar(kw["negative_slope"])
        return ("fn", ("leaky_relu", (slope,)), [args[0]]) if slope is not None else None
    for kind, red in _REDUCE.items():
        if fn is red and not kw:
            if len(args) == 1:
                return "reduce", (kind, None, False), [args[0]]
            if len(args) == 3 and isinstance(args[1], tuple) and isinstance(args[2], bool):
                return "reduce", (kind, tuple(args[1]), args[2]), [args[0]]
    dims = args[1:] if len(args) >= 2 else ()
    fixed = all(type(d) is int and d >= 0 for d in dims)  # canonical: non-negative
    if fn in (torch.softmax, torch.log_softmax) and len(args) == 2 and not kw and fixed:
        return "softmax", (fn.__name__, args[1]), [args[0]]
    if fn is torch.matmul and len(args) == 2 and not kw:
        return "matmul", (), list(args)
    if fn is F.linear and not kw and len(args) in (2, 3):
        return "linear", (), [a for a in args if a is not None]
    if fn is torch.transpose and len(args) == 3 and not kw and fixed:
        return "transpose", tuple(args[1:]), [args[0]]
    return None


def lift(gm: fx.GraphModule) -> Lifted:
    """The e-graph of ``gm``'s modeled nodes (shapes must have been propagated)."""
    eg = new_graph()
    lifted = Lifted(eg, {}, {}, {}, {})

    def operand(value: Any, dtype: Any) -> int:
        if isinstance(value, tuple) and len(value) == 2 and value[0] == "attr":
            param = gm.get_parameter(value[1]) if value[1] else None
            assert param is not None
            if param.dtype != dtype:
                raise Invalid("another dtype")
            lifted.leaves[value[1]] = value[1]
            return eg.add("leaf", ("attr", value[1], tuple(param.shape), True))
        if isinstance(value, fx.Node):
            if value in lifted.classes:
                return lifted.classes[value]
            meta = _tensor_meta(value)
            if meta is None or getattr(meta, "dtype", None) != dtype:
                raise Invalid("not a tensor of the op's dtype")
            lifted.leaves[value.name] = value
            shape = tuple(int(s) for s in meta.shape)
            return eg.add("leaf", ("node", value.name, shape, value.op == "get_attr"))
        number = scalar(value)
        if number is None:
            raise Invalid("not a tensor or a number")
        return eg.add("const", (number,))

    for node in gm.graph.nodes:
        if not _floating(node):
            continue
        term = _term(gm, node)
        if term is None:
            continue
        op, attrs, operands = term
        dtype = _tensor_meta(node).dtype
        try:
            children = tuple(operand(v, dtype) for v in operands)
            cid = eg.add(op, attrs, children)
        except Invalid:
            continue
        if _shape(eg, cid) != tuple(int(s) for s in _tensor_meta(node).shape):
            continue  # the engine reads this op differently from torch: leave it alone
        lifted.classes[node] = cid
        lifted.enodes[node] = eg.canonical(ENode(op, attrs, children))
        lifted.operands[node] = operands
    return lifted


# --------------------------------------------------------------------------- lowering to FX


def _regions(lifted: Lifted) -> list[list[fx.Node]]:
    """The lifted nodes in connected groups (edges between lifted nodes), in graph order."""
    owner: dict[fx.Node, fx.Node] = {n: n for n in lifted.classes}

    def find(n: fx.Node) -> fx.Node:
        while owner[n] is not n:
            owner[n] = owner[owner[n]]
            n = owner[n]
        return n

    for node in lifted.classes:
        for arg in node.all_input_nodes:
            if arg in owner:
                owner[find(arg)] = find(node)
    groups: dict[fx.Node, list[fx.Node]] = {}
    for node in lifted.classes:
        groups.setdefault(find(node), []).append(node)
    return list(groups.values())


@dataclass
class _Lowering:
    """Writes extracted terms into the FX graph, reusing an original node wherever the term
    is the one that node computes from the same operands."""

    gm: fx.GraphModule
    lifted: Lifted
    choice: dict[int, ENode]
    origin: dict[int, fx.Node]
    position: dict[fx.Node, int]
    made: dict[int, Any] = field(default_factory=dict)
    active: set[int] = field(default_factory=set)
    limit: int = 0  # the position every reused node must precede

    def value(self, cid: int) -> Any:
        """The FX value (a node or a number) computing class ``cid``'s chosen term."""
        eg = self.lifted.graph
        cid = eg.find(cid)
        if cid in self.made:
            return self.made[cid]
        node = self.choice.get(cid)
        if node is None or cid in self.active:
            raise Invalid("no finite term")
        if node.op == "const":
            return node.attrs[0]  # type: ignore[index]
        if node.op == "leaf":
            kind, key = node.attrs[:2]  # type: ignore[index]
            if kind == "attr":
                leaf = self.gm.graph.get_attr(key)
            else:
                leaf = self._reuse(self.lifted.leaves[key])
            self.made[cid] = leaf
            return leaf
        self.active.add(cid)
        args = [self.value(c) for c in node.children]
        self.active.discard(cid)
        old = self.origin.get(cid)
        if (
            old is not None
            and eg.canonical(self.lifted.enodes[old]) == node
            and all(self._same(a, o) for a, o in zip(args, self.lifted.operands[old], strict=True))
        ):
            self.made[cid] = self._reuse(old)
            return old
        g = self.gm.graph
        if node.op == "ones":
            zero = g.call_function(operator.mul, (args[0], 0.0))
            new = g.call_function(operator.add, (zero, 1.0))
        elif node.op == "zeros":
            new = g.call_function(operator.sub, (args[0], args[0]))
        else:
            fn, call_args = _call(node.op, node.attrs, args)
            new = g.call_function(fn, call_args)
        self.made[cid] = new
        return new

    @staticmethod
    def _same(value: Any, operand: Any) -> bool:
        """Whether a lowered child is the operand the original node reads."""
        if isinstance(operand, tuple):  # a layer's own parameter
            return (
                isinstance(value, fx.Node)
                and value.op == "get_attr"
                and (value.target == operand[1])
            )
        if isinstance(operand, fx.Node):
            return value is operand
        return not isinstance(value, fx.Node) and value == operand

    def _reuse(self, node: fx.Node) -> fx.Node:
        if self.position.get(node, -1) >= self.limit:
            raise Invalid(f"{node.name} comes after the value it would compute")
        return node


def rewrite(gm: fx.GraphModule) -> tuple[int, Saturation | None]:
    """Simplify ``gm`` (canonical, shapes propagated) in place: the number of regions
    rewritten, and what saturation did (None when nothing was lifted)."""
    lifted = lift(gm)
    if not lifted.classes:
        return 0, None
    eg = lifted.graph
    sat = saturate(eg, RULES, max_iterations=MAX_ITERATIONS, max_nodes=MAX_NODES)
    origin: dict[int, fx.Node] = {}
    for node, cid in lifted.classes.items():
        origin.setdefault(eg.find(cid), node)
    originals = {eg.canonical(e) for e in lifted.enodes.values()}
    choice = extract(eg, node_cost, prefer=lambda n: n in originals)
    position = {n: i for i, n in enumerate(gm.graph.nodes)}
    count = 0
    for region in _regions(lifted):
        inside = set(region)
        roots = [n for n in region if any(u not in inside for u in n.users)]
        before = sum(node_cost(eg, eg.canonical(lifted.enodes[n])) for n in region)
        after = selection_cost(eg, [lifted.classes[n] for n in roots], choice, node_cost)
        if before <= 0.0 or after > (1.0 - MIN_GAIN) * before:
            continue  # no material gain: the region stays as written
        if _lower_region(gm, lifted, roots, choice, origin, position):
            count += 1
    if count:
        cleanup(gm)
    return count, sat


def _lower_region(
    gm: fx.GraphModule,
    lifted: Lifted,
    roots: list[fx.Node],
    choice: dict[int, ENode],
    origin: dict[int, fx.Node],
    position: dict[fx.Node, int],
) -> bool:
    """Write the extracted terms of ``roots`` into ``gm`` before each root; False (nothing
    replaced; what was written is dead code) where a term would read a later value or is a
    number."""
    lowering = _Lowering(gm, lifted, choice, origin, position)
    replaced: list[tuple[fx.Node, fx.Node]] = []
    try:
        for root in roots:
            lowering.limit = position[root] + 1
            with gm.graph.inserting_before(root):
                new = lowering.value(lifted.classes[root])
            if not isinstance(new, fx.Node):
                return False
            if new is not root:
                replaced.append((root, new))
    except Invalid:
        return False
    for root, new in replaced:
        root.replace_all_uses_with(new)
    return bool(replaced)


def algebra(gm: fx.GraphModule) -> int:
    """The ``algebra`` rewrite: equality saturation over the lifted tensor algebra, the
    cheapest equivalent written back where it is at least ``MIN_GAIN`` cheaper.

    Faster: whatever the extracted term saves under the cost model (a GEMM turned into a
    matrix-vector product, a pass removed, a function run on a reduced tensor). A
    reassociation: the rules are bit-exact or reorder the same sums and products
    (:data:`RULES` says which), which the float64 referee accepts.
    """
    return rewrite(gm)[0]
