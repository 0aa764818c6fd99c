"""Plain-``tl`` versions of the Inductor runtime helpers generated kernels call.

A harvested candidate must not import ``torch._inductor`` (importing it loads Dynamo, which
rewraps ``torch.manual_seed``: the verifier rightly sees a changed harness). Each helper below is
our own plain Triton with the semantics Inductor relies on (NaN-propagating min/max, Welford
variance, floor division, online softmax, arg-reductions preferring the lowest index); the
harvest emits only those a kernel uses, renamed ``_h_<name>``.
"""

from __future__ import annotations

import re

#: name -> (source, names of other helpers it calls)
HELPERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "promote_to_tensor": (
        """@triton.jit
def _h_promote_to_tensor(x):
    # Adding a one-element tensor turns a scalar into a tensor of the same value.
    return x + tl.zeros((1,), tl.int1)""",
        (),
    ),
    "maximum": (
        """@triton.jit
def _h_maximum(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)""",
        (),
    ),
    "minimum": (
        """@triton.jit
def _h_minimum(a, b):
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)""",
        (),
    ),
    "max2": (
        """@triton.jit
def _h_max2(a, dim):
    return tl.reduce(a, dim, _h_maximum)""",
        ("maximum",),
    ),
    "min2": (
        """@triton.jit
def _h_min2(a, dim):
    return tl.reduce(a, dim, _h_minimum)""",
        ("minimum",),
    ),
    "_mul": (
        """@triton.jit
def _h__mul(a, b):
    return a * b""",
        (),
    ),
    "prod": (
        """@triton.jit
def _h_prod(a, dim):
    return tl.reduce(a, dim, _h__mul)""",
        ("_mul",),
    ),
    "_or": (
        """@triton.jit
def _h__or(a, b):
    return a | b""",
        (),
    ),
    "any": (
        """@triton.jit
def _h_any(a, dim):
    return tl.reduce(a, dim, _h__or)""",
        ("_or",),
    ),
    "welford_reduce": (
        """@triton.jit
def _h_welford_reduce(value, mean, m2, weight, first_iteration):
    # One more sample per lane: Welford's running mean and sum of squared deviations.
    if first_iteration:
        new_weight = tl.full(weight.shape, 1, weight.dtype)
        new_mean = value
        new_m2 = tl.zeros_like(m2)
    else:
        delta = value - mean
        new_weight = weight + 1
        new_mean = mean + delta / new_weight
        new_m2 = m2 + delta * (value - new_mean)
    return new_mean, new_m2, new_weight""",
        (),
    ),
    "welford_combine": (
        """@triton.jit
def _h_welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    # Merge two partial (mean, M2, count) triples; an empty side contributes nothing.
    delta = mean_2 - mean_1
    new_weight = weight_1 + weight_2
    frac = tl.where(new_weight == 0.0, 0.0, weight_2 / new_weight)
    return (
        mean_1 + delta * frac,
        m2_1 + m2_2 + delta * delta * weight_1 * frac,
        new_weight,
    )""",
        (),
    ),
    "welford": (
        """@triton.jit
def _h_welford(mean, m2, weight, dim):
    return tl.reduce((mean, m2, weight), dim, _h_welford_combine)""",
        ("welford_combine",),
    ),
    "div_floor_integer": (
        """@triton.jit
def _h_div_floor_integer(a, b):
    # Integer division rounding toward minus infinity (Triton's // truncates toward zero).
    quot = a // b
    rem = a % b
    return tl.where((rem != 0) & ((rem < 0) != (b < 0)), quot - 1, quot)""",
        (),
    ),
    "remainder_integer": (
        """@triton.jit
def _h_remainder_integer(a, b):
    # Python's modulo: the result takes the divisor's sign.
    rem = a % b
    return tl.where((rem != 0) & ((rem < 0) != (b < 0)), rem + b, rem)""",
        (),
    ),
    "exp": (
        """@triton.jit
def _h_exp(x, use_fast_math: tl.constexpr):
    if use_fast_math:
        return tl.math.exp(x)
    else:
        return libdevice.exp(x)""",
        (),
    ),
    "online_softmax_reduce": (
        """@triton.jit
def _h_online_softmax_reduce(lhs_max, lhs_sum, dim, use_fast_math: tl.constexpr):
    # Collapse per-lane (max, sum of exp(x - max)) pairs along dim to one pair.
    out_max = _h_max2(lhs_max, dim)
    out_max_keep = tl.expand_dims(out_max, dim)
    delta = tl.where(out_max_keep == float("-inf"), 0, lhs_max - out_max_keep)
    out_sum = tl.sum(lhs_sum * _h_exp(delta, use_fast_math), dim)
    return out_max, out_sum""",
        ("max2", "exp"),
    ),
    "online_softmax_combine": (
        """@triton.jit
def _h_online_softmax_combine(lhs_max, lhs_sum, rhs_max, use_fast_math: tl.constexpr):
    # Fold one new element (rhs_max, with weight exp(0) = 1) into a running (max, sum).
    out_max = _h_maximum(lhs_max, rhs_max)
    lhs_scale = tl.where(out_max == float("-inf"), 1.0, _h_exp(lhs_max - out_max, use_fast_math))
    rhs_scale = tl.where(out_max == float("-inf"), 1.0, _h_exp(rhs_max - out_max, use_fast_math))
    return out_max, lhs_sum * lhs_scale + rhs_scale""",
        ("maximum", "exp"),
    ),
    "online_softmax_combine_with_sum": (
        """@triton.jit
def _h_online_softmax_combine_with_sum(lhs_max, lhs_sum, rhs_max, rhs_sum, use_fast_math: tl.constexpr):
    out_max = _h_maximum(lhs_max, rhs_max)
    lhs_scale = tl.where(out_max == float("-inf"), 1.0, _h_exp(lhs_max - out_max, use_fast_math))
    rhs_scale = tl.where(out_max == float("-inf"), 1.0, _h_exp(rhs_max - out_max, use_fast_math))
    return out_max, lhs_sum * lhs_scale + rhs_sum * rhs_scale""",
        ("maximum", "exp"),
    ),
    "maximum_with_index": (
        """@triton.jit
def _h_maximum_with_index(a_value, a_index, b_value, b_index):
    # Larger value wins; NaN beats numbers; ties (NaN == NaN too) go to the lower index.
    take_a = a_value > b_value
    equal = a_value == b_value
    if a_value.dtype.is_floating():
        a_nan = a_value != a_value
        b_nan = b_value != b_value
        take_a = take_a | (a_nan & (b_nan == 0))
        equal = equal | (a_nan & b_nan)
    take_a = take_a | (equal & (a_index < b_index))
    return tl.where(take_a, a_value, b_value), tl.where(take_a, a_index, b_index)""",
        (),
    ),
    "minimum_with_index": (
        """@triton.jit
def _h_minimum_with_index(a_value, a_index, b_value, b_index):
    # Smaller value wins; NaN beats numbers; ties (NaN == NaN too) go to the lower index.
    take_a = a_value < b_value
    equal = a_value == b_value
    if a_value.dtype.is_floating():
        a_nan = a_value != a_value
        b_nan = b_value != b_value
        take_a = take_a | (a_nan & (b_nan == 0))
        equal = equal | (a_nan & b_nan)
    take_a = take_a | (equal & (a_index < b_index))
    return tl.where(take_a, a_value, b_value), tl.where(take_a, a_index, b_index)""",
        (),
    ),
    "max_with_index": (
        """@triton.jit
def _h_max_with_index(value, index, dim):
    return tl.reduce((value, index), dim, _h_maximum_with_index)""",
        ("maximum_with_index",),
    ),
    "min_with_index": (
        """@triton.jit
def _h_min_with_index(value, index, dim):
    return tl.reduce((value, index), dim, _h_minimum_with_index)""",
        ("minimum_with_index",),
    ),
    "select_one": (
        """@triton.jit
def _h_select_one(x, mask, dim, keep_dims=False):
    # The one element along dim where mask holds: every other lane adds an exact zero.
    picked = tl.sum(tl.where(mask, x, 0), dim, keep_dims=keep_dims)
    return picked.to(x.dtype)""",
        (),
    ),
    "pow_integer": (
        """@triton.jit
def _h_pow_integer(base, exponent):
    # Exact integer power by repeated squaring over the exponent's bits (exponent >= 0).
    result = tl.full(base.shape, 1, base.dtype)
    bits = exponent
    for _ in tl.static_range(64):
        result = tl.where((bits & 1) != 0, result * base, result)
        bits = bits >> 1
        base = base * base
    return result""",
        (),
    ),
    "is_floating": (
        """@triton.jit
def _h_is_floating(x):
    return _h_promote_to_tensor(x).dtype.is_floating()""",
        ("promote_to_tensor",),
    ),
}


def helper_closure(names: set[str]) -> list[str]:
    """The helpers ``names`` need, dependencies first, each once."""
    ordered: list[str] = []

    def visit(name: str) -> None:
        if name in ordered:
            return
        for dep in HELPERS[name][1]:
            visit(dep)
        ordered.append(name)

    for name in sorted(names):
        visit(name)
    return ordered


def helpers_source(names: set[str]) -> str:
    """Source of the helpers ``names`` need (empty when none)."""
    return "\n\n\n".join(HELPERS[n][0] for n in helper_closure(names))


def uses_libdevice(text: str) -> bool:
    """Whether source text calls libdevice."""
    return re.search(r"\blibdevice\.", text) is not None
