"""The graph rewrites: each a named transformation of the module-level FX graph.

Every rule is a function ``rule(gm) -> int`` that rewrites ``gm`` in place and returns how many
sites it changed (0: the pattern is absent). Matching is by graph structure (and propagated
shapes where a rule says so), never by a problem's name or sizes. Each docstring says why the
result is faster and how exact it is:

* **bit-exact**: the same floating-point operations on the same values, or the removed work
  provably did not change the result;
* **reassociation**: the same mathematics in another order; rounding differs at the ulp level
  and the gates (strict tolerance, else the float64 referee) decide.

Parameters are never copied: folded weights are derived in ``forward`` from the layers' own
parameters (a weight-sized computation, small beside the activation work), so a candidate stays
right whenever its ``state_dict`` is reloaded.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from kernelopt_jupyter.agents.rewrites.algebra import algebra
from kernelopt_jupyter.agents.rewrites.canonical import (
    CONV_FN,
    MAX_POOL_FN,
    constant_scale,
    is_call,
    is_linear,
    linear_parts,
    reduction,
)
from kernelopt_jupyter.agents.rewrites.conv_transpose_rule import conv_transpose_kernel
from kernelopt_jupyter.agents.rewrites.family_rules import (
    arg_reduce_kernel,
    batch_norm_kernel,
    instance_norm_kernel,
    layer_norm_kernel,
    loss_kernel,
    max_pool_kernel,
    pointwise_kernel,
    rms_norm_kernel,
    scan_kernel,
)
from kernelopt_jupyter.agents.rewrites.graph import (
    arg,
    cleanup,
    kernel_dtype,
    module_of,
    only_user,
    scalar,
    shape_of,
)
from kernelopt_jupyter.agents.rewrites.helpers import (
    kernelopt_gram,
    kernelopt_tril_matmul,
    kernelopt_triu_matmul,
)
from kernelopt_jupyter.agents.rewrites.kept_libraries import (
    liger_group_norm_rule,
    liger_layer_norm_rule,
    liger_loss_rule,
    liger_rms_norm_rule,
)


@dataclass(frozen=True)
class Rewrite:
    """A named graph rewrite: what it does, how exact it is, and how its candidate is built."""

    name: str
    title: str
    exact: str  # "bit-exact" | "reassociation"
    apply: Callable[[fx.GraphModule], int]
    #: The win is a vendor-library entry point Inductor would decompose again (or one of
    #: KernelOPT's own kernels), so the candidate is the rewritten eager forward rather than
    #: an Inductor harvest of it.
    eager_only: bool = False
    #: The rewrite calls one of KernelOPT's own Triton kernels (``kernels.py``): its candidate
    #: launches that kernel, so it is not dispatch-only.
    kernels: bool = False
    #: The rewrite routes ops to a kept kernel library (``kept_libraries.py``): tried alone,
    #: never combined with the rules that put the same sites in KernelOPT's own kernels.
    kept_library: bool = False


def _nodes(g: fx.Graph) -> list[fx.Node]:
    """A snapshot of the graph's nodes (rules insert while they walk)."""
    return list(g.nodes)


def _call(g: fx.Graph, fn: Any, *args: Any, **kwargs: Any) -> fx.Node:
    return g.call_function(fn, tuple(args), kwargs)


def _method(g: fx.Graph, name: str, *args: Any, **kwargs: Any) -> fx.Node:
    return g.call_method(name, tuple(args), kwargs)


# --------------------------------------------------------------------------- structured GEMMs


def _diag_vector(node: Any) -> Any:
    """The 1-D vector ``v`` when ``node`` is ``torch.diag(v, 0)``, else None."""
    if is_call(node, torch.diag):
        if node.args[1:] != (0,):
            return None
        vec = node.args[0]
        shape = shape_of(vec)
        return vec if shape is not None and len(shape) == 1 else None
    return None


def diag_matmul(gm: fx.GraphModule) -> int:
    """``diag(v) @ B`` -> ``v[:, None] * B`` and ``A @ diag(v)`` -> ``A * v``.

    Faster: the dense product reads an n x n matrix that is zero off its diagonal and spends
    2n^2m FLOPs on it; the broadcast multiply is one pass over ``B``. Bit-exact for finite
    values: each output is the single non-zero product (the dropped terms are exact zeros).
    Needs the vector's shape (propagated) to tell ``diag`` of a vector from ``diag`` of a matrix.
    """
    count = 0
    g = gm.graph
    for node in _nodes(g):
        if not is_call(node, torch.matmul):
            continue
        a, b = node.args
        with g.inserting_before(node):
            left, right = _diag_vector(a), _diag_vector(b)
            if left is not None and len(shape_of(b) or ()) == 1:
                new = _call(g, operator.mul, left, b)  # diag(v) @ b for a vector b is v * b
            elif left is not None and len(shape_of(b) or ()) >= 2:
                new = _call(g, operator.mul, _method(g, "unsqueeze", left, -1), b)
            elif right is not None:
                new = _call(g, operator.mul, a, right)
            else:
                continue
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


def triangular_matmul(gm: fx.GraphModule) -> int:
    """``tril(A @ B)`` / ``triu(A @ B)`` -> a banded GEMM computing only the kept triangle.

    Faster: the masked half of the dense product is never computed (about 40-45% fewer FLOPs
    at eight bands; the bands stay large GEMMs). Exact up to the GEMM's summation order (each
    kept element is the same dot product), so it counts as a reassociation. Both operands must
    be 2-D (propagated shapes) and the product used only by the mask.
    """
    count = 0
    g = gm.graph
    for node in _nodes(g):
        if not is_call(node, torch.tril, torch.triu):
            continue
        prod: Any = node.args[0]
        if not is_call(prod, torch.matmul) or only_user(prod) is not node:
            continue
        a, b = prod.args
        if any(s is None or len(s) != 2 for s in (shape_of(a), shape_of(b))):
            continue
        diagonal = node.args[1]
        helper = kernelopt_tril_matmul if node.target is torch.tril else kernelopt_triu_matmul
        with g.inserting_before(node):
            new = _call(g, helper, a, b, diagonal)
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


#: Below this many rows a Gram product is not cut into bands (the helper's own threshold).
GRAM_MIN_ROWS = 1024


def symmetric_gram(gm: fx.GraphModule) -> int:
    """``A @ A^T`` and ``A^T @ A`` -> a banded product of the lower triangle, mirrored.

    Faster where the GEMM is compute-bound: a Gram matrix is symmetric, so the blocks above its
    diagonal are transposes of blocks below it. About 44% of the FLOPs are skipped at eight
    bands, for one extra pass over the upper triangle. Exact up to summation order (a mirrored
    element is the same dot product with its factors swapped): a reassociation. Fires on
    ``matmul``/``mm``/``@`` of a tensor with its own last-two-dimension transpose (``.t()``,
    ``.T``, ``.mT``, ``transpose(-1, -2)``), for at least ``GRAM_MIN_ROWS`` output rows.
    """
    count = 0
    g = gm.graph
    for node in _nodes(g):
        if not is_call(node, torch.matmul):
            continue
        a, b = node.args
        if _transposed_of(b) is a and a is not None:
            base, swap = a, False  # A @ A^T
        elif _transposed_of(a) is b and b is not None:
            base, swap = b, True  # A^T @ A: the Gram of A^T
        else:
            continue
        shape = shape_of(base)
        if shape is None or len(shape) < 2:
            continue
        rows = shape[-1] if swap else shape[-2]
        if rows < GRAM_MIN_ROWS:
            continue
        with g.inserting_before(node):
            operand = a if swap else base  # A^T @ A is gram(A^T), and a is that A^T
            new = _call(g, kernelopt_gram, operand)
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


def _transposed_of(node: Any) -> Any:
    """``k`` when ``node`` is ``k`` with its last two dimensions swapped, else None."""
    if not is_call(node, torch.transpose):
        return None
    shape = shape_of(node.args[0])
    if shape is None or len(shape) < 2:
        return None
    return node.args[0] if node.args[1:] == (len(shape) - 2, len(shape) - 1) else None


