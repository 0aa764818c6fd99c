"""One spelling per op: the canonical FX form every rewrite rule matches.

A user writes a matrix product as ``a @ b``, ``torch.matmul``, ``torch.mm``, ``a.bmm(b)`` or
``torch.einsum('ij,jk->ik', a, b)``; a ReLU as ``nn.ReLU()``, ``F.relu``, ``x.relu()`` or
``x.clamp(min=0)``. :func:`canonicalize` rewrites each of them into the one form below before any
rule looks at the graph, so a rule written against that form fires however the op was spelled.
Every canonical call computes the same values as what it replaces (torch dispatches each
spelling to the same kernel), so canonicalizing alone changes no result.

============================  ==================================================================
op                            canonical call
============================  ==================================================================
matrix product                ``torch.matmul(a, b)`` (``@``, ``mm``, ``bmm``, a matmul einsum)
swap of two dimensions        ``torch.transpose(x, i, j)``, ``0 <= i < j`` where the rank is known
                              (``.t()``, ``.T`` of a matrix, ``.mT``, ``swapaxes``, a
                              two-dimension ``permute``)
sum, mean, amax, amin,        ``torch.sum(x, dims, keepdim)`` with ``dims`` a sorted tuple of
logsumexp                     non-negative ints, or ``torch.sum(x)`` over everything;
                              ``x.max(d).values`` and ``torch.max(x, d)[0]`` are ``torch.amax``
softmax, log_softmax          ``torch.softmax(x, dim)`` (``F.softmax``, ``x.softmax``,
                              ``nn.Softmax``)
arithmetic                    ``operator.add/sub/mul/truediv/neg`` (``torch.mul``, ``x.div(c)``,
                              ``torch.add`` without ``alpha`` ...)
unary elementwise             ``torch.exp/log/tanh/sigmoid/...(x)`` (methods, ``F.tanh``, layers)
relu, clamp                   ``torch.relu(x)``; ``torch.clamp(x, lo, hi)`` for ``F.hardtanh``,
                              ``F.relu6``, ``clamp_min`` ... (``clamp(x, 0, None)`` is relu)
cumulative sum, product       ``torch.cumsum(x, dim)`` / ``torch.cumprod(x, dim)``, ``dim``
                              non-negative (methods, ``dim=`` keywords; no ``dtype``)
reversal                      ``torch.flip(x, dims)``, ``dims`` a sorted tuple (``x.flip(d)``)
functional convolutions       ``F.conv2d(x, w, b, stride, padding, dilation, groups)``, all given
parameter-free layers         their functional call: ``nn.LeakyReLU`` -> ``F.leaky_relu(x, s)``,
                              ``nn.GELU`` -> ``F.gelu``, ``nn.MaxPool2d`` -> ``F.max_pool2d``
                              with every argument positional, ``nn.Identity`` -> its input
============================  ==================================================================

Layers with parameters (``nn.Linear``, convolutions, normalisations) stay ``call_module`` nodes
so that rules fold into the layer's own parameters; :func:`linear_parts` shows a rule
``nn.Linear``, ``F.linear`` and ``x @ W.T + b`` alike.

In-place spellings (``x.relu_()``, ``F.relu(x, inplace=True)``) are canonicalized only where
the tensor they modify has no other reader, since elsewhere the modification is visible.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from kernelopt_jupyter.agents.rewrites.graph import (
    cleanup,
    module_of,
    only_user,
    plain_torch_layer,
    scalar,
    shape_of,
)

#: Canonical reductions and the tensor methods that spell them the same way.
REDUCTIONS: dict[str, Callable[..., Any]] = {
    "sum": torch.sum,
    "mean": torch.mean,
    "amax": torch.amax,
    "amin": torch.amin,
    "logsumexp": torch.logsumexp,
}
#: Elementwise functions of one tensor spelled ``torch.f(x)``, ``x.f()`` (and ``F.f`` aliases).
UNARY: dict[str, Callable[..., Any]] = {
    name: getattr(torch, name)
    for name in (
        "exp", "log", "tanh", "sigmoid", "sqrt", "rsqrt", "abs", "relu", "log1p", "expm1",
        "erf", "reciprocal", "sin", "cos", "exp2", "log2", "square",
    )
}  # fmt: skip
_ARITHMETIC: dict[Any, Callable[..., Any]] = {
    torch.add: operator.add,
    "add": operator.add,
    torch.sub: operator.sub,
    torch.subtract: operator.sub,
    "sub": operator.sub,
    "subtract": operator.sub,
    torch.mul: operator.mul,
    torch.multiply: operator.mul,
    "mul": operator.mul,
    "multiply": operator.mul,
    torch.div: operator.truediv,
    torch.divide: operator.truediv,
    torch.true_divide: operator.truediv,
    "div": operator.truediv,
    "divide": operator.truediv,
    "true_divide": operator.truediv,
}
_MAX_POOLS = {nn.MaxPool1d: F.max_pool1d, nn.MaxPool2d: F.max_pool2d, nn.MaxPool3d: F.max_pool3d}
_AVG_POOLS = {nn.AvgPool1d: F.avg_pool1d, nn.AvgPool2d: F.avg_pool2d, nn.AvgPool3d: F.avg_pool3d}
MAX_POOL_FN = tuple(_MAX_POOLS.values())
#: Functional convolutions, by spatial dimensions (1, 2, 3).
CONV_FN: tuple[Callable[..., Any], ...] = (F.conv1d, F.conv2d, F.conv3d)
AVG_POOL_FN = tuple(_AVG_POOLS.values())


@dataclass(frozen=True)
class Call:
    """A canonical call: ``target(*args, **kwargs)`` as a ``call_function`` node, or ``value``
    itself (an op that returns its input) when ``target`` is None."""

    target: Callable[..., Any] | None
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()
    value: Any = None


def _bind(node: fx.Node, names: tuple[str, ...], defaults: dict[str, Any]) -> dict[str, Any] | None:
    """The call's arguments by name (a method's ``self`` is ``names[0]``); None when it passes
    an argument ``names`` does not list (an unknown overload is left alone)."""
    if len(node.args) > len(names):
        return None
    bound = dict(defaults)
    bound.update(zip(names, node.args, strict=False))
    for key, value in node.kwargs.items():
        if key not in names:
            return None
        bound[key] = value
    return bound if all(n in bound for n in names) else None


def _rank(node: Any) -> int | None:
    shape = shape_of(node)
    return len(shape) if shape is not None else None


def _is_tensor(value: Any) -> bool:
    """Whether an FX value is known to be a tensor (a propagated shape)."""
    return isinstance(value, fx.Node) and shape_of(value) is not None


def normal_dims(x: Any, dim: Any) -> tuple[int, ...] | None:
    """``dim`` (an int or a sequence of them) as a sorted tuple, non-negative where the rank of
    ``x`` is known; None when it is not a constant."""
    dims = tuple(dim) if isinstance(dim, list | tuple) else (dim,)
    if not dims or not all(type(d) is int for d in dims):
        return None
    rank = _rank(x)
    if rank is not None:
        if rank == 0 or any(not -rank <= d < rank for d in dims):
            return None  # torch raises; leave it to say so
        dims = tuple(d % rank for d in dims)
    return tuple(sorted(set(dims)))


def _one_dim(x: Any, dim: Any) -> int | None:
    dims = normal_dims(x, dim)
    return dims[0] if dims is not None and len(dims) == 1 else None


def _reduction(node: fx.Node, kind: str) -> Call | None:
    bound = _bind(node, ("input", "dim", "keepdim"), {"dim": None, "keepdim": False})
    if bound is None and kind in ("sum", "mean"):  # the dtype keyword of sum/mean
        bound = _bind(
            node,
            ("input", "dim", "keepdim", "dtype"),
            {"dim": None, "keepdim": False, "dtype": None},
        )
    if bound is None or not isinstance(bound["keepdim"], bool):
        return None
    x, dim = bound["input"], bound["dim"]
    dtype = (("dtype", bound["dtype"]),) if bound.get("dtype") is not None else ()
    if dim is None or (kind in ("amax", "amin") and dim in ((), [])):
        if bound["keepdim"] or kind == "logsumexp":
            return None
        return Call(REDUCTIONS[kind], (x,), dtype)
    dims = normal_dims(x, dim)
    if dims is None:
        return None
    return Call(REDUCTIONS[kind], (x, dims, bound["keepdim"]), dtype)


def _max_values(node: fx.Node) -> Call | None:
    """``x.max(d).values`` / ``torch.max(x, d)[0]`` (likewise min) as ``torch.amax/amin``."""
    if node.op != "call_function" or len(node.args) != 2:
        return None
    src, key = node.args
    if not (
        (node.target is operator.getitem and key == 0)
        or (node.target is getattr and key == "values")
    ):
        return None
    if not isinstance(src, fx.Node) or not (
        (src.op == "call_function" and src.target in (torch.max, torch.min))
        or (src.op == "call_method" and src.target in ("max", "min"))
    ):
        return None
    if not all(_values_access(u) for u in src.users):
        return None  # the indices are read too: the op that gives both stays
    bound = _bind(src, ("input", "dim", "keepdim"), {"keepdim": False})
    if bound is None or _is_tensor(bound["dim"]) or not isinstance(bound["keepdim"], bool):
        return None
    dim = _one_dim(bound["input"], bound["dim"])
    if dim is None:
        return None
    kind = "amax" if src.target in (torch.max, "max") else "amin"
    return Call(REDUCTIONS[kind], (bound["input"], (dim,), bound["keepdim"]))


def _values_access(node: fx.Node) -> bool:
    """Whether ``node`` reads the values of a ``(values, indices)`` result."""
    return node.op == "call_function" and (
        (node.target is operator.getitem and node.args[1:] == (0,))
        or (node.target is getattr and node.args[1:] == ("values",))
    )


def _max_of_tensors(node: fx.Node) -> Call | None:
    """``torch.max(x)`` (everything) and ``torch.max(x, y)`` (elementwise) in canonical form."""
    fn = "max" if node.target in (torch.max, "max") else "min"
    if len(node.args) == 1 and not node.kwargs:
        return Call(REDUCTIONS["a" + fn], (node.args[0],))
    if len(node.args) == 2 and not node.kwargs and _is_tensor(node.args[1]):
        return Call(torch.maximum if fn == "max" else torch.minimum, tuple(node.args))
    return None


def _softmax(node: fx.Node, fn: Callable[..., Any]) -> Call | None:
    if node.target in (F.softmax, F.log_softmax):
        bound = _bind(
            node, ("input", "dim", "_stacklevel", "dtype"), {"_stacklevel": 3, "dtype": None}
        )
    else:
        bound = _bind(node, ("input", "dim", "dtype"), {"dtype": None})
    if bound is None:
        return None
    dim = _one_dim(bound["input"], bound["dim"])
    if dim is None:
        return None  # F.softmax(x) without dim picks one implicitly: left as written
    dtype = (("dtype", bound["dtype"]),) if bound["dtype"] is not None else ()
    new = Call(fn, (bound["input"], dim), dtype)
    if node.target is fn and node.args == new.args and tuple(node.kwargs.items()) == dtype:
        return None
    return new


def _clamp(x: Any, lo: Any, hi: Any) -> Call | None:
    if (lo is not None and scalar(lo) is None) or (hi is not None and scalar(hi) is None):
        return None  # a tensor bound: left as written
    if lo is None and hi is None:
        return None
    if hi is None and scalar(lo) == 0.0 and _floating(x):
        return Call(torch.relu, (x,))
    return Call(torch.clamp, (x, lo, hi))


def _floating(x: Any) -> bool:
    """Whether ``x``'s propagated dtype is a floating-point one (``clamp`` of an integer tensor
    by a float promotes; ``relu`` does not)."""
    meta = x.meta.get("tensor_meta") if isinstance(x, fx.Node) else None
    dtype = getattr(meta, "dtype", None)
    return isinstance(dtype, torch.dtype) and dtype.is_floating_point


def _in_place_ok(node: fx.Node, inplace: Any) -> bool:
    """Whether an op's in-place flag lets its out-of-place form replace it."""
    if inplace is False:
        return True
    x = node.args[0] if node.args else None
    return inplace is True and isinstance(x, fx.Node) and only_user(x) is node


