"""The rewrites to KernelOPT's op-family kernels (``family_kernels.py``).

Each rule has the contract of :mod:`rules`: ``rule(gm) -> int`` rewrites the canonical graph
in place and returns how many sites changed, matching by graph structure and propagated
shapes, never by a problem's name or sizes. A match absorbs the ops around the family's op
that the kernel computes itself (flips, masks, the exclusive form's shift), so the rewritten
forward keeps no PyTorch compute beside the kernel.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from kernelopt_jupyter.agents.rewrites.canonical import (
    MAX_POOL_FN,
    is_call,
    is_linear,
    normal_dims,
    reduction,
)
from kernelopt_jupyter.agents.rewrites.graph import (
    arg,
    cleanup,
    kernel_dtype,
    module_of,
    only_user,
    per_dim,
    plain_torch_layer,
    scalar,
    shape_of,
)


def _flipped(node: Any, dim: int) -> Any:
    """``x`` when ``node`` is ``torch.flip(x, (dim,))`` (canonical), else None."""
    if is_call(node, torch.flip) and tuple(node.args[1]) == (dim,):
        return node.args[0]
    return None


def _leading_part(node: Any, dim: int) -> Any:
    """``x`` when ``node`` is ``x`` without its last entry along ``dim``: ``x.narrow(dim, 0,
    n - 1)`` or a slice (``x[:, :-1]``, ``x[..., :-1]``, ``x[:-1, :]``; by the propagated
    shapes), else None."""
    if not isinstance(node, fx.Node):
        return None
    if (node.op == "call_method" and node.target == "narrow") or is_call(node, torch.narrow):
        x, d, start = arg(node, 0, "input"), arg(node, 1, "dim"), arg(node, 2, "start")
        if normal_dims(x, d) != (dim,) or start != 0:
            return None
    elif is_call(node, operator.getitem):
        x, key = node.args
        index: list[Any] = list(key) if isinstance(key, tuple) else [key]
        full = slice(None, None, None)
        rank = len(shape_of(x) or ())
        if index.count(Ellipsis) == 1:  # x[..., :-1]: full slices for the dimensions it spans
            at = index.index(Ellipsis)
            index[at : at + 1] = [full] * (rank - len(index) + 1)
        if not dim < len(index) <= rank or any(i != full for j, i in enumerate(index) if j != dim):
            return None
        last = index[dim]
        if not isinstance(last, slice) or last.start not in (None, 0) or last.step is not None:
            return None
    else:
        return None
    xshape, shape = shape_of(x), shape_of(node)
    if xshape is None or shape is None or len(xshape) != len(shape):
        return None
    want = list(xshape)
    want[dim] -= 1
    return x if list(shape) == want and want[dim] >= 0 else None


def _identity_fill(fill: Any, like: fx.Node, dim: int, product: bool) -> bool:
    """Whether ``fill`` is the scan's identity (0, or 1 for a product) over one step of
    ``like`` along ``dim``: ``zeros_like``/``ones_like`` of a tensor of that shape, or
    ``torch.zeros/ones(...)``, ``x.new_zeros/new_ones(...)`` of that shape (by the propagated
    shapes), of ``like``'s dtype."""
    if not isinstance(fill, fx.Node):
        return False
    name = "ones" if product else "zeros"
    if is_call(fill, getattr(torch, f"{name}_like")):
        if len(fill.args) != 1 or set(fill.kwargs) - {"dtype", "device", "memory_format"}:
            return False
    elif not (
        is_call(fill, getattr(torch, name))
        or (fill.op == "call_method" and fill.target == f"new_{name}")
    ):
        return False
    shape, out = shape_of(fill), shape_of(like)
    if shape is None or out is None or len(shape) != len(out) or _dtype(fill) != _dtype(like):
        return False
    return all(s == (1 if i == dim else o) for i, (s, o) in enumerate(zip(shape, out, strict=True)))


def _prepended(node: Any, dim: int, product: bool) -> Any:
    """``x`` when ``node`` is ``x`` with the scan's identity put before its first step along
    ``dim``: ``torch.cat((identity, x), dim)`` or ``F.pad(x, ...)`` padding one step before
    along ``dim`` (with 0, or 1 for a product); else None."""
    if is_call(node, torch.cat, torch.concat, torch.concatenate):
        tensors, d = arg(node, 0, "tensors"), arg(node, 1, "dim", 0)
        if not isinstance(tensors, list | tuple) or len(tensors) != 2:
            return None
        x = tensors[1]
        if not isinstance(x, fx.Node) or normal_dims(x, d) != (dim,):
            return None
        return x if _identity_fill(tensors[0], x, dim, product) else None
    if is_call(node, F.pad):
        x, pad = arg(node, 0, "input"), arg(node, 1, "pad")
        mode, value = arg(node, 2, "mode", "constant"), arg(node, 3, "value", None)
        rank = len(shape_of(x) or ())
        if mode != "constant" or not isinstance(pad, list | tuple) or not rank:
            return None
        want = [0] * (2 * rank)
        want[2 * (rank - 1 - dim)] = 1
        given = list(pad) + [0] * (2 * rank - len(pad))
        fill = 0.0 if value is None else scalar(value)
        if len(pad) % 2 or given != want or fill != (1.0 if product else 0.0):
            return None
        return x
    return None


def _shift(node: Any, dim: int, product: bool) -> tuple[Any, int] | None:
    """``(x, leading)`` when ``node`` is ``x`` shifted one step along ``dim``, the identity
    put first, but for the step it drops: the identity prepended (:func:`_prepended`), with
    ``leading`` of the two ends dropping the last step, before the shift (``cat((id,
    x[:-1]))``) or after it (``cat((id, x))[:-1]``), where ``x`` is the rest."""
    leading = 0
    whole = _leading_part(node, dim)
    if whole is not None:
        node, leading = whole, 1
    inner = _prepended(node, dim, product)
    if inner is None:
        return None
    rest = _leading_part(inner, dim)
    if rest is not None:
        inner, leading = rest, leading + 1
    return inner, leading


def _exclusive_scan(node: fx.Node, dim: int, product: bool) -> tuple[Any, fx.Node] | None:
    """``(x, out)`` when the scan ``node`` is the middle of an exclusive scan of ``x`` along
    ``dim`` (its first output the identity, each next one the scan of the steps before),
    ``out`` its last op; spelled as the scan of the shifted input (``cumsum(cat((zeros,
    x[:-1])))``, ``cumsum(cat((zeros, x))[:-1])``, ``cumsum(F.pad(x, (1, 0))[..., :-1])``)
    or as the shift of the scan (``cat((zeros, cumsum(x[:-1])))``, ``cat((zeros,
    cumsum(x)))[:-1]``, ``cat((zeros, cumsum(x)[:-1]))``), in any of those spellings."""
    src: Any = node.args[0]
    shifted = _shift(src, dim, product)
    if shifted is not None and shifted[1] == 1:
        return shifted[0], node
    # The shift after the scan: its top is at most three single-reader ops above it.
    before = _leading_part(src, dim)
    inner_lead = 1 if before is not None and only_user(src) is node else 0
    top = only_user(node)
    for _ in range(3):
        if top is None:
            return None
        found = _shift(top, dim, product)
        if found is not None:
            inner, leading = found
            if inner is node and leading + inner_lead == 1:
                return (before if inner_lead else src), top
        top = only_user(top)
    return None