def _scores_and_scale(node: Any) -> tuple[Any, Any]:
    """``(qk, scale)`` for ``qk``, ``qk / c``, ``qk * c`` or ``c * qk``; scale None if unscaled."""
    scaled = constant_scale(node)
    if scaled is not None:
        return scaled
    if is_call(node, operator.truediv) and isinstance(node.args[0], fx.Node):
        b = node.args[1]
        if isinstance(b, fx.Node) and shape_of(b) is None and b.op == "call_function":
            return node.args[0], ("reciprocal", b)  # a Python number computed in forward
    return node, None


def attention_to_sdpa(gm: fx.GraphModule) -> int:
    """``softmax(Q K^T * s) V`` written out -> ``scaled_dot_product_attention(Q, K, V, scale=s)``.

    Faster: the attention kernel (flash/memory-efficient, fp32 capable) never writes the L x S
    score and probability matrices to memory; the written-out chain moves them three or four
    times. A reassociation: the fused kernel normalises with a running maximum (online softmax),
    the same mathematics in another order. Only an unmasked chain with a scalar scale on the
    last dimension is matched; every intermediate must feed only the next step.
    """
    count = 0
    g = gm.graph
    for node in _nodes(g):
        if not is_call(node, torch.matmul):
            continue
        probs: Any = node.args[0]
        v: Any = node.args[1]
        if not is_call(probs, torch.softmax) or only_user(probs) is not node or probs.kwargs:
            continue
        scores: Any = probs.args[0]
        soft_dim = probs.args[1]
        if not isinstance(scores, fx.Node) or only_user(scores) is not probs:
            continue
        rank = len(shape_of(scores) or ())
        if rank < 3 or soft_dim != rank - 1:
            continue
        qk, scale = _scores_and_scale(scores)
        if qk is not scores and only_user(qk) is not scores:
            continue
        if not is_call(qk, torch.matmul):
            continue
        q, kt = qk.args
        k = _transposed_of(kt)
        if k is None or only_user(kt) is not qk:
            continue
        if len({len(shape_of(t) or ()) for t in (q, k, v)}) != 1:
            continue
        with g.inserting_before(node):
            if isinstance(scale, tuple):
                scale = _call(g, operator.truediv, 1.0, scale[1])
            new = _call(
                g, F.scaled_dot_product_attention, q, k, v, scale=1.0 if scale is None else scale
            )
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


def _slice_index(node: Any) -> tuple[Any, int, int] | None:
    """``(x, dim, i)`` when ``node`` is ``x[:, ..., :, i]`` (a constant index on one dim)."""
    if not is_call(node, operator.getitem) or not isinstance(node.args[1], tuple):
        return None
    index = node.args[1]
    *lead, last = index
    full = slice(None, None, None)
    if not lead or any(s != full for s in lead) or not isinstance(last, int):
        return None
    return node.args[0], len(lead), last


def hoist_sliced_linear(gm: fx.GraphModule) -> int:
    """One linear layer applied to slices ``x[:, t]`` of one tensor -> once to ``x``, then sliced.

    ``[layer(x[:, t]) for t in steps] == [layer(x)[:, t] for t in steps]``: an RNN's input
    projection, unrolled over time steps, becomes one GEMM over all steps. Faster: one large
    GEMM instead of a small one per step (better use of the tensor cores' tiles and one launch
    instead of many). Each output is the same dot product (a reassociation at most, from the
    GEMM's choice of kernel). The slices must index a dimension before the feature dimension.
    """
    count = 0
    g = gm.graph
    groups: dict[tuple[str, Any, int], list[fx.Node]] = {}
    for node in _nodes(g):
        if not isinstance(module_of(gm, node), nn.Linear) or len(node.args) != 1:
            continue
        sliced = _slice_index(node.args[0])
        if sliced is None:
            continue
        x, dim, _i = sliced
        rank = len(shape_of(x) or ())
        if rank < 2 or dim >= rank - 1:
            continue
        groups.setdefault((str(node.target), x, dim), []).append(node)
    for (target, x, _dim), calls in groups.items():
        if len(calls) < 2:
            continue
        first = calls[0]
        with g.inserting_before(first):
            whole = g.call_module(target, (x,))
        for call in calls:
            index = call.args[0].args[1]  # type: ignore[union-attr]
            with g.inserting_before(call):
                part = _call(g, operator.getitem, whole, index)
            call.replace_all_uses_with(part)
            count += 1
    if count:
        cleanup(gm)
    return count


# --------------------------------------------------------------------------- reductions of GEMMs


def _reduced_dim(node: Any) -> tuple[str, int, bool] | None:
    """``(kind, dim, keepdim)`` of a canonical sum/mean over one dimension, else None."""
    red = reduction(node, "sum", "mean")
    if red is None or red.dims is None or len(red.dims) != 1:
        return None
    return red.kind, red.dims[0], red.keepdim


def linear_reduction(gm: fx.GraphModule) -> int:
    """A sum/mean over a linear layer's output features folded into its weights.

    ``sum_j (x W^T + b)_j == x @ W.sum(0) + b.sum()`` (``mean`` likewise with means), and for a
    plain product ``(A @ M).sum(-1) == A @ M.sum(-1)``, ``(A @ M).sum(-2) == A.sum(-2) @ M``.
    Faster: the m x n x k GEMM becomes a matrix-vector product plus a weight-sized reduction
    (derived in ``forward``, so reloaded weights are honoured). A reassociation: the same sums
    in another order.
    """
    count = 0
    g = gm.graph
    for node in _nodes(g):
        red = _reduced_dim(node)
        if red is None:
            continue
        kind, dim, keepdim = red
        src = node.args[0]
        if not isinstance(src, fx.Node) or only_user(src) is not node:
            continue
        out_shape = shape_of(src)
        if out_shape is None:
            continue
        ndim = len(out_shape)
        d = dim % ndim if ndim else dim
        with g.inserting_before(node):
            lin = linear_parts(gm, src) if d == ndim - 1 and is_linear(gm, src) else None
            if lin is not None:
                x, w, b = lin
                wv = _method(g, kind, w, 0)
                new = _call(g, torch.matmul, x, wv)
                if b is not None:
                    new = _call(g, operator.add, new, _method(g, kind, b))
            elif is_call(src, torch.matmul) and ndim >= 2:
                a, m = src.args
                if d == ndim - 1 and len(shape_of(m) or ()) == 2:
                    new = _call(g, torch.matmul, a, _method(g, kind, m, -1))
                elif d == ndim - 2 and len(shape_of(a) or ()) == 2:
                    new = _call(g, torch.matmul, _method(g, kind, a, -2), m)
                    new = _method(g, "unsqueeze", new, -2) if keepdim else new
                    keepdim = False  # already shaped
                else:
                    continue
            else:
                continue
            if keepdim:
                new = _method(g, "unsqueeze", new, -1)
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


def _scaled(node: Any, user: fx.Node) -> tuple[Any, Any, float] | None:
    """``(x, op, c)`` when ``node`` is ``x * c``, ``c * x`` or ``x / c`` (``op`` the operator)
    read only by ``user``; None otherwise."""
    if only_user(node) is not user:
        return None
    return _scale_op(node)


def _scale_op(node: Any) -> tuple[Any, Any, float] | None:
    """``(x, op, c)`` when ``node`` is ``x * c``, ``c * x`` or ``x / c``; None otherwise."""
    scaled = constant_scale(node)
    if scaled is None:
        return None
    if node.target is operator.truediv:
        return scaled[0], operator.truediv, node.args[1]
    return scaled[0], operator.mul, scaled[1]


def _reads_inputs(node: fx.Node) -> bool:
    """Whether ``node``'s value depends on the forward's inputs (not only on weights)."""
    seen: set[fx.Node] = set()
    todo = [node]
    while todo:
        n = todo.pop()
        if n.op == "placeholder":
            return True
        if n not in seen:
            seen.add(n)
            todo.extend(n.all_input_nodes)
    return False