def _call_function(node: fx.Node) -> Call | None:
    target = node.target
    if target in _ARITHMETIC:
        return _arithmetic(node, _ARITHMETIC[target])
    if target in (operator.matmul, torch.mm, torch.bmm) and len(node.args) == 2:
        return Call(torch.matmul, tuple(node.args)) if not node.kwargs else None
    if target is torch.matmul:
        return None
    if target is torch.neg and len(node.args) == 1 and not node.kwargs:
        return Call(operator.neg, (node.args[0],))
    if target is torch.einsum:
        return _einsum(node)
    for kind, fn in REDUCTIONS.items():
        if target is fn:
            return _reduction(node, kind)
    if target in (torch.max, torch.min):
        return _max_of_tensors(node)
    if target in (torch.softmax, F.softmax):
        return _softmax(node, torch.softmax)
    if target in (torch.log_softmax, F.log_softmax):
        return _softmax(node, torch.log_softmax)
    if target in (F.relu, torch.relu):
        bound = _bind(node, ("input", "inplace"), {"inplace": False})
        if target is torch.relu or bound is None or not _in_place_ok(node, bound["inplace"]):
            return None
        return Call(torch.relu, (bound["input"],))
    if target in (F.hardtanh, F.relu6):
        names = ("input", "min_val", "max_val", "inplace")
        bound = _bind(node, names if target is F.hardtanh else ("input", "inplace"), {
            "min_val": -1.0 if target is F.hardtanh else 0.0,
            "max_val": 1.0 if target is F.hardtanh else 6.0,
            "inplace": False,
        })  # fmt: skip
        if bound is None or not _in_place_ok(node, bound["inplace"]):
            return None
        return _clamp(bound["input"], bound["min_val"], bound["max_val"])
    if target in (torch.clamp, torch.clip, torch.clamp_min, torch.clamp_max):
        return _clamp_call(node, target)
    if target in (F.tanh, F.sigmoid) and len(node.args) == 1 and not node.kwargs:
        return Call(torch.tanh if target is F.tanh else torch.sigmoid, (node.args[0],))
    if target in (torch.transpose, torch.swapaxes, torch.swapdims, torch.t):
        return _transpose(node)
    if target in (torch.diag, torch.tril, torch.triu):
        return _diagonal_op(node, target)
    if target in (F.leaky_relu, F.gelu, F.silu, F.mish, F.hardswish, F.elu, F.softplus):
        return _activation_keywords(node)
    if target in MAX_POOL_FN or target in AVG_POOL_FN:
        return _pool_call(node)
    if target in CONV_FN:
        return _conv_call(node)
    if target in (torch.cumsum, torch.cumprod):
        return _scan_call(node, target)
    if target is torch.flip:
        return _flip_call(node)
    return None