def _dtype(node: Any) -> Any:
    meta = node.meta.get("tensor_meta") if isinstance(node, fx.Node) else None
    return getattr(meta, "dtype", None)


def _masked(node: Any, user: fx.Node) -> tuple[Any, Any]:
    """``(x, mask)`` when ``node`` is ``x * mask`` (or ``mask * x``) of two tensors of the
    product's shape, read only by ``user``, ``x`` of the product's dtype (a boolean or
    lower-precision ``mask`` is promoted to it); else ``(node, None)``."""
    if not is_call(node, operator.mul) or only_user(node) is not user:
        return node, None
    a, b = node.args
    shape = shape_of(node)
    if shape is None or shape_of(a) != shape or shape_of(b) != shape:
        return node, None
    if _dtype(a) == _dtype(node):
        return a, b
    return (b, a) if _dtype(b) == _dtype(node) else (node, None)


def scan_kernel(gm: fx.GraphModule) -> int:
    """A cumulative sum or product along one dimension -> KernelOPT's own Triton scan
    (``family_kernels.kernelopt_scan``), with what surrounds it folded in: a reverse scan
    (``flip(cumsum(flip(x, d), d), d)``), an exclusive one (the scan of the input shifted one
    step with 0 first, or the scan shifted: ``cat((zeros_like(first step), cumsum(x without
    its last step, d)), d)``, ``cumsum(cat((zeros, x), d).narrow(d, 0, n), d)``, ``F.pad``
    and slices alike; ``ones`` for a product), both, and a masked one (``cumsum(x * mask,
    d)``, ``mask`` of ``x``'s shape, boolean or not).

    Faster: the vendor's scan runs a long row with few threads, and each flip, mask product,
    slice and concatenation is a pass of its own over memory; the kernel reads the input (and
    the mask) once and writes the output once, the reversal and the shift folded into its
    addressing. A reassociation: each prefix is summed blockwise in float32, the running
    prefix carried from block to block.
    """
    from kernelopt_jupyter.agents.rewrites.family_kernels import kernelopt_scan

    count = 0
    g = gm.graph
    for node in list(g.nodes):
        if not is_call(node, torch.cumsum, torch.cumprod) or node.kwargs or len(node.args) != 2:
            continue
        dim = node.args[1]
        shape = shape_of(node)
        if type(dim) is not int or shape is None or not 0 <= dim < len(shape):
            continue
        product = node.target is torch.cumprod
        src: Any = node.args[0]
        out: fx.Node = node
        reverse = exclusive = False
        found = _exclusive_scan(node, dim, product)
        if found is not None and shape_of(found[0]) == shape_of(found[1]):
            (src, out), exclusive = found, True
        # The reversal around it all: flip(scan(flip(x))), exclusive or not.
        inner = _flipped(src, dim)
        user = only_user(out)
        if inner is not None and len(src.users) == 1 and _flipped(user, dim) is out:
            assert user is not None
            src, out, reverse = inner, user, True
        # A product read only by the matched chain is the mask's.
        first = only_user(src) if isinstance(src, fx.Node) else None
        x, mask = _masked(src, first) if first is not None else (src, None)
        if not kernel_dtype(x):
            continue
        with g.inserting_before(out):
            new = g.call_function(kernelopt_scan, (x, dim, product, reverse, exclusive, mask))
        out.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


#: The largest max-pool window the kernel unrolls (taps per output).
MAX_POOL_TAPS = 64


def max_pool_kernel(gm: fx.GraphModule) -> int:
    """A 1-, 2- or 3-D max pool without indices (``nn.MaxPool1d/2d/3d`` or ``F.max_pool*``:
    any stride, padding, dilation and ceil mode, up to ``MAX_POOL_TAPS`` taps) -> KernelOPT's
    own Triton kernel (``family_kernels.kernelopt_max_pool``).

    Faster: the vendor's pooling kernels run far below bandwidth on large volumes with
    dilated windows; the kernel reads each input plane from memory once and serves the
    windows' overlap from cache, one block of outputs per program. Bit-exact: a maximum is
    the same value in any order (a NaN in the window wins, as in torch).
    """
    from kernelopt_jupyter.agents.rewrites.family_kernels import kernelopt_max_pool

    count = 0
    g = gm.graph
    for node in list(g.nodes):
        if not is_call(node, *MAX_POOL_FN) or len(node.args) != 6 or node.kwargs:
            continue
        dims = MAX_POOL_FN.index(node.target) + 1
        x, kernel, stride, padding, dilation, ceil = node.args
        parts = [per_dim(v, dims) for v in (kernel, stride, padding, dilation)]
        if any(p is None for p in parts) or type(ceil) is not bool:
            continue
        k, st, pad, dil = (tuple(p or ()) for p in parts)
        taps = 1
        for size in k:
            taps *= size
        if taps > MAX_POOL_TAPS or min(*k, *st, *dil) < 1 or min(pad) < 0:
            continue
        if any(2 * p > size for p, size in zip(pad, k, strict=True)):
            continue  # torch refuses padding over half the window: let it say so
        xshape = shape_of(x)
        if xshape is None or len(xshape) not in (dims + 1, dims + 2) or not kernel_dtype(x):
            continue
        with g.inserting_before(node):
            new = g.call_function(kernelopt_max_pool, (x, k, st, pad, dil, ceil))
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


def _span(dims: Any, rank: int) -> tuple[int, int] | None:
    """``(first, last)`` when ``dims`` (canonical: sorted, non-negative) are the contiguous
    dimensions ``first .. last - 1`` of a tensor of rank ``rank``."""
    if not isinstance(dims, tuple) or not dims or dims[-1] >= rank:
        return None
    first, last = dims[0], dims[-1] + 1
    return (first, last) if dims == tuple(range(first, last)) else None


def _square_of(node: Any) -> Any:
    """``x`` when ``node`` is ``x ** 2``, ``x * x``, ``torch.square(x)`` or ``x.pow(2)``."""
    if not isinstance(node, fx.Node):
        return None
    if is_call(node, operator.pow, torch.pow) or (
        node.op == "call_method" and node.target == "pow"
    ):
        if len(node.args) == 2 and not node.kwargs and scalar(node.args[1]) == 2.0:
            return node.args[0]
        return None
    if is_call(node, operator.mul) and node.args[0] is node.args[1]:
        return node.args[0]
    if is_call(node, torch.square):
        return node.args[0]
    return None


def _rms_parts(node: fx.Node) -> tuple[Any, tuple[int, int], float] | None:
    """``(x, (first, last), eps)`` when ``node`` is ``x / sqrt(mean(x^2, dims, keepdim=True)
    + eps)`` or ``x * rsqrt(...)`` (either operand order of the product)."""
    x: Any
    denom: Any
    if is_call(node, operator.truediv):
        x, denom = node.args
        if not is_call(denom, torch.sqrt):
            return None
    elif is_call(node, operator.mul):
        a, b = node.args
        x, denom = (a, b) if is_call(b, torch.rsqrt) else (b, a)
        if not is_call(denom, torch.rsqrt):
            return None
    else:
        return None
    total: Any = denom.args[0]
    if not is_call(total, operator.add):
        return None
    mean, eps = total.args
    if scalar(eps) is None:
        mean, eps = eps, mean
    red = reduction(mean, "mean")
    shape = shape_of(x)
    if red is None or not red.keepdim or red.dims is None or shape is None or scalar(eps) is None:
        return None
    span = _span(red.dims, len(shape))
    if span is None or _square_of(red.x) is not x:
        return None
    return x, span, float(eps)  # type: ignore[arg-type]


