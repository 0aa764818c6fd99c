"""Pointwise ops after one of KernelOPT's kernels absorbed into it as an epilogue.

:func:`fuse_epilogues` runs after the kernel rules: where the output of a wrapper that takes an
epilogue (``EPILOGUE_WRAPPERS``) is read only by pointwise ops (``_UNARY``, ``_PARAMETRIC``
and ``+ - * /`` with a Python number, a parameter or buffer, or any tensor whose sizes are one
block of the output's dimensions, such as a ``(C, 1, 1)`` bias), those ops become a program
(``epilogue.py``) the kernel applies to each value before its store, so the forward writes
the output once instead of once per op. Matching is by graph structure and propagated shapes.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, cast

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from kernelopt_jupyter.agents.rewrites.epilogue import (
    EPILOGUE_OPS,
    EPILOGUE_REGISTERS,
    own_broadcast_index,
)
from kernelopt_jupyter.agents.rewrites.graph import cleanup, module_of, scalar, shape_of

#: Ops of one tensor without parameters, by canonical target (``canonical.py``).
_UNARY: dict[Any, str] = {
    torch.relu: "relu",
    torch.sigmoid: "sigmoid",
    torch.tanh: "tanh",
    torch.exp: "exp",
    torch.abs: "abs",
    operator.neg: "neg",
    F.silu: "silu",
    F.mish: "mish",
    F.hardswish: "hardswish",
    F.hardsigmoid: "hardsigmoid",
}
#: Binary arithmetic: the op of two registers, of a register and a number, and of a number
#: and a register (None: the number's op is the register one with the operands swapped).
_BINARY: dict[Any, tuple[str, str, str | None]] = {
    operator.add: ("add", "add_c", None),
    operator.sub: ("sub", "sub_c", "rsub_c"),
    operator.mul: ("mul", "mul_c", None),
    operator.truediv: ("div", "div_c", "rdiv_c"),
}


def _parametric(node: fx.Node) -> tuple[str, float, float] | None:
    """``(op, q, r)`` for a canonical activation with parameters (None: not one the epilogue
    takes, or a parameter that is not a number)."""
    kw = dict(node.kwargs)
    if node.target is F.leaky_relu and set(kw) == {"negative_slope"}:
        slope = scalar(kw["negative_slope"])
        return None if slope is None else ("leaky_relu", slope, 0.0)
    if node.target is F.gelu and set(kw) == {"approximate"}:
        form = {"none": "gelu", "tanh": "gelu_tanh"}.get(str(kw["approximate"]))
        return None if form is None else (form, 0.0, 0.0)
    if node.target is F.elu and set(kw) == {"alpha"}:
        alpha = scalar(kw["alpha"])
        return None if alpha is None else ("elu", alpha, 0.0)
    if node.target is F.softplus and set(kw) == {"beta", "threshold"}:
        beta, threshold = scalar(kw["beta"]), scalar(kw["threshold"])
        if beta is None or threshold is None or beta == 0.0:
            return None
        return "softplus", beta, threshold
    if node.target is torch.clamp and len(node.args) == 3 and not kw:
        lo, hi = node.args[1], node.args[2]
        low, high = scalar(lo), scalar(hi)
        if lo is not None and hi is not None and low is not None and high is not None:
            return "clamp", low, high
        if hi is None and low is not None:
            return "clamp_min", low, 0.0
        if lo is None and high is not None:
            return "clamp_max", high, 0.0
    return None


def _dtype(node: Any) -> Any:
    return getattr(node.meta.get("tensor_meta"), "dtype", None)


class _Region:
    """The pointwise nodes after a kernel call that read only it, each other, numbers and
    operands (tensors computed without them)."""

    def __init__(self, gm: fx.GraphModule, kernel: fx.Node) -> None:
        self.gm = gm
        self.kernel = kernel
        self.shape = shape_of(kernel)
        self.dtype = _dtype(kernel)
        self.nodes: list[fx.Node] = [kernel]
        self.members = {kernel}

    def inputs(self, node: fx.Node) -> list[Any] | None:
        """The tensor inputs of a pointwise op the epilogue takes (None: not one)."""
        if node.op == "call_module":
            mod = module_of(self.gm, node)
            if type(mod) is nn.Hardsigmoid and not mod.inplace and len(node.args) == 1:
                return list(node.args) if not node.kwargs else None
            return None
        if node.op != "call_function":
            return None
        if node.target in _UNARY or _parametric(node) is not None:
            if node.target is F.hardsigmoid and node.kwargs.get("inplace", False):
                return None
            return [node.args[0]] if node.args else None
        if node.target in _BINARY and len(node.args) == 2 and not node.kwargs:
            return [a for a in node.args if scalar(a) is None]
        return None

    def operand(self, value: Any) -> bool:
        """Whether ``value`` can be read by the kernel as an operand: a floating tensor
        computed before the kernel's output exists or from other values, whose sizes are a
        block of the output's dimensions."""
        if not isinstance(value, fx.Node) or value in self.members:
            return False
        shape, dtype = shape_of(value), _dtype(value)
        if shape is None or not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            return False
        if self.shape is None or len(shape) > len(self.shape):
            return False
        return own_broadcast_index(torch.empty(shape, device="meta"), self.shape) is not None

    def grow(self) -> None:
        """Every pointwise node after the kernel that reads the region and nothing else but
        numbers and operands, keeping the output's shape and dtype."""
        after = False
        for node in self.gm.graph.nodes:
            if node is self.kernel:
                after = True
                continue
            if not after:
                continue
            tensors = self.inputs(node)
            if not tensors or not any(t in self.members for t in tensors):
                continue
            if not all(t in self.members or self.operand(t) for t in tensors):
                continue
            if shape_of(node) != self.shape or _dtype(node) != self.dtype:
                continue
            self.nodes.append(node)
            self.members.add(node)

    def closed(self, exit_node: fx.Node) -> list[fx.Node] | None:
        """The region's nodes ``exit_node`` is computed from, in order, where all but
        ``exit_node`` are read by none but each other (None: some value is needed
        elsewhere, so it must be stored)."""
        needed = {exit_node}
        for node in reversed(self.nodes):
            if node in needed:
                needed |= {a for a in node.all_input_nodes if a in self.members}
        chosen = [n for n in self.nodes if n in needed]
        if chosen[0] is not self.kernel:
            return None
        for node in chosen:
            if node is not exit_node and not set(node.users) <= needed:
                return None
        return chosen


