"""Render a `kernelopt bench --json` result as a self-contained SVG bar chart.

Usage: python benchmarks/plot.py BENCH.json [-o CHART.svg]

Grouped bars per problem (speedup vs eager and vs torch.compile) on a log scale, drawn from a
1.0x line so that slowdowns hang below it; the title carries per-level geometric means, where a
problem without a measured speedup counts as 1.0 (as in the bench summary). Standard library
only, so it runs anywhere the JSON can be copied to.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

SERIES = (
    ("speedup_vs_eager", "vs eager", "#4c78a8"),
    ("speedup_vs_compile", "vs torch.compile", "#f58518"),
)
BAR_W = 14
GROUP_GAP = 14
LEVEL_GAP = 24
LEFT, RIGHT, PLOT_H, LABEL_H = 110, 40, 320, 170


def _speedup(row: dict[str, Any], key: str) -> float | None:
    """A row's speedup for one series, or None when missing, non-numeric or not positive."""
    value = row.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value <= 0:
        return None
    return float(value)


def _level_key(row: dict[str, Any]) -> tuple[int, str]:
    level = row.get("level")
    return (level if isinstance(level, int) else 99, str(row.get("problem", "")))


def geomeans(rows: list[dict[str, Any]]) -> dict[Any, dict[str, float]]:
    """Per-level geometric means of each series; a missing speedup counts as 1.0."""
    by_level: dict[Any, list[dict[str, Any]]] = {}
    for row in rows:
        by_level.setdefault(row.get("level"), []).append(row)
    result: dict[Any, dict[str, float]] = {}
    for level, members in by_level.items():
        result[level] = {}
        for key, _label, _color in SERIES:
            logs = [math.log(_speedup(r, key) or 1.0) for r in members]
            result[level][key] = math.exp(sum(logs) / len(logs))
    return result


def _problem_name(row: dict[str, Any]) -> str:
    # Bench rows carry the problem's path; the chart labels bars by file stem.
    return Path(str(row.get("problem", "?"))).stem or "?"


def _level_label(level: Any) -> str:
    return f"L{level}" if isinstance(level, int) else "other"


def _ticks(lo: float, hi: float) -> list[float]:
    """Powers of two between lo and hi (log-axis ticks that read as 'x times faster')."""
    exp_lo = math.floor(math.log2(lo))
    exp_hi = math.ceil(math.log2(hi))
    return [2.0**e for e in range(exp_lo, exp_hi + 1) if lo <= 2.0**e <= hi]


def _fmt(value: float) -> str:
    return f"{value:.2f}x" if value < 10 else f"{value:.1f}x"