def rms_norm_kernel(gm: fx.GraphModule) -> int:
    """An RMS normalisation -> KernelOPT's own Triton normalisation
    (``family_kernels.kernelopt_norm``): as written out, ``x / sqrt(mean(x ** 2, dims,
    keepdim=True) + eps)`` (or ``x * rsqrt(...)``; ``x * x``, ``square``, ``pow`` alike) over
    contiguous dimensions (the channels, or the last ones), or ``nn.RMSNorm``.

    Faster: written out it is a reduction and a broadcast division, two passes over memory
    (Inductor fuses them into one kernel only where the reduction is short and along memory);
    over the channels of an NCHW tensor the reduction is strided. The kernel takes the mean
    of squares for a block of neighbouring columns and scales the same block right after, so
    the second read comes from cache. A reassociation: the moments are taken blockwise in
    float32 (mean of squares as M2 / n + mean^2), and the division becomes a product by the
    reciprocal root.
    """
    from kernelopt_jupyter.agents.rewrites.family_kernels import kernelopt_norm

    count = 0
    g = gm.graph
    for node in list(g.nodes):
        mod = module_of(gm, node)
        weight: Any = None
        if isinstance(mod, nn.RMSNorm):
            if not plain_torch_layer(mod) or len(node.args) != 1 or node.kwargs:
                continue
            x = node.args[0]
            shape = shape_of(x)
            dims = len(mod.normalized_shape)
            if shape is None or tuple(shape[len(shape) - dims :]) != tuple(mod.normalized_shape):
                continue
            span = (len(shape) - dims, len(shape))
            eps = mod.eps if mod.eps is not None else torch.finfo(torch.float32).eps
            if mod.eps is None and _dtype(x) != torch.float32:
                continue  # the default eps follows the dtype: float32's only
            if mod.weight is not None:
                with g.inserting_before(node):
                    weight = g.get_attr(f"{node.target}.weight")
        else:
            parts = _rms_parts(node)
            if parts is None:
                continue
            x, span, eps = parts
        if not kernel_dtype(x) or _dtype(node) != _dtype(x):
            continue
        with g.inserting_before(node):
            new = g.call_function(kernelopt_norm, (x, *span, weight, None, eps, True, False))
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


def layer_norm_kernel(gm: fx.GraphModule) -> int:
    """A LayerNorm (``nn.LayerNorm`` or ``F.layer_norm``, with or without weight and bias) ->
    KernelOPT's own Triton normalisation (``family_kernels.kernelopt_norm``) over the last
    dimensions.

    Faster: where the normalised rows are few and long (a LayerNorm over a whole image), the
    vendor's one-block-per-row kernel leaves most of the GPU idle; the kernel splits each row
    across programs (partial moments, then a combine-and-normalise pass), and for many short
    rows normalises each block right after reading it. A reassociation: the moments are
    taken blockwise in float32 and combined by Chan's formula.
    """
    from kernelopt_jupyter.agents.rewrites.family_kernels import kernelopt_norm

    count = 0
    g = gm.graph
    for node in list(g.nodes):
        mod = module_of(gm, node)
        weight: Any
        bias: Any
        if isinstance(mod, nn.LayerNorm):
            if not plain_torch_layer(mod) or len(node.args) != 1 or node.kwargs:
                continue
            normalized, eps = tuple(mod.normalized_shape), mod.eps
            weight = bias = None
            named = [n for n in ("weight", "bias") if getattr(mod, n, None) is not None]
        elif is_call(node, F.layer_norm):
            normalized = arg(node, 1, "normalized_shape")
            weight, bias = arg(node, 2, "weight"), arg(node, 3, "bias")
            eps, named = arg(node, 4, "eps", 1e-5), []
            if not isinstance(normalized, list | tuple) or not all(
                type(n) is int for n in normalized
            ):
                continue
            normalized = tuple(normalized)
        else:
            continue
        x = node.args[0]
        shape = shape_of(x)
        if shape is None or not normalized or scalar(eps) is None:
            continue
        if tuple(shape[len(shape) - len(normalized) :]) != normalized or not kernel_dtype(x):
            continue
        with g.inserting_before(node):
            attrs = {n: g.get_attr(f"{node.target}.{n}") for n in named}
            weight = attrs.get("weight", weight)
            bias = attrs.get("bias", bias)
            span = (len(shape) - len(normalized), len(shape))
            new = g.call_function(kernelopt_norm, (x, *span, weight, bias, eps, False, False))
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


_INSTANCE_NORMS = (nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d)


def instance_norm_kernel(gm: fx.GraphModule) -> int:
    """An instance normalisation from the input's own statistics (``nn.InstanceNorm1d/2d/3d``
    without running statistics, or ``F.instance_norm`` without them; affine or not) on a
    batched ``(N, C, *spatial)`` input -> KernelOPT's own Triton normalisation
    (``family_kernels.kernelopt_norm``) over the spatial dimensions, a weight and bias per
    channel.

    Faster: one read of each (image, channel) plane for its moments and a second right
    after it from cache, where the vendor's lowering makes a statistics pass and a
    normalisation pass over memory. A reassociation: the moments are taken blockwise in
    float32 and combined by Chan's formula.
    """
    from kernelopt_jupyter.agents.rewrites.family_kernels import kernelopt_norm

    count = 0
    g = gm.graph
    for node in list(g.nodes):
        mod = module_of(gm, node)
        weight: Any
        bias: Any
        if isinstance(mod, _INSTANCE_NORMS):
            if not plain_torch_layer(mod) or len(node.args) != 1 or node.kwargs:
                continue
            if mod.track_running_stats:
                continue  # eval mode would read the running statistics
            dims, eps = _INSTANCE_NORMS.index(type(mod)) + 1, mod.eps
            weight = bias = None
            named = ["weight", "bias"] if mod.affine else []
        elif is_call(node, F.instance_norm):
            if arg(node, 1, "running_mean") is not None or arg(node, 2, "running_var") is not None:
                continue
            if arg(node, 5, "use_input_stats", True) is not True:
                continue
            weight, bias = arg(node, 3, "weight"), arg(node, 4, "bias")
            eps, named, dims = arg(node, 7, "eps", 1e-5), [], None
        else:
            continue
        x = node.args[0]
        shape = shape_of(x)
        if shape is None or len(shape) < 3 or (dims is not None and len(shape) != dims + 2):
            continue
        if scalar(eps) is None or not kernel_dtype(x) or (weight is None) != (bias is None):
            continue
        with g.inserting_before(node):
            attrs = {n: g.get_attr(f"{node.target}.{n}") for n in named}
            weight = attrs.get("weight", weight)
            bias = attrs.get("bias", bias)
            new = g.call_function(
                kernelopt_norm, (x, 2, len(shape), weight, bias, eps, False, True)
            )
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


