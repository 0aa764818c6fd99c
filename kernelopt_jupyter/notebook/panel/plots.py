"""Plotly charts of a session: dispatch map, roofline, kernel timeline, search progress.

The four charts are subplots of one figure, created once with a fixed set of traces and then
updated in place; the panel sends it to the front end as plotly's output type
(``charts.figure_bundle``). ``factory`` is ``plotly.graph_objects.Figure``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kernelopt_jupyter.event_payloads import Profile
from kernelopt_jupyter.session.state import kernel_records, timeline_records

KIND_COLORS = {"vendor": "#8c6bb1", "triton": "#2b8cbe", "other": "#bdbdbd"}
KINDS = tuple(KIND_COLORS)
#: Legend names: which work runs in a vendor library and which in a Triton kernel.
KIND_NAMES = {"vendor": "vendor library call", "triton": "Triton kernel", "other": "other op"}
TITLES = {
    "dispatch": "Dispatch map: share of the forward's time per kernel",
    "roofline": "Roofline: achieved GFLOP/s against arithmetic intensity",
    "timeline": "Kernel timeline: one bar per launch",
    "progress": "Search progress: best verified speedup",
}
#: Axis titles (x, y) of each chart, with units.
AXES = {
    "dispatch": ("share of time (%)", "kernel"),
    "roofline": ("arithmetic intensity (FLOP/byte)", "GFLOP/s"),
    "timeline": ("time from the forward's start (ms)", ""),
    "progress": ("time since the session started (s)", "speedup (x vs baseline)"),
}
#: On the CPU the timeline measures Triton's interpreter (numpy, one program at a time).
CPU_TIMELINE_TITLE = "Kernel timeline: CPU interpreter time (says nothing about GPU speed)"
CPU_TIMELINE_AXIS = "interpreter time on the CPU (ms), not GPU time"
_CELLS = {"dispatch": (1, 1), "roofline": (1, 2), "timeline": (2, 1), "progress": (2, 2)}
#: Trace index ranges of each chart inside the one figure.
DISPATCH = slice(0, 3)
ROOFLINE = slice(3, 6)
ROOF = 6
TIMELINE = slice(7, 10)
PROGRESS = 10


def _kind(record: dict[str, Any]) -> str:
    kind = str(record.get("kind") or "other").lower()
    return kind if kind in KIND_COLORS else "other"


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def new_charts(factory: Callable[..., Any]) -> Any:
    """The figure of the four charts, empty; ``factory`` wraps a ``go.Figure``."""
    from plotly.subplots import make_subplots

    base = make_subplots(
        rows=2,
        cols=2,
        subplot_titles=list(TITLES.values()),
        horizontal_spacing=0.12,
        vertical_spacing=0.18,
    )
    for kind in KINDS:  # dispatch map: one horizontal bar trace per kind (the legend)
        base.add_bar(
            name=KIND_NAMES[kind],
            legendgroup=kind,
            orientation="h",
            marker_color=KIND_COLORS[kind],
            x=[],
            y=[],
            row=1,
            col=1,
        )
    for kind in KINDS:
        base.add_scatter(
            name=kind,
            legendgroup=kind,
            showlegend=False,
            mode="markers+text",
            textposition="top center",
            marker_color=KIND_COLORS[kind],
            x=[],
            y=[],
            text=[],
            row=1,
            col=2,
        )
    base.add_scatter(
        name="roof", mode="lines", line={"color": "#444", "dash": "dot"}, x=[], y=[], row=1, col=2
    )
    for kind in KINDS:
        base.add_bar(
            name=kind,
            legendgroup=kind,
            showlegend=False,
            orientation="h",
            marker_color=KIND_COLORS[kind],
            x=[],
            y=[],
            base=[],
            row=2,
            col=1,
        )
    base.add_scatter(
        name="best speedup", mode="lines+markers", line_shape="hv", x=[], y=[], row=2, col=2
    )
    base.add_hline(y=1.0, line_dash="dot", line_color="#999", row=2, col=2)
    for chart, (x_title, y_title) in AXES.items():
        row, col = _CELLS[chart]
        base.update_xaxes(title_text=x_title, row=row, col=col)
        base.update_yaxes(title_text=y_title, row=row, col=col)
    base.update_xaxes(type="log", row=1, col=2)
    base.update_yaxes(type="log", row=1, col=2)
    base.update_yaxes(autorange="reversed", row=1, col=1)
    # No fixed width: the figure fills the panel (autosize follows its container).
    base.update_layout(
        height=640,
        autosize=True,
        margin={"l": 10, "r": 10, "t": 60, "b": 50},
        template="plotly_white",
        barmode="overlay",
        legend={"orientation": "h", "x": 0, "y": 1.12, "title": {"text": "runs in: "}},
    )
    return factory(base)


def shares(records: list[dict[str, Any]]) -> tuple[list[float], bool]:
    """Each record's share of the time, and whether it was measured.

    Without GPU timings (the CPU interpreter's times mean nothing) the share is estimated from
    each unit's roofline-bound time, as the dispatch map ranks them.
    """
    measured = [_num(r.get("share")) for r in records]
    if any(v is not None for v in measured):
        return [v or 0.0 for v in measured], True
    bounds = [_num(r.get("bound_ms")) or 0.0 for r in records]
    total = sum(bounds)
    return ([b / total for b in bounds] if total else [0.0] * len(records)), False


def update_dispatch(fig: Any, profile: Profile | None) -> str:
    """Show the dispatch map of ``profile`` (the reference's, usually); returns a caveat or ''."""
    records = kernel_records(profile)
    share, measured = shares(records)
    with fig.batch_update():
        for trace, kind in zip(fig.data[DISPATCH], KINDS):
            mine = [(r, v) for r, v in zip(records, share) if _kind(r) == kind]
            trace.y = [str(r["name"]) for r, _ in mine]
            trace.x = [round(100 * v, 2) for _, v in mine]
            trace.hovertext = [
                f"{r.get('ms') or '?'} ms · {r.get('bound') or 'bound unknown'} · "
                f"{', '.join(r.get('ops') or [])}"
                for r, _ in mine
            ]
    return (
        "no profile yet" if not records else "" if measured else "shares estimated: no GPU timings"
    )


def roofline_points(records: list[dict[str, Any]]) -> list[tuple[str, str, float, float, bool]]:
    """(name, kind, FLOP/byte, GFLOP/s, measured) per record with FLOPs and bytes.

    GFLOP/s is the achieved rate where the record has a measured time, else the rate its
    roofline-bound time allows (where the kernel would sit if it reached the roof).
    """
    points = []
    for r in records:
        flops, nbytes = _num(r.get("flops")), _num(r.get("bytes"))
        if not flops or not nbytes:
            continue
        ms, bound_ms = _num(r.get("ms")), _num(r.get("bound_ms"))
        if ms:
            points.append((str(r["name"]), _kind(r), flops / nbytes, flops / (ms * 1e6), True))
        elif bound_ms:
            points.append(
                (str(r["name"]), _kind(r), flops / nbytes, flops / (bound_ms * 1e6), False)
            )
    return points


def _peaks(profile: Profile | None) -> tuple[float | None, float | None]:
    """(GFLOP/s, GB/s) of the roof: the profile's (the GPU it was measured on), else the
    H200's."""
    dmap = profile.dispatch_map if profile is not None else None
    peaks = dmap if isinstance(dmap, dict) else {}
    gflops, gbps = _num(peaks.get("peak_gflops")), _num(peaks.get("peak_gbps"))
    if gflops and gbps:
        return gflops, gbps
    try:
        from kernelopt_jupyter.gpu_peaks import peaks_for
    except ImportError:
        return None, None
    roof = peaks_for(None)
    return roof.fp32 / 1e9, roof.bandwidth / 1e9


def update_roofline(fig: Any, profile: Profile | None) -> str:
    """Place the kernels of ``profile`` under the roof (fp32 CUDA cores and HBM bandwidth).

    Returns a caveat for the reader, or ''.
    """
    points = roofline_points(kernel_records(profile))
    with fig.batch_update():
        for trace, kind in zip(fig.data[ROOFLINE], KINDS):
            mine = [p for p in points if p[1] == kind]
            trace.x = [p[2] for p in mine]
            trace.y = [p[3] for p in mine]
            trace.text = [p[0] for p in mine]
            trace.marker.symbol = ["circle" if p[4] else "circle-open" for p in mine]
        gflops, gbps = _peaks(profile)
        roof = fig.data[ROOF]
        if gflops and gbps and points:
            ridge = gflops / gbps
            lo = min(min(p[2] for p in points), ridge) / 4
            hi = max(max(p[2] for p in points), ridge) * 4
            roof.x = [lo, ridge, hi]
            roof.y = [gbps * lo, gflops, gflops]
        else:
            roof.x, roof.y = [], []
        measured = any(p[4] for p in points)
        note = (
            "needs FLOPs and bytes"
            if not points
            else ""
            if measured
            else "open marks sit at the roof: no GPU timings"
        )
    return note


def update_timeline(
    fig: Any,
    reference: Profile | None,
    candidate: Profile | None,
    label: str,
    device: str = "cuda",
) -> str:
    """Rows 'reference' and ``label``: one bar per kernel launch, coloured by kind.

    Off the GPU the bars are Triton-interpreter times and are titled so. Returns a caveat for
    the reader, or ''.
    """
    rows = [("reference", timeline_records(reference)), (label, timeline_records(candidate))]
    cpu = device != "cuda"
    with fig.batch_update():
        cell_row, cell_col = _CELLS["timeline"]
        fig.update_xaxes(
            title_text=CPU_TIMELINE_AXIS if cpu else AXES["timeline"][0],
            row=cell_row,
            col=cell_col,
        )
        title = fig.layout.annotations[list(TITLES).index("timeline")]
        title.text = CPU_TIMELINE_TITLE if cpu else TITLES["timeline"]
        for trace, kind in zip(fig.data[TIMELINE], KINDS):
            xs, ys, base, names = [], [], [], []
            for row, launches in rows:
                for launch in launches:
                    if _kind(launch) != kind:
                        continue
                    xs.append(launch["dur"])
                    base.append(launch["start"])
                    ys.append(row)
                    names.append(launch["name"])
            trace.x, trace.y, trace.base, trace.hovertext = xs, ys, base, names
            # The legend names a colour through the dispatch map's trace of that kind; plotly
            # leaves an empty trace out of it, so a kind only the timeline shows (the grey
            # "other" bars) gets its own entry.
            shown_in_map = bool(len(fig.data[DISPATCH][KINDS.index(kind)].x or ()))
            trace.name = KIND_NAMES[kind]
            trace.showlegend = bool(xs) and not shown_in_map
        empty = not any(launches for _, launches in rows)
    if empty:
        return "no launch timeline in the profile (it needs a GPU profile)"
    return "CPU interpreter times: they rank nothing on a GPU" if cpu else ""


def update_progress(
    fig: Any, points: list[tuple[float, float]], now: float, *, device: str = "cuda"
) -> str:
    """Step line of the best speedup, extended to ``now``; returns a caveat or '' (on a
    ``device`` other than the GPU nothing is ever timed, which the caveat says)."""
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    if points and now > xs[-1]:
        xs.append(now)
        ys.append(ys[-1])
    with fig.batch_update():
        fig.data[PROGRESS].x, fig.data[PROGRESS].y = xs, ys
    if points:
        return ""
    return "no timed candidate yet" if device == "cuda" else "nothing is timed without a GPU"
