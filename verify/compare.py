"""Comparing a candidate's outputs with the reference's: structure, tolerances, NaN/Inf places,
and the float64 referee's errors. Runs in the checker, on data (never on the candidate's
objects), and in chunks: no output is ever upcast to float64 whole.

Two tolerances per dtype. *Strict* is KernelBench's fp32 bar (1e-4; 1e-2 for fp16/bf16).
*Loose* admits results that differ from the reference by reordered arithmetic (blocked
reductions, split-K); either way the float64 referee rules afterwards (see ``referee_errors``).

The absolute tolerance scales with the reference's magnitude (its root mean square, capped at
1): a fixed ``atol`` would let all-zero or constant outputs pass any problem whose outputs are
small, a cheat documented in the field.
"""

from __future__ import annotations

import itertools
import math
import weakref
from dataclasses import dataclass, field
from typing import Any

import torch

from kernelopt_jupyter.verify.wire import Opaque, Sent

#: float64's strict tolerance is far above its own rounding (1e-16) and far below fp32's
#: (1e-7): there is no float64 referee for a float64 problem, so this is its only bar (at
#: 1e-7, a float64 GELU computed in fp32 passed).
STRICT: dict[torch.dtype, tuple[float, float]] = {  # (rtol, atol)
    torch.float64: (1e-10, 1e-10),
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
#: Elements per comparison chunk (float64 copies of one chunk are the largest temporaries).
CHUNK = 1 << 24
#: Elements per step where the work runs on the host: a chunk is walked in steps of this size
#: (float64 temporaries of 16 MB, which the allocator reuses, instead of fresh 128 MB ones that
#: are mapped and faulted in on every pass). Measured on the CPU machine, 16M elements: the
#: checker's own time fell from about 120 s to 33 s. Results do not depend on it (tested).
HOST_STEP = 1 << 21
#: On a device: the least step (elements), and the parts of the largest tensor a step is at
#: most (``_step``).
DEVICE_MIN_STEP = 1 << 20
DEVICE_PARTS = 16
#: Values below this fraction of the output's RMS get the referee's relative check.
SMALL_FRACTION = 1e-3


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
    #: The largest root mean square of the reference's floating tensor leaves compared (what
    #: ``output_scale`` gives the whole output once every leaf was compared).
    scale: float = 0.0

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
        self.scale = max(self.scale, other.scale)


def _describe(value: Any) -> str:
    if isinstance(value, Sent):
        value = value.tensor
    if isinstance(value, torch.Tensor):
        return f"tensor{tuple(value.shape)} {str(value.dtype).removeprefix('torch.')}"
    if isinstance(value, Opaque):
        return value.type_name
    return type(value).__name__


#: Where the chunks are computed: None for where the tensors are; the checker of a GPU
#: verification sets "cuda" (its data arrives on the host; the device is far faster there).
WORK_DEVICE: str | None = None


def _step(chunk: int, *tensors: Any) -> int:
    """The step to walk ``chunk``-sized chunks in: ``HOST_STEP`` where every tensor is on the
    host and the work stays there (``WORK_DEVICE`` unset). On a device, the chunk itself
    where the tensors are large (each step costs a synchronisation), but at most about
    1/``DEVICE_PARTS`` of the largest tensor (not below ``DEVICE_MIN_STEP``): a step's float64
    temporaries then stay a fraction of the outputs compared. Walked in 16M-element steps,
    a 19M-element output took the checker's peak to 7.6x its problem's footprint
    (``conv_bn_silu``). Zipped walks use one step for all their
    tensors; a step always divides the chunk, so per-chunk figures do not depend on it."""
    host = WORK_DEVICE in (None, "cpu") and all(
        not isinstance(t, torch.Tensor) or t.device.type == "cpu" for t in tensors
    )
    if host and chunk > HOST_STEP and chunk % HOST_STEP == 0:
        return HOST_STEP
    if not host:
        largest = max((t.numel() for t in tensors if isinstance(t, torch.Tensor)), default=0)
        step = DEVICE_MIN_STEP
        while step * DEVICE_PARTS < largest and step < chunk:
            step *= 2
        if step < chunk and chunk % step == 0:
            return step
    return chunk


def _chunks(t: torch.Tensor, chunk: int, device: str | None = None) -> Any:
    device = device or WORK_DEVICE
    flat = t.detach().reshape(-1)
    for start in range(0, flat.numel(), chunk):
        part = flat[start : start + chunk]
        if device is not None and part.device.type != device:
            part = part.to(device)
        if part.is_complex():
            part = torch.view_as_real(part).reshape(-1)
        yield start, part


#: Scales taken where a tensor's bytes were still on the device (``note_scale``), by the id
#: of the host copy: (a weak reference to it, its version counter then, the scale).
_KNOWN_SCALES: dict[int, tuple[Any, int, float]] = {}


def note_scale(copy: torch.Tensor, source: torch.Tensor) -> None:
    """Take ``_scale`` of ``source`` (a device tensor with ``copy``'s values) for ``copy`` (its
    host copy): a pass over device memory now, where ``_scale(copy)`` would move every step
    of ``copy`` to the work device again. The checker's answer key waits in host memory and
    is walked per call; its scales were one pass in three of the bytes moved there. Kept
    while ``copy`` lives and is not changed in place (its version counter)."""
    if not (copy.is_floating_point() or copy.is_complex()) or copy.numel() != source.numel():
        return
    key = id(copy)
    value = _scale(source, CHUNK)
    _KNOWN_SCALES[key] = (
        weakref.ref(copy, lambda _: _KNOWN_SCALES.pop(key, None)),
        copy._version,
        value,
    )


def _scale(ref: torch.Tensor, chunk: int) -> float:
    """Root mean square of the reference's finite values (one chunked pass; none where it was
    taken on the device before, ``note_scale``)."""
    known = _KNOWN_SCALES.get(id(ref))
    if known is not None and known[0]() is ref and known[1] == ref._version:
        return known[2]
    total = 0.0
    count = 0
    for _, part in _chunks(ref, _step(chunk, ref)):
        p = part.to(torch.float64)
        finite = p[torch.isfinite(p)]
        total += float(finite.square().sum())
        count += finite.numel()
    return math.sqrt(total / count) if count else 0.0


def compare_tensors(
    out: torch.Tensor,
    ref: torch.Tensor,
    label: str = "output",
    *,
    chunk: int = CHUNK,
    magnitude: bool = False,
    tap: Any = None,
) -> Comparison:
    """Compare one tensor with its reference: shape, dtype, device, NaN/Inf pattern, values.

    ``magnitude`` scales the absolute tolerance with the output's RMS above 1 too (the stress
    case: inputs of large magnitude make every honest rounding error proportionally larger).
    Chunked; the result is the same for any chunk size (tested). ``tap(start, a, b)`` gets
    every floating step of the two, as walked (``compare_and_referee``).
    """
    if tuple(out.shape) != tuple(ref.shape):
        return Comparison(
            error=f"{label} has shape {tuple(out.shape)}, the reference {tuple(ref.shape)}"
        )
    if out.dtype != ref.dtype:
        return Comparison(
            error=f"{label} has dtype {out.dtype}, the reference {ref.dtype} "
            "(return the reference's dtype)"
        )
    if out.device.type != ref.device.type and WORK_DEVICE is None:
        # Where the two arrived is the transport's business (bytes through the host, or
        # device to device), not the candidate's: the declared device was checked on the
        # leaves (``compare_outputs``). Compared where the candidate's output is (with a
        # work device, each step goes there on its own: ``_chunks``).
        ref = ref.to(out.device)
    if not (ref.is_floating_point() or ref.is_complex()):
        wrong = 0
        step = _step(chunk, out, ref)
        for (_, a), (_, b) in zip(_chunks(out, step), _chunks(ref, step)):
            wrong += int((a != b).sum())
        if wrong == 0:
            return Comparison()
        return Comparison(
            error=f"{label}: {wrong} of {ref.numel()} {ref.dtype} elements differ "
            "(exact match needed)",
            strict_ok=False,
            loose_ok=False,
        )
    scale = _scale(ref, chunk)
    # Magnitude-aware absolute tolerance: outputs far below 1 get a proportionally smaller atol,
    # so zeros or constants cannot pass a problem whose outputs are tiny.
    factor = (scale if magnitude else min(1.0, scale)) if scale > 0 else 1.0
    base = ref.dtype if ref.is_floating_point() else torch.float32
    rs, as_ = STRICT.get(base, STRICT[torch.float32])
    rl, al = LOOSE.get(base, LOOSE[torch.float32])
    nan_out = nan_ref = inf_out = inf_ref = 0
    inf_mismatch = False
    max_err = 0.0
    bad_strict = bad_loose = 0
    worst_excess = -math.inf
    worst_pair = (0.0, 0.0)
    loose_excess = -math.inf
    loose_pair = (0.0, 0.0)
    finite_count = 0
    step = _step(chunk, out, ref)
    for (start, a), (_, b) in zip(_chunks(out, step), _chunks(ref, step)):
        if tap is not None:
            tap(start, a, b)
        a64, b64 = a.to(torch.float64), b.to(torch.float64)
        na, nb = torch.isnan(a64), torch.isnan(b64)
        nan_out += int(na.sum())
        nan_ref += int(nb.sum())
        if not torch.equal(na, nb):
            return Comparison(
                error=f"{label}: NaN pattern differs ({_count_nan(out, chunk)} NaN vs the "
                f"reference's {_count_nan(ref, chunk)})",
                strict_ok=False,
                loose_ok=False,
            )
        ia, ib = torch.isinf(a64), torch.isinf(b64)
        inf_out += int(ia.sum())
        inf_ref += int(ib.sum())
        if not torch.equal(ia, ib) or not torch.equal(a64[ia], b64[ib]):
            inf_mismatch = True
            continue
        finite = ~(nb | ib)
        # Where every value is finite (the usual case) the chunk is taken whole: the same
        # values as the masked copies, without gathering them.
        fa, fb = (a64, b64) if bool(finite.all()) else (a64[finite], b64[finite])
        if fb.numel() == 0:
            continue
        finite_count += fb.numel()
        diff = (fa - fb).abs()
        max_err = max(max_err, float(diff.max()))
        strict_bound = as_ * factor + rs * fb.abs()
        bad_strict += int((diff > strict_bound).sum())
        loose_over = diff - (al * factor + rl * fb.abs())
        bad_loose += int((loose_over > 0).sum())
        li = int(loose_over.argmax())
        if float(loose_over[li]) > loose_excess:
            loose_excess = float(loose_over[li])
            loose_pair = (float(fa[li]), float(fb[li]))
        excess = diff - strict_bound
        idx = int(excess.argmax())
        if float(excess[idx]) > worst_excess:
            worst_excess = float(excess[idx])
            worst_pair = (float(fa[idx]), float(fb[idx]))
    if inf_mismatch:
        return Comparison(
            error=f"{label}: Inf pattern differs ({inf_out} Inf vs the reference's {inf_ref})",
            strict_ok=False,
            loose_ok=False,
        )
    result = Comparison(
        strict_ok=bad_strict == 0,
        loose_ok=bad_loose == 0,
        max_abs_err=max_err,
        tolerances={label: [rs, as_ * factor, rl, al * factor]},
        scale=scale,
    )
    if not result.loose_ok:
        result.worst = (
            f"{label}: {bad_loose} of {finite_count} elements outside even the loose tolerance "
            f"rtol={rl:g} atol={al * factor:.2g}; worst got {loose_pair[0]:.6g} expected "
            f"{loose_pair[1]:.6g}"
        )
    elif not result.strict_ok:
        result.worst = (
            f"{label}: {bad_strict} of {finite_count} elements outside rtol={rs:g} "
            f"atol={as_ * factor:.2g}; worst got {worst_pair[0]:.6g} expected {worst_pair[1]:.6g}"
        )
    return result


def _count_nan(t: torch.Tensor, chunk: int) -> int:
    return sum(int(torch.isnan(p).sum()) for _, p in _chunks(t, _step(chunk, t)))


def output_scale(ref: Any, *, chunk: int = CHUNK) -> float:
    """The largest root mean square over an output's floating tensor leaves (chunked)."""
    best = 0.0
    for leaf in flatten(ref):
        t, _ = _leaf(leaf)
        if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex()):
            best = max(best, _scale(t, chunk))
    return best