def render_svg(data: dict[str, Any], title: str = "KernelOPT speedups") -> str:
    """Return the SVG text of a grouped log-scale bar chart for a bench JSON object."""
    rows = sorted(
        (r for r in data.get("rows", []) if isinstance(r, dict)),
        key=_level_key,
    )
    levels_seen = list(dict.fromkeys(r.get("level") for r in rows))
    # Header: title, one geomean line per level, the legend, then the level captions.
    top = 64 + 16 * max(len(levels_seen), 1) + 16
    values = [v for r in rows for key, _l, _c in SERIES if (v := _speedup(r, key)) is not None]
    lo = min([*values, 1.0]) / 1.3
    hi = max([*values, 1.0]) * 1.3

    def y_of(value: float) -> float:
        frac = (math.log(value) - math.log(lo)) / (math.log(hi) - math.log(lo))
        return top + PLOT_H * (1.0 - frac)

    group_w = BAR_W * len(SERIES) + GROUP_GAP
    plot_w = max(group_w * len(rows) + LEVEL_GAP * max(len(levels_seen) - 1, 0), 200)
    width = LEFT + plot_w + RIGHT
    height = top + PLOT_H + LABEL_H
    means = geomeans(rows)
    summary = [
        f"geomean {_level_label(level)} ({sum(1 for r in rows if r.get('level') == level)}): "
        + ", ".join(f"{_fmt(means[level][key])} {label}" for key, label, _c in SERIES)
        for level in levels_seen
    ] or ["no rows"]
    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{LEFT}" y="24" font-size="16" font-weight="bold">{escape(title)}</text>',
    ]
    for i, line in enumerate(summary):
        out.append(f'<text x="{LEFT}" y="{44 + 16 * i}">{escape(line)}</text>')
    legend_y = 44 + 16 * len(summary) - 4
    legend_x = LEFT
    for _key, label, color in SERIES:
        out.append(
            f'<rect x="{legend_x}" y="{legend_y}" width="12" height="12" fill="{color}"/>'
            f'<text x="{legend_x + 16}" y="{legend_y + 10}">{escape(label)}</text>'
        )
        legend_x += 140
    for tick in _ticks(lo, hi):
        y = y_of(tick)
        out.append(
            f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e6e6e6"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{_fmt(tick)}</text>'
        )
    base_y = y_of(1.0)
    x = float(LEFT)
    prev_level: Any = levels_seen[0] if levels_seen else None
    level_start = x
    for row in rows:
        level = row.get("level")
        if level != prev_level:
            out.append(_level_caption(prev_level, level_start, x, top))
            out.append(
                f'<line x1="{x + LEVEL_GAP / 2:.1f}" x2="{x + LEVEL_GAP / 2:.1f}" y1="{top}" '
                f'y2="{top + PLOT_H}" stroke="#bbbbbb"/>'
            )
            x += LEVEL_GAP
            level_start = x
            prev_level = level
        name = escape(_problem_name(row))
        verdict = escape(str(row.get("verdict", "")))
        for i, (key, label, color) in enumerate(SERIES):
            bx = x + i * BAR_W
            value = _speedup(row, key)
            if value is None:
                out.append(
                    f'<text x="{bx + BAR_W / 2:.1f}" y="{base_y - 3:.1f}" font-size="8" '
                    f'text-anchor="middle" fill="#888">n/a</text>'
                )
                continue
            bar_top, bar_bottom = sorted((y_of(value), base_y))
            out.append(
                f'<rect x="{bx:.1f}" y="{bar_top:.1f}" width="{BAR_W - 2}" '
                f'height="{max(bar_bottom - bar_top, 1.0):.1f}" fill="{color}">'
                f"<title>{name}: {_fmt(value)} {escape(label)} ({verdict})</title></rect>"
            )
        label_x = x + BAR_W * len(SERIES) / 2
        label_y = top + PLOT_H + 10
        out.append(
            f'<text x="{label_x:.1f}" y="{label_y}" text-anchor="end" '
            f'transform="rotate(-55 {label_x:.1f} {label_y})">{name}</text>'
        )
        x += group_w
    if rows:
        out.append(_level_caption(prev_level, level_start, x, top))
    out.append(
        f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{base_y:.1f}" y2="{base_y:.1f}" '
        f'stroke="black" stroke-dasharray="4 3"/>'
        f'<text x="{LEFT + plot_w + 4}" y="{base_y + 4:.1f}" font-size="9">1.0</text>'
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _level_caption(level: Any, x0: float, x1: float, top: int) -> str:
    return (
        f'<text x="{(x0 + x1) / 2:.1f}" y="{top - 4}" text-anchor="middle" '
        f'fill="#555">{escape(_level_label(level))}</text>'
    )


def main(argv: list[str] | None = None) -> int:
    """Command line: read BENCH.json, write the SVG (default: next to it, .svg suffix)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench_json", type=Path)
    parser.add_argument("-o", "--out", type=Path, default=None)
    parser.add_argument("--title", default="KernelOPT speedups")
    args = parser.parse_args(argv)
    try:
        data = json.loads(args.bench_json.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        print(f"{args.bench_json}: cannot read bench JSON ({exc})", file=sys.stderr)
        return 2
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        print(f"{args.bench_json}: not a bench JSON (no 'rows' list)", file=sys.stderr)
        return 2
    out = args.out or args.bench_json.with_suffix(".svg")
    out.write_text(render_svg(data, args.title))
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