def _arg_call(node: fx.Node) -> tuple[Any, Any, Any, bool] | None:
    """``(x, dim, keepdim, largest)`` of ``torch.argmax/argmin(x, dim, keepdim)`` or the
    method, or of ``torch.max/min(x, dim)[1]`` (``.indices``) whose values nobody reads."""
    if is_call(node, torch.argmax, torch.argmin) or (
        node.op == "call_method" and node.target in ("argmax", "argmin")
    ):
        largest = node.target in (torch.argmax, "argmax")
        if len(node.args) > 3 or set(node.kwargs) - {"input", "dim", "keepdim"}:
            return None
        return arg(node, 0, "input"), arg(node, 1, "dim"), arg(node, 2, "keepdim", False), largest
    if node.op != "call_function" or len(node.args) != 2:
        return None
    src, key = node.args
    if not (
        (node.target is operator.getitem and key == 1)
        or (node.target is getattr and key == "indices")
    ):
        return None
    if not isinstance(src, fx.Node) or len(src.users) != 1:
        return None  # the values are read too: the op that gives both stays
    if not (
        is_call(src, torch.max, torch.min)
        or (src.op == "call_method" and src.target in ("max", "min"))
    ):
        return None
    if len(src.args) > 3 or set(src.kwargs) - {"dim", "keepdim"} or arg(src, 1, "dim") is None:
        return None
    largest = src.target in (torch.max, "max")
    return src.args[0], arg(src, 1, "dim"), arg(src, 2, "keepdim", False), largest


def arg_reduce_kernel(gm: fx.GraphModule) -> int:
    """The index of the largest or smallest value along one dimension (``torch.argmax``/
    ``argmin``, their methods, or the indices of ``torch.max/min(x, dim)`` when the values
    are not read) -> KernelOPT's own Triton kernel (``family_kernels.kernelopt_arg_reduce``).

    Faster: one read of the tensor, the running extreme and its index kept in registers for
    a block of neighbouring columns, where the vendor's reduction over a middle dimension
    reads the strided rows with little reuse. Bit-exact: comparisons only (the first index
    of ties, a NaN as the extreme, as torch).
    """
    from kernelopt_jupyter.agents.rewrites.family_kernels import kernelopt_arg_reduce

    count = 0
    g = gm.graph
    for node in list(g.nodes):
        parts = _arg_call(node)
        if parts is None:
            continue
        x, dim, keepdim, largest = parts
        shape = shape_of(x)
        dims = normal_dims(x, dim) if shape else None
        if dims is None or len(dims) != 1 or type(keepdim) is not bool or not kernel_dtype(x):
            continue
        with g.inserting_before(node):
            new = g.call_function(kernelopt_arg_reduce, (x, dims[0], keepdim, largest))
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


# --------------------------------------------------------------------------- losses


@dataclass(frozen=True)
class _Loss:
    """A loss the kernels compute: a pointwise one (``kernelopt_pointwise_loss(a, b, form,
    param, log_a, reduction)``) or a row one (``kernelopt_row_loss(a, b, c, dim, form,
    param, eps, reduction)``)."""

    form: str
    operands: tuple[Any, ...]
    reduction: str
    param: Any = 0.0
    eps: float = 0.0
    dim: int = -1
    log_a: bool = False

    @property
    def rowwise(self) -> bool:
        from kernelopt_jupyter.agents.rewrites.family_kernels import ROW_LOSSES

        return self.form in ROW_LOSSES


def _only_keywords(
    node: fx.Node, names: tuple[str, ...], defaults: dict[str, Any]
) -> dict[str, Any] | None:
    """A call's arguments by name (positional ones in ``names``' order), ``defaults`` filled
    in; None when it passes one ``names`` does not list."""
    if len(node.args) > len(names) or set(node.kwargs) - set(names):
        return None
    bound = dict(defaults)
    bound.update(zip(names, node.args, strict=False))
    bound.update(node.kwargs)
    return bound


#: Loss functions and layers of one value per element, by the kernel's form.
_POINTWISE_FN: dict[Any, str] = {
    F.mse_loss: "mse", F.l1_loss: "l1", F.smooth_l1_loss: "smooth_l1", F.huber_loss: "huber",
    F.kl_div: "kl",
}  # fmt: skip
_POINTWISE_LAYERS: dict[type, str] = {
    nn.MSELoss: "mse", nn.L1Loss: "l1", nn.SmoothL1Loss: "smooth_l1", nn.HuberLoss: "huber",
    nn.KLDivLoss: "kl",
}  # fmt: skip
#: Each pointwise loss function's parameters, in order.
_LOSS_ARGS: dict[str, tuple[str, ...]] = {
    "mse": ("input", "target", "size_average", "reduce", "reduction", "weight"),
    "l1": ("input", "target", "size_average", "reduce", "reduction", "weight"),
    "smooth_l1": ("input", "target", "size_average", "reduce", "reduction", "beta"),
    "huber": ("input", "target", "reduction", "delta", "weight"),
    "kl": ("input", "target", "size_average", "reduce", "reduction", "log_target"),
}


def _functional_loss(gm: fx.GraphModule, node: fx.Node) -> _Loss | None:
    """The loss a ``torch.nn.functional`` loss call or a loss layer computes (its own
    reduction, of everything), None for anything else or an option the kernels lack
    (class weights, label smoothing, legacy ``size_average``/``reduce``, ``reduction="none"``,
    a triplet loss's swap or another norm)."""
    mod = module_of(gm, node)
    if mod is not None and not plain_torch_layer(mod):
        return None
    form = _POINTWISE_FN.get(node.target) if node.op == "call_function" else None
    if form is None and mod is not None:
        form = _POINTWISE_LAYERS.get(type(mod))
    if form is not None:
        names = _LOSS_ARGS[form]
        bound: dict[str, Any] | None
        if mod is not None:
            if len(node.args) != 2 or node.kwargs:
                return None
            bound = {"input": node.args[0], "target": node.args[1], "reduction": mod.reduction}
            bound["beta"] = getattr(mod, "beta", 1.0)
            bound["delta"] = getattr(mod, "delta", 1.0)
            bound["log_target"] = getattr(mod, "log_target", False)
        else:
            defaults = {"size_average": None, "reduce": None, "reduction": "mean", "weight": None,
                        "beta": 1.0, "delta": 1.0, "log_target": False}  # fmt: skip
            bound = _only_keywords(node, names, defaults)
            if bound is None or any(bound.get(k) is not None for k in ("size_average", "reduce")):
                return None
            if bound.get("weight") is not None:
                return None
        a, b, reduction = bound["input"], bound["target"], bound["reduction"]
        if reduction not in ("mean", "sum") and not (form == "kl" and reduction == "batchmean"):
            return None
        param = {"smooth_l1": bound["beta"], "huber": bound["delta"]}.get(form, 0.0)
        if scalar(param) is None or bound["log_target"] not in (False, True):
            return None
        if form == "kl" and bound["log_target"]:
            form = "kl_log_target"
        log_a = form == "kl" and is_call(a, torch.log) and len(a.args) == 1 and not a.kwargs
        return _Loss(form, (a.args[0] if log_a else a, b), reduction, float(param), log_a=log_a)
    return _row_loss_call(node, mod)


