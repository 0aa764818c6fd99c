"""Which graph rewrites and Inductor configurations to try first: a cost model over the profile.

The dispatch map gives each unit's share of the forward's time (measured on the GPU, a
roofline-bound estimate on the CPU), its kind (generated Triton kernel or vendor call) and the
aten ops behind it. A move's priority is what it can remove, scaled by the share of the time it
touches (Amdahl): a rewrite that deletes GEMM work ranks by the GEMMs' share, a fold that deletes
epilogue passes by the Triton kernels' share, an Inductor setting by the share of the kernels
it changes. Ties fall back to the order below; the experience memory adds its score on top.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kernelopt_jupyter.agents.base import AgentContext, KernelUnit
from kernelopt_jupyter.agents.transforms import (
    CUDNN_MARKER,
    GEMM_C_MARKER,
    WINOGRAD_MARKER,
    split_k_regime,
    winograd_calls,
)
from kernelopt_jupyter.renaming import defines_class

_GEMM_OPS = ("mm", "addmm", "bmm", "baddbmm", "matmul", "linear")
_CONV_OPS = ("convolution", "_convolution", "cudnn_convolution")


@dataclass
class Shares:
    """Fractions of the forward's time by the kind of work (they need not sum to 1)."""

    triton: float = 0.0
    gemm: float = 0.0
    conv: float = 0.0
    reductions: float = 0.0
    kernels: int = 0  # Triton kernels per forward
    reduction_kernels: int = 0  # of those, reductions (a split reduction is two of them)
    vendor: int = 0  # vendor calls per forward
    persistent: bool = False  # a persistent reduction (whole row in one block) exists
    looped: bool = False  # a looped reduction (R0_BLOCK loop) exists
    tiled_2d: bool = False  # a pointwise kernel over a 2-D tile (YBLOCK)


def _op_names(k: KernelUnit) -> list[str]:
    return [op.split(".")[1] if op.startswith("aten.") else op for op in k.ops]


def cost_shares(ctx: AgentContext) -> Shares:
    """The profile summarised for the cost model; counts stand in where shares are unknown."""
    units = ctx.kernels
    known = any(k.share is not None for k in units)

    def share(k: KernelUnit) -> float:
        if known:
            return k.share or 0.0
        return 1.0 / len(units) if units else 0.0

    s = Shares()
    for k in units:
        ops = _op_names(k)
        if k.kind == "triton":
            s.triton += share(k)
            s.kernels += 1
            if "_red_" in k.name or "_per_" in k.name:
                s.reductions += share(k)
                s.reduction_kernels += 1
            s.persistent |= "_per_" in k.name
            s.looped |= "_red_" in k.name
            s.tiled_2d |= "YBLOCK" in k.source
        elif k.kind == "vendor":
            s.vendor += 1
            # A vendor unit's ops include the ones fused around it (VGG's classifier GEMM
            # lists the convolutions before it): its library says what it is, where known.
            if k.library:
                s.gemm += share(k) if k.library.startswith("cuBLAS") else 0.0
                s.conv += share(k) if k.library == "cuDNN" else 0.0
                continue
            if any(op in _GEMM_OPS for op in ops):
                s.gemm += share(k)
            if any(op in _CONV_OPS for op in ops):
                s.conv += share(k)
    return s


#: Rewrites that delete GEMM work rank by the GEMMs' share; folds by the epilogue passes'.
GEMM_REMOVING = frozenset(
    {"diag_matmul", "triangular_matmul", "symmetric_gram", "linear_reduction", "algebra"}
)


#: The rules that put an op family's whole op in KernelOPT's own kernel (``family_rules.py``).
FAMILY_KERNELS = frozenset(
    {"scan_kernel", "max_pool_kernel", "rms_norm_kernel", "layer_norm_kernel",
     "instance_norm_kernel", "arg_reduce_kernel", "batch_norm_kernel", "loss_kernel"}
)  # fmt: skip
#: The rules that route the same families to a kept kernel library (``kept_libraries.py``).
KEPT_LIBRARIES = frozenset({"liger_rms_norm", "liger_layer_norm", "liger_group_norm", "liger_loss"})


