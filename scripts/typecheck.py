"""Type-check the package as it installs, so mypy sees every seam.

``agents/`` and ``verify/`` live at the top of the repository but install as
``kernelopt_jupyter.agents`` and ``kernelopt_jupyter.verify`` (setuptools ``package-dir``).
mypy cannot follow that remapping (nor setuptools' editable finder), so it would type every
import of those subpackages ``Any``. This script builds the installed layout as a tree of
symbolic links under ``.typecheck/`` (``kernelopt_jupyter/`` with ``agents`` and ``verify``
linked in), runs mypy on it with the project's configuration, and reports paths as they are
in the repository. pyproject.toml has no global ``ignore_missing_imports``: an internal module
that cannot be found is an error, so a seam that goes blind fails this check.

Usage: ``python scripts/typecheck.py [extra mypy args]``; exit status is mypy's.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "kernelopt_jupyter"
# Installed subpackage name -> folder in the repository (mirrors pyproject's package-dir).
REMAPPED = {"agents": ROOT / "agents", "verify": ROOT / "verify"}
SKIP = {"__pycache__", "labextension_build"}


def build_tree(dest: Path) -> Path:
    """The installed layout of the package under ``dest`` (links into the repository)."""
    if dest.exists():
        shutil.rmtree(dest)
    pkg = dest / PACKAGE
    pkg.mkdir(parents=True)
    for entry in sorted((ROOT / PACKAGE).iterdir()):
        if entry.name in SKIP or entry.name in REMAPPED:
            continue
        (pkg / entry.name).symlink_to(entry)
    for name, folder in REMAPPED.items():
        (pkg / name).symlink_to(folder)
    return dest


def main(argv: list[str]) -> int:
    """Build the tree, run mypy on it, print findings with repository paths."""
    tree = build_tree(ROOT / ".typecheck")
    env = dict(os.environ, MYPYPATH=str(tree))
    cmd = [
        sys.executable,
        "-m",
        "mypy",
        "--config-file",
        str(ROOT / "pyproject.toml"),
        "-p",
        PACKAGE,
        *argv,
    ]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    # Report repository paths, not link paths.
    prefix = re.escape(str(tree / PACKAGE)) + r"|" + re.escape(f".typecheck/{PACKAGE}")
    for name in REMAPPED:
        out = re.sub(rf"({prefix})/{name}/", f"{name}/", out)
    out = re.sub(rf"({prefix})/", f"{PACKAGE}/", out)
    sys.stdout.write(out)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
