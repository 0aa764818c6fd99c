"""``kernelopt export``: a search's winner as a small package with a guarded custom op.

The package (``DEST/kernelopt_<problem>/``)::

    __init__.py       generated: imports the op, exposes load(), guard(), op, MANIFEST
    op_runtime.py     copied: manifest, fingerprint warning, custom op, guard factory
    guard_runtime.py  copied: the guard (the same text best.py carries)
    candidate.py      the winner's source, verbatim
    reference.py      the problem file, verbatim (the fallback path and the re-verification)
    manifest.json     shape checks, the verified set, output layouts, launch configurations,
                      and the torch/Triton/GPU/problem fingerprints it was verified with

The winner is verified again at every shape set first (``generalize.verify_shapes``); only
the shapes that pass enter the guard.
"""

from __future__ import annotations

import ast
import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelopt_jupyter.deploy import op_runtime
from kernelopt_jupyter.deploy.generalize import ShapeCheck, ShapeReport, verify_shapes
from kernelopt_jupyter.deploy.guard import init_literal, optimized_name
from kernelopt_jupyter.deploy.shapes import ShapeSet
from kernelopt_jupyter.launch_configs import LaunchConfigError, read_launch_configs
from kernelopt_jupyter.problem import Problem, ProblemError, problem_from_source, with_mode
from kernelopt_jupyter.sizes import SizesReport, resolve_sizes
from kernelopt_jupyter.verify import VerifyOptions

MANIFEST_SCHEMA = 1
_HERE = Path(__file__).parent
_COPIED = ("op_runtime.py", "guard_runtime.py")


class ExportError(Exception):
    """A one-line reason an export cannot be made; ``code`` is the CLI's exit status (2 bad
    input, 1 nothing verified to export)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class RunWinner:
    """What ``optimize --out DIR`` left: the problem, the winner's id, source and record."""

    folder: Path
    problem: Problem
    candidate_id: str
    source: str
    record: dict[str, Any]


