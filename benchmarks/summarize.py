"""Merge ``kernelopt bench --json`` outputs and say which move made each winner.

Usage::

    python benchmarks/summarize.py bench-out/gpu*.json -o bench-out/bench.json --markdown bench-out/bench.md
    python benchmarks/summarize.py --latest benchmarks/results/record.json bench-out/bench.json \
        -o benchmarks/results/record.json --markdown benchmarks/results/record.md

Several shards (one bench per GPU) become one JSON with every row, the per-level summary
recomputed over all of them (``kernelopt``'s own ``summarize_rows``), and per row ``moves``: the
chain of moves from the harvest to the winner, read from the run's ``result.json`` (each
candidate's note names its move). ``move_kinds`` says per level how much of the total log-speedup
over the best peer each kind of move carries (a winner's gain is split evenly over the kinds in
its chain), so a report can tell rewrites from CUDA graphs from dispatch choices.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Note prefixes -> the kind of move (the offline policy's plan titles; see docs/offline.md).
KINDS = (
    ("rewrite: kept library", "kept library"),
    ("rewrite:", "graph rewrite"),
    ("inductor config:", "inductor config"),
    ("Inductor configuration:", "inductor config"),
    ("CUDA graph", "CUDA graph"),
    ("dispatch:", "dispatch"),
    ("launch config:", "launch config"),
    ("kernel body:", "kernel body"),
    ("tune kernel ", "kernel body"),
    ("tune ", "launch config"),
)


def move_kind(note: str) -> str | None:
    """The kind of move a candidate note names (None for the harvest itself)."""
    for prefix, kind in KINDS:
        if note.startswith(prefix):
            return kind
    return None


def winner_chain(result: dict[str, Any]) -> list[str]:
    """Notes from the root's child down to the best candidate (empty when none won)."""
    from kernelopt_jupyter.cli.optimize import move_chain

    links = {c["id"]: (c.get("parent"), c.get("note") or "") for c in result.get("candidates", [])}
    return move_chain(links, result.get("best"))


def _peer_gain(row: dict[str, Any]) -> float | None:
    peers = row.get("speedup_vs_peer")
    if not isinstance(peers, dict) or not peers.get("best_baseline"):
        return None
    return float(peers["best_baseline"])


def attach_moves(row: dict[str, Any]) -> None:
    """Add ``moves`` (the winner's chain) and ``move_kinds`` to a bench row, in place."""
    out_dir = row.get("out_dir")
    path = Path(out_dir) / "result.json" if out_dir else None
    chain: list[str] = list(row.get("winner_moves") or [])  # written by the bench itself
    if not chain and path is not None and path.is_file():
        chain = winner_chain(json.loads(path.read_text()))
    row["moves"] = chain
    row["move_kinds"] = chain_kinds(chain)


def chain_kinds(chain: list[str]) -> list[str]:
    """The kinds of move in a winner's chain, each once, in the chain's order."""
    kinds: list[str] = []
    for note in chain:
        # A chained title ("CUDA graph on [rewrite: ...]") names its own move first.
        kind = move_kind(note)
        if kind and kind not in kinds:
            kinds.append(kind)
    return kinds


def kind_shares(
    rows: list[dict[str, Any]],
    gain_of: Callable[[dict[str, Any]], float | None] = _peer_gain,
    unlabelled: str | None = None,
) -> dict[str, dict[str, float]]:
    """Per level: the share of the summed log-speedup over the best peer carried by each kind.

    ``gain_of`` reads a row's speedup over the best peer; ``unlabelled``, where given, names
    the kind under which a winner whose kinds are unknown is counted (else it is left out)."""
    out: dict[str, dict[str, float]] = {}
    for row in rows:
        gain = gain_of(row)
        kinds = row.get("move_kinds") or ([unlabelled] if unlabelled else [])
        if gain is None or gain <= 1.0 or not kinds:
            continue
        level = out.setdefault(str(row.get("level")), {})
        for kind in kinds:
            level[kind] = level.get(kind, 0.0) + math.log(gain) / len(kinds)
    for level, by_kind in out.items():
        total = sum(by_kind.values())
        out[level] = {k: round(v / total, 3) for k, v in sorted(by_kind.items())} if total else {}
    return out


def _problem_key(row: dict[str, Any]) -> tuple[str, str]:
    """A problem's identity across runs: its level and file name (run folders differ)."""
    return str(row.get("level")), Path(str(row.get("problem"))).stem


def merge(paths: list[Path], latest: bool = False) -> dict[str, Any]:
    """One bench JSON from several shards, with moves attached and the summary recomputed.

    ``latest``: the files are runs in time order (oldest first) and a problem measured again
    keeps only its last row; each row then says which file it came from (``source``, kept from
    an earlier merge, so the record, merged again with a new run, still names each row's run),
    and ``superseded`` counts the older rows left out. Without it every row is kept."""
    from kernelopt_jupyter.cli.optimize import add_target_peer, summarize_rows

    rows: list[dict[str, Any]] = []
    broken: list[str] = []
    for path in paths:
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:  # a shard killed mid-write: say so
            broken.append(f"{path}: {exc}")
            continue
        for row in data.get("rows", []):
            rows.append({"source": str(path), **row} if latest else row)
    superseded = 0
    if latest:
        last: dict[tuple[str, str], dict[str, Any]] = {}
        for row in rows:
            last[_problem_key(row)] = row
        superseded = len(rows) - len(last)
        rows = list(last.values())
    rows.sort(key=lambda r: (str(r.get("level")), str(r.get("problem"))))
    for row in rows:
        attach_moves(row)
        if isinstance(row.get("speedup_vs_peer"), dict):  # rows of runs before the field
            add_target_peer(row["speedup_vs_peer"])
    return {
        "schema": 1,
        "rows": rows,
        "summary": summarize_rows(rows),
        "move_kinds": kind_shares(rows),
        "shards": [str(p) for p in paths],
        "broken_shards": broken,
        **({"superseded": superseded} if latest else {}),
    }


