"""``kernelopt optimize`` and ``kernelopt bench``: searches from the terminal.

Progress goes to stderr as one line per meaningful event; ``--json`` prints exactly one JSON
object on stdout. Exit codes follow the contract: 0 a verified candidate was found, 1 none was,
2 bad input.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from kernelopt_jupyter import defaults
from kernelopt_jupyter.device import DeviceError, resolve_device
from kernelopt_jupyter.event_payloads import Degraded
from kernelopt_jupyter.problem import ProblemError, load_problem
from kernelopt_jupyter.session import OptimizationSession, SearchOptions, SessionError
from kernelopt_jupyter.session.files import write_atomic
from kernelopt_jupyter.session.progress import TextProgress
from kernelopt_jupyter.sizes import shrink_for_cpu

#: Below this ratio over the faster baseline a result counts as "improved" (2% past noise).
IMPROVED_RATIO = 1.02
#: Faster than the best of the four peers by more than this counts as beating the best peer.
BEST_PEER_RATIO = 1.03
#: A step silent this long gets a progress line naming its phase and elapsed time.
HEARTBEAT_S = 20.0
#: The bench's peers: baseline name -> how the summary names it.
PEERS = ("eager", "compile", "max_autotune", "reduce_overhead")
#: The peers the offline policy's targets are set against (docs/engine.md, Bench): all but
#: max-autotune, whose template search alone takes 48-151 s and more on a network of
#: convolutions (H200), past a one-minute search. ``best_target_peer``
#: is the ratio to the fastest of these, beside ``best_baseline`` (the fastest of all four).
TARGET_PEERS = ("eager", "compile", "reduce_overhead")


def add_target_peer(ratios: dict[str, Any]) -> dict[str, Any]:
    """``ratios`` (peer -> that peer's time over ours) with ``best_target_peer``: the ratio to
    the fastest of ``TARGET_PEERS`` that was timed (None when none was); returned."""
    timed = [v for v in (ratios.get(name) for name in TARGET_PEERS) if isinstance(v, int | float)]
    ratios["best_target_peer"] = min(timed) if timed else None
    return ratios


def _fail(message: str) -> int:
    print(f"kernelopt: {message}", file=sys.stderr)
    return 2


def _options(args: argparse.Namespace, out_dir: Path | None) -> SearchOptions:
    opts = SearchOptions(
        agents=getattr(args, "agents", "offline") or "offline",
        budget=int(getattr(args, "budget", None) or defaults.CANDIDATE_BUDGET),
        seeds=int(getattr(args, "seeds", None) or defaults.SEEDS),
        device=getattr(args, "device", "auto") or "auto",
        step=bool(getattr(args, "step", False)),
        model=getattr(args, "model", None),
        out_dir=out_dir,
    )
    limit = getattr(args, "time_limit", None)
    if limit:
        opts.max_seconds = float(limit)
    opts.mode = getattr(args, "mode", None)
    opts.sizes = getattr(args, "sizes", None) or "auto"
    opts.max_tokens = getattr(args, "max_tokens", None)
    opts.max_usd = getattr(args, "max_usd", None)
    opts.analysis_cache = not getattr(args, "no_cache", False)
    return opts


def _terminal_step_loop(session: OptimizationSession) -> None:
    """Step mode on a terminal: read a decision from stdin at every pause."""
    help_text = (
        "a=approve r=reject s=stop end=end | p TEXT=edit plan | d TEXT=direction "
        "| e FILE=gate FILE as your code"
    )
    answered = 0
    while session.running:
        # One decision per pause: the pause counter tells a new pause from one just answered.
        if not (session.step.pending and session.step.pause_count > answered):
            time.sleep(0.05)
            continue
        answered = session.step.pause_count
        print(f"step> {help_text}", file=sys.stderr, flush=True)
        line = sys.stdin.readline()
        if not line:
            session.step.stop()
            break
        cmd, _, rest = line.strip().partition(" ")
        answer: str | None = None
        if cmd in ("a", ""):
            answer = session.step.approve()
        elif cmd == "r":
            answer = session.step.reject(rest)
        elif cmd == "s":
            session.step.stop()
        elif cmd == "end":
            answer = session.step.end()
        elif cmd == "p" and rest:
            answer = session.step.edit_plan(rest)
        elif cmd == "d" and rest:
            answer = session.step.direct(rest)
        elif cmd == "e" and rest and Path(rest).is_file():
            answer = session.step.edit_candidate(Path(rest).read_text())
        else:
            answer = f"not understood: {line.strip()!r}"
        if answer:
            print(f"step> {answer}", file=sys.stderr)
            answered -= 1  # the pause still waits: ask again


def _shrink_note(problem_path: str, opts: SearchOptions) -> None:
    """Before loading (which draws the inputs): a problem's own small sizes on the CPU
    (``KERNELOPT_SMALL``; ``opts.sizes``), said on stderr. Every other module problem shrinks
    by the size rule when the session starts (``kernelopt_jupyter.sizes``; said in its
    opening notice)."""
    try:
        source = Path(problem_path).read_text()
        resolved = resolve_device(opts.device)
    except (OSError, UnicodeDecodeError, DeviceError):
        return  # load_problem / the session report these with their own one-line errors
    note = shrink_for_cpu(source, resolved, opts.sizes)
    if note:
        print(f"kernelopt: {note}", file=sys.stderr)


def _start_workers_ahead(opts: SearchOptions) -> None:
    """On the GPU: the search's analysis and verification workers start now, before this
    process imports torch and reads the problem, so their own process starts and imports
    (4-20 s each on the H200) run meanwhile instead of before the analysis and the first
    candidate's gates (``analysis.pipeline.prestart_analysis``, ``verify.service.prestart``;
    the session takes them, or they are closed unused). ``KERNELOPT_VERIFY_SERVICE=0`` (a
    worker per candidate) starts no verification worker."""
    from kernelopt_jupyter.analysis.pipeline import prestart_analysis
    from kernelopt_jupyter.verify.service import pool_for_budget, prestart

    device = opts.device
    if device == "auto":
        try:
            device = resolve_device(device)
        except DeviceError:
            return  # the session says why, with its one-line error
    if device != "cuda":
        return
    prestart_analysis("cuda")
    if os.environ.get("KERNELOPT_VERIFY_SERVICE") != "0":
        prestart("cuda", pool_for_budget(opts.budget))


def optimize_one(
    problem_path: str, opts: SearchOptions, *, quiet: bool = False, resume: bool = False
) -> OptimizationSession:
    """Run one search to completion with a progress display; raises for bad input.

    With ``resume`` the session in ``opts.out_dir`` continues from its events.jsonl: verdicts
    and agent steps already recorded are reused, not recomputed.
    """
    if resume:
        if opts.out_dir is None:
            raise SessionError("--resume needs --out DIR (the interrupted session's folder)")
        session = OptimizationSession.open(opts.out_dir, resume=True, options=opts)
    else:
        _start_workers_ahead(opts)
        _shrink_note(problem_path, opts)
        # Validated in the mode it will run in (a dropout is random only in training mode).
        session = OptimizationSession(load_problem(problem_path, mode=opts.mode), opts)
    progress = None if quiet else TextProgress(sys.stderr, heartbeat_s=HEARTBEAT_S)
    if progress is not None:
        session.log.subscribe(progress, replay=False)
    if opts.step:
        session.start()
        _terminal_step_loop(session)
        session.wait()
        if session.error:
            raise RuntimeError(session.error)
    else:
        try:
            session.run()
        except KeyboardInterrupt:
            session.stop()
            print(
                "kernelopt: interrupted; result.json lists every decided candidate "
                f"(continue with --resume --out {session.out_dir})",
                file=sys.stderr,
            )
        finally:
            if progress is not None:
                progress.close()
    return session


def _new_empty_runs(parent: Path, before: set[Path] | None, name: str) -> None:
    """Remove this run's folders made since ``before`` (None: ``parent`` is new) that hold
    no event: a run refused before it began (no API key, a bad device) leaves nothing behind."""
    if not parent.is_dir():
        return
    for folder in set(parent.iterdir()) - (before or set()):
        if not (folder.is_dir() and folder.name.startswith(name)):
            continue  # another run's folder, made meanwhile
        events = folder / "events.jsonl"
        left = {p.name for p in folder.iterdir()} - {"problem.py", "events.jsonl"}
        if not left and not (events.is_file() and events.stat().st_size > 0):
            shutil.rmtree(folder, ignore_errors=True)
    if before is None and not any(parent.iterdir()):
        parent.rmdir()


def run_optimize(args: argparse.Namespace) -> int:
    """The ``optimize`` subcommand."""
    out = Path(args.out) if getattr(args, "out", None) else None
    parent = out.parent if out is not None else Path("runs")
    before = set(parent.iterdir()) if parent.is_dir() else None
    name = out.name if out is not None else f"{Path(args.problem).stem}-"
    try:
        session = optimize_one(
            args.problem, _options(args, out), resume=bool(getattr(args, "resume", False))
        )
    except (ProblemError, SessionError, DeviceError) as exc:
        _new_empty_runs(parent, before, name)
        return _fail(str(exc))
    result_file = session.out_dir / "result.json"
    payload = json.loads(result_file.read_text()) if result_file.exists() else {}
    payload["out_dir"] = str(session.out_dir)
    for entry in payload.get("degraded") or []:
        # Said during the run too; once more here, where the run's outcome is read.
        said = Degraded(phase=str(entry.get("phase")), error=str(entry.get("error"))).text()
        print(
            f"kernelopt: warning: {said} (listed under 'degraded' in result.json)", file=sys.stderr
        )
    if getattr(args, "json", False):
        print(json.dumps(payload, default=str))
    else:
        best = payload.get("best")
        print(f"best: {best or 'none'}; files in {session.out_dir}")
    # A session whose agents failed (the API gave up, a key rejected mid-run) is not a success.
    return 0 if payload.get("best") and payload.get("status") != "failed" else 1


def _problem_files(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            files.extend(sorted(f for f in p.rglob("*.py") if not f.name.startswith("_")))
        elif p.is_file():
            files.append(p)
        else:
            raise ProblemError(f"{p}: no such problem file or folder")
    return files


def bench_row(
    path: Path,
    session: OptimizationSession | None,
    seconds: float,
    error: str = "",
    peers: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One row of ``bench --json`` from a finished session; ``peers`` is the side-by-side
    run (``measure_peers``) whose times replace the search's own where it succeeded."""
    from kernelopt_jupyter.problem import _level_from_path

    row: dict[str, Any] = {
        "problem": str(path),
        "level": _level_from_path(str(path)),
        "seconds": round(seconds, 1),
    }
    if session is None or session.result is None:
        row.update(verdict="error", error=error or (session.error if session else "failed"))
        return row
    result = session.result
    eager, compiled = result.baselines.get("eager"), result.baselines.get("compile")
    best = result.best
    row.update(
        eager_ms=eager,
        compile_ms=compiled,
        max_autotune_ms=result.baselines.get("max_autotune"),
        reduce_overhead_ms=result.baselines.get("reduce_overhead"),
        status=result.status,
        best=best.candidate.id if best else None,
        best_ms=best.ms if best else None,
        dispatch_only=best.candidate.dispatch_only if best else None,
        speedup_vs_eager=best.speedup_vs_eager if best else None,
        speedup_vs_compile=best.speedup_vs_compile if best else None,
        candidates=len(result.candidates),
        library_dominated=result.library_dominated,
        out_dir=str(session.out_dir),
        timeline=search_timeline(Path(session.out_dir) / "events.jsonl"),
        **verification_costs(result.candidates),
        winner_moves=winner_moves(result.candidates, best.candidate.id if best else None),
        failures=failure_reasons(result.candidates),
        degraded=list(getattr(session, "degraded", None) or []),
    )
    if best is None:
        row["verdict"] = "no verified candidate"
    elif best.ms is None:
        row["verdict"] = "verified (not timed)"
    else:
        floor = min(x for x in (eager, compiled, math.inf) if x)
        row["verdict"] = "improved" if best.ms * IMPROVED_RATIO < floor else "not improved"
    row.update(_peer_fields(result.baselines, best.speedup_vs_eager if best else None, best))
    if peers is not None:
        _side_by_side(row, peers, best is not None)
    return row


