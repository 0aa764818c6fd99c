"""Plotly charts of a session: dispatch map, roofline, kernel timeline, search progress.

Each chart is created once with a fixed set of traces and then updated in place
(``batch_update``), so a refresh sends only the changed arrays, never a new figure.
``figure_factory`` is ``plotly.graph_objects.FigureWidget`` in the panel and
``plotly.graph_objects.Figure`` in tests and the static report.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kernelopt_jupyter.panel.state import kernel_records, timeline_records

KIND_COLORS = {"vendor": "#8c6bb1", "triton": "#2b8cbe", "other": "#bdbdbd"}
KINDS = tuple(KIND_COLORS)
_LAYOUT: dict[str, Any] = {
    "height": 260,
    "margin": {"l": 10, "r": 10, "t": 36, "b": 30},
    "template": "plotly_white",
    "legend": {"orientation": "h", "y": -0.2},
}


def _kind(record: dict[str, Any]) -> str:
    kind = str(record.get("kind") or "other").lower()
    return kind if kind in KIND_COLORS else "other"


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def new_dispatch(factory: Callable[..., Any]) -> Any:
    """Time share per sub-kernel, one colour per kind (vendor library, Triton, other)."""
    fig = factory()
    for kind in KINDS:
        fig.add_bar(name=kind, orientation="h", marker_color=KIND_COLORS[kind], x=[], y=[])
    fig.update_layout(
        title="Dispatch map: time share per kernel", xaxis_title="% of time", **_LAYOUT
    )
    fig.update_yaxes(autorange="reversed")
    return fig


def update_dispatch(fig: Any, profile: dict[str, Any] | None) -> None:
    """Show the dispatch map of ``profile`` (the reference's, usually)."""
    records = kernel_records(profile)
    with fig.batch_update():
        for trace, kind in zip(fig.data, KINDS):
            mine = [r for r in records if _kind(r) == kind]
            trace.y = [str(r["name"]) for r in mine]
            trace.x = [round(100 * (_num(r.get("share")) or 0.0), 2) for r in mine]
            trace.hovertext = [
                f"{r.get('ms', '?')} ms · {r.get('bound') or 'bound unknown'}" for r in mine
            ]


def new_roofline(factory: Callable[..., Any]) -> Any:
    """Each kernel's arithmetic intensity against achieved throughput (log-log)."""
    fig = factory()
    for kind in KINDS:
        fig.add_scatter(
            name=kind, mode="markers+text", marker_color=KIND_COLORS[kind], x=[], y=[], text=[]
        )
    fig.add_scatter(name="roof", mode="lines", line={"color": "#444", "dash": "dot"}, x=[], y=[])
    fig.update_layout(
        title="Roofline position",
        xaxis_title="FLOP / byte",
        yaxis_title="GFLOP/s",
        **_LAYOUT,
    )
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return fig


def roofline_points(records: list[dict[str, Any]]) -> list[tuple[str, str, float, float]]:
    """(name, kind, intensity, GFLOP/s) for records with flops, bytes and a time."""
    points = []
    for r in records:
        flops, nbytes, ms = _num(r.get("flops")), _num(r.get("bytes")), _num(r.get("ms"))
        if not flops or not nbytes or not ms:
            continue
        points.append((str(r["name"]), _kind(r), flops / nbytes, flops / (ms * 1e6)))
    return points


def update_roofline(fig: Any, profile: dict[str, Any] | None) -> None:
    """Place the kernels of ``profile``; draw the roof when the profile names its peaks."""
    points = roofline_points(kernel_records(profile))
    dmap = (profile or {}).get("dispatch_map")
    peaks = dmap if isinstance(dmap, dict) else {}
    with fig.batch_update():
        for trace, kind in zip(fig.data[:-1], KINDS):
            mine = [p for p in points if p[1] == kind]
            trace.x = [p[2] for p in mine]
            trace.y = [p[3] for p in mine]
            trace.text = [p[0] for p in mine]
        gflops, gbps = _num(peaks.get("peak_gflops")), _num(peaks.get("peak_gbps"))
        roof = fig.data[-1]
        if gflops and gbps and points:
            lo = min(p[2] for p in points) / 4
            hi = max(p[2] for p in points) * 4
            ridge = gflops / gbps
            xs = [lo, ridge, hi] if lo < ridge < hi else [lo, hi]
            roof.x = xs
            roof.y = [min(gflops, gbps * x) for x in xs]
        else:
            roof.x, roof.y = [], []
        if not points:
            fig.layout.title.text = "Roofline position (needs FLOPs, bytes and GPU timings)"
        else:
            fig.layout.title.text = "Roofline position"


def new_timeline(factory: Callable[..., Any]) -> Any:
    """Kernel launches over time for the reference and a chosen candidate."""
    fig = factory()
    for kind in KINDS:
        fig.add_bar(name=kind, orientation="h", marker_color=KIND_COLORS[kind], x=[], y=[], base=[])
    fig.update_layout(title="Kernel timeline", xaxis_title="ms", barmode="overlay", **_LAYOUT)
    return fig


def update_timeline(
    fig: Any, reference: dict[str, Any] | None, candidate: dict[str, Any] | None, label: str
) -> None:
    """Rows 'reference' and ``label``: one bar per kernel launch, coloured by kind."""
    rows = [("reference", timeline_records(reference)), (label, timeline_records(candidate))]
    with fig.batch_update():
        for trace, kind in zip(fig.data, KINDS):
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
        empty = not any(launches for _, launches in rows)
        fig.layout.title.text = (
            "Kernel timeline (the profile has no launch timeline: GPU profiling needed)"
            if empty
            else "Kernel timeline"
        )


def new_progress(factory: Callable[..., Any]) -> Any:
    """Speedup of the best verified candidate over the session's time."""
    fig = factory()
    fig.add_scatter(name="best", mode="lines+markers", line_shape="hv", x=[], y=[])
    fig.update_layout(
        title="Search progress", xaxis_title="seconds", yaxis_title="best speedup", **_LAYOUT
    )
    fig.add_hline(y=1.0, line_dash="dot", line_color="#999")
    return fig


def update_progress(fig: Any, points: list[tuple[float, float]], now: float) -> None:
    """Step line of the best speedup, extended to ``now``."""
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    if points and now > xs[-1]:
        xs.append(now)
        ys.append(ys[-1])
    with fig.batch_update():
        fig.data[0].x, fig.data[0].y = xs, ys
        fig.layout.title.text = (
            "Search progress" if points else "Search progress (no timed candidate yet)"
        )