def all_finite(value: Any, *, chunk: int = CHUNK) -> bool:
    """Whether every floating value of an output is finite (chunked: no whole-size temporary)."""
    tensors = [_leaf(leaf)[0] for leaf in flatten(value)]
    return all(
        bool(torch.isfinite(part).all())
        for t in tensors
        if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex())
        for _, part in _chunks(t, _step(chunk, t))
    )


def _leaf(value: Any) -> tuple[Any, Sent | None]:
    if isinstance(value, Sent):
        return value.tensor, value
    return value, None


def compare_outputs(
    out: Any,
    ref: Any,
    *,
    chunk: int = CHUNK,
    magnitude: bool = False,
    device: str | None = None,
    taps: dict[int, Any] | None = None,
) -> Comparison:
    """Compare a whole output with the reference's, structure first.

    The candidate's output must have the reference's structure: a tensor where the reference
    returns a tensor (``(out,)`` is not ``out``; a list stands for a tuple), the same lengths
    and dict keys; each tensor a plain ``torch.Tensor`` (a subclass arrives as ``Opaque``)
    with the reference's shape, dtype, device, and contiguity where the reference is
    contiguous. Values are compared last. ``device`` is the device the outputs must be on
    (the reference's outputs travel to the checker through the host, so their own device
    says nothing); without it the reference's sent device is the rule.
    """
    total = Comparison()
    _compare(out, ref, "output", total, chunk, magnitude, device, taps)
    if total.error is not None:
        total.strict_ok = total.loose_ok = False
    return total