def winner_moves(candidates: list[Any], best: str | None) -> list[str]:
    """The notes from the root's child down to ``best`` (the moves that made the winner), kept
    in the row itself so a bench JSON explains its winners without the run folders."""
    links = {
        g.candidate.id: (getattr(g.candidate, "parent", None), getattr(g.candidate, "note", ""))
        for g in candidates
    }
    return move_chain(links, best)


def move_chain(links: dict[str, tuple[str | None, str]], best: str | None) -> list[str]:
    """Notes from the root's child down to ``best``, given each candidate's (parent, note).
    A chain that starts at a candidate with no parent other than the harvest (``c0``: the
    quick start, or a fallback root) starts with that candidate's own note: it was a move."""
    chain: list[str] = []
    cid = best
    while cid in links and len(chain) < 64:
        parent, note = links[cid]
        if parent is None and cid == "c0":
            break
        chain.append(str(note or ""))
        if parent is None:
            break
        cid = parent
    return list(reversed(chain))


def failure_reasons(candidates: list[Any], top: int = 3) -> list[dict[str, Any]]:
    """The commonest reasons candidates failed (gate, the detail's opening words, how many),
    so a row with no verified candidate says why without its run folder."""
    counts: dict[tuple[str, str], int] = {}
    for gated in candidates:
        failed = next((g for g in gated.report.gates if g.status == "fail"), None)
        if failed is None:
            continue
        detail = " ".join(str(failed.detail).split())[:160]
        counts[(failed.name, detail)] = counts.get((failed.name, detail), 0) + 1
    ranked = sorted(counts.items(), key=lambda item: -item[1])[:top]
    return [{"gate": g, "detail": d, "count": n} for (g, d), n in ranked]


