"""Merge rows of ``scripts/kernelbench_dev.py`` runs into the KernelBench dev-split record:
one JSON and one SVG chart, the newest row of each problem kept.

Usage:
    python benchmarks/kernelbench_record.py RUN.json[:LABEL] ... -o benchmarks/results/kernelbench-dev

Each RUN is a ``rows.json`` as the script writes it; LABEL (the engine's commit, the card)
is stored on each of its rows (without one, a row keeps the label it has: the record
itself can be given as a run). Later runs replace earlier rows of the same problem. The
summary per level counts the problems, those with a verified candidate, the medians of the
first verdict and of the search time, and the geometric mean of the winner's speedup over
the best peer (a problem with none counts as 1.0, as in the bench summary), and
``move_kinds``: the share of the level's gain over the best peer that each kind of move
carries (``summarize.kind_shares``). Rows written before they named their winner's moves
count under "unrecorded"; a level with no row that names them has no ``move_kinds``.
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
from summarize import chain_kinds, kind_shares

#: The kind a winner's gain counts under when its row predates the ``moves`` field.
UNRECORDED = "unrecorded"
#: A winner that is the harvest itself (no move after Inductor's code).
HARVEST = "harvest"


def merge(runs: list[tuple[Path, str]]) -> list[dict[str, Any]]:
    """The newest row of each problem over ``runs`` (in the order given), labelled."""
    rows: dict[str, dict[str, Any]] = {}
    for path, label in runs:
        for row in json.loads(path.read_text())["rows"]:
            # No label: the rows keep theirs (an earlier record merged again).
            rows[row["problem"]] = {**row, "run": label or row.get("run", "")}
    return sorted(rows.values(), key=lambda r: (r["level"], r["problem"]))


def row_kinds(row: dict[str, Any]) -> list[str]:
    """The kinds of move behind a row's winner: those of its ``moves``, "harvest" for a winner
    that no move made, none for a row without ``moves`` (older runs) or without a winner."""
    if not row.get("verified") or "moves" not in row:
        return []
    return chain_kinds(row["moves"]) or [HARVEST]


def move_kind_shares(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per level (``"1"``, ...): each kind's share of the summed log-speedup over the best
    peer; only levels where some row names its winner's moves."""
    labelled = [{**r, "move_kinds": row_kinds(r)} for r in rows]
    shares = kind_shares(
        labelled, gain_of=lambda r: r.get("speedup_vs_best_peer"), unlabelled=UNRECORDED
    )
    named = {str(r["level"]) for r in rows if "moves" in r}
    return {level: by_kind for level, by_kind in shares.items() if level in named}


def summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per level: counts, medians of the first verdict and search seconds, geomean, and the
    share of the gain each kind of move carries (where the rows name the moves)."""
    kinds = move_kind_shares(rows)
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
        if str(level) in kinds:
            out[f"level{level}"]["move_kinds"] = kinds[str(level)]
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