def _row_loss_call(node: fx.Node, mod: Any) -> _Loss | None:
    """:func:`_functional_loss` for the cross entropy (and the negative log-likelihood of a
    log-softmax) and the triplet margin loss."""
    bound: dict[str, Any] | None
    if isinstance(mod, nn.CrossEntropyLoss | nn.NLLLoss):
        if len(node.args) != 2 or node.kwargs or mod.weight is not None:
            return None
        bound = {"input": node.args[0], "target": node.args[1], "reduction": mod.reduction,
                 "ignore_index": mod.ignore_index,
                 "label_smoothing": getattr(mod, "label_smoothing", 0.0)}  # fmt: skip
        nll = isinstance(mod, nn.NLLLoss)
    elif is_call(node, F.cross_entropy, F.nll_loss):
        nll = node.target is F.nll_loss
        names = ("input", "target", "weight", "size_average", "ignore_index", "reduce",
                 "reduction", "label_smoothing")[: 7 if nll else 8]  # fmt: skip
        bound = _only_keywords(node, names, {
            "weight": None, "size_average": None, "ignore_index": -100, "reduce": None,
            "reduction": "mean", "label_smoothing": 0.0,
        })  # fmt: skip
        if bound is None or any(bound[k] is not None for k in ("weight", "size_average", "reduce")):
            return None
    elif isinstance(mod, nn.TripletMarginLoss) or is_call(node, F.triplet_margin_loss):
        if mod is not None:
            if len(node.args) != 3 or node.kwargs:
                return None
            bound = {"anchor": node.args[0], "positive": node.args[1],
                     "negative": node.args[2], "margin": mod.margin, "p": mod.p,
                     "eps": mod.eps, "swap": mod.swap, "reduction": mod.reduction}  # fmt: skip
        else:
            names = ("anchor", "positive", "negative", "margin", "p", "eps", "swap",
                     "size_average", "reduce", "reduction")  # fmt: skip
            bound = _only_keywords(node, names, {
                "margin": 1.0, "p": 2, "eps": 1e-6, "swap": False, "size_average": None,
                "reduce": None, "reduction": "mean",
            })  # fmt: skip
            if bound is None or bound["size_average"] is not None or bound["reduce"] is not None:
                return None
        if bound["swap"] is not False or scalar(bound["p"]) != 2.0:
            return None
        if scalar(bound["margin"]) is None or scalar(bound["eps"]) is None:
            return None
        if bound["reduction"] not in ("mean", "sum"):
            return None
        operands = (bound["anchor"], bound["positive"], bound["negative"])
        return _Loss("triplet", operands, bound["reduction"], float(bound["margin"]),
                     float(bound["eps"]))  # fmt: skip
    else:
        return None
    x, target = bound["input"], bound["target"]
    if bound["reduction"] not in ("mean", "sum") or type(bound["ignore_index"]) is not int:
        return None
    if scalar(bound.get("label_smoothing", 0.0)) != 0.0:
        return None
    rank = len(shape_of(x) or ())
    dim = 1 if rank > 1 else 0
    if nll:  # the negative log-likelihood of a log-softmax over the classes
        logits = _log_softmax_of(x)
        if logits is None or logits[1] != dim:
            return None
        x = logits[0]
    return _Loss("cross_entropy", (x, target), bound["reduction"], bound["ignore_index"], dim=dim)


def _written_loss(gm: fx.GraphModule, node: fx.Node) -> _Loss | None:
    """A loss written out, reduced over everything (see :func:`_total`): ``(a - b) ** 2``
    (any square), ``abs(a - b)``, ``relu(m - a * b)`` (a hinge; ``clamp(min=0)`` is a relu),
    ``1 - cosine_similarity(a, b, dim, eps)`` (the function or the layer),
    ``relu(pairwise_distance(a, p) - pairwise_distance(a, n) + m)``, a KL divergence
    ``b * (log(b) - a)`` (:func:`_kl_term`), a Huber or smooth L1 ``torch.where``
    (:func:`_huber_term`), or the negated log-probability of each row's class picked by
    ``gather`` (a cross entropy, :func:`_picked_log_prob`)."""
    total = _total(node)
    if total is None:
        return None
    term, kind, negated = total
    rows = kind in ("mean", "sum")  # a row loss has no batchmean
    if negated:
        picked = _picked_log_prob(term)
        shape = shape_of(term) or ()
        if kind == "batchmean" and len(shape) == 2 and shape[1] == 1:
            kind = "mean"  # one picked value per row: the batch's mean is the rows' mean
        if picked is None or kind not in ("mean", "sum"):
            return None
        # gather refuses a negative index, so -100 ignores no row torch would compute
        return _Loss("cross_entropy", picked[:2], kind, -100, dim=picked[2])
    square = _square_of(term)
    if is_call(square, operator.sub):
        return _Loss("mse", tuple(square.args), kind)
    if is_call(term, torch.abs) and is_call(term.args[0], operator.sub):
        return _Loss("l1", tuple(term.args[0].args), kind)
    kl = _kl_term(term)
    if kl is not None:
        return _Loss("kl_written", kl[:2], kind, log_a=kl[2])
    huber = _huber_term(term)
    if huber is not None:
        return _Loss(huber[0], huber[1:3], kind, huber[3])
    if is_call(term, operator.sub) and scalar(term.args[0]) == 1.0 and rows:
        cos = _cosine(gm, term.args[1])
        if cos is not None:
            return _Loss("cosine", cos[:2], kind, eps=cos[3], dim=cos[2])
    if not is_call(term, torch.relu):
        return None
    inner: Any = term.args[0]
    product: Any = inner.args[1] if is_call(inner, operator.sub) else None
    if is_call(product, operator.mul) and scalar(inner.args[0]) is not None:
        return _Loss("hinge", tuple(product.args), kind, float(inner.args[0]))
    if is_call(inner, operator.add) and rows:
        gap, margin = inner.args
        if scalar(gap) is not None:
            gap, margin = margin, gap
        if scalar(margin) is not None and is_call(gap, operator.sub):
            pos, neg = (_distance(d) for d in gap.args)
            if pos is not None and neg is not None and pos[0] is neg[0] and pos[2] == neg[2]:
                operands = (pos[0], pos[1], neg[1])
                return _Loss("triplet", operands, kind, float(margin), pos[2])
    return None


def _total(node: Any) -> tuple[Any, str, bool] | None:
    """``(term, reduction, negated)`` when ``node`` reduces ``term`` to one value: ``mean``
    or ``sum`` over everything, ``sum / n`` (``n`` the element count: a mean; the first
    dimension's size: a ``batchmean``; a number or the size read off a tensor), or the
    ``mean`` of the rows' ``sum`` (a ``batchmean``). ``negated``: a negation before or after
    the reduction."""
    negated = is_call(node, operator.neg)
    if negated:
        node = node.args[0]
    divisor: Any = None
    if is_call(node, operator.truediv):
        node, divisor = node.args
        if is_call(node, operator.neg):
            node, negated = node.args[0], not negated
    red = reduction(node, "mean", "sum")
    shape = shape_of(red.x) if red is not None else None
    if red is None or shape is None or red.keepdim:
        return None
    rank, kind = len(shape), red.kind
    term: Any = red.x
    if red.dims is not None and red.dims != tuple(range(rank)):
        return None
    inner = reduction(term, "sum")
    if kind == "mean" and divisor is None and inner is not None and not inner.keepdim:
        rows = shape_of(inner.x)
        if rows is not None and len(rows) >= 2 and inner.dims == tuple(range(1, len(rows))):
            term, kind, shape = inner.x, "batchmean", rows
    if divisor is not None:
        n = _size_value(divisor)
        count = 1
        for size in shape:
            count *= size
        if kind != "sum" or n is None:
            return None
        if n == count:
            kind = "mean"
        elif shape and n == shape[0]:
            kind = "batchmean"
        else:
            return None
    if is_call(term, operator.neg):
        term, negated = term.args[0], not negated
    return term, kind, negated


