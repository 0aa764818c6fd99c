"""The ``kernelopt`` command line: verify, profile, optimize, bench (the contract's v1 face).

Exit codes: 0 success, 1 a gate failed or nothing verified, 2 bad usage or bad input (a
one-line error on stderr naming the file and the cause, never a traceback). ``--json`` prints
exactly one JSON object on stdout; progress and logs go to stderr.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from kernelopt_jupyter import __version__, defaults

DEVICES = ("auto", "cpu", "cuda")
BASELINES = ("eager", "compile")


class _Parser(argparse.ArgumentParser):
    """argparse with the contract's one-line errors (argparse prints usage plus the error)."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _agents(value: str) -> str:
    if value in ("offline", "claude") or (value.startswith("replay:") and len(value) > 7):
        return value
    raise argparse.ArgumentTypeError(f"{value!r}: use offline, claude or replay:FILE")


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} must be at least 1")
    return number


def _gpus(value: str) -> int | str:
    if value == "all":
        return value
    try:
        return _positive_int(value)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"{value!r}: use a number of GPUs or all") from None


def _seconds(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds") from None
    if not number > 0:
        raise argparse.ArgumentTypeError(f"{value!r} must be more than 0 seconds")
    return number


def _dollars(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an amount in USD") from None
    if not number > 0:
        raise argparse.ArgumentTypeError(f"{value!r} must be more than 0 USD")
    return number


def _api_budget(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-tokens",
        type=_positive_int,
        default=None,
        help="Claude: stop after this many API tokens (input, output, cache reads and writes)",
    )
    parser.add_argument(
        "--max-usd",
        type=_dollars,
        default=None,
        help="Claude: stop after this much API spend in USD (list prices; an estimate)",
    )


def _mode(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mode",
        choices=("as-constructed", "eval"),
        default=None,
        help="the reference's semantics: as Model(*init) builds it (default, as KernelBench) "
        "or eval (inference: BatchNorm running stats, no dropout); said in every verdict",
    )


def _no_cache(parser: argparse.ArgumentParser, help_text: str) -> None:
    parser.add_argument("--no-cache", action="store_true", help=help_text)


#: ``--no-cache`` of the commands that analyse a problem before their search.
NO_CACHE_HELP = (
    "neither read nor write the analysis cache (baselines, dispatch map, harvest): analyse "
    "afresh and keep nothing"
)


def hang_limit(parser: argparse.ArgumentParser) -> None:
    """``--hang-limit`` of the commands that verify one candidate (``--time-limit`` is its
    older name, kept as an alias): a limit on each run of the candidate, unlike optimize's
    and bench's ``--time-limit``, which bounds a whole search."""
    parser.add_argument(
        "--hang-limit",
        "--time-limit",
        dest="hang_limit",
        type=_seconds,
        default=defaults.HANG_LIMIT_S,
        metavar="SECONDS",
        help="seconds the candidate may run before it counts as hung "
        f"(default {defaults.HANG_LIMIT_S:g}; --time-limit is an alias)",
    )


def _seeds_per_gate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seeds",
        type=_positive_int,
        default=defaults.SEEDS,
        help=f"input seeds per gate (default {defaults.SEEDS})",
    )


def _device(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--device", choices=DEVICES, default="auto", help="auto = cuda when a GPU is present"
    )


def _sizes(parser: argparse.ArgumentParser) -> None:
    from kernelopt_jupyter.sizes import SIZES

    parser.add_argument(
        "--sizes",
        choices=SIZES,
        default="auto",
        help="the problem's sizes: small (its module-level size constants shrunk to fit "
        "Triton's interpreter, docs/problems.md) or published (as written); auto = small on "
        "the CPU, published on the GPU",
    )


def build_parser() -> argparse.ArgumentParser:
    """The full parser: four subcommands with the contract's flags (plus compatible extras)."""
    parser = _Parser(prog="kernelopt", description="KernelOPT: verify and optimize GPU kernels.")
    parser.add_argument("--version", action="version", version=f"kernelopt {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    verify = sub.add_parser("verify", help="run the four gates on one candidate")
    verify.add_argument("problem", metavar="PROBLEM.py")
    verify.add_argument("candidate", metavar="CANDIDATE.py")
    _device(verify)
    _sizes(verify)
    verify.add_argument(
        "--seeds",
        type=_positive_int,
        default=defaults.SEEDS,
        help=f"input seeds (default {defaults.SEEDS})",
    )
    verify.add_argument(
        "--seed",
        type=int,
        default=None,
        help="the verification's schedule seed (drawn fresh when omitted; every verdict says "
        "which): reproduces a run",
    )
    verify.add_argument("--json", action="store_true", help="one JSON object on stdout")
    hang_limit(verify)
    verify.add_argument(
        "--baseline",
        action="append",
        choices=BASELINES,
        help="baseline(s) the performance gate races (repeatable; default eager)",
    )

    profile = sub.add_parser("profile", help="dispatch map and baselines of a problem")
    profile.add_argument("problem", metavar="PROBLEM.py")
    _device(profile)
    _sizes(profile)
    profile.add_argument("--json", action="store_true")
    profile.add_argument(
        "--ncu",
        action="store_true",
        help="also attach Nsight Compute metrics per kernel (GPU with ncu on PATH)",
    )
    _no_cache(
        profile,
        "profile always measures afresh and never reads or writes the analysis cache; the "
        "flag is accepted so that one set of flags serves profile, optimize and bench",
    )

    optimize = sub.add_parser("optimize", help="search for a faster verified candidate")
    optimize.add_argument("problem", metavar="PROBLEM.py")
    optimize.add_argument("--agents", type=_agents, default="offline")
    optimize.add_argument(
        "--budget",
        type=_positive_int,
        default=defaults.CANDIDATE_BUDGET,
        help=f"candidates to try (default {defaults.CANDIDATE_BUDGET})",
    )
    optimize.add_argument("--out", metavar="DIR", default=None)
    _device(optimize)
    _sizes(optimize)
    optimize.add_argument("--json", action="store_true")
    optimize.add_argument("--step", action="store_true", help="approve each step interactively")
    _seeds_per_gate(optimize)
    optimize.add_argument(
        "--resume",
        action="store_true",
        help="continue the interrupted session in --out DIR from its events.jsonl",
    )
    optimize.add_argument("--model", default=None, help="Claude model (default $KERNELOPT_MODEL)")
    optimize.add_argument(
        "--time-limit",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="whole-search deadline, analysis included; work in flight is cancelled at it",
    )
    _mode(optimize)
    _api_budget(optimize)
    _no_cache(optimize, NO_CACHE_HELP)

    bench = sub.add_parser("bench", help="optimize many problems and summarise per level")
    bench.add_argument("problems", nargs="+", metavar="PROBLEM_OR_DIR")
    bench.add_argument("--agents", type=_agents, default="offline")
    bench.add_argument("--out", metavar="DIR", default=None)
    _device(bench)
    _sizes(bench)
    bench.add_argument("--time-limit", type=_seconds, default=None, metavar="SECONDS")
    bench.add_argument("--json", action="store_true")
    bench.add_argument(
        "--budget",
        type=_positive_int,
        default=defaults.CANDIDATE_BUDGET,
        help=f"candidates per problem (default {defaults.CANDIDATE_BUDGET})",
    )
    _seeds_per_gate(bench)
    bench.add_argument("--model", default=None, help="Claude model (default $KERNELOPT_MODEL)")
    bench.add_argument(
        "--gpus",
        type=_gpus,
        default=None,
        metavar="N|all",
        help="one worker process per GPU, problems from one queue (with --device cpu: N CPU "
        "stand-in workers); the rows are a serial run's",
    )
    bench.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="ray: each problem a Ray task asking for one GPU (pip install kernelopt-jupyter[ray])",
    )
    bench.add_argument(
        "--address", default=None, metavar="ADDR", help="with --executor ray: the cluster's address"
    )
    _mode(bench)
    _api_budget(bench)
    _no_cache(bench, NO_CACHE_HELP)
    # export, shapes, reverify (deploy): their flags live beside their handlers.
    from kernelopt_jupyter.cli.export import add_parsers

    add_parsers(sub)
    from kernelopt_jupyter.cli.report import add_parser as add_report_parser

    add_report_parser(sub)
    return parser


#: Subcommand -> (module, function); imported only when that subcommand runs.
_HANDLERS = {
    "verify": ("kernelopt_jupyter.cli.verify", "run"),
    "profile": ("kernelopt_jupyter.cli.profile", "run"),
    "optimize": ("kernelopt_jupyter.cli.optimize", "run_optimize"),
    "bench": ("kernelopt_jupyter.cli.optimize", "run_bench"),
    "export": ("kernelopt_jupyter.cli.export", "run_export"),
    "shapes": ("kernelopt_jupyter.cli.export", "run_shapes"),
    "reverify": ("kernelopt_jupyter.cli.reverify", "run"),
    "report": ("kernelopt_jupyter.cli.report", "run"),
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``kernelopt`` console script; returns the exit code.

    Run as the process's own command line (``argv`` None), SIGTERM ends it through
    ``tempdirs.on_sigterm``: its workers killed, its temporary folders removed, exit 143."""
    if argv is None:
        from kernelopt_jupyter import tempdirs

        tempdirs.remove_on_sigterm()
    parser = build_parser()
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        if "--json" in arguments:  # a bad flag or input still answers with one JSON object
            from kernelopt_jupyter.cli.json_errors import run_with_json_errors

            return run_with_json_errors(lambda: _dispatch(parser.parse_args(arguments), parser))
        return _dispatch(parser.parse_args(arguments), parser)
    finally:
        if argv is None:
            # No worker outlives the command: one still tearing down (a GPU context, device
            # memory) would sit beside the next command's work.
            from kernelopt_jupyter.worker import kill_tree

            kill_tree(os.getpid(), include_self=False)


def _dispatch(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.command is None:
        parser.print_usage(sys.stderr)
        return 2
    module_name, func_name = _HANDLERS[args.command]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise  # a missing dependency inside the command is a real error: keep its traceback
        print(f"kernelopt {args.command}: not available in this build", file=sys.stderr)
        return 2
    handler: Any = getattr(module, func_name)
    return int(handler(args))