def _compare(
    out: Any,
    ref: Any,
    label: str,
    total: Comparison,
    chunk: int,
    magnitude: bool = False,
    device: str | None = None,
    taps: dict[int, Any] | None = None,
) -> None:
    taps = taps or {}
    if total.error is not None:
        return
    if isinstance(ref, list | tuple):
        if not isinstance(out, list | tuple):
            total.error = (
                f"{label} is a {_describe(out)}, the reference a {type(ref).__name__} of "
                f"{len(ref)} (return the reference's structure)"
            )
            return
        if len(out) != len(ref):
            total.error = f"returned {len(out)} value(s) in {label}, the reference {len(ref)}"
            return
        for i, (o, r) in enumerate(zip(out, ref)):
            _compare(o, r, f"{label}[{i}]", total, chunk, magnitude, device, taps)
        return
    if isinstance(ref, dict):
        if not isinstance(out, dict) or sorted(map(str, out)) != sorted(map(str, ref)):
            total.error = f"{label} is not a dict with the reference's keys {sorted(ref)}"
            return
        for key in ref:
            _compare(out[key], ref[key], f"{label}[{key!r}]", total, chunk, magnitude, device, taps)
        return
    r, r_meta = _leaf(ref)
    o, o_meta = _leaf(out)
    if isinstance(o, Opaque):
        total.error = (
            f"{label} is a {o.type_name}, not a plain torch.Tensor: return a torch.Tensor "
            "(subclasses are not taken as outputs)"
        )
        return
    if isinstance(r, torch.Tensor):
        if not isinstance(o, torch.Tensor):
            total.error = f"{label} is a {_describe(o)}, the reference a {_describe(r)}"
            return
        if o_meta is not None and r_meta is not None:
            expected = device or r_meta.device
            if o_meta.device != expected:
                total.error = f"{label} is on {o_meta.device}, the reference on {expected}"
                return
            if r_meta.contiguous and not o_meta.contiguous and o.shape == r.shape:
                total.error = (
                    f"{label} has strides {o_meta.stride}, the reference is contiguous "
                    f"{r_meta.stride} (return a contiguous tensor)"
                )
                return
        tap = taps.get(id(r))
        total.merge(compare_tensors(o, r, label, chunk=chunk, magnitude=magnitude, tap=tap))
        return
    if isinstance(r, int | float) and not isinstance(r, bool):
        if isinstance(o, torch.Tensor) and o.numel() == 1:
            o = o.item()
        if not isinstance(o, int | float):
            total.error = f"{label} is a {_describe(o)}, the reference a number"
            return
        number = compare_tensors(torch.tensor(float(o)), torch.tensor(float(r)), label)
        number.scale = 0.0  # a number is no tensor leaf of the output's scale
        total.merge(number)
        return
    if o != r:
        total.error = f"{label} is {o!r}, expected {r!r}"


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


