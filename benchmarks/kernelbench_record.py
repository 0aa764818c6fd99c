"""Merge rows of ``scripts/kernelbench_dev.py`` runs into the KernelBench dev-split record:
one JSON and one SVG chart, the newest row of each problem kept.

Usage:
    python benchmarks/kernelbench_record.py RUN.json[:LABEL] ... -o benchmarks/results/kernelbench-dev

Each RUN is a ``rows.json`` as the script writes it; LABEL (the engine's commit, the card)
is stored on each of its rows (without one, a row keeps the label it has: the record
itself can be given as a run). Later runs replace earlier rows of the same problem. The
summary per level counts the problems, those with a verified candidate, the medians of the
first verdict and of the search time, and the geometric mean of the winner's speedup over
the best peer (a problem with none counts as 1.0, as in the bench summary).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from plot import render_svg


def merge(runs: list[tuple[Path, str]]) -> list[dict[str, Any]]:
    """The newest row of each problem over ``runs`` (in the order given), labelled."""
    rows: dict[str, dict[str, Any]] = {}
    for path, label in runs:
        for row in json.loads(path.read_text())["rows"]:
            # No label: the rows keep theirs (an earlier record merged again).
            rows[row["problem"]] = {**row, "run": label or row.get("run", "")}
    return sorted(rows.values(), key=lambda r: (r["level"], r["problem"]))


def summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per level: counts, medians of the first verdict and search seconds, geomean."""
    out: dict[str, dict[str, Any]] = {}
    for level in sorted({r["level"] for r in rows}):
        members = [r for r in rows if r["level"] == level]
        firsts = [r["first_verdict_s"] for r in members if r.get("first_verdict_s") is not None]
        speedups = [r.get("speedup_vs_best_peer") or 1.0 for r in members]
        out[f"level{level}"] = {
            "problems": len(members),
            "verified": sum(1 for r in members if r.get("verified")),
            "median_first_verdict_s": statistics.median(firsts) if firsts else None,
            "median_search_s": statistics.median(r["search_s"] for r in members),
            "geomean_vs_best_peer": math.exp(sum(math.log(s) for s in speedups) / len(speedups)),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    """Write ``OUT.json`` and ``OUT.svg``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="rows.json[:label]")
    parser.add_argument("-o", "--out", type=Path, required=True, help="path without suffix")
    parser.add_argument("--machine", default="", help="the card, as the device reply names it")
    args = parser.parse_args(argv)
    runs = []
    for spec in args.runs:
        path, _, label = spec.partition(":")
        runs.append((Path(path), label))
    rows = merge(runs)
    record = {"machine": args.machine, "summary": summary(rows), "rows": rows}
    args.out.with_suffix(".json").write_text(json.dumps(record, indent=1) + "\n")
    chart_rows = [
        {
            "problem": r["problem"],
            "level": r["level"],
            "speedup_vs_eager": (r.get("speedup") or {}).get("eager"),
            "speedup_vs_compile": (r.get("speedup") or {}).get("compile"),
        }
        for r in rows
    ]
    title = f"KernelBench dev split, offline agents, --time-limit 60 ({args.machine})"
    args.out.with_suffix(".svg").write_text(render_svg({"rows": chart_rows}, title=title))
    for level, figures in record["summary"].items():
        print(level, json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
