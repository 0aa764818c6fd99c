"""The KernelBench development sample (``../shared/kernelbench-dev/``), for the tests marked
``kernelbench``.

The problems are other people's code and are never copied into the repository: the tests read
them from the folder named by ``KERNELOPT_KERNELBENCH_DEV`` (default: ``kernelbench-dev`` in
the ``shared/`` folder beside the checkout). A selected ``kernelbench`` test fails, never
skips, when the folder is absent. The README's test command deselects them; ``.ci/run`` runs
them as a step of their own, where the folder exists.
"""

from __future__ import annotations

import ast
import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest

ENV = "KERNELOPT_KERNELBENCH_DEV"
LEVELS = ("level1", "level2", "level3")


def dev_dir() -> Path:
    """The folder of the development sample; fails the calling test when it is absent."""
    default = Path(__file__).resolve().parents[2] / "shared" / "kernelbench-dev"
    folder = Path(os.environ.get(ENV) or default)
    if not all((folder / level).is_dir() for level in LEVELS):
        pytest.fail(
            f"the KernelBench development sample is not at {folder} (needs level1/ level2/ "
            f"level3/): set {ENV}=FOLDER, or deselect these tests with -m 'not kernelbench'",
            pytrace=False,
        )
    return folder


def dev_problems() -> list[Path]:
    """Every problem file of the sample, level by level, in name order."""
    folder = dev_dir()
    return sorted(p for level in LEVELS for p in (folder / level).glob("*.py"))


def problem_ids(paths: list[Path]) -> list[str]:
    """Test ids: ``level/file``."""
    return [f"{p.parent.name}/{p.stem}" for p in paths]


def missing_imports(path: Path) -> list[str]:
    """Top-level modules the problem imports that this environment does not have."""
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return sorted(n for n in names if importlib.util.find_spec(n) is None)


def shrunk_problem(path: Path) -> Any:
    """The problem at the CPU's shrunk sizes, in eval mode where it is random in training
    mode; skips, saying which, a problem importing a package this environment lacks."""
    from kernelopt_jupyter.problem import ProblemError, load_problem
    from kernelopt_jupyter.sizes import resolve_sizes

    missing = missing_imports(path)
    if missing:
        pytest.skip(f"{path.name} imports {', '.join(missing)}, which this environment lacks")
    try:
        problem = load_problem(path)
    except ProblemError as exc:
        if "--mode eval" not in str(exc):
            raise
        problem = load_problem(path, mode="eval")
    small, _ = resolve_sizes(problem, "auto", "cpu")
    return small
