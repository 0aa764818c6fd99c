"""``kernelopt profile PROBLEM``: the dispatch map (ranked by time share) and the baselines."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kernelopt_jupyter.analysis.baselines import Baselines, measure_baselines
from kernelopt_jupyter.analysis.codegen import library_on
from kernelopt_jupyter.analysis.dispatch import DispatchMap, profile_problem
from kernelopt_jupyter.device import DeviceError, resolve_device
from kernelopt_jupyter.problem import ProblemError, load_problem
from kernelopt_jupyter.sizes import SizesError, resolve_sizes, switch_for_file


def _error(message: str) -> int:
    print(f"kernelopt profile: {message}", file=sys.stderr)
    return 2


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _bytes(value: int | None) -> str:
    if value is None:
        return "-"
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if value >= size:
            return f"{value / size:.1f}{unit}"
    return f"{value}B"


def render_table(dmap: DispatchMap, baselines: Baselines | None = None) -> str:
    """The dispatch map as a fixed-width table, one row per sub-kernel, in rank order."""
    lines = [f"dispatch map of {dmap.problem} on {dmap.device} (ranked by {dmap.ranked_by})"]
    if not dmap.ok:
        lines.append(f"harvest failed: {dmap.error}")
        return "\n".join(lines)
    header = (
        f"{'#':>2} {'kind':<7} {'name':<44} {'share':>6} {'ms':>9} {'launch':>6} "
        f"{'bytes':>8} {'AI':>7} {'bound':<7} {'roof%':>6}  ops"
    )
    lines.append(header)
    for i, rec in enumerate(dmap.records, 1):
        share = "-" if rec.share is None else f"{100 * rec.share:.1f}%"
        roof = "-" if rec.roofline_fraction is None else f"{100 * rec.roofline_fraction:.0f}%"
        library = library_on(rec.library, dmap.device)
        label = rec.name if rec.kind != "vendor" else f"{rec.name} [{library}, kept]"
        lines.append(
            f"{i:>2} {rec.kind:<7} {label[:44]:<44} {share:>6} {_fmt(rec.ms, '.4f'):>9} "
            f"{rec.launches:>6} {_bytes(rec.bytes):>8} {_fmt(rec.intensity, '.2f'):>7} "
            f"{rec.bound or '-':<7} {roof:>6}  {', '.join(rec.ops)}"
        )
    if dmap.total_ms is not None:
        lines.append(f"total device time per forward: {dmap.total_ms:.4f} ms")
    if dmap.library_dominated:
        lines.append("library-dominated: all work is in vendor calls; the baseline is kept")
    for choice in dmap.choices:
        verdict = {True: "vendor path wins", False: "Inductor wins", None: "not measured"}[
            choice.vendor_beats_inductor
        ]
        extra = " (dispatch-only variant)" if choice.dispatch_only else ""
        lines.append(f"dispatch choice: {choice.label}: {verdict}{extra}; {choice.detail}")
    if baselines is not None:
        if baselines.measured:
            lines.append(
                "baselines (ms): "
                + ", ".join(f"{k} {_fmt(v, '.4f')}" for k, v in baselines.as_ms().items())
            )
        else:
            lines.append(f"baselines: {baselines.detail}")
    for note in dmap.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def profile_json(dmap: DispatchMap, baselines: Baselines | None) -> dict[str, Any]:
    """The ``profile --json`` object (schema 1): the map, baselines and a harvest summary."""
    data = dmap.to_dict()
    data["baselines"] = baselines.to_dict() if baselines is not None else None
    h = dmap.harvest
    data["harvest"] = (
        None
        if h is None
        else {
            "ok": h.ok,
            "error": h.error,
            "kernels": [k.name for k in h.kernels],
            "vendor_calls": [
                {"name": v.name, "op": v.ops, "library": v.library} for v in h.vendor_calls
            ],
            "dispatch_variants": [label for label, _ in h.dispatch_variants],
            "library_dominated": h.library_dominated,
        }
    )
    return data


def run(args: argparse.Namespace) -> int:
    """Profile a problem; exit 0 when the map was built, 1 when the harvest failed, 2 bad input."""
    sizes = getattr(args, "sizes", None) or "auto"
    try:
        device = resolve_device(args.device)
        note = switch_for_file(args.problem, device, sizes)  # a problem's own switch
        if note:
            print(f"kernelopt profile: {note}", file=sys.stderr)
        problem, size_report = resolve_sizes(load_problem(args.problem), sizes, device)
    except (DeviceError, ProblemError, SizesError) as exc:
        return _error(str(exc))
    if problem.kind != "module":
        return _error(
            f"{args.problem}: profile needs a module problem (class Model), not {problem.kind}"
        )
    out = sys.stderr if args.json else sys.stdout
    print(
        f"profiling {args.problem} on {device} (Inductor harvest in a worker)", file=out, flush=True
    )
    if size_report.worth_saying:
        print(size_report.describe(), file=out, flush=True)
    dmap = profile_problem(problem, device, ncu=bool(args.ncu))
    baselines = measure_baselines(problem, device) if dmap.ok else None
    if args.json:
        print(json.dumps({**profile_json(dmap, baselines), "sizes": size_report.to_dict()}))
    else:
        print(render_table(dmap, baselines))
    return 0 if dmap.ok else 1