def pointwise_inputs(gm: fx.GraphModule, node: fx.Node) -> list[Any] | None:
    """The tensor inputs of ``node`` where it is a pointwise op an epilogue takes (None:
    not one)."""
    return _Region(gm, node).inputs(node)


def _program(chosen: list[fx.Node]) -> tuple[tuple[Any, ...], list[Any]] | None:
    """The register program (``epilogue.py``) and its operands for ``chosen`` (the kernel
    first); None where it needs more registers than the kernel has."""
    steps: list[Any] = []
    operands: list[Any] = []
    register: dict[fx.Node, int] = {chosen[0]: 0}
    last_use: dict[fx.Node, int] = {}
    for i, node in enumerate(chosen):
        for a in node.all_input_nodes:
            last_use[a] = i
    free = list(range(1, EPILOGUE_REGISTERS))

    def take() -> int | None:
        return free.pop(0) if free else None

    def reg(value: Any, temps: list[int]) -> int | None:
        """The register holding ``value``: a region node's, or a fresh one an operand is
        loaded into (freed after the step, listed in ``temps``)."""
        if value in register:
            return register[value]
        r = take()
        if r is None:
            return None
        if value not in operands:
            operands.append(value)
        steps.extend((EPILOGUE_OPS["load"], r, operands.index(value), 0, 0))
        temps.append(r)
        return r

    for i, node in enumerate(chosen[1:], start=1):
        temps: list[int] = []
        step: tuple[str, Any, Any] | None = None
        if node.op == "call_module":  # nn.Hardsigmoid
            step = ("hardsigmoid", reg(node.args[0], temps), 0.0)
            extra: Any = 0.0
        elif node.target in _UNARY:
            step, extra = (_UNARY[node.target], reg(node.args[0], temps), 0.0), 0.0
        elif node.target in _BINARY:
            both, with_number, number_first = _BINARY[node.target]
            a, b = cast(tuple[Any, Any], node.args)
            extra = 0.0
            if scalar(b) is not None:
                step = (with_number, reg(a, temps), scalar(b))
            elif scalar(a) is not None:
                if number_first is None:
                    step = (with_number, reg(b, temps), scalar(a))
                else:
                    step = (number_first, reg(b, temps), scalar(a))
            else:
                step = (both, reg(a, temps), reg(b, temps))
        else:
            found = _parametric(node)
            assert found is not None
            step, extra = (found[0], reg(node.args[0], temps), found[1]), found[2]
        if step is None or step[1] is None or step[2] is None:
            return None
        # Registers whose value is read for the last time here (and loaded operands) are
        # free again, so this step may write one of them.
        for a in node.all_input_nodes:
            if a in register and last_use.get(a) == i:
                free.append(register.pop(a))
        free.extend(temps)
        free.sort()
        dst = 0 if 0 in free else take()
        if dst is None:
            return None
        if dst in free:
            free.remove(dst)
        register[node] = dst
        steps.extend((EPILOGUE_OPS[step[0]], dst, step[1], step[2], extra))
    if register[chosen[-1]] != 0:
        steps.extend((EPILOGUE_OPS["copy"], 0, register[chosen[-1]], 0, 0))
    return tuple(steps), operands