def _numel(node: Any) -> int | None:
    """Elements of a node's value per call; 0 for a parameter or buffer (a scale on it is
    derived once per load), None when unknown."""
    if isinstance(node, fx.Node) and node.op == "get_attr":
        return 0
    if is_call(node, torch.transpose) and node.args[0].op == "get_attr":
        return 0
    shape = shape_of(node)
    return None if shape is None else math.prod(shape)


def move_constant_scale(gm: fx.GraphModule) -> int:
    """A constant scale moved through linear maps to where it touches the fewest elements.

    ``sum(c * x) == c * sum(x)`` (``mean`` likewise, and ``x / c``); ``(c A) @ B == A @ (c B)
    == c (A @ B)``, the scale put on the smallest of ``A``, ``B`` and the product (a parameter
    counts as free: ``c W`` is derived once per load); ``linear(c x) == linear(x; c W)``.
    Faster: the scaling pass over the large tensor becomes one over a reduced tensor, an
    operand or a weight. A reassociation: the same products, rounded in another order.
    """
    count = 0
    g = gm.graph
    for node in _nodes(g):
        red = reduction(node, "sum", "mean")
        if red is not None:
            found = _scaled(red.x, node)
            if found is None or not _reads_inputs(red.x):
                continue  # a weight-only scale is derived once per load anyway
            x, op, c = found
            with g.inserting_before(node):
                inner = _call(g, node.target, x, *node.args[1:])
                new = _call(g, op, inner, c)
            inner.meta = dict(node.meta)
        elif is_call(node, torch.matmul):
            moved = _move_matmul_scale(g, node)
            if moved is None:
                continue
            node, new = moved
        elif is_linear(gm, node):
            # A layer or F.linear reads its input first; x @ W.T is the product case above.
            found = _scaled(node.args[0], node) if node.args else None
            if found is None:
                continue
            x, op, c = found
            with g.inserting_before(node):
                lin = linear_parts(gm, node)
                if lin is None:
                    continue
                new = _call(g, F.linear, x, _call(g, op, lin[1], c), lin[2])
        else:
            continue
        new.meta = dict(node.meta)
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


def _move_matmul_scale(g: fx.Graph, node: fx.Node) -> tuple[fx.Node, fx.Node] | None:
    """``(old, new)`` for a product with a constant scale on an operand or on its output,
    the scale moved onto the smallest of the three; None when it is there already."""
    if not _reads_inputs(node):
        return None  # a product of weights is derived once per load anyway
    a, b = node.args
    found_a, found_b = _scaled(a, node), _scaled(b, node)
    user = only_user(node)
    found_out = _scale_op(user)
    if found_out is not None and found_out[0] is not node:
        found_out = None
    scales = [f for f in (found_a, found_b, found_out) if f is not None]
    if len(scales) != 1:
        return None  # several scales: left to a second pass after this one moved
    _, op, c = scales[0]
    base_a = found_a[0] if found_a else a
    base_b = found_b[0] if found_b else b
    sizes = [_numel(base_a), _numel(base_b), _numel(node)]
    if any(s is None for s in sizes):
        return None
    where = min(range(3), key=lambda i: (sizes[i], i != 2))
    current = 0 if found_a else 1 if found_b else 2
    if where == current or sizes[where] >= sizes[current]:  # type: ignore[operator]
        return None
    old = user if found_out else node
    assert old is not None
    with g.inserting_before(old):
        if where == 0:
            new = _call(g, torch.matmul, _call(g, op, base_a, c), base_b)
        elif where == 1:
            new = _call(g, torch.matmul, base_a, _call(g, op, base_b, c))
        else:
            new = _call(g, op, _call(g, torch.matmul, base_a, base_b), c)
    return old, new


# --------------------------------------------------------------------------- folds into weights

_CONVS = (nn.Conv1d, nn.Conv2d, nn.Conv3d)
_CONV_FN = (F.conv1d, F.conv2d, F.conv3d)
_BNS = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)
_CONV_TS = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
_CONV_T_FN: tuple[Callable[..., Any], ...] = (
    F.conv_transpose1d,
    F.conv_transpose2d,
    F.conv_transpose3d,
)


def _conv_dims(mod: nn.Module) -> int:
    """Spatial dimensions of a convolution layer (1, 2 or 3)."""
    return next(i + 1 for i, cls in enumerate(_CONVS) if isinstance(mod, cls))


def conv_dims(gm: fx.GraphModule, node: Any) -> int | None:
    """Spatial dimensions of a (not transposed) convolution with zero padding, as an
    ``nn.ConvNd`` layer or a canonical ``F.convNd`` call alike; None for anything else."""
    if not isinstance(node, fx.Node):
        return None
    mod = module_of(gm, node)
    if isinstance(mod, _CONVS):
        return _conv_dims(mod) if mod.padding_mode == "zeros" else None
    if is_call(node, *CONV_FN) and len(node.args) == 7:
        return CONV_FN.index(node.target) + 1  # type: ignore[arg-type]
    return None


def _is_layer(gm: fx.GraphModule, node: Any) -> bool:
    """Whether ``node`` is a conv, transposed conv or linear layer a fold can write into."""
    return (
        conv_dims(gm, node) is not None
        or isinstance(module_of(gm, node), _CONV_TS)
        or is_linear(gm, node)
    )


def _layer_call(
    gm: fx.GraphModule, node: fx.Node, weight: fx.Node, bias: fx.Node | None
) -> fx.Node | None:
    """The same conv/linear call as ``node`` with another weight and bias (None: not a layer)."""
    mod = module_of(gm, node)
    g = gm.graph
    if isinstance(mod, _CONVS) and mod.padding_mode == "zeros":
        fn = _CONV_FN[_conv_dims(mod) - 1]
        return _call(
            g, fn, node.args[0], weight, bias, mod.stride, mod.padding, mod.dilation, mod.groups
        )
    if isinstance(mod, _CONV_TS) and mod.padding_mode == "zeros" and len(node.args) == 1:
        fn_t = _CONV_T_FN[next(i for i, c in enumerate(_CONV_TS) if isinstance(mod, c))]
        return _call(
            g,
            fn_t,
            node.args[0],
            weight,
            bias,
            mod.stride,
            mod.padding,
            mod.output_padding,
            mod.groups,
            mod.dilation,
        )
    if is_call(node, *CONV_FN) and len(node.args) == 7:
        return _call(g, node.target, node.args[0], weight, bias, *node.args[3:])
    if is_linear(gm, node):
        lin = linear_parts(gm, node)
        return _call(g, F.linear, lin[0], weight, bias) if lin is not None else None
    return None


def _layer_params(gm: fx.GraphModule, node: fx.Node) -> tuple[Any, Any] | None:
    """``(weight, bias)`` FX values of a conv or linear layer call, else None."""
    mod = module_of(gm, node)
    g = gm.graph
    if isinstance(mod, (*_CONVS, *_CONV_TS)):
        if mod.padding_mode != "zeros":
            return None
        if isinstance(mod, _CONV_TS) and (len(node.args) != 1 or node.kwargs):
            return None  # an explicit output_size
        weight = g.get_attr(f"{node.target}.weight")
        bias = g.get_attr(f"{node.target}.bias") if mod.bias is not None else None
        return weight, bias
    if is_call(node, *CONV_FN) and len(node.args) == 7:
        return node.args[1], node.args[2]
    lin = linear_parts(gm, node)
    return (lin[1], lin[2]) if lin is not None else None


