"""The rewrites to KernelOPT's op-family kernels (``family_kernels.py``).

Each rule has the contract of :mod:`rules`: ``rule(gm) -> int`` rewrites the canonical graph
in place and returns how many sites changed, matching by graph structure and propagated
shapes, never by a problem's name or sizes. A match absorbs the ops around the family's op
that the kernel computes itself (flips, masks, the exclusive form's shift), so the rewritten
forward keeps no PyTorch compute beside the kernel.
"""

from __future__ import annotations

import operator
from typing import Any

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from kernelopt_jupyter.agents.rewrites.canonical import (
    MAX_POOL_FN,
    is_call,
    normal_dims,
    reduction,
)
from kernelopt_jupyter.agents.rewrites.graph import (
    arg,
    cleanup,
    kernel_dtype,
    module_of,
    only_user,
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
    n - 1)`` or ``x[..., :-1]`` (by the propagated shapes), else None."""
    if not isinstance(node, fx.Node):
        return None
    if (node.op == "call_method" and node.target == "narrow") or is_call(node, torch.narrow):
        x, d, start = arg(node, 0, "input"), arg(node, 1, "dim"), arg(node, 2, "start")
        if normal_dims(x, d) != (dim,) or start != 0:
            return None
    elif is_call(node, operator.getitem):
        x, index = node.args
        index = index if isinstance(index, tuple) else (index,)
        full = slice(None, None, None)
        if len(index) != dim + 1 or any(i != full for i in index[:dim]):
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


def _exclusive_scan(node: fx.Node, scan: fx.Node, dim: int) -> bool:
    """Whether ``node`` is ``torch.cat((identity, scan), dim)`` with ``identity`` a
    ``zeros_like`` (``ones_like`` for a product) of one step along ``dim``."""
    if not is_call(node, torch.cat, torch.concat, torch.concatenate):
        return False
    tensors, d = arg(node, 0, "tensors"), arg(node, 1, "dim", 0)
    if not isinstance(tensors, list | tuple) or len(tensors) != 2 or tensors[1] is not scan:
        return False
    if normal_dims(scan, d) != (dim,):
        return False
    fill = tensors[0]
    like = torch.ones_like if scan.target is torch.cumprod else torch.zeros_like
    if not is_call(fill, like) or len(fill.args) != 1 or fill.kwargs:
        return False
    shape, out = shape_of(fill), shape_of(scan)
    if shape is None or out is None or len(shape) != len(out):
        return False
    return all(s == (1 if i == dim else o) for i, (s, o) in enumerate(zip(shape, out, strict=True)))


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
    (``flip(cumsum(flip(x, d), d), d)``), an exclusive one (``cat((zeros_like(first step),
    cumsum(x without its last step, d)), d)``, ``ones_like`` for a product) and a masked one
    (``cumsum(x * mask, d)``, ``mask`` of ``x``'s shape, boolean or not).

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
        src: Any = node.args[0]
        out: fx.Node = node
        first: fx.Node = node  # the first op of the matched chain (what the mask feeds)
        reverse = exclusive = False
        user = only_user(node)
        inner = _flipped(src, dim)
        if inner is not None and only_user(src) is node and _flipped(user, dim) is node:
            assert user is not None
            src, out, first, reverse = inner, user, src, True
        elif user is not None and _exclusive_scan(user, node, dim):
            whole = _leading_part(src, dim)
            if whole is not None and only_user(src) is node:
                src, out, first, exclusive = whole, user, src, True
        x, mask = _masked(src, first)
        if not kernel_dtype(x):
            continue
        with g.inserting_before(out):
            new = g.call_function(
                kernelopt_scan,
                (x, dim, node.target is torch.cumprod, reverse, exclusive, mask),
            )
        out.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count


#: The largest max-pool window the kernel unrolls (taps per output).
MAX_POOL_TAPS = 64


def _per_dim(value: Any, dims: int) -> tuple[int, ...] | None:
    """A pool argument (an int, or a sequence of one int per spatial dimension) as a tuple."""
    if type(value) is int:
        return (value,) * dims
    if (
        isinstance(value, list | tuple)
        and len(value) == dims
        and all(type(v) is int for v in value)
    ):
        return tuple(value)
    return None


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
        parts = [_per_dim(v, dims) for v in (kernel, stride, padding, dilation)]
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
