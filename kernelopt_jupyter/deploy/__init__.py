"""Shape-safe, deployable output: shape sets, guarded dispatch, custom-op export, re-verify.

```python
from kernelopt_jupyter.deploy import export, reverify
result = export("runs/fused_mlp-...", shapes=[{"TOKENS": 4096}])   # ExportResult
result.package, result.report.specialized, result.report.summary()
reverify(result.package)                                           # ReverifyResult
```
The notebook's Export button and accepted cell use these and ``guard.guard_best_source``.
See docs/deploy.md. Importing this package is light (no torch): the modules load lazily.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kernelopt_jupyter import defaults

if TYPE_CHECKING:
    from kernelopt_jupyter.deploy.generalize import ShapeCheck
    from kernelopt_jupyter.deploy.packaging import ExportResult
    from kernelopt_jupyter.deploy.recheck import ReverifyResult

__all__ = ["export", "import_hint", "reverify"]


def import_hint(package: Path) -> str:
    """The line that imports an exported package from a notebook or script."""
    return f"import sys; sys.path.insert(0, {str(package.parent)!r}); import {package.name}"


def export(
    run_dir: str | Path,
    dest: str | Path | None = None,
    *,
    device: str = "auto",
    shapes: list[dict[str, int]] | None = None,
    fixed_shape: bool = False,
    seeds: int = defaults.SEEDS,
    time_limit_s: float = defaults.HANG_LIMIT_S,
    on_check: Callable[[ShapeCheck], None] | None = None,
    mode: str | None = None,
) -> ExportResult:
    """``kernelopt export``: verify a run's winner at every shape set and write its package.
    Raises ``ExportError`` (nothing to export), ``ProblemError`` or ``DeviceError``."""
    from kernelopt_jupyter.deploy.packaging import export_run
    from kernelopt_jupyter.deploy.shapes import shape_sets
    from kernelopt_jupyter.device import resolve_device
    from kernelopt_jupyter.verify import VerifyOptions

    options = VerifyOptions(device=resolve_device(device), seeds=seeds, time_limit_s=time_limit_s)
    return export_run(
        Path(run_dir),
        Path(dest) if dest is not None else None,
        lambda problem: shape_sets(problem, person=shapes, fixed=fixed_shape),
        options,
        on_check=on_check,
        mode=mode,
    )


def reverify(
    path: str | Path,
    *,
    device: str = "auto",
    seeds: int | None = None,
    force: bool = False,
    on_check: Callable[[ShapeCheck], None] | None = None,
) -> ReverifyResult:
    """``kernelopt reverify``: re-run the gates on an export whose setup changed."""
    from kernelopt_jupyter.deploy.packaging import read_manifest
    from kernelopt_jupyter.deploy.recheck import export_folder
    from kernelopt_jupyter.deploy.recheck import reverify as _reverify
    from kernelopt_jupyter.device import resolve_device
    from kernelopt_jupyter.verify import VerifyOptions

    folder = export_folder(Path(path))
    count = seeds or int(read_manifest(folder).get("seeds", defaults.SEEDS))
    options = VerifyOptions(device=resolve_device(device), seeds=count)
    return _reverify(folder, options, force=force, on_check=on_check)