def fold_batchnorm(gm: fx.GraphModule) -> int:
    """An eval-mode BatchNorm folded into the convolution or linear layer before it.

    ``bn(conv(x, W, b)) == conv(x, W * s, (b - mean) * s + beta)`` with
    ``s = gamma / sqrt(var + eps)`` per output channel. Faster: the normalisation pass over the
    layer's output disappears (or rides in the GEMM/conv bias); the folded weight is derived in
    ``forward`` from the live parameters and running statistics. Only in eval mode with running
    statistics (training mode normalises by batch statistics). A reassociation.
    """
    count = 0
    g = gm.graph
    for node in _nodes(g):
        bn = module_of(gm, node)
        if not isinstance(bn, _BNS) or bn.training or bn.running_var is None:
            continue
        src = node.args[0]
        if not isinstance(src, fx.Node) or only_user(src) is not node:
            continue
        linear = is_linear(gm, src)
        if linear and len(shape_of(src) or ()) != 2:
            continue  # BatchNorm1d on (N, C, L) normalises dim 1, not the linear's features
        dims = conv_dims(gm, src)
        if not (dims is not None or linear):
            continue
        with g.inserting_before(node):
            params = _layer_params(gm, src)
            if params is None:
                continue
            weight, bias = params
            name = str(node.target)
            var = g.get_attr(f"{name}.running_var")
            mean = g.get_attr(f"{name}.running_mean")
            scale = _call(g, torch.rsqrt, _call(g, operator.add, var, float(bn.eps)))
            if bn.affine:
                scale = _call(g, operator.mul, g.get_attr(f"{name}.weight"), scale)
            # Weight rank: 2 for linear, 3/4/5 for conv1d/2d/3d; the scale broadcasts on dim 0.
            rank = 2 if dims is None else 2 + dims
            view = _method(g, "reshape", scale, (-1, *([1] * (rank - 1))))
            new_w = _call(g, operator.mul, weight, view)
            shifted = _call(g, operator.neg, mean) if bias is None else None
            if bias is not None:
                shifted = _call(g, operator.sub, bias, mean)
            new_b = _call(g, operator.mul, shifted, scale)
            if bn.affine:
                new_b = _call(g, operator.add, new_b, g.get_attr(f"{name}.bias"))
            new = _layer_call(gm, src, new_w, new_b)
            if new is None:
                continue
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


def _affine_step(node: fx.Node, value: fx.Node) -> tuple[float, float] | None:
    """``(scale, shift)`` when ``node`` is ``value`` times/plus/minus/over a constant."""
    if is_call(node, operator.neg):
        return -1.0, 0.0
    if not is_call(node, operator.mul, operator.truediv, operator.add, operator.sub):
        return None
    a, b = node.args
    other = b if a is value else a if b is value else None
    k = scalar(other)
    if k is None:
        return None
    op = node.target
    if op is operator.mul:
        return k, 0.0
    if op is operator.truediv and a is value and k != 0.0:
        return 1.0 / k, 0.0
    if op is operator.add:
        return 1.0, k
    if op is operator.sub:
        return (1.0, -k) if a is value else (-1.0, k)
    return None


def fold_affine_constants(gm: fx.GraphModule) -> int:
    """A chain of constant scalings and shifts after a conv/linear folded into its weights.

    ``((x W^T + b) * s1 + c1) / s2 - c2 == x (W s)^T + (b s + c)`` with the chain's combined
    scale ``s`` and shift ``c``. Faster: the epilogue pass over the output is gone (the GEMM's
    or conv's own bias carries the shift). Derived in ``forward`` from the parameters. A
    reassociation (a division becomes a multiplication by the reciprocal).
    """
    count = 0
    g = gm.graph
    for node in _nodes(g):
        if not _is_layer(gm, node):
            continue
        scale, shift, end = 1.0, 0.0, node
        while True:
            nxt = only_user(end)
            step = _affine_step(nxt, end) if nxt is not None else None
            if nxt is None or step is None:
                break
            scale, shift = scale * step[0], shift * step[0] + step[1]
            end = nxt
        if end is node:
            continue
        with g.inserting_before(end):
            params = _layer_params(gm, node)
            if params is None:
                continue
            weight, bias = params
            new_w = _call(g, operator.mul, weight, scale)
            if bias is not None:
                new_b = _call(g, operator.add, _call(g, operator.mul, bias, scale), shift)
            else:
                size = _method(g, "size", weight, 0)
                new_b = _method(g, "new_full", weight, (size,), shift)
            new = _layer_call(gm, node, new_w, new_b)
            if new is None:
                continue
        end.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


def _channel_vector(gm: fx.GraphModule, value: Any, layer: fx.Node) -> bool:
    """Whether ``value`` is a parameter/buffer broadcasting along the layer's channel dim only.

    Convolutions put channels on dim 1 (``(C, 1, 1)`` or ``(1, C, 1, 1)`` against ``(N, C, H,
    W)``); a linear layer on the last dim (``(F,)`` or ``(1, F)``).
    """
    if not (isinstance(value, fx.Node) and value.op == "get_attr"):
        return False
    shape, out = shape_of(value), shape_of(layer)
    if shape is None or out is None or len(shape) > len(out) or not shape:
        return False
    mod = module_of(gm, layer)
    is_conv = isinstance(mod, _CONV_TS) or conv_dims(gm, layer) is not None
    channel = 1 if is_conv else len(out) - 1
    aligned = (1,) * (len(out) - len(shape)) + tuple(shape)
    return all(size == (out[d] if d == channel else 1) for d, size in enumerate(aligned)) and (
        not is_conv or len(out) - len(shape) <= 1
    )


def fold_channel_bias(gm: fx.GraphModule) -> int:
    """A per-channel parameter added after a conv, transposed conv or linear folded into its bias.

    ``conv(x, W, b) + p == conv(x, W, b + p.reshape(-1))`` where ``p`` broadcasts along the output
    channels only (``(C, 1, 1)`` against ``(N, C, H, W)``; ``(F,)`` after a linear layer), and
    likewise for a subtraction. Faster: the separate pass over the layer's output disappears
    into the layer's own bias. The bias is derived from the live parameters (once per load in the
    eager candidate). A reassociation: ``(y + b) + p`` becomes ``y + (b + p)``.
    """
    count = 0
    g = gm.graph
    for node in _nodes(g):
        if not is_call(node, operator.add, operator.sub):
            continue
        a, b = node.args
        subtract = node.target is operator.sub
        for layer, other, layer_first in ((a, b, True), (b, a, False)):
            if subtract and not layer_first:
                continue  # p - layer(x) negates the layer: left alone
            if not isinstance(layer, fx.Node) or only_user(layer) is not node:
                continue
            if not _is_layer(gm, layer):
                continue
            if not _channel_vector(gm, other, layer):
                continue
            with g.inserting_before(node):
                params = _layer_params(gm, layer)
                if params is None:
                    continue
                weight, bias = params
                vec = _method(g, "reshape", other, (-1,))
                if subtract:
                    vec = _call(g, operator.neg, vec)
                new_b = vec if bias is None else _call(g, operator.add, bias, vec)
                new = _layer_call(gm, layer, weight, new_b)
                if new is None:
                    continue
            node.replace_all_uses_with(new)
            count += 1
            break
    if count:
        cleanup(gm)
    return count