def _scan_call(node: fx.Node, fn: Callable[..., Any]) -> Call | None:
    """``cumsum``/``cumprod`` as ``torch.cumsum(x, dim)`` with ``dim`` non-negative where the
    rank is known (a ``dtype`` argument computes in another type: left as written)."""
    bound = _bind(node, ("input", "dim", "dtype"), {"dtype": None})
    if bound is None or bound["dtype"] is not None:
        return None
    dim = _one_dim(bound["input"], bound["dim"])
    if dim is None:
        return None
    new = Call(fn, (bound["input"], dim))
    if node.target is fn and node.args == new.args and not node.kwargs:
        return None
    return new


def _flip_call(node: fx.Node) -> Call | None:
    """``x.flip(d)``, ``x.flip(d0, d1)``, ``torch.flip(x, dims=[d])`` as ``torch.flip(x, dims)``
    with ``dims`` a sorted tuple of non-negative ints where the rank is known."""
    if node.kwargs:
        bound = _bind(node, ("input", "dims"), {})
        if bound is None:
            return None
        x, dims = bound["input"], bound["dims"]
    elif len(node.args) == 2:
        x, dims = node.args
    elif len(node.args) > 2 and node.op == "call_method":
        x, dims = node.args[0], node.args[1:]
    else:
        return None
    normal = normal_dims(x, dims)
    if normal is None:
        return None
    new = Call(torch.flip, (x, normal))
    if node.target is torch.flip and node.args == new.args:
        return None
    return new