# ---------------------------------------------------------------------------- the referee


@dataclass
class RefereeErrors:
    """One output's errors against the float64 referee."""

    max_abs: float = 0.0  # largest absolute error at finite places
    small_rel: float = 0.0  # mean relative error where |ref64| is far below the output's RMS
    small_count: int = 0
    #: The 99th percentile of the relative error where |ref64| is not far below the output's
    #: RMS (the largest chunk's, per leaf; merged: the largest leaf's).
    mid_rel_p99: float = 0.0
    #: The leaf's largest finite |ref64| and its dtype (per-leaf records only).
    magnitude: float = 0.0
    dtype: torch.dtype | None = None

    def merge(self, other: RefereeErrors) -> None:
        """Fold another leaf into this one."""
        self.max_abs = max(self.max_abs, other.max_abs)
        n = self.small_count + other.small_count
        if n:
            self.small_rel = (
                self.small_rel * self.small_count + other.small_rel * other.small_count
            ) / n
        self.small_count = n
        self.mid_rel_p99 = max(self.mid_rel_p99, other.mid_rel_p99)
        self.magnitude = max(self.magnitude, other.magnitude)


#: The quantile of the mid-range relative error the referee compares.
MID_QUANTILE = 0.99


class _Quantile:
    """The ``q`` quantile (the k-th smallest of n, k = ceil(q n), at least 1) of the values
    added since the last ``close``, when they arrive in several steps of one chunk. Each step
    keeps only its values at or above its r-th largest, r the most the chunk's answer can be
    from the top (``ceil((1 - q) chunk) + 1``): the answer is among the kept ones, so it is
    exact, with far smaller temporaries than the whole chunk's values."""

    def __init__(self, q: float, chunk: int, step: int) -> None:
        self.q = q
        self.single = step >= chunk  # one step per chunk: nothing to leave out
        self.top = math.ceil((1.0 - q) * chunk) + 1
        self.kept: list[torch.Tensor] = []
        self.count = 0

    def add(self, values: torch.Tensor) -> None:
        values = values.flatten()
        self.count += values.numel()
        if not self.single and values.numel() > self.top:
            values = values[values >= _kth_largest(values, self.top)]
        self.kept.append(values)

    def close(self) -> float:
        """The quantile of the values added since the last close (0.0 if none); resets."""
        kept, count = self.kept, self.count
        self.kept, self.count = [], 0
        if not count:
            return 0.0
        k = max(1, min(count, math.ceil(self.q * count)))
        union = kept[0] if len(kept) == 1 else torch.cat(kept)
        # the k-th smallest of all = the (count - k + 1)-th largest, found among the kept ones
        return float(_kth_largest(union, count - k + 1))


