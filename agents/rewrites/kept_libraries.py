"""Kept kernel libraries as dispatch options: ops the family rules match, routed to Liger-Kernel.

Liger-Kernel (PyPI ``liger-kernel``, the optional extra ``liger``) is a library of Triton
kernels for norms and losses. Where it is importable, each rule here finds its sites exactly
as KernelOPT's own family rule does (``family_rules.py``, ``rules.group_norm_kernel``: the
same spellings, the same shape checks), then calls Liger's public functions
(``liger_kernel.transformers.functional``) through a wrapper whose text is copied into the
candidate. The candidate is a vendor call to a kept library: dispatch-only (Liger's own
host code runs PyTorch ops beside its kernels: a class-index mask, a final sum), named
"kept library" in its note, judged by the verifier like any other candidate, and kept only
where the race measures it faster than the vendor call, Inductor and KernelOPT's own kernel.

A rule routes a graph only when Liger takes every site its family rule found (rows of at
most ``LIGER_MAX_ROW`` for the norms, trailing dimensions, two-dimensional logits): a
candidate that mixed Liger with KernelOPT's kernels would be neither dispatch-only nor
free of PyTorch compute.
"""

from __future__ import annotations

import copy
import importlib.util
import inspect
import math
import textwrap
from collections.abc import Callable
from typing import Any

import torch
import torch.fx as fx

from kernelopt_jupyter.agents.rewrites.canonical import is_call
from kernelopt_jupyter.agents.rewrites.graph import cleanup, shape_of

#: The longest normalised row Liger's norm kernels take in one block (``calculate_settings``
#: refuses more).
LIGER_MAX_ROW = 65536


def liger_available() -> bool:
    """Whether Liger-Kernel is importable here (the rules offer nothing without it)."""
    return importlib.util.find_spec("liger_kernel") is not None


# --------------------------------------------------------------------------- the wrappers
# Copied into candidates (``kept_call_text``): they may use only torch, math and the Liger
# functions their import line names.