def rewrite_priority(names: list[str], s: Shares) -> float:
    """Planner priority of a rewrite (or a combination): higher is tried first.

    Removing GEMM FLOPs outranks everything else the offline policy has (it is the only move
    that can win many times over); folds and epilogues rank with the passes they remove; a
    combination ranks just above its best member.
    """
    best = 0.0
    for name in names:
        if name in GEMM_REMOVING:
            p = 4.0 + s.gemm
        elif name == "attention_to_sdpa":
            # The score matrices it stops writing are GEMM outputs and softmax passes.
            p = 3.8 + s.gemm + 0.5 * s.triton
        elif name == "hoist_sliced_linear":
            p = 2.8 + s.gemm  # many small GEMMs become one large one
        elif name == "gemm_activation_epilogue":
            p = 2.4 + 0.5 * s.triton  # the epilogue kernel it removes is a Triton pass
        elif name == "separable_avg_pool":
            p = 3.0 + s.triton  # kh + kw loads per output instead of kh * kw
        elif name == "group_norm_kernel":
            # One read of the group from memory instead of two: ranks with the reductions.
            p = 2.9 + s.reductions + 0.5 * s.triton
        elif name == "avg_pool_kernel":
            # The window's overlap served from cache: ranks above the separable pool.
            p = 3.1 + s.triton
        elif name in FAMILY_KERNELS:
            # One read and one write of the tensor where the vendor's and Inductor's lowering
            # (a scan of long rows, a pool's windows, a norm's statistics then its scaling)
            # runs far below bandwidth or in several passes: ranks with the Triton passes
            # and reductions it replaces, above the folds.
            p = 3.1 + s.triton + s.reductions
        elif name in KEPT_LIBRARIES:
            # The same passes on a library's kernel: just below KernelOPT's own, the race
            # keeps whichever measures faster.
            p = 3.05 + s.triton + s.reductions
        elif name == "depthwise_conv_kernel":
            # A memory-bound conv the vendor runs far below bandwidth: ranks with the convs.
            p = 3.2 + s.conv
        elif name == "conv_transpose_kernel":
            # A strided transposed conv the vendor runs over zero-dilated inputs: ranks with
            # the convs, below the depthwise kernel (a GEMM the vendor may still win).
            p = 3.15 + s.conv
        elif name in ("pool_before_activation", "smooth_after_max"):
            p = 2.2 + 0.5 * s.triton  # one pass over the larger tensor, in eager only
        else:
            # Folds and drops delete elementwise passes: Triton kernels in a harvest (Inductor
            # often fused the pass already), separate kernels in eager. The convolutions' share
            # says nothing of those passes, so it is not counted: ranked with it, a BatchNorm
            # fold on the H200 never won on any of the eight conv problems.
            p = 2.6 + 0.5 * s.triton
        best = max(best, p)
    bonus = 0.2 if len(names) > 1 else 0.0
    if {"separable_avg_pool", "avg_pool_kernel"} <= set(names):
        # The kernel serves a whole window from cache: split in two it makes two launches and
        # an intermediate for nothing, so the kernel alone goes first.
        bonus = -0.5
    return best + bonus


#: The families whose generated kernels reduce (Inductor's persistent and looped reductions).
REDUCING = ("normalisation", "softmax", "loss", "scan", "arg-reduction", "reduction")


@dataclass(frozen=True)
class InductorMove:
    """A harvest under another Inductor configuration, and when the profile suggests it."""

    label: str
    why: str
    overrides: dict[str, Any] = field(default_factory=dict)
    mode: str = "default"
    gpu_only: bool = False  # autotuning and combo kernels only pay (and only run) on a GPU
    priority: Callable[[Shares], float | None] = lambda s: None
    #: The units the configuration changes, for the roofline ranking (``agents/headroom.py``):
    #: op families, and "generated" for every Triton kernel Inductor wrote.
    touches: tuple[str, ...] = ("generated",)