def _size_value(value: Any) -> float | None:
    """A divisor's value: a number, or a size read off a tensor of known shape
    (``x.size(d)``, ``x.shape[d]``, ``x.size()[d]``, ``x.numel()``)."""
    if scalar(value) is not None:
        return scalar(value)
    if not isinstance(value, fx.Node) or value.kwargs:
        return None
    source: Any = value.args[0] if value.args else None
    dim: Any = None
    if value.op == "call_method" and value.target == "size" and len(value.args) == 2:
        dim = value.args[1]
    elif is_call(value, operator.getitem) and isinstance(source, fx.Node):
        dim = value.args[1]
        if (is_call(source, getattr) and source.args[1:] == ("shape",)) or (
            source.op == "call_method" and source.target == "size" and len(source.args) == 1
        ):
            source = source.args[0]
        else:
            return None
    elif value.op == "call_method" and value.target == "numel" and len(value.args) == 1:
        shape = shape_of(source)
        count = 1
        for size in shape or ():
            count *= size
        return float(count) if shape is not None else None
    shape = shape_of(source)
    if shape is None or type(dim) is not int or not -len(shape) <= dim < len(shape):
        return None
    return float(shape[dim])


def _log_of(node: Any) -> Any:
    """``x`` when ``node`` is ``torch.log(x)`` (canonical), else None."""
    if is_call(node, torch.log) and len(node.args) == 1 and not node.kwargs:
        return node.args[0]
    return None


def _log_softmax_of(node: Any) -> tuple[Any, int] | None:
    """``(x, dim)`` when ``node`` is ``log_softmax(x, dim)`` or ``log(softmax(x, dim))``
    (canonical: ``dim`` non-negative)."""
    soft = _log_of(node)
    for call, fn in ((node, torch.log_softmax), (soft, torch.softmax)):
        if is_call(call, fn) and len(call.args) == 2 and not call.kwargs:
            return call.args[0], call.args[1]
    return None


def _kl_term(term: Any) -> tuple[Any, Any, bool] | None:
    """``(a, b, log_a)`` when ``term`` is ``b * (log(b) - a)`` (either factor first), or
    ``b * log(b / x)`` (``a`` is then ``x``, its log taken in the kernel: ``log_a``); a
    ``log(x)`` for ``a`` is taken in as well."""
    if not is_call(term, operator.mul):
        return None
    for b, rest in (term.args, term.args[::-1]):
        if not isinstance(b, fx.Node):
            continue
        if is_call(rest, operator.sub) and _log_of(rest.args[0]) is b:
            a = rest.args[1]
            x = _log_of(a)
            return (x, b, True) if x is not None else (a, b, False)
        ratio = _log_of(rest)
        if is_call(ratio, operator.truediv) and ratio.args[0] is b:
            x = ratio.args[1]
            return (x, b, True) if isinstance(x, fx.Node) else None
    return None


def _same(x: Any, y: Any) -> bool:
    """Whether two values compute the same thing: one node, or the same call of the same
    values (an expression the user wrote twice)."""
    if x is y:
        return True
    if not (isinstance(x, fx.Node) and isinstance(y, fx.Node)) or x.op != "call_function":
        return False
    if y.op != "call_function" or x.target is not y.target or x.kwargs != y.kwargs:
        return False
    if len(x.args) != len(y.args):
        return False
    return all(_same(a, b) for a, b in zip(x.args, y.args, strict=True))


def _factors(node: Any) -> tuple[list[Any], float]:
    """The values and the constant a product is made of (``x ** 2`` is two ``x``; ``/ c`` a
    factor ``1 / c``)."""
    c = scalar(node)
    if c is not None:
        return [], c
    square = _square_of(node)
    if square is not None:
        return [square, square], 1.0
    if is_call(node, operator.mul):
        left, right = (_factors(x) for x in node.args)
        return left[0] + right[0], left[1] * right[1]
    if is_call(node, operator.truediv) and scalar(node.args[1]) not in (None, 0.0):
        values, k = _factors(node.args[0])
        return values, k / float(node.args[1])
    return [node], 1.0


def _huber_term(term: Any) -> tuple[str, Any, Any, float] | None:
    """``(form, a, b, param)`` when ``term`` is ``torch.where(|d| < c, 0.5 * d * d,
    c * (|d| - 0.5 * c))`` with ``d = a - b`` (Huber, ``delta = c``) or ``torch.where(|d| <
    c, 0.5 * d * d / c, |d| - 0.5 * c)`` (smooth L1, ``beta = c``): any order of the factors,
    squares of ``d`` or of ``|d|``, ``|d|`` and ``d`` written once or again."""
    if not is_call(term, torch.where) or len(term.args) != 3 or term.kwargs:
        return None
    cond, near, far = term.args
    bound = _less_than(cond)
    if bound is None or not is_call(bound[0], torch.abs) or bound[1] <= 0.0:
        return None
    diff, c = bound[0].args[0], bound[1]
    if not is_call(diff, operator.sub) or len(diff.args) != 2:
        return None

    def absolute(x: Any) -> bool:
        return is_call(x, torch.abs) and _same(x.args[0], diff)

    values, half = _factors(near)
    if len(values) != 2 or not (
        all(_same(v, diff) for v in values) or all(absolute(v) for v in values)
    ):
        return None
    outer, scale = _factors(far)
    if len(outer) != 1 or not is_call(outer[0], operator.sub):
        return None
    distance, offset = outer[0].args
    if not absolute(distance) or scalar(offset) is None or not _close(offset, 0.5 * c):
        return None
    a, b = diff.args
    if _close(half, 0.5) and _close(scale, c):
        return "huber", a, b, c
    if _close(half, 0.5 / c) and _close(scale, 1.0):
        return "smooth_l1", a, b, c
    return None


def _close(x: Any, y: float) -> bool:
    """Two constants equal to rounding (``0.5 * d * d / c`` against ``d * d / (2 * c)``)."""
    return abs(float(x) - y) <= 1e-12 * max(1.0, abs(y))


def _less_than(node: Any) -> tuple[Any, float] | None:
    """``(x, c)`` when ``node`` is ``x < c``, ``x <= c``, ``c > x`` or ``c >= x`` (operators,
    ``torch.lt`` and kin, or their methods) for a number ``c``."""
    if not isinstance(node, fx.Node) or len(node.args) != 2 or node.kwargs:
        return None
    names: dict[Any, str] = {
        operator.lt: "lt", operator.le: "le", operator.gt: "gt", operator.ge: "ge",
        torch.lt: "lt", torch.le: "le", torch.gt: "gt", torch.ge: "ge",
    }  # fmt: skip
    if node.op == "call_function":
        op = names.get(node.target)
    else:
        op = str(node.target) if node.op == "call_method" else None
    x, c = node.args
    if op in ("gt", "ge"):
        x, c = c, x
    elif op not in ("lt", "le"):
        return None
    bound = scalar(c)
    return (x, bound) if bound is not None and isinstance(x, fx.Node) else None