def _kth_largest(values: torch.Tensor, m: int) -> torch.Tensor:
    """The ``m``-th largest of a flat tensor, exactly (a 0-d tensor). On a GPU
    ``torch.kthvalue`` works a slice with one block of threads: 0.151 s per 16M float64 values
    on the H200, 3 minutes of one 6.4 GB verification; ``torch.topk`` spreads a long slice over
    many blocks (0.0007 s), and the smallest of the ``m`` largest is the same value."""
    if values.device.type == "cuda":
        return torch.topk(values, m, sorted=False).values.min()
    return torch.kthvalue(values, values.numel() - m + 1).values


def referee_errors(out: Any, ref64: Any, *, chunk: int = CHUNK) -> RefereeErrors:
    """Absolute and relative errors of an output against the float64 referee, all its
    floating leaves folded together (``referee_leaves`` keeps them apart)."""
    total = RefereeErrors()
    for leaf in referee_leaves(out, ref64, chunk=chunk):
        if leaf is not None:
            total.merge(leaf)
    return total


#: A value far below the output's scale that the fp32 reference itself misses by more than this
#: relative error is one its dtype cannot evaluate (cancellation: GELU's ``1 + erf`` at x < -4,
#: values past underflow); the small-value check leaves it out, since any two honest formulas
#: differ there by O(1) (an Inductor-style GELU kernel was 3-12x "worse" than ATen's on a
#: handful of such values of the stress call, and failed about one verification in twenty).
ILL_CONDITIONED = 1e-2


def referee_leaves(
    out: Any, ref64: Any, *, own: Any = None, chunk: int = CHUNK
) -> list[RefereeErrors | None]:
    """Each output leaf's errors against the float64 referee (None where the leaf is not a
    floating tensor of the referee's shape). Each leaf is judged on its own: folded together,
    a large output's magnitude and a coarse output's dtype set the floor for all of them (bf16
    probabilities beside a loss, or an fp32 output beside its bf16 copy, passed).

    ``own`` is the fp32 reference's output: where given, values far below the scale that it
    misses by more than ``ILL_CONDITIONED`` are left out of the small-value statistics (the
    same set for the candidate and for the reference, so both are measured on one set)."""
    return [row[0] for row in referee_sides([out], ref64, own=own, chunk=chunk)]


def referee_sides(
    outs: list[Any], ref64: Any, *, own: Any = None, chunk: int = CHUNK
) -> list[list[RefereeErrors | None]]:
    """``referee_leaves`` of several outputs against one referee, per leaf one entry per
    output, in one walk: the referee's scale, its chunks and ``own``'s are taken once for all
    of them (the checker refers the candidate and the fp32 reference together). Each figure
    is the one ``referee_leaves`` gives that output alone."""
    rows: list[list[RefereeErrors | None]] = []
    owns = flatten(own) if own is not None else []
    leaves = [flatten(out) for out in outs]
    for index, r in enumerate(flatten(ref64)):
        if any(index >= len(side) for side in leaves):
            break  # as zip: the shortest output ends the walk
        r, _ = _leaf(r)
        w, _ = _leaf(owns[index]) if index < len(owns) else (None, None)
        sides: list[torch.Tensor | None] = []
        number = _number(r)
        for side in leaves:
            o, _ = _leaf(side[index])
            if number is not None:
                # A Python number is refereed too (it was compared loosely and never
                # refereed: an entropy summed in bf16, 0.56% off, passed), at fp32's floor:
                # numbers usually come from fp32 tensors (``.item()``).
                o = o.item() if isinstance(o, torch.Tensor) and o.numel() == 1 else o
                value = _number(o)
                o = None if value is None else torch.tensor(value, dtype=torch.float32)
            sides.append(o if isinstance(o, torch.Tensor) else None)
        if number is not None:
            r = torch.tensor(number, dtype=torch.float64)
        if not isinstance(r, torch.Tensor) or not r.is_floating_point():
            rows.append([None] * len(sides))
            continue
        sides = [o if o is not None and o.shape == r.shape else None for o in sides]
        if not (isinstance(w, torch.Tensor) and w.is_floating_point() and w.shape == r.shape):
            w = None
        rows.append(_referee_leaf(sides, r, w, chunk))
    return rows