def fold_channel_scale(gm: fx.GraphModule) -> int:
    """A per-channel parameter multiplying a conv's or linear layer's output folded into its
    weight and bias.

    ``conv(x, W, b) * p == conv(x, W * p, b * p)`` with ``p`` scaling each output channel's
    filter (``(C, 1, 1)`` against ``(N, C, H, W)``; ``(F,)`` after a linear layer); for a
    transposed convolution (one group) the output channels are the weight's second dimension.
    Faster: the separate pass over the layer's output is gone; the scaled weight is derived from
    the live parameters (once per load in the eager candidate). A reassociation: each product
    ``x w`` is scaled before the sum instead of the sum after it.
    """
    count = 0
    g = gm.graph
    for node in _nodes(g):
        if not is_call(node, operator.mul):
            continue
        for layer, other in (node.args, node.args[::-1]):
            if not isinstance(layer, fx.Node) or only_user(layer) is not node:
                continue
            mod = module_of(gm, layer)
            if isinstance(mod, _CONV_TS) and mod.groups != 1:
                continue  # grouped: a group's output channels are not one weight dimension
            if not _is_layer(gm, layer):
                continue
            if not _channel_vector(gm, other, layer):
                continue
            with g.inserting_before(node):
                params = _layer_params(gm, layer)
                if params is None:
                    continue
                weight, bias = params
                view: tuple[int, ...] = (-1, 1)  # a linear weight is (out, in)
                if isinstance(mod, _CONV_TS):  # (in, out, *kernel)
                    view = (1, -1, *[1] * (mod.weight.dim() - 2))
                elif conv_dims(gm, layer) is not None:  # (out, in / groups, *kernel)
                    view = (-1, *[1] * (1 + (conv_dims(gm, layer) or 0)))
                new_w = _call(g, operator.mul, weight, _method(g, "reshape", other, view))
                vec = _method(g, "reshape", other, (-1,))
                new_b = None if bias is None else _call(g, operator.mul, bias, vec)
                new = _layer_call(gm, layer, new_w, new_b)
                if new is None:
                    continue
            node.replace_all_uses_with(new)
            count += 1
            break
    if count:
        cleanup(gm)
    return count


#: Non-decreasing functions computed by correctly rounded steps (monotone in floating
#: point too) and smooth ones whose libm-style kernels are monotone only to within an ulp.
_SMOOTH_INCREASING = (torch.tanh, torch.sigmoid, torch.exp, torch.expm1, torch.erf, F.softplus)


def _constant_over(value: Any, x: fx.Node, dims: tuple[int, ...] | None) -> bool:
    """Whether ``value`` (a Python number, or a tensor broadcast against ``x`` without growing
    it) is the same for every element of ``x`` that ``dims`` reduce together."""
    if scalar(value) is not None:
        return True
    shape, xshape = shape_of(value), shape_of(x)
    if shape is None or xshape is None or len(shape) > len(xshape):
        return False
    aligned = (1,) * (len(xshape) - len(shape)) + shape
    if any(a not in (1, b) for a, b in zip(aligned, xshape, strict=True)):
        return False
    reduced = range(len(xshape)) if dims is None else dims
    return all(aligned[d] == 1 for d in reduced)


def monotone_step(
    node: Any, dims: tuple[int, ...] | None, *, smooth: bool
) -> tuple[Any, int] | None:
    """``(x, direction)`` when ``node`` is ``f(x)`` for an elementwise ``f`` that is monotone
    and the same function for every element ``dims`` reduce together: direction 1 for
    non-decreasing, -1 for non-increasing. ``smooth`` admits the smooth functions
    (``_SMOOTH_INCREASING``) instead of the exactly monotone ones: ReLU, clamp, LeakyReLU with
    a positive slope, negation, and adding, subtracting, multiplying or dividing by a non-zero
    constant (a number, or a tensor constant over the reduced elements for a shift)."""
    if not isinstance(node, fx.Node) or node.op != "call_function" or not node.args:
        return None
    x = node.args[0]
    if smooth:
        ok = node.target in _SMOOTH_INCREASING and len(node.args) == 1 and isinstance(x, fx.Node)
        if node.target is F.softplus:
            ok = ok and scalar(node.kwargs.get("beta", 1.0)) not in (None, 0.0)
        return (x, 1) if ok else None
    if node.target is torch.relu:
        return x, 1
    if node.target is torch.clamp:
        lo, hi = (scalar(v) for v in node.args[1:3])
        return (x, 1) if lo is None or hi is None or lo <= hi else None
    if node.target is F.leaky_relu:
        slope = scalar(node.kwargs.get("negative_slope", 0.01))
        return (x, 1) if slope is not None and slope > 0 else None
    if node.target is operator.neg:
        return x, -1
    if node.target not in (operator.add, operator.sub, operator.mul, operator.truediv):
        return None
    a, b = node.args
    if node.target in (operator.add, operator.sub):
        for t, c in ((a, b), (b, a)):
            if (
                isinstance(t, fx.Node)
                and shape_of(t) == shape_of(node)
                and _constant_over(c, t, dims)
            ):
                if node.target is operator.sub and t is b:
                    return t, -1  # c - t decreases in t
                return t, 1
        return None
    scaled = constant_scale(node)
    if scaled is None or scaled[1] == 0.0 or not isinstance(scaled[0], fx.Node):
        return None  # a zero scale turns an infinity into NaN in one form only
    return scaled[0], 1 if scaled[1] > 0 else -1


def _substitute(old: Any, new: Any) -> Callable[[fx.Node], Any]:
    """An argument map for ``Graph.node_copy`` that puts ``new`` where ``old`` was."""

    def arg_map(n: fx.Node) -> Any:
        return new if n is old else n

    return arg_map


def _pool_dims(node: fx.Node) -> tuple[int, ...] | None:
    """The dimensions a canonical max-pool call takes its maximum over (its last 1-3)."""
    shape = shape_of(node.args[0])
    if shape is None:
        return None
    k = MAX_POOL_FN.index(node.target) + 1
    return tuple(range(len(shape) - k, len(shape)))


def _max_through_monotone(gm: fx.GraphModule, *, smooth: bool) -> int:
    """Move monotone functions from before a maximum (or minimum) to after it: the engine of
    :func:`pool_before_activation` and :func:`smooth_after_max`."""
    count = 0
    g = gm.graph
    for node in _nodes(g):
        current = node
        while True:
            red = reduction(current, "amax", "amin")
            is_pool = is_call(current, *MAX_POOL_FN)
            if red is None and not is_pool:
                break
            dims = red.dims if red is not None else _pool_dims(current)
            if is_pool and dims is None:
                break
            step: Any = current.args[0]
            found = monotone_step(step, dims, smooth=smooth)
            if found is None or only_user(step) is not current:
                break
            x, direction = found
            if direction < 0 and is_pool:
                break  # no min-pool to turn a max-pool into
            if red is not None and not _constant_operands(step, x, red):
                break
            with g.inserting_before(current):
                if red is not None:
                    kind = red.kind if direction > 0 else {"amax": "amin", "amin": "amax"}[red.kind]
                    inner = _call(g, getattr(torch, kind), x, *current.args[1:])
                else:
                    inner = g.node_copy(current, _substitute(step, x))
                moved = g.node_copy(step, _substitute(x, inner))
            inner.meta = dict(current.meta)
            moved.meta = dict(current.meta)
            current.replace_all_uses_with(moved)
            g.erase_node(current)  # the chain may go on: ``x`` must have one reader again
            g.erase_node(step)
            count += 1
            current = inner
    if count:
        cleanup(gm)
    return count


def _constant_operands(step: fx.Node, x: Any, red: Any) -> bool:
    """Whether ``step``'s tensor operands other than ``x`` broadcast against the reduction's
    output as they did against its input: only with ``keepdim`` (or no tensor operand)."""
    others = [a for a in step.args if isinstance(a, fx.Node) and a is not x]
    return not others or red.keepdim


def pool_before_activation(gm: fx.GraphModule) -> int:
    """``max(f(x))`` -> ``f(max(x))`` for a monotone ``f``, over a max-pool window or an
    ``amax``/``amin`` reduction; a non-increasing ``f`` turns ``amax`` into ``amin``.

    A monotone function commutes with a maximum: ``max_i f(x_i) == f(max_i x_i)`` for
    non-decreasing ``f`` (and ``== f(min_i x_i)`` for non-increasing). The functions are ReLU,
    clamp (ReLU6, Hardtanh), LeakyReLU with a positive slope, negation, and shifts or non-zero
    scalings by a constant (a shift may be a tensor constant over the reduced elements, such
    as a per-channel bias under a spatial pool). Faster: ``f`` runs on the reduced tensor (a
    quarter of the elements after a 2x2 pool, one per row after a row maximum), so a full pass
    over the larger tensor is gone (in eager; a fused kernel reads the window anyway).
    Bit-exact: each of these is computed by one correctly rounded step, which is monotone in
    floating point, so the same element wins and maps to the same value (NaN propagates
    through both forms; a zero scale, which turns an infinity into NaN, is left alone).
    """
    return _max_through_monotone(gm, smooth=False)


