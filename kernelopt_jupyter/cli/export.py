"""``kernelopt export RUN_DIR`` and ``kernelopt shapes PROBLEM``: shape sets and the package.

Exit codes: 0 written (or listed); 1 nothing verified to export (no winner, or it fails at
its own shape); 2 bad input (a one-line error naming the file and cause).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from kernelopt_jupyter import defaults
from kernelopt_jupyter.cli.main import _device, _positive_int, _sizes, hang_limit


def _shape_arg(value: str) -> dict[str, int]:
    from kernelopt_jupyter.deploy.shapes import parse_shape_spec

    try:
        return parse_shape_spec(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _shape_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--shape",
        action="append",
        type=_shape_arg,
        default=None,
        metavar="NAME=SIZE[,NAME=SIZE]",
        help="a shape set to verify (repeatable): sizes of constants only get_inputs() reads",
    )
    parser.add_argument(
        "--fixed-shape",
        action="store_true",
        help="no derived shapes (batch sizes, 127/129/1023): only the problem's own and --shape",
    )


def add_parsers(sub: Any) -> None:
    """The ``export``, ``shapes`` and ``reverify`` subcommands (issue 16's deploy commands)."""
    export = sub.add_parser("export", help="the winner as a guarded custom-op package")
    export.add_argument("run_dir", metavar="RUN_DIR", help="an `optimize --out` folder")
    export.add_argument("--out", metavar="DEST", default=None, help="default RUN_DIR/export")
    _shape_flags(export)
    _device(export)
    _sizes(export)
    export.add_argument(
        "--seeds",
        type=_positive_int,
        default=defaults.SEEDS,
        help=f"input seeds per shape (default {defaults.SEEDS})",
    )
    export.add_argument(
        "--mode",
        choices=("as-constructed", "eval"),
        default=None,
        help="module mode to verify in (default: the run's); the guard admits only that mode",
    )
    hang_limit(export)
    export.add_argument("--json", action="store_true", help="one JSON object on stdout")

    shapes = sub.add_parser("shapes", help="list the shape sets a problem is verified at")
    shapes.add_argument("problem", metavar="PROBLEM.py")
    _shape_flags(shapes)
    shapes.add_argument("--json", action="store_true")

    reverify = sub.add_parser("reverify", help="re-run the gates on an export after an upgrade")
    reverify.add_argument("module", metavar="MODULE", help="an exported package folder")
    _device(reverify)
    reverify.add_argument("--seeds", type=_positive_int, default=None, help="default: as exported")
    hang_limit(reverify)
    reverify.add_argument("--force", action="store_true", help="even when nothing changed")
    reverify.add_argument("--json", action="store_true")


def json_command(run: Callable[[argparse.Namespace, TextIO, list[dict[str, Any]]], int]) -> Any:
    """Run a command whose ``--json`` object must be the only thing on stdout (the problem's
    own code runs in this process and may print)."""

    def handler(args: argparse.Namespace) -> int:
        if not args.json:
            return run(args, sys.stdout, [])
        stdout = sys.stdout
        sink: list[dict[str, Any]] = []
        with contextlib.redirect_stdout(sys.stderr):
            code = run(args, sys.stderr, sink)
        if sink:
            print(json.dumps(sink[0]), file=stdout)
        return code

    return handler


def _error(command: str, message: str, code: int = 2) -> int:
    print(f"kernelopt {command}: {message}", file=sys.stderr)
    return code


def show_check(out: TextIO) -> Callable[[Any], None]:
    """A progress printer: one line per shape set as it is decided."""

    def show(check: Any) -> None:
        print(f"{check.shape.name:<20} {check.verdict:<8} {check.detail}", file=out, flush=True)

    return show


def _export(args: argparse.Namespace, out: TextIO, sink: list[dict[str, Any]]) -> int:
    from kernelopt_jupyter.deploy.packaging import ExportError, export_run
    from kernelopt_jupyter.deploy.shapes import shape_sets
    from kernelopt_jupyter.device import DeviceError, resolve_device
    from kernelopt_jupyter.problem import ProblemError
    from kernelopt_jupyter.sizes import SizesError
    from kernelopt_jupyter.verify import VerifyOptions

    try:
        device = resolve_device(args.device)
        options = VerifyOptions(device=device, seeds=args.seeds, time_limit_s=args.hang_limit)
        result = export_run(
            Path(args.run_dir),
            Path(args.out) if args.out else None,
            lambda p: shape_sets(p, person=args.shape, fixed=args.fixed_shape),
            options,
            on_check=show_check(out),
            mode=args.mode,
            sizes=getattr(args, "sizes", None) or "auto",
        )
    except ExportError as exc:
        return _error("export", str(exc), exc.code)
    except (DeviceError, ProblemError, SizesError) as exc:
        return _error("export", str(exc))
    if result.sizes is not None and result.sizes.worth_saying:
        print(result.sizes.describe(), file=out)
    print(result.report.summary(), file=out)
    print(f"wrote {result.package} (op {result.manifest['op']})", file=out)
    sink.append(result.to_dict())
    return 0


def _shapes(args: argparse.Namespace, out: TextIO, sink: list[dict[str, Any]]) -> int:
    from kernelopt_jupyter.deploy.guard import own_signature
    from kernelopt_jupyter.deploy.shapes import (
        is_fixed_shape,
        shape_problem,
        shape_sets,
        variable_dims,
    )
    from kernelopt_jupyter.problem import ProblemError, load_problem

    try:
        problem = load_problem(args.problem)
        sets = shape_sets(problem, person=args.shape, fixed=args.fixed_shape)
        dims = variable_dims(problem)
        fixed = args.fixed_shape or is_fixed_shape(problem)
    except ProblemError as exc:
        return _error("shapes", str(exc))
    varying = ", ".join(f"{k}={v}" for k, v in dims.items()) or "none"
    print(f"sizes only get_inputs() reads: {varying}{' (fixed-shape)' if fixed else ''}", file=out)
    rows = []
    for shape in sets:
        # The inputs each set makes (on the meta device: nothing is allocated).
        shapes = [
            s["shape"] if s["kind"] == "tensor" else s.get("value", s.get("type"))
            for s in own_signature(shape_problem(problem, shape))
        ]
        rows.append({**shape.to_dict(), "inputs": shapes})
        print(f"{shape.name:<20} {shape.origin:<9} inputs {shapes}", file=out)
    sink.append(
        {
            "schema": 1,
            "problem": problem.path,
            "variable": dims,
            "fixed_shape": fixed,
            "shape_sets": rows,
        }
    )
    return 0


run_export = json_command(_export)
run_shapes = json_command(_shapes)