def _referee_leaf(
    sides: list[torch.Tensor | None], r: torch.Tensor, w: torch.Tensor | None, chunk: int
) -> list[RefereeErrors | None]:
    """One leaf's errors of each output in ``sides`` (None: not refereed) against ``r``."""
    walk = _RefereeWalk(sides, r, w, chunk)
    if not walk.live:
        return walk.finish()
    walks = [_chunks(sides[i], walk.step) for i in walk.live]  # type: ignore[arg-type]
    # ``own`` is usually one of the sides too (the checker refers the fp32 reference): its
    # steps are that side's, not moved to the work device a second time.
    own_side = next((k for k, i in enumerate(walk.live) if sides[i] is w), None)
    own_parts: Any = (
        _chunks(w, walk.step)
        if w is not None and own_side is None
        else itertools.repeat((None, None))
    )
    for (start, b), (_, c), *parts in zip(_chunks(r, walk.step), own_parts, *walks):
        if own_side is not None:
            c = parts[own_side][1]
        walk.add(start, b, c, [part for _, part in parts])
    return walk.finish()


class _RefereeWalk:
    """``_referee_leaf``'s figures, fed one step at a time: the referee's part ``b``, the
    fp32 reference's ``c`` (or None) and each live side's part, all already where the work
    runs (``_chunks``). ``compare_and_referee`` feeds it from the comparison's own steps."""

    def __init__(
        self, sides: list[torch.Tensor | None], r: torch.Tensor, w: torch.Tensor | None, chunk: int
    ) -> None:
        self.chunk = chunk
        self.live = [i for i, o in enumerate(sides) if o is not None]
        self.found: list[RefereeErrors | None] = [None] * len(sides)
        self.next_start = 0  # the start of the step expected next (a walk cut short shows)
        if not self.live:
            return
        self.small = _scale(r, chunk) * SMALL_FRACTION
        self.leaves = {
            i: RefereeErrors(dtype=o.dtype if o.is_floating_point() else None)
            for i, o in enumerate(sides)
            if o is not None
        }
        self.rel_sums = dict.fromkeys(self.live, 0.0)
        self.step = _step(chunk, *[sides[i] for i in self.live], r, w)
        # The mid-range quantile is taken per chunk (the largest over chunks), walked in steps
        # whose candidate values are kept (``_Quantile``): the same figure for any step.
        self.blocks = {i: _Quantile(MID_QUANTILE, chunk, self.step) for i in self.live}

    def add(
        self, start: int, b: torch.Tensor, c: torch.Tensor | None, parts: list[torch.Tensor]
    ) -> None:
        self.next_start = start + b.numel()
        b64 = b.to(torch.float64)
        b_finite = torch.isfinite(b64)
        magnitude = b64.abs()
        well: torch.Tensor | None = None  # made when a side first has tiny values
        for i, a in zip(self.live, parts):
            leaf, block = self.leaves[i], self.blocks[i]
            if start % self.chunk == 0:
                leaf.mid_rel_p99 = max(leaf.mid_rel_p99, block.close())
            a64 = a.to(torch.float64)
            finite = torch.isfinite(a64) & b_finite
            whole = bool(finite.all())  # the usual case: the chunk whole, no gathered copies
            if whole:
                diff, mag = (a64 - b64).abs(), magnitude
            elif bool(finite.any()):
                diff, mag = (a64[finite] - b64[finite]).abs(), magnitude[finite]
            else:
                continue
            leaf.max_abs = max(leaf.max_abs, float(diff.max()))
            leaf.magnitude = max(leaf.magnitude, float(mag.max()))
            tiny = (mag > 0) & (mag < self.small)
            if c is not None and bool(tiny.any()):
                if well is None:
                    # NaN (a non-finite reference value) compares False: left out as well.
                    well = (c.to(torch.float64) - b64).abs() <= ILL_CONDITIONED * magnitude
                tiny &= well if whole else well[finite]
            if bool(tiny.any()):
                self.rel_sums[i] += float((diff[tiny] / mag[tiny]).sum())
                leaf.small_count += int(tiny.sum())
            # An exact zero of the referee is neither small nor mid-range (no relative error:
            # 0/0 would be NaN, which the device's quantile walk drops and then miscounts).
            mid = (mag >= self.small) & (mag > 0)
            if bool(mid.any()):
                block.add(diff[mid] / mag[mid])

    def finish(self) -> list[RefereeErrors | None]:
        for i in self.live:
            leaf = self.leaves[i]
            leaf.mid_rel_p99 = max(leaf.mid_rel_p99, self.blocks[i].close())
            if leaf.small_count:
                leaf.small_rel = self.rel_sums[i] / leaf.small_count
            self.found[i] = leaf
        return self.found


