"""Comparing a candidate's outputs with the reference's: tolerances, NaN/Inf agreement, errors.

Two tolerances per dtype. *Strict* is KernelBench's fp32 bar (1e-4; 1e-2 for fp16/bf16); a
candidate that meets it passes correctness outright. *Loose* admits results that differ from
the reference by reordered arithmetic (blocked reductions, split-K): those pass correctness
only to face the float64 referee, which decides whether the difference is honest rounding or a
real loss of precision (a silent fp16 downcast).

The absolute tolerance scales with the reference's magnitude (its root mean square, capped at
1): a fixed ``atol`` would let all-zero or constant outputs pass any problem whose outputs are
small, a cheat documented in the field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

STRICT: dict[torch.dtype, tuple[float, float]] = {  # (rtol, atol)
    torch.float64: (1e-7, 1e-7),
    torch.float32: (1e-4, 1e-4),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (1e-2, 1e-2),
}
LOOSE: dict[torch.dtype, tuple[float, float]] = {
    torch.float64: (1e-5, 1e-5),
    torch.float32: (1e-2, 1e-2),
    torch.float16: (5e-2, 5e-2),
    torch.bfloat16: (5e-2, 5e-2),
}


def flatten(value: Any) -> list[Any]:
    """The leaves of an output (tensors, numbers, None) in order; lists and tuples are opened."""
    if isinstance(value, list | tuple):
        return [leaf for item in value for leaf in flatten(item)]
    if isinstance(value, dict):
        return [leaf for key in sorted(value, key=str) for leaf in flatten(value[key])]
    return [value]


@dataclass
class Comparison:
    """How one output compares with the reference's."""

    error: str | None = None  # a hard mismatch (shape, dtype, NaN pattern...): fails outright
    strict_ok: bool = True
    loose_ok: bool = True
    max_abs_err: float = 0.0
    worst: str = ""  # where the largest violation is, for the diagnostic
    tolerances: dict[str, list[float]] = field(default_factory=dict)

    def merge(self, other: Comparison) -> None:
        """Fold another leaf's comparison into this one."""
        if self.error is None:
            self.error = other.error
        self.strict_ok = self.strict_ok and other.strict_ok
        self.loose_ok = self.loose_ok and other.loose_ok
        if other.max_abs_err > self.max_abs_err or (not other.strict_ok and not self.worst):
            self.worst = other.worst or self.worst
        self.max_abs_err = max(self.max_abs_err, other.max_abs_err)
        self.tolerances.update(other.tolerances)


def _describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"tensor{tuple(value.shape)} {str(value.dtype).removeprefix('torch.')}"
    return type(value).__name__


def _within(diff: torch.Tensor, ref: torch.Tensor, rtol: float, atol: float) -> torch.Tensor:
    return diff <= atol + rtol * ref.abs()


def compare_tensors(out: torch.Tensor, ref: torch.Tensor, label: str = "output") -> Comparison:
    """Compare one tensor with its reference: shape, dtype, device, NaN/Inf pattern, values."""
    if tuple(out.shape) != tuple(ref.shape):
        return Comparison(
            error=f"{label} has shape {tuple(out.shape)}, the reference {tuple(ref.shape)}"
        )
    if out.dtype != ref.dtype:
        return Comparison(
            error=f"{label} has dtype {out.dtype}, the reference {ref.dtype} "
            "(return the reference's dtype)"
        )
    if out.device.type != ref.device.type:
        return Comparison(error=f"{label} is on {out.device.type}, the reference on {ref.device}")
    a = out.detach()
    b = ref.detach()
    if not (a.is_floating_point() or a.is_complex()):
        if torch.equal(a, b):
            return Comparison()
        wrong = int((a != b).sum())
        return Comparison(
            error=f"{label}: {wrong} of {b.numel()} {b.dtype} elements differ (exact match needed)",
            strict_ok=False,
            loose_ok=False,
        )
    if a.is_complex():
        a, b = torch.view_as_real(a), torch.view_as_real(b)
    a64, b64 = a.to(torch.float64), b.to(torch.float64)
    nan_a, nan_b = torch.isnan(a64), torch.isnan(b64)
    if not torch.equal(nan_a, nan_b):
        return Comparison(
            error=f"{label}: NaN pattern differs ({int(nan_a.sum())} NaN vs the reference's "
            f"{int(nan_b.sum())})",
            strict_ok=False,
            loose_ok=False,
        )
    inf_a, inf_b = torch.isinf(a64), torch.isinf(b64)
    if not torch.equal(inf_a, inf_b) or not torch.equal(a64[inf_a], b64[inf_b]):
        return Comparison(
            error=f"{label}: Inf pattern differs ({int(inf_a.sum())} Inf vs the reference's "
            f"{int(inf_b.sum())})",
            strict_ok=False,
            loose_ok=False,
        )
    finite = ~(nan_b | inf_b)
    fa, fb = a64[finite], b64[finite]
    if fb.numel() == 0:
        return Comparison()
    diff = (fa - fb).abs()
    scale = float(fb.square().mean().sqrt())
    # Magnitude-aware absolute tolerance: outputs far below 1 get a proportionally smaller atol,
    # so zeros or constants cannot pass a problem whose outputs are tiny.
    factor = min(1.0, scale) if scale > 0 else 1.0
    rs, as_ = STRICT.get(b.dtype, STRICT[torch.float32])
    rl, al = LOOSE.get(b.dtype, LOOSE[torch.float32])
    strict = _within(diff, fb, rs, as_ * factor)
    loose = _within(diff, fb, rl, al * factor)
    result = Comparison(
        strict_ok=bool(strict.all()),
        loose_ok=bool(loose.all()),
        max_abs_err=float(diff.max()),
        tolerances={label: [rs, as_ * factor, rl, al * factor]},
    )
    if not result.strict_ok:
        excess = diff - (as_ * factor + rs * fb.abs())
        idx = int(excess.argmax())
        bad = int((~strict).sum())
        result.worst = (
            f"{label}: {bad} of {fb.numel()} elements outside rtol={rs:g} atol={as_ * factor:.2g}; "
            f"worst got {float(fa[idx]):.6g} expected {float(fb[idx]):.6g}"
        )
    return result


