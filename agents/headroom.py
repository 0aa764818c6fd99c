"""How far each kernel of a forward sits from its roof, and what a move aimed at some of them
could gain at most: the offline Planner spends a short search on the worst-placed kernels first.

A unit's roof is ``max(flops / peak_flops, bytes / peak_bw)`` on the GPU the search runs on
(the dispatch map's ``roofline_fraction``: that time over the measured one). A move that brings
the units it targets to their roofs makes the whole forward at most

    1 / (1 - sum over its units of share * (1 - fraction))

times faster (Amdahl), where ``share`` is the unit's part of the forward's time. Once
torch.compile's own time is known, the time outside every kernel (launch gaps and host work)
is a target too, the one a CUDA graph removes.

The Planner's cost model (``rewrites/moves.py``) already ranks a move by the share of time it
touches, which to first order is this gain with every unit at half its roof. The roofline term
is therefore centred there: ``ROOF_WEIGHT`` times the log of the gain with the measured
positions, less the log of the gain with every unit at ``STATIC_FRACTION``. Where nothing is
measured (the CPU, a unit without FLOPs or bytes) the term is zero and the calibrated order
stands (on the CPU each unit's share is its roofline time bound's part of the sum, or a
count where some unit has no FLOPs or bytes); a kernel measured far below its roof lifts its
moves, one at its roof lowers them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from kernelopt_jupyter.agents.base import AgentContext
from kernelopt_jupyter.agents.op_families import unit_family
from kernelopt_jupyter.gpu_peaks import roof_name

#: The roof position assumed for a unit whose position is not measured.
STATIC_FRACTION = 0.5
#: Priority units per unit of log gain: the scale of ``offline.eager_gap``'s penalty.
ROOF_WEIGHT = 2.0
#: The term's magnitude at most: a FLOP estimate can put a unit far below a roof it could
#: never reach, and one measurement must not bury every other move.
ROOF_CAP = 2.0
#: Measured fractions are read within these bounds (an estimate can pass 1.0).
MIN_FRACTION = 0.02
MAX_GAIN = 100.0


@dataclass(frozen=True)
class Placement:
    """One unit on the roofline: its family, its part of the forward and of its roof."""

    unit: str
    family: str
    kind: str
    share: float
    fraction: float
    measured: bool


@dataclass(frozen=True)
class Headroom:
    """Where a forward's time goes, unit by unit, and how much of it sits outside kernels."""

    placements: list[Placement]
    #: The forward's time outside every kernel (a share of torch.compile's time); 0 where
    #: torch.compile's time or the kernels' are not known.
    overhead: float = 0.0
    #: torch.compile's time per forward (ms), where known.
    compile_ms: float | None = None
    #: Whether the shares are measured times (GPU) rather than estimates.
    timed: bool = False
    #: Untimed, whether the shares are the units' roofline time bounds rather than a count.
    by_bound: bool = False
    gpu: str = ""


@dataclass(frozen=True)
class Aim:
    """The units a move changes (by name) and whether it removes the time between them."""

    units: frozenset[str] = field(default_factory=frozenset)
    overhead: bool = False
    #: The move deletes the units' work (algebra, a fold) rather than running it nearer its
    #: roof: its gain does not depend on the roof, so it gets no roofline term.
    deletes: bool = False


def headroom(ctx: AgentContext) -> Headroom:
    """The forward's placements from the profile and the baselines known now (the ranking is
    recomputed at every planning, so it changes once torch.compile's time arrives)."""
    units = ctx.kernels
    timed = any(k.ms is not None for k in units)
    known_share = any(k.share is not None for k in units)
    kernel_ms = sum(float(k.ms or 0.0) for k in units)
    compiled = ctx.baselines.get("compile")
    forward_ms = max(float(compiled), kernel_ms) if timed and compiled else kernel_ms
    overhead = 1.0 - kernel_ms / forward_ms if timed and compiled and forward_ms > 0 else 0.0
    bounds = [float(k.bound_ms or 0.0) for k in units]
    by_bound = not timed and not known_share and all(b > 0 for b in bounds)
    placements = []
    for k, bound in zip(units, bounds, strict=True):
        if timed and forward_ms > 0:
            share = float(k.ms or 0.0) / forward_ms
        elif known_share:
            share = float(k.share or 0.0)
        elif by_bound:  # nothing timed (the CPU): each unit by its roofline time bound
            share = bound / sum(bounds)
        else:  # a unit without FLOPs or bytes: each by count, as the cost model counts them
            share = 1.0 / len(units)
        measured = k.roofline_fraction is not None and k.roofline_fraction > 0
        fraction = (
            min(max(float(k.roofline_fraction or 0.0), MIN_FRACTION), 1.0)
            if measured
            else STATIC_FRACTION
        )
        placements.append(Placement(k.name, unit_family(k), k.kind, share, fraction, measured))
    return Headroom(
        placements,
        overhead=max(overhead, 0.0),
        compile_ms=float(compiled) if compiled else None,
        timed=timed,
        by_bound=by_bound,
        gpu=ctx.gpu,
    )