def compare_and_referee(
    out: Any,
    ref: Any,
    ref64: Any,
    *,
    bound64: Any = None,
    magnitude: bool = False,
    device: str | None = None,
    chunk: int = CHUNK,
) -> tuple[Comparison, list[list[RefereeErrors | None]] | None, bool | None]:
    """``compare_outputs(out, ref)`` and ``referee_sides([out, ref], ref64, own=ref)`` in one
    walk, where the leaves line up simply: every leaf of ``ref`` a floating tensor in lists
    and tuples (no dict), ``out``'s the same shape and dtype, ``ref64``'s the same shape. The
    referee then takes each step of the candidate's output and of the fp32 reference from the
    comparison (they wait in host memory on a GPU: each step is moved to the device once, not
    twice). The figures are those of the two calls; the referee's rows are None where the
    walk could not be shared or was cut short (a failed comparison): then the caller asks
    ``referee_sides``. With a linear problem's ``bound64``, ``within_linear_bound`` is taken
    in the same walk (its figure, or None where the bound's leaves do not line up: then the
    caller asks ``within_linear_bound``)."""
    outs, refs, refs64 = flatten(out), flatten(ref), flatten(ref64)
    bounds = flatten(bound64) if bound64 is not None else []
    simple = (
        not _has_dict(ref)
        and len(outs) == len(refs) == len(refs64)
        and len({id(_leaf(r)[0]) for r in refs}) == len(refs)  # one walk per reference leaf
        and all(
            isinstance(o, torch.Tensor)
            and isinstance(r, torch.Tensor)
            and isinstance(r64, torch.Tensor)
            and r.is_floating_point()
            and r64.is_floating_point()
            and o.dtype == r.dtype
            and o.shape == r.shape == r64.shape
            for o, r, r64 in (
                (_leaf(a)[0], _leaf(b)[0], _leaf(c)[0]) for a, b, c in zip(outs, refs, refs64)
            )
        )
    )
    if not simple:
        cmp = compare_outputs(out, ref, chunk=chunk, magnitude=magnitude, device=device)
        return cmp, None, None
    with_bound = len(bounds) == len(outs) and all(
        isinstance(_leaf(b)[0], torch.Tensor) and _leaf(b)[0].shape == _leaf(o)[0].shape
        for b, o in zip(bounds, outs)
    )
    within = [True]  # every step of every leaf inside the bound so far
    walks: list[_RefereeWalk] = []
    taps: dict[int, Any] = {}
    for index, (o_leaf, r_leaf, r64_leaf) in enumerate(zip(outs, refs, refs64)):
        o, r, r64 = _leaf(o_leaf)[0], _leaf(r_leaf)[0], _leaf(r64_leaf)[0]
        walk = _RefereeWalk([o, r], r64, r, chunk)
        if walk.step != _step(chunk, o, r):
            cmp = compare_outputs(out, ref, chunk=chunk, magnitude=magnitude, device=device)
            return cmp, None, None
        walks.append(walk)
        steps64 = _chunks(r64, walk.step)
        bound_steps = _chunks(_leaf(bounds[index])[0], walk.step) if with_bound else None
        scale = LINEAR_BOUND_ULPS * torch.finfo(o.dtype).eps

        def tap(
            start: int,
            a: torch.Tensor,
            b: torch.Tensor,
            walk: Any = walk,
            steps: Any = steps64,
            bound_steps: Any = bound_steps,
            scale: float = scale,
        ) -> None:
            _, b64 = next(steps)
            walk.add(start, b64, b, [a, b])
            if bound_steps is not None:
                _, m = next(bound_steps)
                if within[0]:
                    within[0] = _within_bound_step(a, b64, m, scale)

        taps[id(r)] = tap
    cmp = compare_outputs(out, ref, chunk=chunk, magnitude=magnitude, device=device, taps=taps)
    done = all(walk.next_start == _leaf(r)[0].numel() for walk, r in zip(walks, refs))
    if cmp.error is not None or not done:
        return cmp, None, None
    return cmp, [walk.finish() for walk in walks], (within[0] if with_bound else None)


def _has_dict(value: Any) -> bool:
    if isinstance(value, dict):
        return True
    if isinstance(value, list | tuple):
        return any(_has_dict(v) for v in value)
    return False


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def error_vs(out: Any, ref64: Any, *, chunk: int = CHUNK) -> float:
    """Largest absolute difference of an output from the float64 referee (finite places)."""
    return referee_errors(out, ref64, chunk=chunk).max_abs


def referee_floor(ref64: Any, dtypes: list[torch.dtype], *, chunk: int = CHUNK) -> float:
    """A scale-relative floor for the reference's own error (a few ulps of the output's
    magnitude), so a reference that happens to be exact does not make every ratio infinite."""
    scale = 0.0
    for r in flatten(ref64):
        r, _ = _leaf(r)
        if isinstance(r, torch.Tensor) and r.is_floating_point() and r.numel():
            for _, part in _chunks(r, _step(chunk, r)):
                vals = part.to(torch.float64)
                vals = vals[torch.isfinite(vals)]
                if vals.numel():
                    scale = max(scale, float(vals.abs().max()))
    eps = max((torch.finfo(d).eps for d in dtypes if d.is_floating_point), default=2.0**-23)
    return max(2.0 * eps * scale, 1e-30)


