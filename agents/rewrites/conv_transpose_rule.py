"""The rewrite of a transposed convolution to KernelOPT's own kernel (``conv_transpose.py``).

The contract of :mod:`rules`: ``conv_transpose_kernel(gm) -> int`` rewrites the canonical graph
in place and returns how many sites changed, matching by graph structure and propagated
shapes, never by a problem's name or sizes.
"""

from __future__ import annotations

from typing import Any

import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from kernelopt_jupyter.agents.rewrites.canonical import is_call
from kernelopt_jupyter.agents.rewrites.graph import (
    arg,
    cleanup,
    kernel_dtype,
    module_of,
    per_dim,
    plain_torch_layer,
    shape_of,
)

#: The layers and functions, by spatial dimensions (1, 2, 3); ``torch.conv_transpose2d`` is
#: the same function object as ``F.conv_transpose2d``.
CONV_TRANSPOSE_LAYERS = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
CONV_TRANSPOSE_FN = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)

#: The functional call's parameters in order, and the defaults of those after the weight.
_NAMES = ("input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation")
_DEFAULTS = {"bias": None, "stride": 1, "padding": 0, "output_padding": 0, "groups": 1,
             "dilation": 1}  # fmt: skip


def _dtype(node: Any) -> Any:
    meta = node.meta.get("tensor_meta") if isinstance(node, fx.Node) else None
    return getattr(meta, "dtype", None)


def _bound(node: fx.Node, dims: int) -> dict[str, Any] | None:
    """The functional call's arguments by name, the per-dimension ones as tuples; None where
    a keyword is not the function's or an argument is not a constant of the right form."""
    if len(node.args) > len(_NAMES) or set(node.kwargs) - set(_NAMES[len(node.args) :]):
        return None
    bound = {name: arg(node, i, name, _DEFAULTS.get(name)) for i, name in enumerate(_NAMES)}
    for name in ("stride", "padding", "output_padding", "dilation"):
        bound[name] = per_dim(bound[name], dims)
        if bound[name] is None:
            return None
    return bound if type(bound["groups"]) is int else None


def _tensor(node: Any) -> tuple[tuple[int, ...] | None, Any]:
    """A node's propagated ``(shape, dtype)``."""
    return shape_of(node), _dtype(node)


def _valid(
    x: Any, weight: tuple[Any, Any], bias: tuple[Any, Any] | None, dims: int,
    bound: dict[str, Any],
) -> bool:  # fmt: skip
    """Whether torch computes this convolution (else it is left to say why) and the kernel
    takes it: shapes known, channels agreeing, a positive output, one floating dtype.
    ``weight`` and ``bias`` are ``(shape, dtype)`` pairs."""
    xshape, (wshape, wtype) = shape_of(x), weight
    if xshape is None or wshape is None or len(wshape) != dims + 2:
        return False
    if len(xshape) not in (dims + 1, dims + 2) or not kernel_dtype(x):
        return False
    groups = bound["groups"]
    c_in = xshape[len(xshape) - dims - 1]
    if groups < 1 or c_in != wshape[0] or c_in % groups or c_in == 0:
        return False
    if wtype != _dtype(x) or (bias is not None and bias != ((wshape[1] * groups,), wtype)):
        return False
    stride, padding = bound["stride"], bound["padding"]
    extra, dilation = bound["output_padding"], bound["dilation"]
    for i in range(dims):
        if stride[i] < 1 or dilation[i] < 1 or padding[i] < 0 or extra[i] < 0:
            return False
        if extra[i] >= max(stride[i], dilation[i]):
            return False
        size = xshape[len(xshape) - dims + i]
        out = (size - 1) * stride[i] - 2 * padding[i] + dilation[i] * (wshape[2 + i] - 1)
        if out + extra[i] + 1 < 1:
            return False
    return True


def conv_transpose_kernel(gm: fx.GraphModule) -> int:
    """A 1-, 2- or 3-D transposed convolution (``nn.ConvTranspose1d/2d/3d`` with zero padding
    and no ``output_size``, or ``F.conv_transpose1d/2d/3d``, also spelled
    ``torch.conv_transpose*``: any stride, padding, output padding, dilation and groups, with
    or without bias; batched or not) -> KernelOPT's own Triton kernel
    (``conv_transpose.kernelopt_conv_transpose``).

    Faster where the vendor is slow: cuDNN runs a strided transposed convolution as the
    gradient of a convolution, over inputs dilated with zeros, or scatters each input into
    overlapping outputs; the kernel splits the outputs by stride phase, so each phase is a
    dense implicit GEMM over only the taps that reach it, in float32 without TF32. A
    reassociation: each output is the same sum, taken in another order.
    """
    from kernelopt_jupyter.agents.rewrites.conv_transpose import kernelopt_conv_transpose

    count = 0
    g = gm.graph
    for node in list(g.nodes):
        mod = module_of(gm, node)
        if mod is not None:
            if not isinstance(mod, CONV_TRANSPOSE_LAYERS) or not plain_torch_layer(mod):
                continue
            if mod.padding_mode != "zeros" or len(node.args) != 1 or node.kwargs:
                continue  # another padding, or an explicit output_size
            dims = CONV_TRANSPOSE_LAYERS.index(type(mod)) + 1
            weight: tuple[Any, Any] = (tuple(mod.weight.shape), mod.weight.dtype)
            bias: tuple[Any, Any] | None = None
            if mod.bias is not None:
                bias = (tuple(mod.bias.shape), mod.bias.dtype)
            bound: dict[str, Any] = {
                "stride": tuple(mod.stride), "padding": tuple(mod.padding),
                "output_padding": tuple(mod.output_padding), "dilation": tuple(mod.dilation),
                "groups": mod.groups,
            }  # fmt: skip
            x = node.args[0]
        elif is_call(node, *CONV_TRANSPOSE_FN):
            dims = CONV_TRANSPOSE_FN.index(node.target) + 1  # type: ignore[arg-type]
            found = _bound(node, dims)
            if found is None:
                continue
            bound, x = found, found["input"]
            weight = _tensor(found["weight"])
            bias = _tensor(found["bias"]) if found["bias"] is not None else None
        else:
            continue
        if not isinstance(x, fx.Node) or not _valid(x, weight, bias, dims, bound):
            continue
        with g.inserting_before(node):
            if mod is not None:  # the layer's own parameters
                w_value: Any = g.get_attr(f"{node.target}.weight")
                b_value: Any = g.get_attr(f"{node.target}.bias") if bias is not None else None
            else:
                w_value, b_value = bound["weight"], bound["bias"]
            new = g.call_function(
                kernelopt_conv_transpose,
                (x, w_value, b_value, bound["stride"], bound["padding"], bound["output_padding"],
                 bound["groups"], bound["dilation"]),
            )  # fmt: skip
        if "tensor_meta" in node.meta:  # the same value: a later site reads its shape
            new.meta["tensor_meta"] = node.meta["tensor_meta"]
        node.replace_all_uses_with(new)
        count += 1
    if count:
        cleanup(gm)
    return count
