"""``kernelopt report DIR``: a saved session told as a standalone notebook.

The notebook is a reader of the session's ``events.jsonl`` (and its ``problem.py``): the
problem, the baselines, the dispatch map as a table and a chart, every candidate that passed
the gates with its diff, gates and speedup, and the winner as a runnable cell followed by a
check against the reference. The notebook is built in ``session/report.py`` (the panel's
Report button writes it too); it is plain nbformat-4 JSON, so the command also works on a GPU
box without Jupyter.

Exit codes: 0 written, 2 bad input (no session in DIR, an unwritable destination).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kernelopt_jupyter.events import EventError


def add_parser(sub: Any) -> None:
    """The ``report`` subcommand's flags (called from main.build_parser)."""
    report = sub.add_parser("report", help="write a saved session as a standalone notebook")
    report.add_argument("run_dir", metavar="DIR", help="a session folder (holds events.jsonl)")
    report.add_argument(
        "--out", metavar="NOTEBOOK", default=None, help="where to write (default DIR/report.ipynb)"
    )
    report.add_argument("--json", action="store_true", help="one JSON object on stdout")


def run(args: argparse.Namespace) -> int:
    """Write the report notebook of ``args.run_dir``; returns the exit code."""
    # Imported here: the session package pulls in torch, and `kernelopt --help` should not.
    from kernelopt_jupyter.session.report import write_report

    run_dir = Path(args.run_dir)
    out = Path(args.out) if args.out else run_dir / "report.ipynb"
    try:
        cells = write_report(run_dir, out)
    except EventError as exc:
        return _fail(f"{run_dir}: {exc}; give the folder of a session (kernelopt optimize --out)")
    except OSError as exc:
        return _fail(f"{out}: cannot write the report ({exc.strerror or exc})")
    if args.json:
        print(json.dumps({"report": str(out), "cells": cells}))
    else:
        print(f"kernelopt report: wrote {out} ({cells} cells)", file=sys.stderr)
    return 0


def _fail(message: str) -> int:
    print(f"kernelopt report: {message}", file=sys.stderr)
    return 2