def _picked_log_prob(node: Any) -> tuple[Any, Any, int] | None:
    """``(logits, classes, dim)`` when ``node`` is ``log_softmax(logits, dim)`` (or
    ``log(softmax(...))``) gathered along ``dim`` at ``classes`` with a size-1 dimension
    inserted there (``y[:, None]``, ``y.unsqueeze(1)``, ``y.view(-1, 1)``), squeezed or not."""
    if isinstance(node, fx.Node) and node.op == "call_method" and node.target == "squeeze":
        node = node.args[0] if len(node.args) == 2 and not node.kwargs else None
    if not isinstance(node, fx.Node) or not (
        is_call(node, torch.gather) or (node.op == "call_method" and node.target == "gather")
    ):
        return None
    names = ("input", "dim", "index")
    if len(node.args) > 3 or set(node.kwargs) - set(names[1:]):
        return None
    bound: dict[str, Any] = dict(zip(names, node.args, strict=False)) | dict(node.kwargs)
    logits = _log_softmax_of(bound.get("input"))
    x_shape, index = shape_of(logits[0]) if logits else None, bound.get("index")
    if logits is None or x_shape is None or type(bound.get("dim")) is not int:
        return None
    x, dim = logits
    if bound["dim"] % len(x_shape) != dim or not isinstance(index, fx.Node):
        return None
    want = list(x_shape)
    want[dim] = 1
    if shape_of(index) != tuple(want) or not _inserts_size_one(index):
        return None
    classes = index.args[0]
    if shape_of(classes) != tuple(x_shape[:dim] + x_shape[dim + 1 :]):
        return None
    return x, classes, dim


def _inserts_size_one(node: fx.Node) -> bool:
    """Whether ``node`` only reshapes its input (``unsqueeze``, ``view``, ``reshape``, an
    index of full slices and ``None``): the caller checks the shapes say a size-1
    dimension was inserted, which keeps every element's order."""
    if node.op == "call_method" and node.target in ("unsqueeze", "view", "reshape"):
        return not node.kwargs
    if is_call(node, torch.unsqueeze, torch.reshape) and not node.kwargs:
        return True
    if is_call(node, operator.getitem) and isinstance(node.args[1], tuple):
        full = slice(None)
        return all(k is None or k is Ellipsis or k == full for k in node.args[1])
    return False


def _cosine(gm: fx.GraphModule, node: Any) -> tuple[Any, Any, int, float] | None:
    """``(a, b, dim, eps)`` of ``torch.cosine_similarity(a, b, dim, eps)`` (``F.`` alike) or
    an ``nn.CosineSimilarity`` layer's call."""
    mod = module_of(gm, node) if isinstance(node, fx.Node) else None
    bound: dict[str, Any] | None
    if isinstance(mod, nn.CosineSimilarity) and plain_torch_layer(mod):
        if len(node.args) != 2 or node.kwargs:
            return None
        bound = {"x1": node.args[0], "x2": node.args[1], "dim": mod.dim, "eps": mod.eps}
    elif is_call(node, torch.cosine_similarity):
        bound = _only_keywords(node, ("x1", "x2", "dim", "eps"), {"dim": 1, "eps": 1e-8})
    else:
        return None
    if bound is None or scalar(bound["eps"]) is None:
        return None
    dims = normal_dims(bound["x1"], bound["dim"])
    if dims is None or len(dims) != 1:
        return None
    return bound["x1"], bound["x2"], dims[0], float(bound["eps"])


def _distance(node: Any) -> tuple[Any, Any, float] | None:
    """``(a, b, eps)`` of ``torch.pairwise_distance(a, b, p=2, eps)`` (``F.`` alike)."""
    if not is_call(node, torch.pairwise_distance):
        return None
    bound = _only_keywords(
        node, ("x1", "x2", "p", "eps", "keepdim"), {"p": 2.0, "eps": 1e-6, "keepdim": False}
    )
    if bound is None or scalar(bound["p"]) != 2.0 or bound["keepdim"] is not False:
        return None
    return (
        (bound["x1"], bound["x2"], float(bound["eps"]))
        if scalar(bound["eps"]) is not None
        else None
    )


def _loss_fits(loss: _Loss) -> bool:
    """Whether the kernels take the loss's operands: float32/16/bf16 (class indices int64),
    of the output's dtype; a pointwise loss's operands each the broadcast shape or one block
    of its dimensions; a row loss's of one shape, a cross entropy's indices the logits'
    shape without the class dimension."""
    from kernelopt_jupyter.agents.rewrites.epilogue import own_broadcast_index

    shapes = [shape_of(x) for x in loss.operands]
    if any(s is None for s in shapes):
        return False
    first = loss.operands[0]
    if loss.form == "cross_entropy":
        x, target = shapes
        assert x is not None and target is not None
        want = x[: loss.dim] + x[loss.dim + 1 :]
        return kernel_dtype(first) and _dtype(loss.operands[1]) == torch.int64 and target == want
    if not all(kernel_dtype(x) and _dtype(x) == _dtype(first) for x in loss.operands):
        return False
    if loss.rowwise:
        rank = len(shapes[0] or ())
        if loss.form == "triplet" and (rank not in (1, 2) or loss.dim not in (-1, rank - 1)):
            return False
        return all(s == shapes[0] for s in shapes)
    try:
        out = torch.broadcast_shapes(*[torch.Size(s) for s in shapes if s is not None])
    except RuntimeError:
        return False
    return all(
        own_broadcast_index(torch.empty(s, device="meta"), out) is not None
        for s in shapes
        if s is not None
    )


def _loss_at(gm: fx.GraphModule, node: fx.Node) -> _Loss | None:
    """The loss ``node`` computes, where the kernels take it."""
    if node.op not in ("call_function", "call_module"):
        return None
    loss = _functional_loss(gm, node) or _written_loss(gm, node)
    if loss is None or not _loss_fits(loss) or _dtype(node) != _dtype(loss.operands[0]):
        return None
    return loss


def loss_kernel(gm: fx.GraphModule) -> int:
    """A loss reduced to its mean or sum -> KernelOPT's own Triton reduction
    (``family_kernels.kernelopt_pointwise_loss`` / ``kernelopt_row_loss``), however it is
    spelled: ``torch.nn.functional`` (``mse_loss``, ``l1_loss``, ``smooth_l1_loss``,
    ``huber_loss``, ``kl_div`` (its ``batchmean`` too; a ``log`` of the input taken in),
    ``cross_entropy``, ``nll_loss`` of a ``log_softmax``, ``triplet_margin_loss``), their
    layers, or written out (``mean((a - b) ** 2)``, ``mean(abs(a - b))``, ``mean(clamp(1 - a
    * b, min=0))``, ``mean(1 - cosine_similarity(a, b))``, ``mean(relu(pairwise_distance(a,
    p) - pairwise_distance(a, n) + margin))``, ``sum(t * (log(t) - a)) / n``, ``-mean(
    log_softmax(x, 1).gather(1, y[:, None]))``, ``mean(torch.where(abs(d) < c, 0.5 * d * d,
    c * (abs(d) - 0.5 * c)))``): matched on the canonical graph, so methods, functions,
    operand orders and divisors read off a tensor's shape all reach the same kernel.

    Faster: the vendor's losses write the elementwise terms (or the rows' logsumexp, norms,
    distances) to memory and reduce them in further passes; the kernel reads each operand
    once (a broadcast one in place) and reduces as it goes, a second one-program launch
    adding the partial sums in a fixed order. A reassociation of the sums, in float32.
    """
    from kernelopt_jupyter.agents.rewrites.family_kernels import (
        kernelopt_pointwise_loss,
        kernelopt_row_loss,
    )

    count = 0
    g = gm.graph
    for node in list(g.nodes):
        loss = _loss_at(gm, node)
        user = only_user(node)
        if loss is None or (user is not None and _loss_at(gm, user) is not None):
            continue  # a division or negation after it is part of the loss: matched there
        with g.inserting_before(node):
            if loss.rowwise:
                a, b, *rest = loss.operands
                c = rest[0] if rest else None
                args: tuple[Any, ...] = (a, b, c, loss.dim, loss.form, loss.param, loss.eps,
                                         loss.reduction)  # fmt: skip
                new = g.call_function(kernelopt_row_loss, args)
            else:
                args = (*loss.operands, loss.form, loss.param, loss.log_a, loss.reduction)
                new = g.call_function(kernelopt_pointwise_loss, args)
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