def verification_costs(candidates: list[Any]) -> dict[str, Any]:
    """What the search's verifications cost, from their reports: the worst peak device memory
    of each process (reference, candidate, checker) over the reference's footprint, and the
    median seconds of a verification's checked calls (correctness and fp64: the checker's
    clock) and of its timing (performance); the rest of a candidate's seconds (its
    ``timeline``) is loading, compiling and the worker. ``verify_parts_s``: the median over
    the verifications of each part of their checked calls (``call_parts_s``: the
    candidate's, the reference's and the checker's seconds, part by part)."""
    memory: dict[str, Any] = {}
    split: dict[str, list[float]] = {"checks": [], "timing": []}
    parts: dict[str, list[float]] = {}
    for gated in candidates:
        report = gated.report
        checks = timing = 0.0
        for gate in report.gates:
            metrics = gate.metrics or {}
            if gate.name == "correctness":
                clock = metrics.get("timings")
                if isinstance(clock, dict) and isinstance(clock.get("seconds"), (int, float)):
                    checks = float(clock["seconds"])
                called = clock.get("call_parts_s") if isinstance(clock, dict) else None
                for part, seconds in called.items() if isinstance(called, dict) else ():
                    if isinstance(seconds, (int, float)):
                        parts.setdefault(str(part), []).append(float(seconds))
                mem = metrics.get("memory")
                for key, value in mem.items() if isinstance(mem, dict) else ():
                    if not isinstance(value, (int, float)):
                        continue
                    if key.endswith("_over_footprint"):
                        memory[key] = round(max(memory.get(key, 0.0), float(value)), 3)
                    elif key.endswith("_bytes"):
                        memory[key] = max(int(memory.get(key, 0)), int(value))
            elif gate.name == "performance" and isinstance(metrics.get("seconds"), (int, float)):
                timing = float(metrics["seconds"])
        if checks or timing:
            split["checks"].append(checks)
            split["timing"].append(timing)
    medians = {k: round(sorted(v)[len(v) // 2], 2) for k, v in split.items() if v}
    by_part = {k: round(sorted(v)[len(v) // 2], 3) for k, v in sorted(parts.items())}
    return {
        "memory": memory or None,
        "verify_seconds": medians or None,
        "verify_parts_s": by_part or None,
    }


def search_timeline(events: Path) -> dict[str, Any]:
    """Where a search's time went, from its event stream (seconds since the session
    started): the analysis (until the first candidate), the first verdict, per decided
    candidate the seconds from its proposal to its verdict, and the Executor's seconds
    (compiles and edits), with the part spent on steps that gave no candidate (a harvest
    under a configuration that generated the default code)."""
    from kernelopt_jupyter.event_payloads import (
        AgentFinished,
        AgentStarted,
        Baseline,
        CandidateProposed,
        Profile,
        Verdict,
    )
    from kernelopt_jupyter.events import EventError, read_events

    first_candidate = first_verdict = last = peers_t = analysed = None
    steps: dict[str, Any] = {}
    proposed: dict[str, float] = {}
    per_candidate: list[float] = []
    started: dict[str, float] = {}
    executor = {"s": 0.0, "no_candidate_s": 0.0, "steps": 0, "no_candidate": 0}
    try:
        stream = read_events(events)
    except (OSError, EventError):
        return {}
    for event in stream:
        t, d = float(event.t or 0.0), event.payload()
        last = t
        if isinstance(d, CandidateProposed):
            first_candidate = t if first_candidate is None else first_candidate
            proposed[d.id] = t
        elif isinstance(d, Profile) and d.candidate is None:  # not a winner's timeline
            analysed = t if analysed is None else analysed
            if d.step_seconds and not d.cached:
                steps = steps or dict(d.step_seconds)  # a cached one's are another run's
        elif isinstance(d, Baseline):
            peers_t = t
        elif isinstance(d, AgentStarted) and d.agent == "executor":
            started["executor"] = t
        elif isinstance(d, AgentFinished) and d.agent == "executor":
            begun = started.pop("executor", None)
            if begun is not None:
                executor["s"] += t - begun
                executor["steps"] += 1
                if not d.output.get("source"):
                    executor["no_candidate_s"] += t - begun
                    executor["no_candidate"] += 1
        elif isinstance(d, Verdict):
            first_verdict = t if first_verdict is None else first_verdict
            start = proposed.get(d.candidate)
            if start is not None:
                per_candidate.append(round(t - start, 1))
    ordered = sorted(per_candidate)
    return {
        # The analysis ends with its profile event (a quick-start candidate may be gated
        # before: the first candidate no longer marks it); a log without one, at the first.
        "analysis_s": (
            round(analysed, 1)
            if analysed is not None
            else (round(first_candidate, 1) if first_candidate is not None else None)
        ),
        "analysis_steps_s": steps or None,
        "first_verdict_s": round(first_verdict, 1) if first_verdict is not None else None,
        # On the GPU the baselines are timed after the first verdict: how long that took
        "baselines_after_first_verdict_s": (
            round(peers_t - first_verdict, 1)
            if peers_t is not None and first_verdict is not None and peers_t >= first_verdict
            else None
        ),
        "session_s": round(last, 1) if last is not None else None,
        "verdicts": len(per_candidate),
        "candidate_s": per_candidate,
        "median_candidate_s": ordered[len(ordered) // 2] if ordered else None,
        "executor_s": round(executor["s"], 1),
        "executor_steps": executor["steps"],
        "executor_no_candidate_s": round(executor["no_candidate_s"], 1),
        "executor_no_candidate_steps": executor["no_candidate"],
    }


def _side_by_side(row: dict[str, Any], peers: dict[str, Any], has_best: bool) -> None:
    """Row fields from the bench's side-by-side run: the winner (or, with none, the reference
    kept) and every peer timed interleaved in one process."""
    if "error" in peers or not peers.get("eager_ms"):
        row["side_by_side"] = f"not run: {peers.get('error') or 'no eager time'}"
        return
    row["search_baselines"] = {name: row.get(f"{name}_ms") for name in PEERS}
    for name in PEERS:
        row[f"{name}_ms"] = peers.get(f"{name}_ms")
    holds = has_best and bool(peers.get("candidate_ms")) and bool(peers.get("agrees"))
    if has_best and not holds:
        row["verdict"] = "not improved"
        row["side_by_side"] = (
            "the winner did not hold up in the side-by-side run "
            f"({peers.get('disagreement') or 'not timed'}); the reference is kept"
        )
    ours = float(peers["candidate_ms"] if holds else peers["eager_ms"])
    measured = {name: peers.get(f"{name}_ms") for name in PEERS}
    if holds:  # the verdict from this run, where the peers and the winner met head to head
        floor = min(ms for ms in (measured["eager"], measured["compile"], math.inf) if ms)
        row["verdict"] = "improved" if ours * IMPROVED_RATIO < floor else "not improved"
    ratios: dict[str, float | None] = {
        name: round(ms / ours, 4) if ms else None for name, ms in measured.items()
    }
    fastest = min((ms for ms in measured.values() if ms), default=None)
    ratios["best_baseline"] = round(fastest / ours, 4) if fastest else None
    add_target_peer(ratios)
    row.update(
        timed=True,
        speedup_vs_peer=ratios,
        best_ms=ours if holds else row.get("best_ms"),
        speedup_vs_eager=ratios["eager"] if holds else row.get("speedup_vs_eager"),
        speedup_vs_compile=ratios["compile"] if holds else row.get("speedup_vs_compile"),
        improved_vs_best_peer=bool(holds and fastest and ours * BEST_PEER_RATIO < fastest),
        peer_rounds=peers.get("rounds"),
        peer_compile_s=peers.get("compile_s"),
    )
    row.setdefault("side_by_side", "winner and peers timed interleaved in one process")
    untimed = [n for n in peers.get("notes") or [] if " not timed: " in n]
    if untimed:  # the best peer is then the best of those that were timed
        row["side_by_side"] += "; " + "; ".join(untimed)


def _peer_fields(
    baselines: dict[str, float | None], vs_eager: float | None, best: Any
) -> dict[str, Any]:
    """A row's speedup against each peer (and the best of them), or "not timed".

    What runs is the best verified candidate, or eager when none was verified (the reference is
    kept). Its ratio to eager was measured head to head; a peer's ratio to eager comes from the
    baselines run, where they were timed interleaved (absolute times differ between processes,
    ratios carry over). Never 1.0 for a problem nobody timed.
    """
    eager = baselines.get("eager")
    timed = bool(eager) and (best is None or best.ms is not None)
    if not timed or eager is None:
        return {"timed": False, "speedup_vs_peer": "not timed"}
    ours = vs_eager if best is not None and vs_eager else 1.0
    peers: dict[str, float | None] = {}
    for name in PEERS:
        ms = baselines.get(name)
        peers[name] = round(ours * ms / eager, 4) if ms else None
    measured = [ms for ms in (baselines.get(name) for name in PEERS) if ms]
    fastest = min(measured) if measured else None
    peers["best_baseline"] = round(ours * fastest / eager, 4) if fastest else None
    return {"timed": True, "speedup_vs_peer": add_target_peer(peers)}


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _geomean(values: list[float]) -> float:
    return round(math.exp(sum(math.log(v) for v in values) / len(values)), 4)


def summarize_rows(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-level counts and geometric means over the timed rows ("not timed" when none was).

    ``geomean_speedup_vs_eager`` / ``_vs_compile`` keep their meaning (a verified candidate
    slower than the baseline counts as the baseline kept, 1.0); ``geomean_speedup_vs_peer``
    holds the plain ratio against each peer and against the fastest of them.
    """
    levels: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        levels.setdefault(str(row.get("level")), []).append(row)
    summary: dict[str, Any] = {}
    for level, group in sorted(levels.items()):
        timed = [r for r in group if r.get("timed")]

        def kept(key: str, timed: list[dict[str, Any]] = timed) -> float | str:
            # A verified candidate slower than a baseline is not used: the baseline is kept.
            if not timed:
                return "not timed"
            return _geomean([max(1.0, r.get(key) or 1.0) for r in timed])

        peers: dict[str, float | str] = {}
        for name in (*PEERS, "best_baseline", "best_target_peer"):
            vals = [r["speedup_vs_peer"][name] for r in timed if r["speedup_vs_peer"].get(name)]
            peers[name] = _geomean(vals) if vals else "not timed"
        summary[level] = {
            "count": len(group),
            "timed": len(timed),
            "improved": sum(1 for r in group if r.get("verdict") == "improved"),
            "improved_vs_best_peer": sum(1 for r in group if r.get("improved_vs_best_peer")),
            "improved_vs_target_peers": sum(
                1
                for r in timed
                if (r["speedup_vs_peer"].get("best_target_peer") or 0.0) > BEST_PEER_RATIO
            ),
            "search_seconds_median": _median([float(r.get("seconds") or 0.0) for r in group]),
            "improved_dispatch_only": sum(
                1 for r in group if r.get("verdict") == "improved" and r.get("dispatch_only")
            ),
            "geomean_speedup_vs_eager": kept("speedup_vs_eager"),
            "geomean_speedup_vs_compile": kept("speedup_vs_compile"),
            "geomean_speedup_vs_peer": peers,
        }
    return summary


def _peers(session: OptimizationSession) -> dict[str, Any] | None:
    """The side-by-side run of a GPU session's winner (or the reference kept) against eager
    and the three torch.compile modes; None on the CPU (nothing is timed there)."""
    from kernelopt_jupyter.analysis.baselines import measure_peers

    if session.device != "cuda" or session.result is None:
        return None
    best = session.result.best
    print("   side-by-side run against every peer", file=sys.stderr, flush=True)
    return measure_peers(session.problem, best.candidate.source if best else None)


def bench_one(path: Path, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """One problem of a bench: its search in ``out/LEVEL/NAME``, the side-by-side run on the
    GPU, and its row; never raises for a broken problem (the row says ``error``). The serial
    bench and every worker of a parallel one (``bench_pool``) call this."""
    opts = _options(args, out / path.parent.name / path.stem)
    # The side-by-side run below times the winner against every peer.
    opts.final_check = opts.profile_best = False
    start = time.monotonic()
    print(f"== {path}", file=sys.stderr, flush=True)
    try:
        session = optimize_one(str(path), opts, quiet=True)
        seconds = time.monotonic() - start
        peers = _peers(session)
        row = bench_row(path, session, seconds, peers=peers)
        if peers is not None:
            row["peer_seconds"] = round(time.monotonic() - start - seconds, 1)
    except (ProblemError, SessionError, DeviceError) as exc:
        row = bench_row(path, None, time.monotonic() - start, str(exc))
    except Exception as exc:  # one broken problem must not end the benchmark
        row = bench_row(path, None, time.monotonic() - start, f"{type(exc).__name__}: {exc}")
    print(f"   {row.get('verdict')} {row.get('speedup_vs_compile')}", file=sys.stderr, flush=True)
    return row


def write_bench(out: Path, rows: list[dict[str, Any]], *, complete: bool) -> dict[str, Any]:
    """``out/bench.json`` (rows, their summary), rewritten atomically; returns the payload."""
    payload = {"schema": 1, "rows": rows, "summary": summarize_rows(rows), "complete": complete}
    write_atomic(out / "bench.json", json.dumps(payload, indent=1, default=str))
    return payload


def run_bench(args: argparse.Namespace) -> int:
    """The ``bench`` subcommand: a folder of problems, one search each, a per-level summary.

    With ``--gpus`` or ``--executor ray`` the problems run in parallel (``bench_pool``); the
    rows and the summary are those of a serial run, in the same order.
    """
    try:
        files = _problem_files(list(args.problems))
    except ProblemError as exc:
        return _fail(str(exc))
    if not files:
        named = ", ".join(str(p) for p in args.problems)
        return _fail(f"bench: {named}: no problem files (*.py) found there")
    out = Path(getattr(args, "out", None) or "runs/bench")
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    if getattr(args, "gpus", None) or getattr(args, "executor", "local") == "ray":
        from kernelopt_jupyter.cli.bench_pool import BenchPoolError, run_parallel

        try:
            rows = run_parallel(files, args, out)
        except BenchPoolError as exc:
            return _fail(str(exc))
    else:
        for path in files:
            rows.append(bench_one(path, args, out))
            # Each row as it finishes: a bench killed at any moment keeps every finished problem.
            write_bench(out, rows, complete=False)
    payload = write_bench(out, rows, complete=True)
    summary = payload["summary"]
    if getattr(args, "json", False):
        print(json.dumps(payload, default=str))
    else:
        for level, s in summary.items():
            print(f"level {level}: {s}")
    return 0 if any(r.get("best") for r in rows) else 1
