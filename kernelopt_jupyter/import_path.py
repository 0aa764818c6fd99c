"""Where a worker process imports from: the installed packages, never the user's folder.

A worker (``worker.run_task``, a service, the launcher that forks them, a bench worker) is
started from whatever folder the user is in. Python would put that folder first on the
worker's ``sys.path`` (``python -m`` adds the working folder, ``-c`` adds ``''``), so a folder
named ``z3``, ``triton`` or ``torch`` there would be imported in place of the installed
package: torch imports ``z3`` when it can, and a stray ``z3/`` made Inductor's harvest fail.
So every worker is started

* with ``python -P`` and ``PYTHONSAFEPATH=1`` (which its own children inherit): no working
  folder and no ``''`` on ``sys.path``;
* with ``PYTHONPATH`` less the entries that point into the working folder (``''``, relative
  entries, the folder itself and anything below it). Entries that a caller passes on purpose
  (``extra_env``) are kept as given.

A problem may import a module beside it (``import helpers`` with ``helpers.py`` in the
problem's folder; for a notebook cell, the notebook's folder, the kernel's working folder).
``allow_sibling_imports`` keeps that working, in every process that runs the problem
(``problem.materialize``): the names the problem's source imports and its folder holds are
served from that folder by a finder placed *after* every other one, so an installed package
of the same name always wins, and nothing else in the folder becomes importable.
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any


def python_command(*args: str) -> list[str]:
    """``python -P ARGS...``: this interpreter, the working folder not on ``sys.path``."""
    return [sys.executable, "-P", *args]


def _inside(entry: Path, folder: Path) -> bool:
    if folder == Path(folder.anchor):  # the filesystem's root: only the root itself
        return entry == folder
    return entry == folder or folder in entry.parents


def pythonpath_outside(value: str, cwd: str | None = None) -> str:
    """``value`` (a ``PYTHONPATH``) less ``''``, relative entries and entries in ``cwd``
    (default: the working folder) or below it."""
    here = Path(os.path.realpath(cwd or os.getcwd()))
    kept = []
    for entry in value.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        if _inside(Path(os.path.realpath(entry)), here):
            continue
        kept.append(entry)
    return os.pathsep.join(kept)


def worker_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` for a process started from the user's folder: ``PYTHONSAFEPATH=1``, and its
    ``PYTHONPATH`` without entries that point into the working folder."""
    out = dict(env)
    if "PYTHONPATH" in out:
        cleaned = pythonpath_outside(out["PYTHONPATH"])
        if cleaned:
            out["PYTHONPATH"] = cleaned
        else:
            del out["PYTHONPATH"]
    out["PYTHONSAFEPATH"] = "1"
    return out


# ---------------------------------------------------------------------------- sibling modules


def imported_names(source: str) -> set[str]:
    """The top-level modules ``source`` imports (absolute imports, anywhere in it)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def problem_folder(path: str) -> Path | None:
    """The folder a problem's sibling modules sit in: the file's folder, or for a source
    with no file (``<cell>``) the working folder (a notebook's); None for a path that names
    no folder that exists."""
    if path.startswith("<"):
        return Path(os.getcwd())
    folder = Path(path).resolve().parent
    return folder if folder.is_dir() else None


def _in_folder(folder: Path, name: str) -> bool:
    if (folder / name / "__init__.py").is_file() or (folder / f"{name}.py").is_file():
        return True
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    return any((folder / f"{name}{suffix}").is_file() for suffix in suffixes)


class SiblingFinder(importlib.abc.MetaPathFinder):
    """Finds only ``names`` (top-level modules), only in ``folder``; placed last on
    ``sys.meta_path``, so it answers only for what nothing installed provides."""

    def __init__(self, folder: Path, names: set[str]) -> None:
        self.folder = folder
        self.names = set(names)

    def find_spec(
        self, fullname: str, path: Any = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if path is not None or fullname not in self.names:
            return None
        return importlib.machinery.PathFinder.find_spec(fullname, [str(self.folder)])

    def __repr__(self) -> str:
        return f"SiblingFinder({str(self.folder)!r}, {sorted(self.names)})"


def allow_sibling_imports(source: str, path: str) -> list[str]:
    """Make the modules ``source`` imports from its own folder (``problem_folder(path)``)
    importable in this process, after every installed package; the names so served (empty
    when the problem imports nothing from its folder: then the folder stays off)."""
    folder = problem_folder(path)
    if folder is None:
        return []
    names = {name for name in imported_names(source) if _in_folder(folder, name)}
    if not names:
        return []
    for finder in sys.meta_path:
        if isinstance(finder, SiblingFinder) and finder.folder == folder:
            finder.names |= names
            break
    else:
        sys.meta_path.append(SiblingFinder(folder, names))
    return sorted(names)