def smooth_after_max(gm: fx.GraphModule) -> int:
    """``max(f(x))`` -> ``f(max(x))`` for smooth increasing ``f`` (tanh, sigmoid, exp, expm1,
    erf, softplus), over a max-pool window or an ``amax``/``amin`` reduction.

    Faster: the transcendental function runs once per reduced element instead of once per
    input element. A reassociation: mathematically exact, but these functions' kernels are
    monotone only to within an ulp, so where two inputs are an ulp apart the result may differ
    by an ulp.
    """
    return _max_through_monotone(gm, smooth=True)


def separable_avg_pool(gm: fx.GraphModule) -> int:
    """A 2-D average pool over a ``kh x kw`` window as a ``kh x 1`` pool then a ``1 x kw`` pool.

    The window mean is separable: ``sum_{i,j} x / (kh kw) == sum_j (sum_i x / kh) / kw``. Faster:
    ``kh + kw`` loads per output instead of ``kh * kw`` (14 instead of 49 for 7 x 7), at the cost
    of one intermediate pass of ``H_out x W`` elements. Only where the divisor is the constant
    ``kh * kw`` (no ceil mode, no divisor override; zero padding counted when there is padding).
    A reassociation: the window's sum is taken in another order.
    """
    count = 0
    g = gm.graph

    def pair(v: Any) -> tuple[int, int] | None:
        if isinstance(v, int):
            return v, v
        if isinstance(v, list | tuple) and len(v) == 2 and all(isinstance(i, int) for i in v):
            return int(v[0]), int(v[1])
        return None

    for node in _nodes(g):
        if not is_call(node, F.avg_pool2d) or len(node.args) != 7:
            continue
        _x, kernel_size, stride_size, pad, ceil, include, override = node.args
        kernel, stride, padding = pair(kernel_size), pair(stride_size), pair(pad)
        if kernel is None or stride is None or padding is None:
            continue
        if kernel[0] < 2 or kernel[1] < 2 or ceil is not False or override is not None:
            continue
        if any(padding) and include is not True:
            continue
        if len(shape_of(node.args[0]) or ()) not in (3, 4):
            continue
        with g.inserting_before(node):
            # Canonical calls (every argument given), so the pool kernel's rule sees them.
            rows = _call(
                g, F.avg_pool2d, node.args[0], (kernel[0], 1), (stride[0], 1), (padding[0], 0),
                False, True, None,
            )  # fmt: skip
            new = _call(
                g, F.avg_pool2d, rows, (1, kernel[1]), (1, stride[1]), (0, padding[1]),
                False, True, None,
            )  # fmt: skip
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


# --------------------------------------------------------------------------- own kernels


#: The largest filter the depthwise kernel unrolls (taps per output).
DEPTHWISE_MAX_TAPS = 49


def _int_pair(value: Any) -> tuple[int, int] | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value, value
    if isinstance(value, list | tuple) and len(value) == 2 and all(type(v) is int for v in value):
        return int(value[0]), int(value[1])
    return None


def _depthwise_parts(gm: fx.GraphModule, node: fx.Node) -> tuple[Any, ...] | None:
    """``(x, weight, bias, stride, padding, dilation, weight_shape)`` of a 2-D convolution
    call (an ``nn.Conv2d`` or ``F.conv2d``) with ``groups`` equal to its input channels. For a
    layer, weight and bias are the parameters' names (nothing is added to the graph here)."""
    mod = module_of(gm, node)
    wshape: tuple[int, ...] | None
    if isinstance(mod, nn.Conv2d):
        if mod.padding_mode != "zeros" or len(node.args) != 1 or node.kwargs:
            return None
        x, groups, wshape = node.args[0], mod.groups, tuple(mod.weight.shape)
        stride, padding, dilation = mod.stride, mod.padding, mod.dilation
        # The layer's parameters, read in forward (get_attr nodes made once it matches).
        weight, bias = f"{node.target}.weight", mod.bias is not None and f"{node.target}.bias"
    elif is_call(node, F.conv2d):
        x, weight, bias = arg(node, 0, "input"), arg(node, 1, "weight"), arg(node, 2, "bias")
        stride, padding = arg(node, 3, "stride", 1), arg(node, 4, "padding", 0)
        dilation, groups = arg(node, 5, "dilation", 1), arg(node, 6, "groups", 1)
        wshape = shape_of(weight)
    else:
        return None
    xshape = shape_of(x)
    if xshape is None or len(xshape) != 4 or wshape is None or len(wshape) != 4:
        return None
    channels = xshape[1]
    if type(groups) is not int or groups != channels or channels < 2 or wshape[1] != 1:
        return None
    if wshape[0] % channels or wshape[2] * wshape[3] > DEPTHWISE_MAX_TAPS:
        return None
    if not kernel_dtype(x):
        return None
    pairs = [_int_pair(v) for v in (stride, padding, dilation)]
    if any(p is None for p in pairs):
        return None  # 'same'/'valid' padding strings are left to the vendor call
    return (x, weight, bias, *pairs, wshape)


#: The largest average-pool window the kernel unrolls.
POOL_MAX_TAPS = 64


def avg_pool_kernel(gm: fx.GraphModule) -> int:
    """A 2-D average pool (no ceil mode; zero padding counted or no padding; NCHW) ->
    KernelOPT's own Triton kernel (``kernels.kernelopt_avg_pool2d``).

    Faster: an average pool reads each input element into several overlapping windows;
    the vendor kernel runs it far below bandwidth (on the H200, a 7 x 7 pool with stride 3 over
    134 MB takes 0.10 ms where moving the data takes 0.034 ms). The kernel reads each input
    plane from memory once and serves the overlapping windows from cache. A reassociation: the
    window's sum is taken in tap order, in float32, then scaled by ``1 / divisor``.
    """
    from kernelopt_jupyter.agents.rewrites.kernels import kernelopt_avg_pool2d

    count = 0
    g = gm.graph
    for node in _nodes(g):
        if not is_call(node, F.avg_pool2d) or len(node.args) != 7:
            continue
        x, kernel, stride, padding, ceil, include, override = node.args
        pairs = [_int_pair(v) for v in (kernel, stride, padding)]
        if any(p is None for p in pairs) or ceil is not False:
            continue
        (kh, kw), (sh, sw), (ph, pw) = cast(list[tuple[int, int]], pairs)
        if (ph or pw) and include is not True:
            continue  # the divisor would vary at the borders
        if override is not None and (type(override) is not int or override <= 0):
            continue
        if kh * kw > POOL_MAX_TAPS or min(kh, kw, sh, sw) < 1:
            continue
        xshape = shape_of(x)
        if xshape is None or len(xshape) != 4:
            continue
        if not kernel_dtype(x):
            continue
        divisor = override if override is not None else kh * kw
        with g.inserting_before(node):
            new = _call(g, kernelopt_avg_pool2d, x, (kh, kw), (sh, sw), (ph, pw), divisor)
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