def leaf_floor(magnitude: float, dtypes: list[torch.dtype]) -> float:
    """``referee_floor`` of one output leaf, from its largest finite |float64| value."""
    eps = max((torch.finfo(d).eps for d in dtypes if d.is_floating_point), default=2.0**-23)
    return max(2.0 * eps * magnitude, 1e-30)


def mid_floor(dtypes: list[torch.dtype]) -> float:
    """The smallest 99th-percentile relative error (values not far below the output's scale)
    the referee holds against a candidate: 8 ulps of the dtype, so at the 10x limit a
    candidate fails from 80 ulps on more than 1% of its values (a polynomial exp on a softmax's
    tail: 7.5e-5 relative, about 630 ulps, passed the absolute check at 3.9x)."""
    eps = max((torch.finfo(d).eps for d in dtypes if d.is_floating_point), default=2.0**-23)
    return 8.0 * eps


def relative_floor(dtypes: list[torch.dtype]) -> float:
    """The smallest mean relative error on small values the referee holds against a candidate.

    Values far below the output's scale often come from cancellation, where an honest
    reordered reduction (Inductor's own code) is far less exact *relatively* than eager while
    its absolute error is tiny; so the floor is 1e-3 (a few ulps of the dtype when coarser).
    With the 10x limit the check fires from a mean relative error of 1% on those values: the
    mark of flushing them to zero or computing them at a much lower precision.
    """
    eps = max((torch.finfo(d).eps for d in dtypes if d.is_floating_point), default=2.0**-23)
    return max(4.0 * eps, 1e-3)


def float_dtypes(value: Any) -> list[torch.dtype]:
    """The floating dtypes among an output's tensors."""
    out = []
    for v in flatten(value):
        v, _ = _leaf(v)
        if isinstance(v, torch.Tensor) and v.is_floating_point():
            out.append(v.dtype)
    return out


# ------------------------------------------------------------ linear problems' error bound

#: A linear problem's candidate may be off by this many units of the dtype's epsilon times the
#: float64 output on absolute inputs and weights (the classical bound of a sum's rounding).
LINEAR_BOUND_ULPS = 8.0


def within_linear_bound(
    out: Any,
    ref64: Any,
    bound64: Any,
    *,
    ulps: float = LINEAR_BOUND_ULPS,
    chunk: int = CHUNK,
) -> bool:
    """Whether every element of ``out`` is within ``ulps * eps * bound`` of the float64 result.

    For a problem linear in its inputs (a sum, a mean, a scan, a matmul without bias), the
    rounding error of any honest evaluation order in the output's dtype is at most a small
    multiple of ``eps * sum(|c_i| |x_i|)``, which is the problem's float64 output on absolute
    inputs (and weights): ``bound64`` (carried as float32 rounded up,
    ``reference._float32_up``: a bound needs no more digits, and any dtype is walked in float64
    here). The float64 referee's ratio against the fp32 reference's own error is unfair there
    when the reference accumulates in double (ATen's CPU reductions and scans do), so a
    candidate inside this bound everywhere is accepted. A lower-precision format (fp16, bf16,
    TF32: 2^10 times coarser and more) is far outside it.
    """
    outs, refs, bounds = flatten(out), flatten(ref64), flatten(bound64)
    if not (len(outs) == len(refs) == len(bounds)) or not outs:
        return False
    checked = False
    for o, r, b in zip(outs, refs, bounds):
        o, _ = _leaf(o)
        r, _ = _leaf(r)
        b, _ = _leaf(b)
        tensors = all(isinstance(v, torch.Tensor) for v in (o, r, b))
        if not tensors or not o.is_floating_point() or not (o.shape == r.shape == b.shape):
            return False
        eps = torch.finfo(o.dtype).eps
        step = _step(chunk, o, r, b)
        for (_, a), (_, e), (_, m) in zip(_chunks(o, step), _chunks(r, step), _chunks(b, step)):
            if not _within_bound_step(a, e, m, eps * ulps):
                return False
        checked = True
    return checked


def _within_bound_step(a: torch.Tensor, e: torch.Tensor, m: torch.Tensor, scale: float) -> bool:
    """One step of ``within_linear_bound``: output ``a``, float64 output ``e``, bound ``m``;
    ``scale`` is the ulps times the output dtype's epsilon."""
    a64, e64, m64 = a.to(torch.float64), e.to(torch.float64), m.to(torch.float64)
    if not (bool(torch.isfinite(e64).all()) and bool(torch.isfinite(m64).all())):
        return False
    if not bool(torch.isfinite(a64).all()):
        return False
    limit = scale * m64.abs() + 1e-300
    return not bool(((a64 - e64).abs() > limit).any())
