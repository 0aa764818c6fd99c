"""Op families: what kind of work a kernel or a graph node does (a GEMM, a pooling, a norm...).

The roofline ranking (``agents/headroom.py``) says where a forward's time goes by family, and
the experience memory remembers which move won on which family, so a lesson learnt on one
problem's pooling ranks the same move on the next problem's pooling. A family is read from
what the profiler and the traced graph already know: the ATen ops behind a harvested unit
(``KernelUnit.ops``), its vendor call's source, a Triton kernel's own ``tl.*`` calls (a
Triton problem has no ATen ops), or an FX node's target. Never from a problem's name.

A fused unit can hold several families (a GEMM's epilogue, a norm's scaling); it is named by
the most specific one, in the order of :data:`FAMILIES`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from kernelopt_jupyter.agents.base import KernelUnit

#: The families, most specific first: a unit with ops of several is named by the first.
FAMILIES: tuple[str, ...] = (
    "attention",
    "gemm",
    "conv-transpose",
    "conv",
    "pooling",
    "normalisation",
    "softmax",
    "loss",
    "scan",
    "arg-reduction",
    "reduction",
    "elementwise",
)

_GEMM = frozenset(
    {"mm", "addmm", "bmm", "baddbmm", "addbmm", "matmul", "linear", "addmv", "mv", "dot",
     "vdot", "scaled_mm", "int_mm", "einsum", "tensordot", "lstm", "gru", "rnn_tanh",
     "rnn_relu", "bilinear"}
)  # fmt: skip
_CONV_PREFIXES = (
    "convolution", "conv1d", "conv2d", "conv3d", "cudnn_convolution", "mkldnn_convolution",
    "miopen_convolution", "slow_conv", "thnn_conv", "conv_depthwise", "depthwise_conv",
)  # fmt: skip
_NORMS = (
    "batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm", "response_norm",
    "normalize",
)  # fmt: skip
_SOFTMAX = frozenset({"softmax", "log_softmax", "softmin", "safe_softmax"})
_LOSS_WORDS = ("loss", "nll", "cross_entropy", "kl_div", "binary_cross_entropy")
_SCANS = frozenset(
    {"cumsum", "cumprod", "logcumsumexp", "cummax", "cummin", "cummax_helper",
     "cummin_helper", "associative_scan", "scan"}
)  # fmt: skip
_ARG_REDUCTIONS = frozenset({"argmax", "argmin"})
_REDUCTIONS = frozenset(
    {"sum", "mean", "amax", "amin", "max", "min", "prod", "var", "std", "var_mean",
     "std_mean", "logsumexp", "norm", "linalg_vector_norm", "any", "all", "count_nonzero",
     "nansum", "nanmean", "median", "mode", "topk", "sort", "aminmax"}
)  # fmt: skip
#: Ops that only move or re-view data: a unit of nothing else is an elementwise copy, and a
#: graph node of one is not counted (``graph_families``).
_LAYOUT = frozenset(
    {"view", "reshape", "permute", "transpose", "t", "contiguous", "expand", "expand_as",
     "clone", "getitem", "getattr", "size", "flatten", "unflatten", "unsqueeze", "squeeze",
     "narrow", "select", "slice", "to", "type_as", "float", "double", "half", "copy",
     "to_copy", "alias", "as_strided", "unbind", "split", "chunk", "cat", "stack", "view_as",
     "empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
     "detach", "lift_fresh", "output", "placeholder", "dim", "numel"}
)  # fmt: skip
#: A reduction to a statistic, then a scale by its (reciprocal) root: a norm written out op
#: by op (``x / sqrt(mean(x**2) + eps)``, ``x / x.norm(dim)``).
_STATISTICS = frozenset({"mean", "var", "var_mean", "std", "std_mean", "sum"})
_VECTOR_NORMS = frozenset({"norm", "linalg_vector_norm"})
_ROOTS = frozenset({"rsqrt", "sqrt"})
_SCALES = frozenset({"mul", "div", "reciprocal"})


def op_base(op: str) -> str:
    """``aten.native_layer_norm.default`` / ``aten::_softmax`` / ``torch.cumsum`` ->
    ``native_layer_norm`` / ``softmax`` / ``cumsum``: the op's own name, no namespace,
    overload or leading underscores."""
    parts = op.replace("::", ".").split(".")
    if len(parts) > 1 and parts[0] in ("aten", "prims", "torch", "F", "nn", "functional"):
        parts = parts[1:]
    if len(parts) > 1 and parts[0] in ("ops", "functional", "nn", "special", "linalg"):
        parts = parts[1:]
    if len(parts) > 1 and parts[0] == "aten":
        parts = parts[1:]
    return parts[0].lstrip("_").lower()


def _op_family(base: str, transposed: bool = False) -> str | None:
    """The family of one op by its base name; None for a layout op."""
    if "scaled_dot_product" in base or "attention" in base:
        return "attention"
    if base in _GEMM:
        return "gemm"
    if "conv_transpose" in base or "convolution_transpose" in base:
        return "conv-transpose"
    if base.startswith(_CONV_PREFIXES):
        return "conv-transpose" if transposed else "conv"
    if "pool" in base:
        return "pooling"
    if any(n in base for n in _NORMS):
        return "normalisation"
    if base in _SOFTMAX:
        return "softmax"
    if any(w in base for w in _LOSS_WORDS):
        return "loss"
    if base in _SCANS:
        return "scan"
    if base in _ARG_REDUCTIONS:
        return "arg-reduction"
    if base in _REDUCTIONS:
        return "reduction"
    if base in _LAYOUT:
        return None
    return "elementwise"


def _composite(bases: set[str]) -> str | None:
    """A family that only the ops together show (a norm or a softmax written out op by op)."""
    scaled = bool(bases & _SCALES)
    if scaled and ((bases & _STATISTICS and bases & _ROOTS) or bases & _VECTOR_NORMS):
        return "normalisation"
    if {"exp", "sum"} <= bases and bases & {"amax", "max"} and "div" in bases:
        return "softmax"
    return None


def families_of_ops(ops: Iterable[str], *, transposed: bool = False) -> list[str]:
    """Every family the ops hold, most specific first (empty: layout ops only, or none)."""
    bases = {op_base(op) for op in ops if op}
    found = {f for f in (_op_family(b, transposed) for b in bases) if f is not None}
    composite = _composite(bases)
    if composite is not None:
        found.add(composite)
    return [f for f in FAMILIES if f in found]


def family_of_ops(ops: Iterable[str], *, transposed: bool = False) -> str | None:
    """The most specific family the ops hold; None when they only move data."""
    found = families_of_ops(list(ops), transposed=transposed)
    return found[0] if found else None


#: Families whose work is a matrix product (a Triton kernel of one calls ``tl.dot``).
_MATMUL_FAMILIES = frozenset({"gemm", "conv", "conv-transpose", "attention"})
_TRANSPOSED = re.compile(r"transposed\s*=\s*True")
_CALL_HEAD = re.compile(r"([A-Za-z_][\w.]*)\s*\(")


def _vendor_call_op(source: str) -> str | None:
    """The op a vendor unit's call names (``extern_kernels.convolution(...)`` -> convolution;
    ``torch.ops.aten.avg_pool2d.default(...)`` -> avg_pool2d)."""
    for head in _CALL_HEAD.findall(source):
        names = [n for n in head.split(".") if n and n != "default"]
        if names:
            return names[-1]
    return None


#: ``tl.*`` calls of a Triton kernel's body and the family each says, most specific first.
_TRITON_CALLS: tuple[tuple[str, str], ...] = (
    ("tl.dot", "gemm"),
    ("tl.cumsum", "scan"),
    ("tl.cumprod", "scan"),
    ("tl.associative_scan", "scan"),
    ("tl.argmax", "arg-reduction"),
    ("tl.argmin", "arg-reduction"),
)


def _triton_source_family(source: str) -> str:
    """The family of a Triton kernel with no recorded ops (a Triton problem's own kernel)."""
    for call, family in _TRITON_CALLS:
        if call + "(" in source:
            return family
    reduces = any(f"tl.{r}(" in source for r in ("sum", "max", "min", "reduce", "xor_sum"))
    if reduces and "tl.exp(" in source and "tl.max(" in source and "tl.sum(" in source:
        return "softmax"
    if reduces and ("tl.rsqrt(" in source or "libdevice.rsqrt(" in source):
        return "normalisation"
    return "reduction" if reduces else "elementwise"


def unit_family(unit: KernelUnit) -> str:
    """The family of one harvested unit (a generated Triton kernel or a kept vendor call).

    A vendor unit is named by its library and its own call: its ``ops`` also list the ops
    Inductor fused around it (VGG's classifier GEMM lists the convolutions before it).
    """
    transposed = bool(_TRANSPOSED.search(unit.source))
    if unit.kind == "vendor":
        if unit.library.startswith("cuBLAS"):
            return "gemm"
        call = _vendor_call_op(unit.source)
        if call is not None:
            family = _op_family(op_base(call), transposed)
            if family is not None and family != "elementwise":
                return family
        if unit.library == "cuDNN":
            return "conv-transpose" if transposed else "conv"
    found = families_of_ops(unit.ops, transposed=transposed)
    if unit.kind == "triton" and unit.source and "tl.dot(" not in unit.source:
        # A generated kernel that lists a GEMM or a convolution without a matrix product is
        # its epilogue or a relayout of its operands (the vendor call does the product).
        found = [f for f in found if f not in _MATMUL_FAMILIES]
        if not found and unit.ops:
            return "elementwise"
    if found:
        return found[0]
    if unit.kind == "triton" and not unit.ops:
        return _triton_source_family(unit.source)
    return "elementwise"


def _camel_to_op(name: str) -> str:
    """``ConvTranspose2d`` -> ``conv_transpose2d``; ``RMSNorm`` -> ``rms_norm``."""
    return re.sub(r"(?<!^)(?=[A-Z][a-z])", "_", name).lower()


def node_op(gm: Any, node: Any) -> str | None:
    """The op name of an FX node (a layer's class, a function's or a method's name); None for
    inputs, outputs, attributes and KernelOPT's own kernels (they are what a rewrite puts in
    an op's place, not the op)."""
    if node.op == "call_module":
        module = gm.get_submodule(str(node.target))
        return _camel_to_op(type(module).__name__)
    if node.op == "call_method":
        return str(node.target)
    if node.op == "call_function":
        target = node.target
        if str(getattr(target, "__module__", "") or "").startswith("kernelopt_jupyter"):
            return None
        name = getattr(target, "__name__", None) or str(target)
        return str(name)
    return None


def node_family(gm: Any, node: Any) -> str | None:
    """The family of one FX graph node; None where it only moves data or is no op."""
    op = node_op(gm, node)
    if op is None:
        return None
    transposed = node.op == "call_module" and bool(
        getattr(gm.get_submodule(str(node.target)), "transposed", False)
    )
    return _op_family(op_base(op), transposed)


def graph_families(gm: Any) -> Counter[str]:
    """How many nodes of each family an FX graph holds."""
    return Counter(f for f in (node_family(gm, n) for n in gm.graph.nodes) if f is not None)


def removed_families(before: Counter[str], after: Counter[str]) -> list[str]:
    """The families a rewrite took nodes from (most specific first): the work it targets."""
    return [f for f in FAMILIES if before.get(f, 0) > after.get(f, 0)]