def group_norm_kernel(gm: fx.GraphModule) -> int:
    """A GroupNorm (``nn.GroupNorm`` or ``F.group_norm``, affine or not, on ``(N, C, *)``) ->
    KernelOPT's own Triton kernel (``kernels.kernelopt_group_norm``): statistics and
    normalisation in one kernel, one program per image and group.

    Faster: the usual lowering is two kernels, statistics then normalisation, each reading the
    whole tensor from memory (on the H200 torch.compile's takes 0.12 ms for a 151 MB input and
    output, against 0.07 ms for moving them once). In one program the group's second read
    follows its first, mostly from L2. A reassociation: mean and variance are taken blockwise
    and combined (Chan's formula), in float32.
    """
    from kernelopt_jupyter.agents.rewrites.kernels import kernelopt_group_norm

    count = 0
    g = gm.graph
    for node in _nodes(g):
        mod = module_of(gm, node)
        weight: Any
        bias: Any
        if isinstance(mod, nn.GroupNorm):
            if len(node.args) != 1 or node.kwargs:
                continue
            groups, eps, affine = mod.num_groups, mod.eps, mod.affine
            weight = bias = None
        elif is_call(node, F.group_norm):
            groups, eps = arg(node, 1, "num_groups"), arg(node, 4, "eps", 1e-5)
            weight, bias = arg(node, 2, "weight"), arg(node, 3, "bias")
            if (weight is None) != (bias is None):
                continue
            affine = False
        else:
            continue
        x = node.args[0]
        xshape = shape_of(x)
        if xshape is None or len(xshape) < 2 or type(groups) is not int or groups < 1:
            continue
        if xshape[1] % groups or isinstance(eps, bool) or not isinstance(eps, int | float):
            continue
        if not kernel_dtype(x):
            continue
        with g.inserting_before(node):
            if affine:
                weight = g.get_attr(f"{node.target}.weight")
                bias = g.get_attr(f"{node.target}.bias")
            new = _call(g, kernelopt_group_norm, x, groups, weight, bias, float(eps))
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


def depthwise_conv_kernel(gm: fx.GraphModule) -> int:
    """A depthwise 2-D convolution (groups equal to the input channels, any channel
    multiplier, zero padding, NCHW) -> KernelOPT's own Triton kernel
    (``kernels.kernelopt_depthwise_conv2d``).

    Faster: a depthwise convolution does 2 * taps FLOPs per output, so it is bound by memory,
    yet the vendor's float32 NCHW kernels run far below bandwidth (cuDNN on the H200: 0.42 ms
    for 231 MB, about an eighth of what moving them takes) and Inductor lowers it no better.
    The kernel reads each input plane once for all the output channels it feeds and serves
    the taps from cache. A reassociation: each output is the same sum of taps, accumulated in
    float32 in tap order.
    """
    from kernelopt_jupyter.agents.rewrites.kernels import kernelopt_depthwise_conv2d

    count = 0
    g = gm.graph
    for node in _nodes(g):
        parts = _depthwise_parts(gm, node)
        if parts is None:
            continue
        x, weight, bias, stride, padding, dilation, _ = parts
        with g.inserting_before(node):
            if isinstance(weight, str):  # an nn.Conv2d layer's own parameters
                weight = g.get_attr(weight)
                bias = g.get_attr(bias) if bias else None
            new = _call(g, kernelopt_depthwise_conv2d, x, weight, bias, stride, padding, dilation)
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


#: What a forward with one of KernelOPT's own kernels may run besides it: a Triton candidate
#: (not dispatch-only) may launch vendor GEMMs and convolutions, views and copies, but no other
#: PyTorch compute (the verifier's static gate), so a rewritten graph with anything else left
#: gets no kernel candidate.
_VENDOR_CALLS = (
    *_CONV_FN,
    *_CONV_T_FN,
    F.linear,
    torch.matmul,
    torch.ops.aten._addmm_activation.default,  # gemm_activation_epilogue's cuBLASLt GEMM
    torch.transpose,
    operator.getitem,
    getattr,
)
_VENDOR_MODULES = (*_CONVS, *_CONV_TS, nn.Linear, nn.Identity, nn.Flatten)
_VIEW_METHODS = frozenset(
    {"view", "reshape", "flatten", "permute", "transpose", "contiguous", "size", "unsqueeze",
     "squeeze", "expand", "t", "dim"}
)  # fmt: skip


def foreign_compute(gm: fx.GraphModule) -> str | None:
    """The first op in ``gm``'s forward that a Triton candidate may not run (None: none)."""
    from kernelopt_jupyter.agents.rewrites.kernels import KERNEL_HELPERS

    wrappers = {fn for fn, _ in KERNEL_HELPERS.values()}
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target not in (*_VENDOR_CALLS, *wrappers):
            return getattr(node.target, "__name__", str(node.target))
        if node.op == "call_method" and node.target not in _VIEW_METHODS:
            return str(node.target)
        if node.op == "call_module" and not isinstance(module_of(gm, node), _VENDOR_MODULES):
            return type(module_of(gm, node)).__name__
    return None


# --------------------------------------------------------------------------- vendor epilogues


def gemm_activation_epilogue(gm: fx.GraphModule) -> int:
    """``relu(linear(x))`` -> cuBLASLt's bias+ReLU epilogue, ``aten._addmm_activation``.

    Faster: bias and ReLU are applied inside the GEMM, so the output is written once instead of
    written, read and written again. The same mathematics, but cuBLASLt may pick another GEMM
    kernel (another summation order) than the plain call: a reassociation. GELU is left
    alone: this op's GELU is tanh-approximated on CUDA but exact (erf) on the CPU, so its
    meaning would depend on the device. Inductor decomposes the op again, so the candidate is
    the eager forward.
    """
    count = 0
    g = gm.graph
    for node in _nodes(g):
        if not is_call(node, torch.relu):
            continue
        src = node.args[0]
        if not isinstance(src, fx.Node) or only_user(src) is not node:
            continue
        shape = shape_of(src)
        if shape is None or len(shape) < 2:
            continue
        match = is_linear(gm, src)
        with g.inserting_before(node):
            lin = linear_parts(gm, src) if match else None
            if lin is None or lin[2] is None:
                continue
            x, w, b = lin
            flat = _method(g, "flatten", x, 0, -2) if len(shape) > 2 else x
            out = _call(
                g,
                torch.ops.aten._addmm_activation.default,
                b,
                flat,
                _method(g, "t", w),
                use_gelu=False,
            )
            if len(shape) > 2:
                lead = _call(g, operator.getitem, _call(g, getattr, x, "shape"), slice(None, -1))
                out = _method(g, "unflatten", out, 0, lead)
        node.replace_all_uses_with(out)
        count += 1
    if count:
        cleanup(gm)
    return count


# --------------------------------------------------------------------------- identities


def _size_one(x: Any, dims: Any) -> bool:
    """Whether every dimension in ``dims`` (canonical: a tuple of non-negative ints) of ``x``
    has size 1."""
    shape = shape_of(x)
    if shape is None or not isinstance(dims, tuple) or not dims:
        return False
    return all(type(d) is int and 0 <= d < len(shape) and shape[d] == 1 for d in dims)


def drop_identities(gm: fx.GraphModule) -> int:
    """Ops that do nothing removed: size-1 reductions and softmaxes, double transposes.

    Over dimensions that all have size 1, ``sum``/``mean``/``amax``/``amin``/``logsumexp``
    return their input (squeezed unless ``keepdim``), ``softmax`` is ``x * 0 + 1`` and
    ``log_softmax`` is ``x - x`` (both keep NaN/Inf where the originals produce them);
    ``t.transpose(i, j).transpose(i, j)`` is ``t``. Faster: each removed op was a kernel launch
    and a pass over memory. Bit-exact.
    """
    count = 0
    g = gm.graph
    for node in _nodes(g):
        new: Any = None
        red = reduction(node)
        with g.inserting_before(node):
            if is_call(node, torch.softmax, torch.log_softmax):
                x: Any = node.args[0]
                if node.kwargs or not _size_one(x, node.args[1:2]):
                    continue
                if node.target is torch.log_softmax:
                    new = _call(g, operator.sub, x, x)
                else:
                    new = _call(g, operator.add, _call(g, operator.mul, x, 0.0), 1.0)
            elif red is not None:
                if red.dims is None or not _size_one(red.x, red.dims):
                    continue
                new = red.x if red.keepdim else _method(g, "squeeze", red.x, red.dims)
            elif is_call(node, torch.transpose) and is_call(node.args[0], torch.transpose):
                inner: Any = node.args[0]
                if node.args[1:] != inner.args[1:] or only_user(inner) is not node:
                    continue
                if any(type(d) is not int or d < 0 for d in node.args[1:]):
                    continue  # a negative dim: the rank was unknown
                new = inner.args[0]
            else:
                continue
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


