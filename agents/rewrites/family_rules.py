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

from kernelopt_jupyter.agents.rewrites.canonical import is_call, normal_dims
from kernelopt_jupyter.agents.rewrites.graph import (
    arg,
    cleanup,
    kernel_dtype,
    only_user,
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
