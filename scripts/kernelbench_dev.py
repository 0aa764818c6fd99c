"""Run offline searches over a drawn sample of the KernelBench development split and write one
row per problem: verdict, first verdict, search time, memory against the footprint, the
winner's speedup against each peer (eager, torch.compile default, max-autotune,
reduce-overhead) and the moves that made it.

Usage (on the GPU machine, each search alone):
    python scripts/kernelbench_dev.py FOLDER --out DIR [--per-level 10] [--seed 20261206]
        [--time-limit 60] [--part 1/3] [--device cuda]

The sample is drawn by ``--seed`` (committed default), never chosen: ``--per-level`` files of
each level, in a fixed order; ``--part i/n`` runs every n-th of them (a device call runs one
part; the rows of several parts merge by problem). Rows are rewritten to ``DIR/rows.json``
after each search, so a call cut short keeps what finished. The folder is read where it lies:
its files are other people's and are never copied into the repository.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from kernelopt_jupyter.cli.optimize import move_chain

LEVELS = ("level1", "level2", "level3")
#: The committed seed of the sample the issue's medians are measured on.
SAMPLE_SEED = 20261206
PEERS = ("eager", "compile", "max_autotune", "reduce_overhead")


def draw_sample(folder: Path, per_level: int, seed: int) -> list[Path]:
    """``per_level`` problems of each level, drawn by ``seed`` from the files in name order."""
    rng = random.Random(seed)
    picked: list[Path] = []
    for level in LEVELS:
        files = sorted((folder / level).glob("*.py"))
        picked += rng.sample(files, min(per_level, len(files)))
    return picked


def _process_role(pid: str) -> str:
    """A short name for a process on the card, from its command line."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return f"pid {pid}"
    words = [w.decode(errors="replace") for w in argv if w]
    tail = [w.rsplit("/", 1)[-1] for w in words[1:4]]
    return " ".join(tail)[:60] or f"pid {pid}"


class GpuMemoryWatch:
    """The whole card's used memory at most (``nvidia-smi``, every 0.2 s) while it runs, and
    each process's own peak (by its command line)."""

    def __init__(self) -> None:
        self.peak_mib = 0
        self.by_process: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self._stop.is_set():
            try:
                text = subprocess.run(
                    ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                    capture_output=True,
                    text=True,
                    timeout=5,
                ).stdout
                self.peak_mib = max([self.peak_mib, *(int(x) for x in text.split() if x.isdigit())])
                apps = subprocess.run(
                    ["nvidia-smi", "--query-compute-apps=pid,used_memory",
                     "--format=csv,noheader,nounits"],
                    capture_output=True, text=True, timeout=5,
                ).stdout  # fmt: skip
                for line in apps.splitlines():
                    pid, _, used = (part.strip() for part in line.partition(","))
                    if pid.isdigit() and used.isdigit():
                        role = f"{_process_role(pid)} [{pid}]"
                        self.by_process[role] = max(self.by_process.get(role, 0), int(used))
            except (OSError, subprocess.SubprocessError, ValueError):
                return
            self._stop.wait(0.2)

    def __enter__(self) -> GpuMemoryWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=6)


def wait_for_idle_gpu(limit_s: float = 90.0) -> float:
    """Wait until no process holds the card (the last search's workers tearing down), so
    each search runs alone; returns the seconds waited."""
    start = time.monotonic()
    while time.monotonic() - start < limit_s:
        try:
            apps = subprocess.run(
                ["nvidia-smi", "--query-compute-apps=pid", "--format=csv,noheader"],
                capture_output=True, text=True, timeout=5,
            ).stdout.split()  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            break
        if not apps:
            break
        time.sleep(0.5)
    return time.monotonic() - start


def _find(value: Any, key: str) -> list[Any]:
    """Every value stored under ``key`` anywhere in nested JSON data."""
    found: list[Any] = []
    if isinstance(value, dict):
        for k, v in value.items():
            found += [v] if k == key else _find(v, key)
    elif isinstance(value, list):
        for v in value:
            found += _find(v, key)
    return found


def _first_verdict_s(events: Path) -> float | None:
    if not events.exists():
        return None
    for line in events.read_text().splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if event.get("type") == "verdict":
            return float(event["t"])
    return None