def read_run(folder: Path) -> RunWinner:
    """The winner of a finished search folder; raises ExportError with the file and cause."""
    result_file = folder / "result.json"
    problem_file = folder / "problem.py"
    if not result_file.is_file() or not problem_file.is_file():
        raise ExportError(f"{folder}: not a finished KernelOPT run (no result.json/problem.py)")
    try:
        result = json.loads(result_file.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ExportError(f"{result_file}: unreadable ({exc})") from None
    best = result.get("best")
    if not best:
        raise ExportError(
            f"{result_file}: the search verified no candidate; nothing to export", code=1
        )
    source_file = folder / "candidates" / f"{best}.py"
    if not source_file.is_file():
        raise ExportError(f"{source_file}: the winner's source is missing")
    try:
        problem = problem_from_source(
            problem_file.read_text(), str(result.get("problem") or problem_file), validate=False
        )
    except ProblemError as exc:
        raise ExportError(str(exc)) from None
    record: dict[str, Any] = next(
        (c for c in result.get("candidates", []) if c.get("id") == best), {}
    )
    return RunWinner(folder, problem, str(best), source_file.read_text(), record)


def package_name(problem: Problem) -> str:
    """``kernelopt_<problem name>`` as a Python identifier."""
    safe = "".join(c if c.isalnum() else "_" for c in problem.name).strip("_") or "problem"
    return f"kernelopt_{safe}".lower()


def _launch_configs(source: str) -> dict[str, Any]:
    try:
        return dict(read_launch_configs(source))
    except LaunchConfigError:
        return {}


def build_manifest(
    winner: RunWinner,
    report: ShapeReport,
    folder: Path,
    *,
    seeds: int,
) -> dict[str, Any]:
    """The manifest of an export whose files are already in ``folder`` (docs/deploy.md)."""
    problem = winner.problem
    digest = op_runtime.file_digest(folder / "candidate.py")
    op_name = f"{package_name(problem).removeprefix('kernelopt_')}_{digest[:8]}"
    return {
        "schema": MANIFEST_SCHEMA,
        "kind": "kernelopt-export",
        "op": f"kernelopt::{op_name}",
        "problem": {
            "path": problem.path,
            "name": problem.name,
            "kind": problem.kind,
            "entry": problem.entry,
            "digest": op_runtime.file_digest(folder / "reference.py"),
        },
        "candidate": {
            "id": winner.candidate_id,
            "agent": winner.record.get("agent"),
            "dispatch_only": bool(winner.record.get("dispatch_only", False)),
            "optimized": optimized_name(problem, winner.source),
            "digest": digest,
        },
        "init": init_literal(problem),
        "device": report.device,
        "seeds": seeds,
        "verified": report.guard_set(),
        "shapes": report.to_dict(),
        "launch_configs": _launch_configs(winner.source),
        "fingerprint": op_runtime.current_fingerprint(report.device),
        "verified_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "speedup": report.checks[0].speedup if report.checks else None,
    }


def read_manifest(folder: Path) -> dict[str, Any]:
    """An export's manifest; raises ExportError naming the file when it is not one."""
    path = folder / op_runtime.MANIFEST_NAME
    if not path.is_file():
        raise ExportError(f"{folder}: not a KernelOPT export (no {op_runtime.MANIFEST_NAME})")
    try:
        manifest = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ExportError(f"{path}: unreadable ({exc})") from None
    wanted = ("op", "problem", "candidate", "device", "verified", "shapes", "fingerprint")
    missing = [k for k in wanted if k not in manifest]
    if manifest.get("schema") != MANIFEST_SCHEMA or missing:
        raise ExportError(f"{path}: not a schema-{MANIFEST_SCHEMA} export manifest {missing}")
    return dict(manifest)


def write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    """Write the manifest (the last file written: a folder without one is no export)."""
    (folder / op_runtime.MANIFEST_NAME).write_text(json.dumps(manifest, indent=1) + "\n")


def _init_text(problem: Problem, manifest: dict[str, Any], name: str) -> str:
    shapes = ", ".join(manifest["verified"]["shapes"]) or "none (every call runs the reference)"
    use = (
        f"    model = {name}.load()           # Model(*get_init_inputs()), kernels guarded\n"
        f"    model = {name}.guard(my_model)  # or guard your own instance (weights tied)\n"
        if problem.kind == "module"
        else f"    fn = {name}.load()              # the guarded {problem.entry}()\n"
    )
    op = manifest["op"].replace("::", ".")
    return (
        f'"""KernelOPT export of problem {problem.name!r} (candidate '
        f"{manifest['candidate']['id']}): the custom op torch.ops.{op}\n"
        "with a fake implementation (torch.compile, CUDA graphs) behind a guard.\n\n"
        f"    import {name}\n{use}"
        "    with torch.no_grad():\n        y = model(x)\n"
        '    model.kernelopt_path            # "kernel" or "reference: <why>"\n\n'
        f"Verified on {manifest['device']} at: {shapes}.\n"
        "After a torch, Triton or GPU change: kernelopt reverify <this folder>.\n"
        '"""\n\n'
        "from pathlib import Path\n\n"
        "from .op_runtime import Export, prepare\n\n"
        "prepare()  # the CPU interpreter's shims, before the kernels are defined\n\n"
        "from . import candidate, reference  # noqa: E402\n\n"
        "EXPORT = Export.open(Path(__file__).parent, candidate, reference)\n"
        "MANIFEST = EXPORT.manifest\n"
        "op = EXPORT.op\n"
        "guard = EXPORT.guard\n"
        "load = EXPORT.load\n"
    )


@dataclass
class ExportResult:
    """Where the package went and what the shape checks found."""

    package: Path
    report: ShapeReport
    manifest: dict[str, Any]
    #: the sizes the winner was verified at (``sizes``), None when the export chose none
    sizes: SizesReport | None = None

    def to_dict(self) -> dict[str, Any]:
        """``export --json``'s object."""
        data = {
            "schema": 1,
            "package": str(self.package),
            "op": self.manifest["op"],
            "device": self.manifest["device"],
            "verified_shapes": self.manifest["verified"]["shapes"],
            "specialized": self.report.specialized,
            "shapes": self.report.to_dict(),
            "fingerprint": self.manifest["fingerprint"],
        }
        if self.sizes is not None:
            data["sizes"] = self.sizes.to_dict()
        return data


def export_run(
    run_dir: Path,
    dest: Path | None,
    shapes: Callable[[Problem], list[ShapeSet]],
    options: VerifyOptions,
    *,
    on_check: Callable[[ShapeCheck], None] | None = None,
    mode: str | None = None,
    sizes: str | None = None,
) -> ExportResult:
    """Verify a run's winner at every shape set ``shapes(problem)`` gives and write the
    package under ``dest`` (default ``run_dir/export``). ``options.device`` is resolved.
    ``mode`` (``eval`` or ``as-constructed``) re-verifies in that module mode instead of the
    run's; the guard admits calls in the verified mode only. ``sizes`` (``auto``, ``small``,
    ``published``: ``kernelopt_jupyter.sizes``) sets the problem's sizes on ``options.device``
    (a CPU run's problem.py holds the shrunk text; ``published`` gives the file's own sizes
    back); None keeps the run's."""
    winner = read_run(run_dir)
    if mode is not None:
        try:
            winner.problem = with_mode(winner.problem, mode)
        except ProblemError as exc:
            raise ExportError(str(exc)) from None
    size_report = None
    if sizes is not None:
        winner.problem, size_report = resolve_sizes(winner.problem, sizes, options.device)
    try:
        ast.parse(winner.source)
    except SyntaxError as exc:
        raise ExportError(f"{run_dir}: the winner does not parse ({exc.msg})") from None
    package = (dest or run_dir / "export") / package_name(winner.problem)
    # Only an earlier export is replaced: never a folder of the person's that shares the name.
    if package.exists() and not (package / op_runtime.MANIFEST_NAME).is_file():
        raise ExportError(f"{package}: exists and is not a KernelOPT export; choose --out")
    shape_sets = shapes(winner.problem)
    report = verify_shapes(winner.problem, winner.source, shape_sets, options, on_check=on_check)
    if not report.own_passed:
        own = report.checks[0]
        raise ExportError(
            f"{run_dir}: the winner fails at the problem's own shape now "
            f"({own.failed_gate}: {own.detail})",
            code=1,
        )
    name = package.name
    if package.exists():
        shutil.rmtree(package)
    package.mkdir(parents=True)
    for file in _COPIED:
        shutil.copyfile(_HERE / file, package / file)
    (package / "candidate.py").write_text(winner.source)
    (package / "reference.py").write_text(winner.problem.source)
    manifest = build_manifest(winner, report, package, seeds=options.seeds)
    (package / "__init__.py").write_text(_init_text(winner.problem, manifest, name))
    if size_report is not None:
        manifest["sizes"] = size_report.to_dict()
    write_manifest(package, manifest)
    return ExportResult(package, report, manifest, size_report)