# --------------------------------------------------------------------------- batch norm

_BATCH_NORMS: dict[type, tuple[int, ...]] = {
    nn.BatchNorm1d: (2, 3),
    nn.BatchNorm2d: (4,),
    nn.BatchNorm3d: (5,),
}


def _left_to_the_fold(gm: fx.GraphModule, node: fx.Node, layer: Any) -> bool:
    """Whether ``fold_batchnorm`` folds the eval-mode BatchNorm ``layer`` called at ``node``
    into the convolution or linear layer before it (the same conditions): no pass over the
    output is left to make faster."""
    from kernelopt_jupyter.agents.rewrites.rules import conv_dims

    if layer.training or layer.running_var is None:
        return False
    src = node.args[0]
    if not isinstance(src, fx.Node) or only_user(src) is not node:
        return False
    if conv_dims(gm, src) is not None:
        return True
    return is_linear(gm, src) and len(shape_of(src) or ()) == 2


def batch_norm_kernel(gm: fx.GraphModule) -> int:
    """A batch normalisation (``nn.BatchNorm1d/2d/3d``, or ``F.batch_norm`` with its mode,
    momentum and epsilon constants) -> KernelOPT's own Triton normalisation
    (``family_kernels.kernelopt_batch_norm``): in training, the batch's statistics per
    channel and the running statistics updated as torch updates them (momentum, or the
    cumulative average; the unbiased variance; the batch counter); in evaluation, the
    running statistics. A layer is read when called (``kernelopt_batch_norm_layer``), so
    the candidate follows ``train()``/``eval()`` as the layer does. An eval-mode layer that
    ``fold_batchnorm`` folds into the convolution or linear layer before it is left to the
    fold, which removes the pass altogether.

    Faster: the vendor's training-mode kernel reads the input twice from memory (the
    statistics, then the normalisation); the kernel takes a block of one channel's values
    and normalises it right after its moments where the channel fits a program, and splits
    a long channel across programs where channels are too few to fill the GPU. A
    reassociation: the moments are taken blockwise in float32 and combined by Chan's
    formula.
    """
    from kernelopt_jupyter.agents.rewrites.family_kernels import (
        kernelopt_batch_norm,
        kernelopt_batch_norm_layer,
    )

    count = 0
    g = gm.graph
    for node in list(g.nodes):
        mod = module_of(gm, node)
        if mod is not None:
            ranks = _BATCH_NORMS.get(type(mod))
            if ranks is None or not plain_torch_layer(mod) or len(node.args) != 1 or node.kwargs:
                continue
            x = node.args[0]
            shape = shape_of(x)
            if shape is None or len(shape) not in ranks or shape[1] != mod.num_features:
                continue
            if not kernel_dtype(x) or _left_to_the_fold(gm, node, mod):
                continue
            with g.inserting_before(node):
                layer = g.get_attr(str(node.target))
                new = g.call_function(kernelopt_batch_norm_layer, (x, layer))
        elif is_call(node, F.batch_norm):
            names = ("input", "running_mean", "running_var", "weight", "bias", "training",
                     "momentum", "eps")  # fmt: skip
            bound = _only_keywords(node, names, {"weight": None, "bias": None,
                                                 "training": False, "momentum": 0.1,
                                                 "eps": 1e-5})  # fmt: skip
            if bound is None or type(bound["training"]) is not bool:
                continue
            if scalar(bound["momentum"]) is None or scalar(bound["eps"]) is None:
                continue
            if not bound["training"] and (
                bound["running_mean"] is None or bound["running_var"] is None
            ):
                continue  # torch refuses: let it say so
            x = bound["input"]
            shape = shape_of(x)
            if shape is None or len(shape) < 2 or not kernel_dtype(x):
                continue
            with g.inserting_before(node):
                new = g.call_function(kernelopt_batch_norm, (*(bound[n] for n in names), None))
        else:
            continue
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


def _wrap_chains(gm: fx.GraphModule) -> list[fx.Node]:
    """Put :func:`family_kernels.kernelopt_pointwise` before the head of each pointwise chain
    the epilogue pass takes and fuse the chains into it; the wrapper calls left, fused or
    not."""
    from kernelopt_jupyter.agents.rewrites.epilogue_rule import (
        epilogue_wrappers,
        fuse_epilogues,
        pointwise_inputs,
    )
    from kernelopt_jupyter.agents.rewrites.family_kernels import kernelopt_pointwise

    g = gm.graph
    wrappers = epilogue_wrappers()
    made: dict[fx.Node, fx.Node] = {}  # the tensor a chain starts from -> its wrapper
    for node in list(g.nodes):
        tensors = pointwise_inputs(gm, node)
        if not tensors or not isinstance(tensors[0], fx.Node) or node in made.values():
            continue
        src = tensors[0]
        if pointwise_inputs(gm, src) is not None or src.op == "get_attr":
            continue  # not the chain's head (or a parameter the head scales)
        if src.op == "call_function" and src.target in wrappers:
            continue  # that kernel's own epilogue takes the chain
        if shape_of(node) != shape_of(src) or _dtype(node) != _dtype(src):
            continue
        if not kernel_dtype(src):
            continue
        if src in made:
            continue
        with g.inserting_after(src):
            made[src] = g.call_function(kernelopt_pointwise, (src,))
        made[src].meta = dict(src.meta)
        # Every pointwise op reading the tensor reads the kernel's register instead of
        # loading it again (a residual ``sigmoid(y) * y``).
        for user in list(src.users):
            if user is not made[src] and pointwise_inputs(gm, user) is not None:
                user.replace_input_with(src, made[src])
    if made:
        fuse_epilogues(gm)
    return [n for n in g.nodes if n.op == "call_function" and n.target is kernelopt_pointwise]


def pointwise_kernel(gm: fx.GraphModule) -> int:
    """A chain of pointwise ops the epilogue pass takes (``epilogue_rule``: activations,
    ``+ - * /`` with numbers, parameters and block-shaped tensors), starting from a tensor no
    kernel of ours stores, -> KernelOPT's own pointwise kernel
    (``family_kernels.kernelopt_pointwise``) with the chain as its epilogue; only where the
    forward then runs nothing but our kernels and vendor calls (a vendor GEMM or convolution
    followed by its activations, or a chain on an input), since a pointwise kernel beside
    PyTorch compute gets no candidate. Tried on a copy of the graph first: a chain that is
    not taken whole leaves the graph as it was.

    Faster than eager: the chain reads its input once and writes its result once, where
    PyTorch writes and reads every intermediate. A reassociation (float32 throughout).
    """
    import copy

    from kernelopt_jupyter.agents.rewrites.rules import foreign_compute

    trial = fx.GraphModule(gm, copy.deepcopy(gm.graph))
    calls = _wrap_chains(trial)
    if not calls or any(not n.kwargs.get("epilogue") for n in calls):
        return 0
    if foreign_compute(trial) is not None:
        return 0
    return len(_wrap_chains(gm))