INDUCTOR_MOVES: list[InductorMove] = [
    InductorMove(
        "max-autotune GEMM/conv templates with fused epilogues",
        "Inductor's Triton matmul/conv templates can absorb the epilogue kernels around a GEMM",
        {"max_autotune_gemm_backends": "ATEN,TRITON", "epilogue_fusion": True},
        mode="max-autotune",
        gpu_only=True,
        priority=lambda s: 1.6 + s.gemm + s.conv if (s.gemm or s.conv) and s.kernels else None,
        touches=("gemm", "conv", "generated"),
    ),
    InductorMove(
        "coordinate_descent_tuning",
        "block sizes and warps of every generated kernel tuned by measurement",
        {"coordinate_descent_tuning": True},
        gpu_only=True,
        priority=lambda s: 1.4 + s.triton if s.kernels else None,
    ),
    InductorMove(
        "looped reductions (triton.persistent_reductions off)",
        "a long row reduced in a loop of blocks keeps fewer registers live than one block",
        {"triton.persistent_reductions": False},
        priority=lambda s: 1.3 + s.reductions if s.persistent else None,
        touches=REDUCING,
    ),
    InductorMove(
        "no split reductions (split_reductions off)",
        "one pass over a reduction instead of a partial and a final kernel",
        {"split_reductions": False},
        # A split reduction is a partial and a final kernel: with one reduction kernel there
        # is nothing to un-split, and the compile (11 s on the H200) gives the same code.
        priority=lambda s: 1.2 + s.reductions if s.looped and s.reduction_kernels >= 2 else None,
        touches=REDUCING,
    ),
    InductorMove(
        "aggressive_fusion",
        "fuse kernels Inductor's default heuristics leave apart, saving their memory passes",
        {"aggressive_fusion": True},
        priority=lambda s: 1.3 + s.triton if s.kernels >= 3 else None,
    ),
    InductorMove(
        "combo_kernels",
        "independent small kernels launched as one (fewer launches per forward)",
        {"combo_kernels": True},
        gpu_only=True,
        priority=lambda s: 1.1 + s.triton if s.kernels >= 4 else None,
    ),
    InductorMove(
        "2-D tiling (triton.prefer_nd_tiling)",
        "a transposing copy tiled in two dimensions reads and writes whole cache lines",
        {"triton.prefer_nd_tiling": True},
        priority=lambda s: 1.2 + s.triton if s.kernels and not s.tiled_2d else None,
    ),
    InductorMove(
        "1x1 convolutions as GEMMs (conv_1x1_as_mm)",
        "a pointwise convolution lowered to a matmul, whose epilogue Inductor can fuse",
        {"conv_1x1_as_mm": True},
        priority=lambda s: 1.0 + s.conv if s.conv else None,
        touches=("conv",),
    ),
]


def inductor_moves(ctx: AgentContext) -> list[tuple[float, InductorMove]]:
    """``(priority, move)`` for each configuration the profile suggests on this device.

    None on the CPU: nothing is timed there, so a configuration could never be shown to win
    and each one costs a compile (the Executor still builds one when asked).
    """
    if ctx.device != "cuda":
        return []
    s = cost_shares(ctx)
    out = []
    for move in INDUCTOR_MOVES:
        if move.gpu_only and ctx.device != "cuda":
            continue
        p = move.priority(s)
        if p is not None:
            out.append((p, move))
    return out


# ---------------------------------------------------------------- vendor-library choices

#: The vendor-library choices the offline policy times (``vendor_choice`` plans): the
#: parameter, the plan's title (a "dispatch:" move in the bench's labels) and why it can win.
VENDOR_CHOICES: dict[str, tuple[str, str]] = {
    "cudnn_benchmark": (
        "dispatch: cuDNN algorithms by measurement (cudnn.benchmark in the forward)",
        "cuDNN's heuristic pick is not always its fastest algorithm for a shape and layout "
        "(fp32 without TF32, channels-last): timing them once per shape finds the fastest",
    ),
    "gemm_bias_operand": (
        "dispatch: GEMM bias as cuBLAS's C operand (no cuBLASLt epilogue)",
        "a GEMM with few output tiles and a long K runs on a handful of SMs under cuBLASLt's "
        "bias epilogue; cuBLAS's own GEMM splits K across the GPU",
    ),
    # Not a vendor choice but an algorithm in the vendor call's place, planned the same way.
    "winograd_conv": (
        "rewrite: 3x3 convolutions by Winograd's F(2x2, 3x3) (own Triton transforms, cuBLAS "
        "batched GEMM)",
        "F(2x2, 3x3) needs 16 multiplies per input channel for each 2x2 block of outputs "
        "instead of 36: 2.25x fewer FLOPs than cuDNN's direct float32 convolution, in one "
        "batched GEMM between two memory-bound transforms",
    ),
}