def _liger_function(name: str) -> Callable[..., Any]:
    """Liger's public function ``name``, imported at its first call: running a wrapper here
    (tests, the benchmark) needs it, a scan that finds no site never loads Liger's kernels.
    A rendered candidate imports the function by this name instead."""

    def call(*args: Any, **kwargs: Any) -> Any:
        functional = importlib.import_module("liger_kernel.transformers.functional")
        return getattr(functional, name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


liger_rms_norm = _liger_function("liger_rms_norm")
liger_layer_norm = _liger_function("liger_layer_norm")
liger_group_norm = _liger_function("liger_group_norm")
liger_cross_entropy = _liger_function("liger_cross_entropy")
liger_kl_div = _liger_function("liger_kl_div")


def liger_norm(x, first, weight, bias, eps, rms):
    """``x`` normalised over its trailing dimensions from ``first`` by Liger-Kernel's Triton
    RMSNorm (``rms``) or LayerNorm, times ``weight`` and plus ``bias`` (either may be None).
    Liger normalises rows of a matrix: the trailing dimensions are flattened into one."""
    out = torch.empty(x.shape, device=x.device, dtype=x.dtype)
    if x.device.type == "meta" or out.numel() == 0:
        return out
    rows = x.reshape(-1, math.prod(x.shape[first:]))
    w = None if weight is None else weight.reshape(-1)
    if rms:
        y = liger_rms_norm(rows, w, eps, offset=0.0, casting_mode="llama", in_place=False)
    else:
        if w is None:  # Liger's LayerNorm always scales and shifts
            w = torch.ones(rows.shape[1], device=x.device, dtype=x.dtype)
        b = torch.zeros_like(w) if bias is None else bias.reshape(-1)
        y = liger_layer_norm(rows, w, b, eps)
    return y.view(x.shape)


def liger_group_norm_call(x, num_groups, weight, bias, eps):
    """``F.group_norm(x, num_groups, weight, bias, eps)`` by Liger-Kernel's Triton GroupNorm
    (one program per image and group); a missing weight or bias is ones or zeros."""
    out = torch.empty(x.shape, device=x.device, dtype=x.dtype)
    if x.device.type == "meta" or out.numel() == 0:
        return out
    channels = x.shape[1]
    if weight is None:
        weight = torch.ones(channels, device=x.device, dtype=x.dtype)
    if bias is None:
        bias = torch.zeros(channels, device=x.device, dtype=x.dtype)
    return liger_group_norm(x.contiguous(), weight, bias, channels, num_groups, eps)


def liger_cross_entropy_call(logits, target, ignore_index, reduction):
    """``F.cross_entropy(logits, target, ignore_index=..., reduction=...)`` of ``(N, C)``
    logits by Liger-Kernel's Triton cross entropy (one program per row, online softmax)."""
    if logits.device.type == "meta":
        return torch.empty((), device=logits.device, dtype=logits.dtype)
    loss = liger_cross_entropy(
        logits.contiguous(), target.contiguous(), ignore_index=ignore_index, reduction=reduction
    )
    return loss.to(logits.dtype)


def liger_kl_div_call(a, b, log_a, log_target, reduction):
    """``F.kl_div(log(a) if log_a else a, b, reduction=..., log_target=...)`` by Liger-Kernel's
    Triton KL divergence over rows of the last dimension (``batchmean`` of a matrix only)."""
    if a.device.type == "meta":
        return torch.empty((), device=a.device, dtype=a.dtype)
    logs = torch.log(a) if log_a else a
    rows = logs.reshape(-1, a.shape[-1]).contiguous()
    targets = b.reshape(-1, a.shape[-1]).contiguous()
    loss = liger_kl_div(rows, targets, reduction=reduction, log_target=log_target)
    return loss.to(a.dtype)


#: Each wrapper and the Liger functions it calls (``liger_kernel.transformers.functional``).
KEPT_CALLS: dict[str, tuple[Callable[..., Any], tuple[str, ...]]] = {
    liger_norm.__name__: (liger_norm, ("liger_layer_norm", "liger_rms_norm")),
    liger_group_norm_call.__name__: (liger_group_norm_call, ("liger_group_norm",)),
    liger_cross_entropy_call.__name__: (liger_cross_entropy_call, ("liger_cross_entropy",)),
    liger_kl_div_call.__name__: (liger_kl_div_call, ("liger_kl_div",)),
}


def kept_call_text(value: Any, name: str) -> str | None:
    """The source that binds ``name`` to a kept-library wrapper in a rendered candidate (its
    imports, then its text, our code), or None when ``value`` is not one."""
    helper = next((h for h, (fn, _) in KEPT_CALLS.items() if fn is value), None)
    if helper is None:
        return None
    fn, imported = KEPT_CALLS[helper]
    lines = ["import math", "", "import torch"]
    lines += [f"from liger_kernel.transformers.functional import {n}" for n in imported]
    parts = ["\n".join(lines), textwrap.dedent(inspect.getsource(fn)).rstrip("\n")]
    if helper != name:
        parts.append(f"{name} = {helper}")
    return "\n\n\n".join(parts) + "\n"


# --------------------------------------------------------------------------- the routing

Route = Callable[[tuple[Any, ...]], tuple[Callable[..., Any], tuple[Any, ...]] | None]


def _routed(
    gm: fx.GraphModule, own_rule: Callable[[fx.GraphModule], int], routes: dict[Any, Route]
) -> int:
    """Apply ``own_rule`` (a family rule that writes calls of ``routes``' functions), then put
    each new call on Liger by its route (the call's arguments -> the wrapper and its
    arguments, or None where Liger cannot take it). Nothing changes unless Liger takes every
    site the rule found."""
    if not liger_available():
        return 0

    def new_sites(graph: fx.GraphModule, before: set[str]) -> list[fx.Node]:
        return [n for n in graph.graph.nodes if is_call(n, *routes) and n.name not in before]

    before = {n.name for n in gm.graph.nodes if is_call(n, *routes)}
    trial = copy.deepcopy(gm)
    if not own_rule(trial):
        return 0
    if any(routes[n.target](tuple(n.args)) is None for n in new_sites(trial, before)):
        return 0
    own_rule(gm)
    sites = new_sites(gm, before)
    for node in sites:
        routed = routes[node.target](tuple(node.args))
        assert routed is not None  # the trial's graph was a copy of this one
        with gm.graph.inserting_before(node):
            new = gm.graph.call_function(routed[0], routed[1])
        node.replace_all_uses_with(new)
        gm.graph.erase_node(node)
    cleanup(gm)
    return len(sites)


def _norm_route(args: tuple[Any, ...]) -> tuple[Callable[..., Any], tuple[Any, ...]] | None:
    x, first, last, weight, bias, eps, rms, per_channel = args
    shape = shape_of(x)
    if shape is None or per_channel or last != len(shape) or first >= last:
        return None
    if not 0 < math.prod(shape[first:]) <= LIGER_MAX_ROW:
        return None
    return liger_norm, (x, first, weight, bias, eps, rms)


def liger_rms_norm_rule(gm: fx.GraphModule) -> int:
    """An RMS normalisation over the trailing dimensions (each spelling ``rms_norm_kernel``
    takes) -> Liger-Kernel's Triton RMSNorm, one program per row.

    Faster where it is: Liger's kernel reads a row once into registers and writes it once
    (rows up to 65536 values); the written-out form is a reduction and a broadcast division.
    A reassociation of the sum of squares (float32 accumulation).
    """
    from kernelopt_jupyter.agents.rewrites.family_kernels import kernelopt_norm
    from kernelopt_jupyter.agents.rewrites.family_rules import rms_norm_kernel

    return _routed(gm, rms_norm_kernel, {kernelopt_norm: _norm_route})


def liger_layer_norm_rule(gm: fx.GraphModule) -> int:
    """A LayerNorm over rows of at most 65536 values (each spelling ``layer_norm_kernel``
    takes) -> Liger-Kernel's Triton LayerNorm, one program per row.

    Faster where it is: one read of the row for its moments and the normalisation, where
    the vendor's kernel is tuned for other row lengths. A reassociation of the moments
    (float32 accumulation).
    """
    from kernelopt_jupyter.agents.rewrites.family_kernels import kernelopt_norm
    from kernelopt_jupyter.agents.rewrites.family_rules import layer_norm_kernel

    return _routed(gm, layer_norm_kernel, {kernelopt_norm: _norm_route})


def liger_group_norm_rule(gm: fx.GraphModule) -> int:
    """A GroupNorm (each spelling ``group_norm_kernel`` takes) -> Liger-Kernel's Triton
    GroupNorm, one program per image and group.

    Faster where it is: statistics and normalisation in one kernel, where the vendor's
    lowering is two passes over memory; and where the rest of the forward is PyTorch compute
    (a convolution's epilogue), KernelOPT's own kernel is not offered at all, while a vendor
    call is. A reassociation of the group's moments.
    """
    from kernelopt_jupyter.agents.rewrites.kernels import kernelopt_group_norm
    from kernelopt_jupyter.agents.rewrites.rules import group_norm_kernel

    def route(args: tuple[Any, ...]) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        return liger_group_norm_call, args

    return _routed(gm, group_norm_kernel, {kernelopt_group_norm: route})


def _row_loss_route(args: tuple[Any, ...]) -> tuple[Callable[..., Any], tuple[Any, ...]] | None:
    a, b, _c, dim, form, param, _eps, reduction = args
    shape = shape_of(a)
    if form != "cross_entropy" or shape is None or len(shape) != 2 or dim != 1:
        return None
    return liger_cross_entropy_call, (a, b, int(param), reduction)


def _pointwise_loss_route(
    args: tuple[Any, ...],
) -> tuple[Callable[..., Any], tuple[Any, ...]] | None:
    a, b, form, _param, log_a, reduction = args
    shape = shape_of(a)
    if form not in ("kl", "kl_log_target") or shape is None or not shape or shape_of(b) != shape:
        return None
    if reduction == "batchmean" and len(shape) != 2:
        return None  # torch divides by the first dimension, Liger by its rows
    return liger_kl_div_call, (a, b, log_a, form == "kl_log_target", reduction)


def liger_loss_rule(gm: fx.GraphModule) -> int:
    """A cross entropy of ``(N, C)`` logits or a KL divergence of two same-shaped operands
    (each spelling ``loss_kernel`` takes) -> Liger-Kernel's Triton loss kernels, one program
    per row, then a sum.

    Faster where it is: each row is read once and reduced as it goes (an online softmax for
    the cross entropy), where the vendor's losses write the elementwise terms or the rows'
    logsumexp and reduce them in further passes. A reassociation of the sums.
    """
    from kernelopt_jupyter.agents.rewrites.family_kernels import (
        kernelopt_pointwise_loss,
        kernelopt_row_loss,
    )
    from kernelopt_jupyter.agents.rewrites.family_rules import loss_kernel

    routes: dict[Any, Route] = {
        kernelopt_row_loss: _row_loss_route,
        kernelopt_pointwise_loss: _pointwise_loss_route,
    }
    return _routed(gm, loss_kernel, routes)