def _why(row: dict[str, Any]) -> str:
    """For a row without a winner's moves: the commonest failure (gate, count, detail)."""
    failures = row.get("failures") or []
    if not failures or row.get("moves"):
        return "-"
    top = failures[0]
    detail = str(top.get("detail", "")).replace("|", "/")[:90]
    return f"(none: {top.get('count')}x {top.get('gate')}: {detail})"


def memory_cell(mem: dict[str, Any]) -> str:
    """``2.5x (checker 3.1x) of 12.9 GB``: the worst reference or candidate peak over the
    reference's footprint, the checker's, and the footprint; ``-`` where not measured (CPU)."""
    if not mem.get("footprint_bytes"):
        return "-"
    checker = mem.get("checker_over_footprint")
    return (
        f"{mem.get('peak_over_footprint', 0):.2f}x"
        + (f" (checker {checker:.2f}x)" if isinstance(checker, int | float) else "")
        + f" of {mem['footprint_bytes'] / 1e9:.2f} GB"
    )


def executor_cell(line: dict[str, Any]) -> str:
    """The Executor's seconds and, in brackets, those of its steps that gave no candidate."""
    total, none = line.get("executor_s"), line.get("executor_no_candidate_s")
    if not isinstance(total, int | float):
        return "-"
    return f"{total:.1f} ({none:.1f})" if isinstance(none, int | float) else f"{total:.1f}"


def markdown(data: dict[str, Any]) -> str:
    """A results table (one line per problem) and the per-level summary, as Markdown."""
    lines = [
        "| level | problem | verdict | vs eager | vs compile | vs best peer "
        "| vs best target peer | s | analysis s "
        "| first verdict s | per candidate s | executor s (no candidate) | checks / timing s "
        "| peak memory / footprint | moves |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in data["rows"]:
        peers = r.get("speedup_vs_peer") if isinstance(r.get("speedup_vs_peer"), dict) else {}
        line = r.get("timeline") if isinstance(r.get("timeline"), dict) else {}
        mem = r.get("memory") if isinstance(r.get("memory"), dict) else {}
        split = r.get("verify_seconds") if isinstance(r.get("verify_seconds"), dict) else {}

        def num(v: Any) -> str:
            return f"{v:.2f}" if isinstance(v, int | float) else "-"

        lines.append(
            f"| {r.get('level')} | `{Path(str(r.get('problem'))).stem}` | {r.get('verdict')} | "
            f"{num(r.get('speedup_vs_eager'))} | {num(r.get('speedup_vs_compile'))} | "
            f"{num(peers.get('best_baseline'))} | {num(peers.get('best_target_peer'))} | "
            f"{num(r.get('seconds'))} | "
            f"{num(line.get('analysis_s'))} | {num(line.get('first_verdict_s'))} | "
            f"{num(line.get('median_candidate_s'))} | {executor_cell(line)} | "
            f"{' / '.join(num(split.get(k)) for k in ('checks', 'timing'))} | "
            f"{memory_cell(mem)} | "
            f"{' -> '.join(r.get('moves') or []) or _why(r)} |"
        )
    lines += [
        "",
        "| level | count | improved | geomean vs best peer | geomean vs best target peer "
        "| over best target peer by >3% | move kinds (share of gain) |",
    ]
    lines.append("|---|---:|---:|---:|---:|---:|---|")
    for level, s in data["summary"].items():
        peer = s.get("geomean_speedup_vs_peer", {})
        best = peer.get("best_baseline") if isinstance(peer, dict) else None
        target = peer.get("best_target_peer") if isinstance(peer, dict) else None
        kinds = data["move_kinds"].get(level, {})
        lines.append(
            f"| {level} | {s['count']} | {s['improved']} | {best} | {target} | "
            f"{s.get('improved_vs_target_peers', '-')} | "
            + (", ".join(f"{k} {v:.0%}" for k, v in kinds.items()) or "-")
            + " |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Command line: merge shards, write the merged JSON (and optionally Markdown)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench_json", type=Path, nargs="+")
    parser.add_argument("-o", "--out", type=Path, required=True)
    parser.add_argument("--markdown", type=Path, default=None)
    parser.add_argument(
        "--latest",
        action="store_true",
        help="the inputs are runs oldest first: keep each problem's last row only (a record)",
    )
    args = parser.parse_args(argv)
    data = merge(list(args.bench_json), latest=args.latest)
    args.out.write_text(json.dumps(data, indent=1))
    if args.markdown is not None:
        args.markdown.write_text(markdown(data))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