def _conv_call(node: fx.Node) -> Call | None:
    """A functional convolution with every argument positional, defaults filled in."""
    names = ("input", "weight", "bias", "stride", "padding", "dilation", "groups")
    defaults = {"bias": None, "stride": 1, "padding": 0, "dilation": 1, "groups": 1}
    bound = _bind(node, names, defaults)
    if bound is None:
        return None
    args = tuple(bound[n] for n in names)
    return None if node.args == args and not node.kwargs else Call(node.target, args)  # type: ignore[arg-type]


def _arithmetic(node: fx.Node, fn: Callable[..., Any]) -> Call | None:
    """``torch.add(x, y)``, ``x.mul(y)`` ... as ``operator`` calls (no ``alpha``, no
    ``rounding_mode``: those compute something else)."""
    if len(node.args) != 2:
        return None
    kwargs = dict(node.kwargs)
    if kwargs.pop("alpha", 1) != 1 or kwargs.pop("rounding_mode", None) is not None or kwargs:
        return None
    return Call(fn, tuple(node.args))


def _clamp_call(node: fx.Node, target: Any) -> Call | None:
    if target in (torch.clamp_min, "clamp_min"):
        bound = _bind(node, ("input", "min"), {})
        return _clamp(bound["input"], bound["min"], None) if bound else None
    if target in (torch.clamp_max, "clamp_max"):
        bound = _bind(node, ("input", "max"), {})
        return _clamp(bound["input"], None, bound["max"]) if bound else None
    bound = _bind(node, ("input", "min", "max"), {"min": None, "max": None})
    if bound is None:
        return None
    new = _clamp(bound["input"], bound["min"], bound["max"])
    if new is not None and new.target is node.target and new.args == node.args and not node.kwargs:
        return None
    return new