def _gain(h: Headroom, aim: Aim, *, static: bool) -> float:
    lost = sum(
        p.share * (1.0 - (STATIC_FRACTION if static else p.fraction))
        for p in h.placements
        if p.unit in aim.units
    )
    if aim.overhead and not static:
        lost += h.overhead
    return 1.0 / max(1.0 - lost, 1.0 / MAX_GAIN)


def max_gain(h: Headroom, aim: Aim) -> float:
    """The most the whole forward can speed up when the aimed units reach their roofs (and,
    for a move that removes them, the gaps between kernels go)."""
    return _gain(h, aim, static=False)


def roof_term(h: Headroom, aim: Aim | None) -> float:
    """A move's priority term: the log of its measured max gain over the one the static
    estimate gives, weighted and capped (0 where nothing it aims at is measured)."""
    if aim is not None and aim.deletes:
        # No roof bounds what a deletion gains; the launch gaps a graphed one removes still
        # count.
        aim = Aim(overhead=True) if aim.overhead else None
    if aim is None:
        return 0.0
    term = ROOF_WEIGHT * (
        math.log(_gain(h, aim, static=False)) - math.log(_gain(h, aim, static=True))
    )
    return max(-ROOF_CAP, min(ROOF_CAP, term))


def aim_units(h: Headroom, *, families: set[str] | None = None, kinds: set[str] | None = None,
              names: set[str] | None = None, overhead: bool = False,
              deletes: bool = False) -> Aim:  # fmt: skip
    """The units of ``families`` (and of ``kinds``: "triton", "vendor"), or named ``names``."""
    chosen = {
        p.unit
        for p in h.placements
        if (families is None or p.family in families)
        and (kinds is None or p.kind in kinds)
        and (names is None or p.unit in names)
    }
    return Aim(frozenset(chosen), overhead, deletes)


def main_family(h: Headroom, aim: Aim | None) -> str:
    """The family holding most of the time an aim targets ("" for none): the key under which
    the experience memory keeps what the move did."""
    if aim is None:
        return ""
    by_family: dict[str, float] = {}
    for p in h.placements:
        if p.unit in aim.units:
            by_family[p.family] = by_family.get(p.family, 0.0) + p.share
    return max(by_family, key=lambda f: by_family[f]) if by_family else ""


def aim_families(h: Headroom, aim: Aim | None) -> set[str]:
    """The families of the units an aim targets."""
    if aim is None:
        return set()
    return {p.family for p in h.placements if p.unit in aim.units}


def family_lines(h: Headroom) -> list[str]:
    """One line per family: its part of the forward, how far from its roof, and what reaching
    the roof would give at most; then the time outside kernels, where it is known."""
    if not h.placements:
        return []
    roof = roof_name(h.gpu or None)
    if h.timed:
        head = f"Where the time goes, by op family (roofs of the {roof}):"
    else:
        weighed = "units weighed by their roofline time bound" if h.by_bound else "units counted"
        head = (
            f"Where the work goes, by op family (nothing is timed here: {weighed}, "
            f"roofs of the {roof}, each unit assumed at {STATIC_FRACTION:.0%} of its roof):"
        )
    families: dict[str, list[Placement]] = {}
    for p in h.placements:
        families.setdefault(p.family, []).append(p)
    ranked = sorted(families.items(), key=lambda item: -sum(p.share for p in item[1]))
    lines = [head]
    for family, members in ranked:
        share = sum(p.share for p in members)
        count = f"{len(members)} unit{'s' if len(members) > 1 else ''}"
        if not h.timed:
            part = f", about {share:.0%} of the bound time" if h.by_bound else ""
            lines.append(f"- {family}: {len(members)} of {len(h.placements)} units{part}")
            continue
        measured = [p for p in members if p.measured]
        if not measured:
            lines.append(
                f"- {family}: {share:.0%} of the time ({count}); its roof position is not "
                f"measured (no FLOP or byte count)"
            )
            continue
        reached = sum(p.share * p.fraction for p in measured) / max(
            sum(p.share for p in measured), 1e-12
        )
        gain = max_gain(h, Aim(frozenset(p.unit for p in measured)))
        lines.append(
            f"- {family}: {share:.0%} of the time ({count}) at {reached:.0%} of its roof: "
            f"up to {gain:.2f}x for the forward at the roof"
        )
    if h.timed and h.compile_ms is not None:
        gain = max_gain(h, Aim(overhead=True))
        lines.append(
            f"- outside the kernels (launch gaps, host work): {h.overhead:.0%} of "
            f"torch.compile's {h.compile_ms:.4f} ms: up to {gain:.2f}x without them"
        )
    return lines
