"""The rules of the ``algebra`` rewrite: each a pattern over the term language
(``algebra_terms.py``) and a right-hand side that checks its side conditions, with its
exactness class (``bit-exact`` or ``reassociation``, as in ``rules.py``)."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

from kernelopt_jupyter.agents.rewrites.algebra_terms import (
    BINARY,
    EXACT_INCREASING,
    SMOOTH_INCREASING,
)
from kernelopt_jupyter.agents.rewrites.egraph import EGraph, Invalid, Pat, Rule, Subst, Var

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
    return _const(g, BINARY[op](*values))


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
        _num(g, s["c"])  # the scale on A instead: scale_into_matmul_a
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