def _activation_keywords(node: fx.Node) -> Call | None:
    """A functional activation with its arguments made keywords, defaults filled in."""
    target = node.target
    names: dict[Any, tuple[tuple[str, Any], ...]] = {
        F.leaky_relu: (("negative_slope", 0.01), ("inplace", False)),
        F.gelu: (("approximate", "none"),),
        F.silu: (("inplace", False),),
        F.mish: (("inplace", False),),
        F.hardswish: (("inplace", False),),
        F.elu: (("alpha", 1.0), ("inplace", False)),
        F.softplus: (("beta", 1.0), ("threshold", 20.0)),
    }
    params = names[target]
    bound = _bind(node, ("input", *(n for n, _ in params)), dict(params))
    if bound is None or not _in_place_ok(node, bound.get("inplace", False)):
        return None
    kwargs = tuple((n, bound[n]) for n, _ in params if n != "inplace")
    new = Call(target, (bound["input"],), kwargs)  # type: ignore[arg-type]
    if node.args == new.args and tuple(node.kwargs.items()) == new.kwargs:
        return None
    return new


def _pool_call(node: fx.Node) -> Call | None:
    """A functional pool with its arguments positional and ``stride=None`` made explicit."""
    names: tuple[str, ...]
    if node.target in MAX_POOL_FN:
        names = ("input", "kernel_size", "stride", "padding", "dilation", "ceil_mode",
                 "return_indices")  # fmt: skip
        defaults = {"stride": None, "padding": 0, "dilation": 1, "ceil_mode": False,
                    "return_indices": False}  # fmt: skip
    elif node.target is F.avg_pool1d:
        names = ("input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad")
        defaults = {"stride": None, "padding": 0, "ceil_mode": False, "count_include_pad": True}
    else:
        names = ("input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                 "divisor_override")  # fmt: skip
        defaults = {"stride": None, "padding": 0, "ceil_mode": False, "count_include_pad": True,
                    "divisor_override": None}  # fmt: skip
    bound = _bind(node, names, defaults)
    if bound is None or bound.get("return_indices"):
        return None
    if bound["stride"] is None or bound["stride"] == [] or bound["stride"] == ():
        bound["stride"] = bound["kernel_size"]
    args = tuple(bound[n] for n in names if n != "return_indices")
    if node.args == args and not node.kwargs:
        return None
    return Call(node.target, args)  # type: ignore[arg-type]


def _transpose(node: fx.Node) -> Call | None:
    if node.target in (torch.t, "t"):
        if len(node.args) != 1 or node.kwargs or _rank(node.args[0]) != 2:
            return None
        return Call(torch.transpose, (node.args[0], 0, 1))
    bound = _bind(node, ("input", "dim0", "dim1"), {})
    if bound is None:
        bound = _bind(node, ("input", "axis0", "axis1"), {})
        if bound is None:
            return None
        bound = {"input": bound["input"], "dim0": bound["axis0"], "dim1": bound["axis1"]}
    x, d0, d1 = bound["input"], bound["dim0"], bound["dim1"]
    if type(d0) is not int or type(d1) is not int:
        return None
    rank = _rank(x)
    if rank is not None and rank > 0:
        d0, d1 = d0 % rank, d1 % rank
    if d0 == d1:
        return None
    d0, d1 = min(d0, d1), max(d0, d1)
    new = Call(torch.transpose, (x, d0, d1))
    if node.target is torch.transpose and node.args == new.args and not node.kwargs:
        return None
    return new


def _permute_as_transpose(node: fx.Node) -> Call | None:
    """``x.permute(...)`` that swaps exactly two dimensions, as a transpose."""
    dims: tuple[Any, ...] = tuple(node.args[1:])
    if len(dims) == 1 and isinstance(dims[0], list | tuple):
        dims = tuple(dims[0])
    rank = _rank(node.args[0])
    if node.kwargs or rank is None or len(dims) != rank or not all(type(d) is int for d in dims):
        return None
    order = [d % rank for d in dims]
    moved = [i for i, d in enumerate(order) if d != i]
    if len(moved) != 2 or order[moved[0]] != moved[1]:
        return None
    return Call(torch.transpose, (node.args[0], moved[0], moved[1]))


def _diagonal_op(node: fx.Node, target: Any) -> Call | None:
    bound = _bind(node, ("input", "diagonal"), {"diagonal": 0})
    if bound is None or type(bound["diagonal"]) is not int:
        return None
    new = Call(target, (bound["input"], bound["diagonal"]))
    if node.target is target and node.args == new.args and not node.kwargs:
        return None
    return new


_EINSUM = re.compile(r"^([a-z]*),([a-z]*)->([a-z]*)$")


def _einsum(node: fx.Node) -> Call | None:
    """A two-operand ``einsum`` that is a (batched) matrix product, as ``torch.matmul`` (with
    a transposed operand where the subscripts say so). Others are left as written."""
    args = node.args
    if node.kwargs or len(args) not in (2, 3) or not isinstance(args[0], str):
        return None
    operands = list(args[1]) if len(args) == 2 and isinstance(args[1], list | tuple) else args[1:]
    match = _EINSUM.match(args[0].replace(" ", ""))
    if match is None or len(operands) != 2:
        return None
    sa, sb, out = match.groups()
    a, b = operands
    if _rank(a) != len(sa) or _rank(b) != len(sb) or len(sa) < 2 or len(sb) < 2:
        return None
    if len(set(sa)) != len(sa) or len(set(sb)) != len(sb) or len(set(out)) != len(out):
        return None
    batch = out[:-2]
    if len(sa) != len(sb) or sa[:-2] != batch or sb[:-2] != batch or len(out) != len(sa):
        return None
    i, k = out[-2], out[-1]
    shared = set(sa[-2:]) & set(sb[-2:])
    if len(shared) != 1:
        return None
    j = shared.pop()
    if j in out or {i, j} != set(sa[-2:]) or {j, k} != set(sb[-2:]):
        return None
    return Call(
        torch.matmul, (("T", a) if sa[-2:] != i + j else a, ("T", b) if sb[-2:] != j + k else b)
    )


def _call_method(node: fx.Node) -> Call | None:
    name = str(node.target)
    if name in _ARITHMETIC:
        return _arithmetic(node, _ARITHMETIC[name])
    if name in ("matmul", "mm", "bmm") and len(node.args) == 2 and not node.kwargs:
        return Call(torch.matmul, tuple(node.args))
    if name == "neg" and len(node.args) == 1 and not node.kwargs:
        return Call(operator.neg, (node.args[0],))
    if name in REDUCTIONS:
        return _reduction(node, name)
    if name in ("max", "min"):
        return _max_of_tensors(node)
    if name in ("softmax", "log_softmax"):
        return _softmax(node, torch.softmax if name == "softmax" else torch.log_softmax)
    if name in UNARY and len(node.args) == 1 and not node.kwargs:
        return Call(UNARY[name], (node.args[0],))
    if name == "relu_" and _in_place_ok(node, True):
        return Call(torch.relu, (node.args[0],))
    if name in ("clamp", "clip", "clamp_min", "clamp_max"):
        return _clamp_call(node, name)
    if name in ("t", "transpose", "swapaxes", "swapdims"):
        return _transpose(node)
    if name == "permute":
        return _permute_as_transpose(node)
    if name in ("diag", "tril", "triu"):
        return _diagonal_op(node, getattr(torch, name))
    if name in ("cumsum", "cumprod"):
        return _scan_call(node, getattr(torch, name))
    if name == "flip":
        return _flip_call(node)
    return None


def _attribute(node: fx.Node) -> Call | None:
    """``x.T`` (of a matrix) and ``x.mT`` as transposes."""
    if len(node.args) != 2 or node.args[1] not in ("T", "mT"):
        return None
    x = node.args[0]
    rank = _rank(x)
    if rank is None or rank < 2 or (node.args[1] == "T" and rank != 2):
        return None
    return Call(torch.transpose, (x, rank - 2, rank - 1))


def _call_module(gm: fx.GraphModule, node: fx.Node) -> Call | None:
    mod = module_of(gm, node)
    if not plain_torch_layer(mod) or node.kwargs or len(node.args) != 1:
        return None
    x = node.args[0]
    if isinstance(mod, nn.Identity):
        return Call(None, value=x)
    if isinstance(mod, nn.ReLU):
        return Call(torch.relu, (x,)) if _in_place_ok(node, mod.inplace) else None
    if isinstance(mod, nn.Hardtanh):  # ReLU6 is a Hardtanh
        return _clamp(x, mod.min_val, mod.max_val) if _in_place_ok(node, mod.inplace) else None
    if isinstance(mod, nn.Softmax | nn.LogSoftmax) and mod.dim is not None:
        dim = _one_dim(x, mod.dim)
        fn = torch.softmax if isinstance(mod, nn.Softmax) else torch.log_softmax
        return Call(fn, (x, dim)) if dim is not None else None
    simple: dict[type, Callable[..., Any]] = {nn.Tanh: torch.tanh, nn.Sigmoid: torch.sigmoid}
    for cls, fn in simple.items():
        if type(mod) is cls:
            return Call(fn, (x,))
    keyword: dict[type, tuple[Callable[..., Any], tuple[str, ...]]] = {
        nn.LeakyReLU: (F.leaky_relu, ("negative_slope",)),
        nn.GELU: (F.gelu, ("approximate",)),
        nn.SiLU: (F.silu, ()),
        nn.Mish: (F.mish, ()),
        nn.Hardswish: (F.hardswish, ()),
        nn.ELU: (F.elu, ("alpha",)),
        nn.Softplus: (F.softplus, ("beta", "threshold")),
    }
    for cls, (fn, attrs) in keyword.items():
        if type(mod) is cls:
            if not _in_place_ok(node, getattr(mod, "inplace", False)):
                return None
            return Call(fn, (x,), tuple((a, getattr(mod, a)) for a in attrs))
    pool_kinds: tuple[tuple[dict[Any, Callable[..., Any]], bool], ...] = (
        (_MAX_POOLS, True),
        (_AVG_POOLS, False),
    )
    for pools, with_indices in pool_kinds:
        fn_pool = pools.get(type(mod))
        if fn_pool is None:
            continue
        names: tuple[str, ...]
        if with_indices:
            if mod.return_indices:  # type: ignore[union-attr]
                return None
            names = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")
        else:
            names = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad")
            names += ("divisor_override",) if fn_pool is not F.avg_pool1d else ()
        values = [getattr(mod, n) for n in names]
        values[1] = values[1] or values[0]  # stride None or empty: the window
        return Call(fn_pool, (x, *values))
    return None


def _canonical(gm: fx.GraphModule, node: fx.Node) -> Call | None:
    """The canonical call for ``node`` (None: already canonical, or not an op we know)."""
    if node.op == "call_function":
        if node.target is getattr:
            return _attribute(node) or _max_values(node)
        if node.target is operator.getitem:
            return _max_values(node)
        return _call_function(node)
    if node.op == "call_method":
        return _call_method(node)
    if node.op == "call_module":
        return _call_module(gm, node)
    return None


def canonicalize(gm: fx.GraphModule) -> int:
    """Rewrite every op of ``gm`` in its canonical spelling (see the module docstring), in
    place; the number of nodes rewritten. Propagated shapes are kept: a canonical node
    computes its original's value, so it takes the original's ``meta``."""
    count = 0
    g = gm.graph
    for node in list(g.nodes):
        new_call = _canonical(gm, node)
        if new_call is None:
            continue
        if new_call.target is None:
            node.replace_all_uses_with(new_call.value)
            count += 1
            continue
        with g.inserting_before(node):
            args = tuple(_transposed_operand(g, a) for a in new_call.args)
            new = g.call_function(new_call.target, args, dict(new_call.kwargs))
        new.meta = dict(node.meta)
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


def _transposed_operand(g: fx.Graph, value: Any) -> Any:
    """An einsum operand marked ``("T", x)``: ``x`` with its last two dimensions swapped."""
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "T":
        x = value[1]
        rank = _rank(x) or 2
        node = g.call_function(torch.transpose, (x, rank - 2, rank - 1))
        if shape_of(x) is not None:
            meta = x.meta["tensor_meta"]
            shape = list(meta.shape)
            shape[-2], shape[-1] = shape[-1], shape[-2]
            node.meta["tensor_meta"] = meta._replace(shape=torch.Size(shape), stride=())
        return node
    return value


# --------------------------------------------------------------------------- views for rules


@dataclass(frozen=True)
class Reduction:
    """A canonical reduction: ``kind`` over ``dims`` (None: every dimension)."""

    kind: str
    x: Any
    dims: tuple[int, ...] | None
    keepdim: bool


def reduction(node: Any, *kinds: str) -> Reduction | None:
    """The canonical reduction ``node`` is (one of ``kinds``, default any), without a
    ``dtype`` argument; None otherwise."""
    if not isinstance(node, fx.Node) or node.op != "call_function" or node.kwargs:
        return None
    kind = next((k for k, fn in REDUCTIONS.items() if fn is node.target), None)
    if kind is None or (kinds and kind not in kinds):
        return None
    if len(node.args) == 1:
        return Reduction(kind, node.args[0], None, False)
    if len(node.args) != 3:
        return None
    dims: Any = node.args[1]
    return Reduction(kind, node.args[0], tuple(dims), bool(node.args[2]))


def is_call(node: Any, *targets: Callable[..., Any]) -> bool:
    """Whether ``node`` is a ``call_function`` of one of ``targets`` (canonical forms are all
    function calls)."""
    return isinstance(node, fx.Node) and node.op == "call_function" and node.target in targets


def constant_scale(node: Any) -> tuple[Any, float] | None:
    """``(x, c)`` when ``node`` is ``x * c``, ``c * x`` or ``x / c`` for a Python number ``c``
    (``x / c`` reads as ``x * (1 / c)``, which a rule may only use where reassociation is
    allowed); None otherwise."""
    if not is_call(node, operator.mul, operator.truediv) or len(node.args) != 2:
        return None
    a, b = node.args
    if node.target is operator.truediv:
        c = scalar(b)
        return (a, 1.0 / c) if isinstance(a, fx.Node) and c not in (None, 0.0) else None
    for x, c in ((a, scalar(b)), (b, scalar(a))):
        if isinstance(x, fx.Node) and c is not None:
            return x, c
    return None


def linear_parts(gm: fx.GraphModule, node: Any) -> tuple[Any, Any, Any] | None:
    """``(input, weight, bias)`` of a linear layer however it is written: an ``nn.Linear``
    call, ``F.linear``, or ``x @ P.T (+ b)`` / ``x @ P (+ b)`` with ``P`` a 2-D parameter or
    buffer (the weight is then ``P``, resp. ``P``'s transpose, as an FX value). The bias may be
    None. Weight nodes a match needs (``get_attr`` of a layer's parameters, a transpose) are
    made here, before ``node``; :func:`is_linear` asks without adding any."""
    match = _linear_match(gm, node)
    if match is None:
        return None
    x, weight, bias, how = match
    g = gm.graph
    with g.inserting_before(node):
        if how == "layer":
            weight = g.get_attr(weight)
            bias = g.get_attr(bias) if bias is not None else None
        elif how == "transpose":
            weight = g.call_function(torch.transpose, (weight, 0, 1))
    return x, weight, bias


def is_linear(gm: fx.GraphModule, node: Any) -> bool:
    """Whether ``node`` is a linear layer in any spelling :func:`linear_parts` reads."""
    return _linear_match(gm, node) is not None


def _linear_match(gm: fx.GraphModule, node: Any) -> tuple[Any, Any, Any, str] | None:
    """``(x, weight, bias, how)``: ``how`` is "layer" (weight and bias are attribute names),
    "transpose" (the weight is the transpose of the value given) or "value"."""
    if not isinstance(node, fx.Node):
        return None
    bias: Any = None
    mod = module_of(gm, node)
    if isinstance(mod, nn.Linear):
        if len(node.args) != 1 or node.kwargs:
            return None
        bias = f"{node.target}.bias" if mod.bias is not None else None
        return node.args[0], f"{node.target}.weight", bias, "layer"
    if is_call(node, F.linear):
        bound = _bind(node, ("input", "weight", "bias"), {"bias": None})
        return (bound["input"], bound["weight"], bound["bias"], "value") if bound else None
    product: Any = node
    if is_call(node, operator.add) and len(node.args) == 2:
        pairs: Any = (node.args, node.args[::-1])
        for p, b in pairs:
            if is_call(p, torch.matmul) and only_user(p) is node and _rank(b) == 1:
                product, bias = p, b
                break
        else:
            return None
    if not is_call(product, torch.matmul) or len(product.args) != 2:
        return None
    x: Any = product.args[0]
    w: Any = product.args[1]
    if _rank(x) is None:
        return None
    if is_call(w, torch.transpose) and w.args[1:] == (0, 1) and _is_parameter(w.args[0]):
        weight, features, how = w.args[0], _shape(w.args[0])[0], "value"
    elif _is_parameter(w):
        weight, features, how = w, _shape(w)[1], "transpose"
    else:
        return None
    if bias is not None and shape_of(bias) != (features,):
        return None
    return x, weight, bias, how


def _shape(node: Any) -> tuple[int, ...]:
    """The propagated shape of a node known to have one."""
    shape = shape_of(node)
    assert shape is not None
    return shape


def _is_parameter(node: Any) -> bool:
    """Whether ``node`` reads a 2-D parameter or buffer of the model."""
    return isinstance(node, fx.Node) and node.op == "get_attr" and _rank(node) == 2
