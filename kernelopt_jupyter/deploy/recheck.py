"""``kernelopt reverify``: re-run the gates on an export when its setup changed.

What changed is what ``op_runtime.package_changes`` reports (the same check the package runs
at import): torch, Triton, GPU or compute capability, the device, or an edited
``candidate.py``/``reference.py``. The shape sets recorded in the manifest are verified again
here; the manifest then records this setup and only the shapes that pass now, so the guard
never admits a shape the current setup did not verify.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelopt_jupyter.deploy import op_runtime
from kernelopt_jupyter.deploy.generalize import ShapeCheck, ShapeReport, verify_shapes
from kernelopt_jupyter.deploy.packaging import ExportError, read_manifest, write_manifest
from kernelopt_jupyter.problem import ProblemError, problem_from_source
from kernelopt_jupyter.verify import VerifyOptions


@dataclass
class ReverifyResult:
    """What changed, and (when the gates ran) which verified shapes were kept or lost."""

    package: Path
    changes: list[str]
    report: ShapeReport | None = None
    lost: list[str] = field(default_factory=list)
    gained: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Nothing to do, or every shape verified before still passes."""
        return self.report is None or (self.report.own_passed and not self.lost)

    def to_dict(self) -> dict[str, Any]:
        """``reverify --json``'s object."""
        return {
            "schema": 1,
            "package": str(self.package),
            "changes": self.changes,
            "reverified": self.report is not None,
            "ok": self.ok,
            "lost": self.lost,
            "gained": self.gained,
            "shapes": self.report.to_dict() if self.report else None,
        }


def export_folder(path: Path) -> Path:
    """The export's folder from its folder, its ``__init__.py``, its manifest, or the name it
    is imported by (found on ``sys.path`` without importing it)."""
    if path.is_file():
        return path.parent
    name = str(path)
    if not path.exists() and name.isidentifier():
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin is not None:
            return Path(spec.origin).parent
    return path


def reverify(
    path: Path,
    options: VerifyOptions,
    *,
    force: bool = False,
    on_check: Callable[[ShapeCheck], None] | None = None,
) -> ReverifyResult:
    """Re-verify the export at ``path`` on ``options.device`` (resolved) when its setup
    changed (or ``force``), and rewrite its manifest. Raises ExportError for a bad folder."""
    folder = export_folder(path)
    manifest = read_manifest(folder)
    try:
        changes = op_runtime.package_changes(folder, manifest, options.device)
    except (OSError, KeyError) as exc:
        raise ExportError(f"{folder}: incomplete export ({exc})") from None
    result = ReverifyResult(folder, changes)
    if not changes and not force:
        return result
    problem_meta = manifest["problem"]
    try:
        problem = problem_from_source(
            (folder / "reference.py").read_text(), str(problem_meta["path"]), validate=False
        )
        source = (folder / "candidate.py").read_text()
        shapes = [ShapeCheck.from_dict(c).shape for c in manifest["shapes"]["checks"]]
    except (OSError, ValueError, KeyError, ProblemError) as exc:
        raise ExportError(f"{folder}: cannot read the export back ({exc})") from None
    report = verify_shapes(problem, source, shapes, options, on_check=on_check)
    before = set(manifest["verified"]["shapes"])
    after = {c.shape.name for c in report.passed}
    result.report = report
    result.lost = sorted(before - after)
    result.gained = sorted(after - before)
    manifest.update(
        device=options.device,
        seeds=options.seeds,
        verified=report.guard_set()
        if report.own_passed
        else {**report.guard_set(), "signatures": [], "outputs": [], "shapes": []},
        shapes=report.to_dict(),
        fingerprint=op_runtime.current_fingerprint(options.device),
        verified_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )
    manifest["problem"]["digest"] = op_runtime.file_digest(folder / "reference.py")
    manifest["candidate"]["digest"] = op_runtime.file_digest(folder / "candidate.py")
    manifest["reverified_because"] = changes or ["--force"]
    write_manifest(folder, manifest)
    return result