def epilogue_wrappers() -> tuple[Callable[..., Any], ...]:
    """Wrappers of KernelOPT's kernels that take ``epilogue=`` and ``operands=`` keywords."""
    from kernelopt_jupyter.agents.rewrites.conv_transpose import kernelopt_conv_transpose
    from kernelopt_jupyter.agents.rewrites.family_kernels import (
        kernelopt_batch_norm,
        kernelopt_batch_norm_layer,
        kernelopt_max_pool,
        kernelopt_norm,
        kernelopt_pointwise,
    )
    from kernelopt_jupyter.agents.rewrites.kernels import kernelopt_group_norm

    return (
        kernelopt_conv_transpose,
        kernelopt_norm,
        kernelopt_group_norm,
        kernelopt_batch_norm,
        kernelopt_batch_norm_layer,
        kernelopt_max_pool,
        kernelopt_pointwise,
    )


def fuse_epilogues(gm: fx.GraphModule) -> int:
    """The pointwise ops after each call of a wrapper in ``epilogue_wrappers`` that read
    nothing but its output (and numbers, parameters, per-channel tensors) -> the same call
    with an ``epilogue`` program applying them inside the kernel, before its store.

    Faster: the output is written once, where each PyTorch op read and wrote it again. Each op
    is computed in float32 where the reference rounds after every op (in float32 itself, the
    same values up to the kernel's own expressions for the activations): a reassociation.
    """
    count = 0
    wrappers = epilogue_wrappers()
    for kernel in list(gm.graph.nodes):
        if kernel.op != "call_function" or kernel.target not in wrappers:
            continue
        if kernel.kwargs.get("epilogue") or shape_of(kernel) is None:
            continue
        region = _Region(gm, kernel)
        region.grow()
        for exit_node in reversed(region.nodes[1:]):
            chosen = region.closed(exit_node)
            program = _program(chosen) if chosen is not None else None
            if program is None:
                continue
            steps, operands = program
            with gm.graph.inserting_before(exit_node):
                fused = gm.graph.call_function(
                    kernel.target,
                    kernel.args,
                    {**kernel.kwargs, "epilogue": steps, "operands": tuple(operands)},
                )
            fused.meta = dict(exit_node.meta)
            exit_node.replace_all_uses_with(fused)
            count += 1
            break
    if count:
        cleanup(gm)
    return count