def compare_outputs(out: Any, ref: Any) -> Comparison:
    """Compare a whole output (a tensor or a nest of them) with the reference's output."""
    outs, refs = flatten(out), flatten(ref)
    if len(outs) != len(refs):
        return Comparison(
            error=f"returned {len(outs)} value(s), the reference {len(refs)}",
            strict_ok=False,
            loose_ok=False,
        )
    total = Comparison()
    for i, (o, r) in enumerate(zip(outs, refs)):
        label = "output" if len(refs) == 1 else f"output[{i}]"
        if isinstance(r, torch.Tensor):
            if not isinstance(o, torch.Tensor):
                leaf = Comparison(
                    error=f"{label} is a {_describe(o)}, the reference a {_describe(r)}"
                )
            else:
                leaf = compare_tensors(o, r, label)
        elif isinstance(r, int | float) and not isinstance(r, bool):
            if isinstance(o, torch.Tensor) and o.numel() == 1:
                o = o.item()
            if not isinstance(o, int | float):
                leaf = Comparison(error=f"{label} is a {_describe(o)}, the reference a number")
            else:
                leaf = compare_tensors(torch.tensor(float(o)), torch.tensor(float(r)), label)
        else:
            leaf = Comparison() if o == r else Comparison(error=f"{label} is {o!r}, expected {r!r}")
        if leaf.error is not None:
            leaf.strict_ok = leaf.loose_ok = False
        total.merge(leaf)
    return total


def tensors_equal(a: Any, b: Any) -> bool:
    """Bitwise equality of two values (NaN equal to NaN), used for the input-mutation check."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return bool(torch.equal(a, b)) or bool(
            a.is_floating_point()
            and torch.equal(torch.isnan(a), torch.isnan(b))
            and torch.equal(a.nan_to_num(0.0), b.nan_to_num(0.0))
        )
    return bool(a is b or a == b)


def error_vs(out: Any, ref64: Any) -> float:
    """Largest absolute difference of an output from the float64 referee (finite places)."""
    worst = 0.0
    for o, r in zip(flatten(out), flatten(ref64)):
        if not (isinstance(o, torch.Tensor) and isinstance(r, torch.Tensor)):
            continue
        if not r.is_floating_point() or o.shape != r.shape:
            continue
        r64 = r.detach().to(torch.float64)
        o64 = o.detach().to(device=r64.device, dtype=torch.float64)
        finite = torch.isfinite(r64) & torch.isfinite(o64)
        if bool(finite.any()):
            worst = max(worst, float((o64[finite] - r64[finite]).abs().max()))
    return worst


def referee_floor(ref64: Any, dtypes: list[torch.dtype]) -> float:
    """A scale-relative floor for the reference's own error (a few ulps of the output's
    magnitude), so a reference that happens to be exact does not make every ratio infinite."""
    scale = 0.0
    for r in flatten(ref64):
        if isinstance(r, torch.Tensor) and r.is_floating_point() and r.numel():
            vals = r.detach().to(torch.float64)
            vals = vals[torch.isfinite(vals)]
            if vals.numel():
                scale = max(scale, float(vals.abs().max()))
    eps = max((torch.finfo(d).eps for d in dtypes if d.is_floating_point), default=2.0**-23)
    return max(2.0 * eps * scale, 1e-30)


def float_dtypes(value: Any) -> list[torch.dtype]:
    """The floating dtypes among an output's tensors."""
    return [
        v.dtype for v in flatten(value) if isinstance(v, torch.Tensor) and v.is_floating_point()
    ]