def summarize(
    problem: Path, run_dir: Path, wall_s: float, rc: int, peak_mib: int
) -> dict[str, Any]:
    """One row from a finished search's folder."""
    row: dict[str, Any] = {
        "problem": f"{problem.parent.name}/{problem.name}",
        "level": int(problem.parent.name.removeprefix("level")),
        "exit": rc,
        "search_s": round(wall_s, 1),
        "first_verdict_s": _first_verdict_s(run_dir / "events.jsonl"),
        "gpu_peak_mib": peak_mib,
    }
    result_path = run_dir / "result.json"
    if not result_path.exists():
        log = (run_dir / "stderr.log").read_text(errors="replace").strip().splitlines()
        row.update(verified=False, reason=(log[-1] if log else "no result.json")[:300])
        return row
    result = json.loads(result_path.read_text())
    best = result.get("best")
    cands = {c["id"]: c for c in result.get("candidates") or []}
    row["verified"] = best is not None
    row["best"] = best
    row["candidates"] = len(cands)
    row["passed"] = sum(1 for c in cands.values() if c.get("verdict") == "pass")
    # The moves that made the winner (each candidate's note names its move), from the
    # harvest down: the record splits each level's gain over their kinds.
    links = {cid: (c.get("parent"), str(c.get("note") or "")) for cid, c in cands.items()}
    row["moves"] = move_chain(links, best) if best else []
    if best is None:
        notes = result.get("notes") or []
        fails = [
            g.get("detail", "")
            for c in cands.values()
            for g in c.get("gates") or []
            if g.get("status") == "fail"
        ]
        row["reason"] = "; ".join([*notes[:2], *fails[:1]])[:300] or result.get("status")
    baselines = result.get("baselines") or {}
    best_ms = cands.get(best, {}).get("time_ms") if best else None
    row["best_ms"] = best_ms
    row["baselines_ms"] = {p: baselines.get(p) for p in PEERS}
    measured = [baselines[p] for p in PEERS if baselines.get(p)]
    row["speedup"] = {
        p: (baselines[p] / best_ms if best_ms and baselines.get(p) else None) for p in PEERS
    }
    # A claim over the peers needs torch.compile timed beside the winner (the search's final
    # side-by-side run): where that did not fit in the time limit, eager alone is no peer set.
    if best_ms and baselines.get("compile"):
        row["speedup_vs_best_peer"] = min(measured) / best_ms
    else:
        row["speedup_vs_best_peer"] = None
        if best_ms:
            row["peers_note"] = (
                "torch.compile was not timed beside the winner (the final side-by-side run "
                "did not fit in the time limit): no claim over the peers, counted as 1.0"
            )
    footprints = [f for f in _find(result, "footprint_bytes") if isinstance(f, int) and f > 0]
    if footprints:
        footprint = max(footprints)
        row["footprint_mib"] = round(footprint / 2**20, 1)
        row["gpu_peak_over_footprint"] = round(peak_mib * 2**20 / footprint, 2)
        peaks = [
            int(p)
            for k in ("reference_peak_bytes", "candidate_peak_bytes", "checker_peak_bytes")
            for p in _find(result, k)
            if isinstance(p, int | float)
        ]
        if peaks:
            row["process_peak_over_footprint"] = round(max(peaks) / footprint, 2)
    return row


def main(argv: list[str] | None = None) -> int:
    """Run the sample and write ``rows.json``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the KernelBench dev split (level1/2/3)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--per-level", type=int, default=10)
    parser.add_argument("--seed", type=int, default=SAMPLE_SEED)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--part", default="1/1", help="i/n: every n-th problem from the i-th")
    parser.add_argument("--device", default="cuda")
    parser.add_argument(
        "--files", nargs="*", default=None, help="these files of the folder (level/name.py)"
    )
    parser.add_argument(
        "--stop-after", type=float, default=None, help="start no search after this many seconds"
    )
    parser.add_argument("--extra", nargs=argparse.REMAINDER, default=[], help="optimize flags")
    args = parser.parse_args(argv)
    if not all((args.folder / level).is_dir() for level in LEVELS):
        print(f"kernelbench_dev: {args.folder} holds no level1/ level2/ level3/", file=sys.stderr)
        return 2
    index, count = (int(x) for x in args.part.split("/"))
    if args.files:
        sample = [args.folder / name for name in args.files]
    else:
        sample = draw_sample(args.folder, args.per_level, args.seed)[index - 1 :: count]
    args.out.mkdir(parents=True, exist_ok=True)
    rows_path = args.out / "rows.json"
    rows: list[dict[str, Any]] = []
    began = time.monotonic()
    for problem in sample:
        if args.stop_after is not None and time.monotonic() - began > args.stop_after:
            print(f"stopped: --stop-after {args.stop_after:.0f} s reached", flush=True)
            break
        run_dir = args.out / "runs" / f"{problem.parent.name}_{problem.stem}"
        run_dir.mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable, "-m", "kernelopt_jupyter.cli", "optimize", str(problem),
            "--agents", "offline", "--device", args.device,
            "--time-limit", str(args.time_limit), "--out", str(run_dir), "--json", *args.extra,
        ]  # fmt: skip
        waited = wait_for_idle_gpu() if args.device == "cuda" else 0.0
        print(f"[{time.strftime('%H:%M:%S')}] {problem.parent.name}/{problem.name}", flush=True)
        start = time.monotonic()
        with GpuMemoryWatch() as watch, open(run_dir / "stderr.log", "w") as err:
            try:
                proc = subprocess.run(
                    command, stdout=subprocess.DEVNULL, stderr=err,
                    timeout=args.time_limit * 2 + 60,
                )  # fmt: skip
                rc = proc.returncode
            except subprocess.TimeoutExpired:
                rc = 124
        row = summarize(problem, run_dir, time.monotonic() - start, rc, watch.peak_mib)
        row["process_peaks_mib"] = watch.by_process
        row["waited_for_idle_gpu_s"] = round(waited, 1)
        rows.append(row)
        print("   ", json.dumps({k: row.get(k) for k in ("verified", "search_s",
              "first_verdict_s", "speedup_vs_best_peer", "gpu_peak_over_footprint", "reason")}),
              flush=True)  # fmt: skip
        rows_path.write_text(json.dumps({"seed": args.seed, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