#: A convolution-heavy forward: cuDNN's calls take at least this share of the time.
CUDNN_SHARE = 0.15


def vendor_choices(ctx: AgentContext, source: str) -> list[tuple[float, str]]:
    """``(priority, choice)`` for the vendor choices worth timing on a candidate ``source``.

    cuDNN's timed algorithm search ranks low, by the convolutions' share of the time: on the
    H200 it won nothing on four convolution networks (ResNet's block 5% slower, an inverted
    residual stage 0.1% faster). The GEMM bias operand needs a candidate that calls
    ``torch.addmm`` itself (a harvest). Where the dispatch map timed each ``addmm`` in both
    forms (the GPU), it is offered when the faster form saves at least ``MIN_SAVING`` of the
    forward, ranked by that saving. Elsewhere it is offered on the few-tiles, long-K regime
    (:func:`split_k_regime`), ranked by those GEMMs' share.
    """
    if (
        ctx.device != "cuda"
        or ctx.problem.kind != "module"
        or not defines_class(source, "ModelNew")
    ):
        return []
    vendor = [k for k in ctx.kernels if k.kind == "vendor"]
    out: list[tuple[float, str]] = []
    conv = sum(k.share or 0.0 for k in vendor if k.library == "cuDNN")
    if conv >= CUDNN_SHARE and CUDNN_MARKER not in source:
        out.append((1.0 + 0.5 * conv, "cudnn_benchmark"))
    if "torch.addmm(" in source and GEMM_C_MARKER not in source:
        saving = gemm_bias_saving(vendor)
        if saving is None:  # not timed (the CPU, an older analysis): the regime decides
            split = sum(
                k.share or 0.0
                for k in vendor
                if k.name.endswith("addmm") and split_k_regime(k.shapes)
            )
            if split:
                out.append((1.5 + 4 * split, "gemm_bias_operand"))
        elif saving >= MIN_SAVING:
            out.append((2.0 + 12 * saving, "gemm_bias_operand"))
    if WINOGRAD_MARKER not in source and winograd_calls(source):
        share = winograd_share(vendor)
        if share >= CUDNN_SHARE:
            out.append((2.0 + 4 * share, "winograd_conv"))
    return out


def winograd_share(vendor: list[KernelUnit]) -> float:
    """The share of the forward in convolutions KernelOPT's Winograd convolution takes, by the
    rule its wrapper applies when the call runs (``kernels.own_winograd_sizes``) to each vendor
    call's recorded shapes and literal arguments."""
    from kernelopt_jupyter.agents.rewrites.kernels import own_winograd_sizes

    share = 0.0
    for k in vendor:
        try:
            calls = winograd_calls(k.source)
        except SyntaxError:
            continue
        if not calls or len(k.shapes) < 2:
            continue
        kw = {a.arg: ast.literal_eval(a.value) for a in calls[0].keywords if a.arg}
        args = (kw["stride"], kw["padding"], kw["dilation"], kw["transposed"], kw["groups"])
        if own_winograd_sizes(k.shapes[0], k.shapes[1], *args) is not None:
            share += k.share or 0.0
    return share


#: A measured vendor choice is offered when it saves at least this fraction of the forward.
MIN_SAVING = 0.01


def gemm_bias_saving(vendor: list[KernelUnit]) -> float | None:
    """The fraction of the forward the GEMM bias operand saves, from the dispatch map's
    timings of each ``addmm`` in both forms (its share times the fraction of its time saved,
    summed where the C-operand form is faster); None where no ``addmm`` was timed so."""
    timed = [k for k in vendor if {"as called", "gemm_bias_operand"} <= set(k.alternatives)]
    if not timed:
        return None
    saving = 0.0
    for k in timed:
        before, after = k.alternatives["as called"], k.alternatives["gemm_bias_operand"]
        if before > 0 and after < before:
            saving += (k.share or 0.0) * (1.0 - after / before)
    return saving