def stable_chains(gm: fx.GraphModule) -> int:
    """Hand-written chains replaced by their fused, stable forms.

    ``log(softmax(x))`` -> ``log_softmax(x)``; ``log(sum(exp(x), d))`` -> ``logsumexp(x, d)``;
    ``exp(x) / exp(x).sum(d, keepdim=True)`` -> ``softmax(x, d)``. Faster: one fused reduction
    instead of several passes (and no overflow for large inputs). A reassociation (the fused
    forms subtract the maximum first): more accurate, which the float64 referee accepts.
    """
    count = 0
    g = gm.graph

    for node in _nodes(g):
        new: Any = None
        with g.inserting_before(node):
            if is_call(node, torch.log):
                inner = node.args[0]
                if not isinstance(inner, fx.Node) or only_user(inner) is not node:
                    continue
                if is_call(inner, torch.softmax) and not inner.kwargs:
                    new = _call(g, torch.log_softmax, *inner.args)
                else:
                    red = reduction(inner, "sum")
                    ex: Any = red.x if red is not None else None
                    if red is None or red.dims is None or not is_call(ex, torch.exp):
                        continue
                    if only_user(ex) is not inner:
                        continue
                    new = _call(g, torch.logsumexp, ex.args[0], red.dims, red.keepdim)
            elif is_call(node, operator.truediv):
                num: Any = node.args[0]
                red = reduction(node.args[1], "sum")
                if red is None or red.dims is None or len(red.dims) != 1 or not red.keepdim:
                    continue
                if not is_call(num, torch.exp) or red.x is not num:
                    continue
                if set(num.users) != {node, node.args[1]}:
                    continue
                new = _call(g, torch.softmax, num.args[0], red.dims[0])
            else:
                continue
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


#: The rewrites in the order a combined rewrite applies them (structure first, then folds,
#: then the vendor epilogue, which must see the final linear layers).
REWRITES: list[Rewrite] = [
    Rewrite("diag_matmul", "diagonal matmul as a broadcast multiply", "bit-exact", diag_matmul),
    Rewrite(
        "triangular_matmul", "triangular matmul computes only the kept triangle",
        "reassociation", triangular_matmul,
    ),
    Rewrite(
        "symmetric_gram", "Gram matrix computes one triangle and mirrors it",
        "reassociation", symmetric_gram,
    ),
    Rewrite(
        "attention_to_sdpa", "written-out attention as one fused attention kernel",
        "reassociation", attention_to_sdpa,
    ),
    Rewrite(
        "hoist_sliced_linear", "one GEMM over all slices instead of one per slice",
        "reassociation", hoist_sliced_linear,
    ),
    # The e-graph engine (algebra.py) before the hand-written rules it overlaps with: it
    # composes their steps and writes back only a cheaper graph; they catch what it leaves.
    Rewrite(
        "algebra", "tensor algebra simplified by equality saturation", "reassociation",
        algebra,
    ),
    Rewrite("drop_identities", "drop identity ops", "bit-exact", drop_identities),
    Rewrite(
        "linear_reduction", "reduction after a linear layer folded into its weights",
        "reassociation", linear_reduction,
    ),
    Rewrite("stable_chains", "fused stable softmax/logsumexp chains", "reassociation", stable_chains),
    Rewrite("fold_batchnorm", "fold BatchNorm into the conv/linear", "reassociation", fold_batchnorm),
    Rewrite(
        "fold_affine_constants", "fold constant scale/shift chains into the weights",
        "reassociation", fold_affine_constants,
    ),
    Rewrite(
        "fold_channel_bias", "fold a per-channel bias add into the layer's bias",
        "reassociation", fold_channel_bias,
    ),
    Rewrite(
        "fold_channel_scale", "fold a per-channel scale into the layer's weight",
        "reassociation", fold_channel_scale,
    ),
    Rewrite(
        "pool_before_activation", "monotone function after the max-pool or maximum",
        "bit-exact", pool_before_activation,
    ),
    Rewrite(
        "smooth_after_max", "smooth increasing function after the max-pool or maximum",
        "reassociation", smooth_after_max,
    ),
    Rewrite(
        "move_constant_scale", "constant scale moved to the smallest tensor of a linear map",
        "reassociation", move_constant_scale,
    ),
    Rewrite(
        "separable_avg_pool", "average pool as two 1-D passes", "reassociation",
        separable_avg_pool,
    ),
    Rewrite(
        "gemm_activation_epilogue", "GEMM + bias + ReLU as the cuBLASLt fused epilogue",
        "reassociation", gemm_activation_epilogue, eager_only=True,
    ),
    # Last: the folds above (a BatchNorm into the conv) rewrite the conv first.
    Rewrite(
        "depthwise_conv_kernel", "depthwise convolution as KernelOPT's own Triton kernel",
        "reassociation", depthwise_conv_kernel, eager_only=True, kernels=True,
    ),
    Rewrite(
        "conv_transpose_kernel", "transposed convolution as KernelOPT's own Triton kernel",
        "reassociation", conv_transpose_kernel, eager_only=True, kernels=True,
    ),
    Rewrite(
        "avg_pool_kernel", "average pool as KernelOPT's own Triton kernel",
        "reassociation", avg_pool_kernel, eager_only=True, kernels=True,
    ),
    Rewrite(
        "group_norm_kernel", "GroupNorm as KernelOPT's own one-kernel Triton normalisation",
        "reassociation", group_norm_kernel, eager_only=True, kernels=True,
    ),
    Rewrite(
        "scan_kernel", "cumulative sum/product as KernelOPT's own Triton scan",
        "reassociation", scan_kernel, eager_only=True, kernels=True,
    ),
    Rewrite(
        "max_pool_kernel", "max pool as KernelOPT's own Triton kernel",
        "bit-exact", max_pool_kernel, eager_only=True, kernels=True,
    ),
    Rewrite(
        "rms_norm_kernel", "RMS normalisation as KernelOPT's own Triton kernel",
        "reassociation", rms_norm_kernel, eager_only=True, kernels=True,
    ),
    Rewrite(
        "layer_norm_kernel", "LayerNorm as KernelOPT's own Triton kernel",
        "reassociation", layer_norm_kernel, eager_only=True, kernels=True,
    ),
    Rewrite(
        "instance_norm_kernel", "InstanceNorm as KernelOPT's own Triton kernel",
        "reassociation", instance_norm_kernel, eager_only=True, kernels=True,
    ),
    Rewrite(
        "arg_reduce_kernel", "argmax/argmin as KernelOPT's own Triton kernel",
        "bit-exact", arg_reduce_kernel, eager_only=True, kernels=True,
    ),
    Rewrite(
        "batch_norm_kernel", "BatchNorm as KernelOPT's own Triton kernel",
        "reassociation", batch_norm_kernel, eager_only=True, kernels=True,
    ),
    Rewrite(
        "loss_kernel", "loss as KernelOPT's own Triton reduction",
        "reassociation", loss_kernel, eager_only=True, kernels=True,
    ),
    # Last of ours: a chain after another kernel is that kernel's epilogue first.
    Rewrite(
        "pointwise_kernel", "pointwise chain as KernelOPT's own one-pass Triton kernel",
        "reassociation", pointwise_kernel, eager_only=True, kernels=True,
    ),
    # Kept libraries: the same sites on Liger-Kernel's Triton kernels, a vendor call.
    *(
        Rewrite(name, f"kept library Liger-Kernel: {what} (vendor call)", "reassociation",
                rule, eager_only=True, kept_library=True)
        for name, what, rule in (
            ("liger_rms_norm", "RMS normalisation", liger_rms_norm_rule),
            ("liger_layer_norm", "LayerNorm", liger_layer_norm_rule),
            ("liger_group_norm", "GroupNorm", liger_group_norm_rule),
            ("liger_loss", "cross entropy / KL divergence", liger_loss_rule),
        )
    ),
]  # fmt: skip
BY_NAME = {r.name: r for r in REWRITES}
