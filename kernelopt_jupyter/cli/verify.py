"""``kernelopt verify PROBLEM CANDIDATE``: the four gates on one candidate file."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

from kernelopt_jupyter.device import DeviceError, resolve_device
from kernelopt_jupyter.problem import ProblemError, load_problem
from kernelopt_jupyter.sizes import SizesError, resolve_sizes, switch_for_file
from kernelopt_jupyter.verify import GateResult, VerifyOptions, verify_candidate


def _error(message: str) -> int:
    print(f"kernelopt verify: {message}", file=sys.stderr)
    return 2


def _read_candidate(path: Path) -> str:
    if not path.is_file():
        raise ProblemError(f"{path}: no such candidate file")
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ProblemError(f"{path}: cannot read the candidate ({exc})") from None


def run(args: argparse.Namespace) -> int:
    """Verify and print the gates (or one JSON object with ``--json``); the exit code:
    0 every gate that ran passed, 1 a gate failed, 2 bad input (a one-line error on stderr)."""
    if not args.json:
        return _run(args)
    # The problem file runs in this process (validation): whatever it prints must not land
    # in front of the one JSON object on stdout.
    stdout = sys.stdout
    sink: list[dict[str, object]] = []
    with contextlib.redirect_stdout(sys.stderr):
        code = _run(args, sink)
    if sink:
        print(json.dumps(sink[0]), file=stdout)
    return code


def _run(args: argparse.Namespace, json_sink: list[dict[str, object]] | None = None) -> int:
    sizes = getattr(args, "sizes", None) or "auto"
    try:
        device = resolve_device(args.device)
        note = switch_for_file(args.problem, device, sizes)  # a problem's own switch
        if note:
            print(f"kernelopt verify: {note}", file=sys.stderr)
        # The sizes a search on this device used (the CPU's shrink rule is deterministic), so
        # a CPU search's best.py re-verifies here.
        problem, size_report = resolve_sizes(load_problem(args.problem), sizes, device)
        source = _read_candidate(Path(args.candidate))
    except (DeviceError, ProblemError, SizesError) as exc:
        return _error(str(exc))
    out = sys.stderr if args.json else sys.stdout

    def show(gate: GateResult) -> None:
        print(f"{gate.name:<12} {gate.status:<8} {gate.detail}", file=out, flush=True)

    options = VerifyOptions(
        device=device,
        seeds=args.seeds,
        time_limit_s=args.hang_limit,
        baselines=tuple(args.baseline or ("eager",)),
        seed=getattr(args, "seed", None),
    )
    print(f"verifying {args.candidate} against {args.problem} on {device}", file=out, flush=True)
    if size_report.worth_saying:
        print(size_report.describe(), file=out, flush=True)
    try:
        report = verify_candidate(problem, source, options, str(args.candidate), on_gate=show)
    except ProblemError as exc:
        return _error(str(exc))
    if json_sink is not None:
        json_sink.append({**report.to_dict(), "sizes": size_report.to_dict()})
    else:
        kind = " (dispatch-only)" if report.dispatch_only else ""
        print(f"verdict: {report.verdict}{kind} in {report.seconds:.1f} s (seed {report.seed})")
    return 0 if report.verdict == "pass" else 1
