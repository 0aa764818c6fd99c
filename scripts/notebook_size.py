"""Measure the saved size of a notebook with three KernelOPT panels, widget state on and off.

Runs the browser test tests/browser/test_notebook_size.py (JupyterLab in headless Chromium,
/usr/bin/chromium or KERNELOPT_CHROMIUM), which saves the notebook through JupyterLab with
ipywidgets' "Save Widget State Automatically" on, and writes what it measured to
benchmarks/results/notebook_size.json (or the path given as the first argument).

    python scripts/notebook_size.py [OUT.json]
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "notebook_size.json"


def main(argv: list[str]) -> int:
    """Run the measuring test; print and keep its result. Returns the test's exit status."""
    out = Path(argv[0]).resolve() if argv else DEFAULT_OUT
    env = dict(os.environ, KERNELOPT_NOTEBOOK_SIZE_OUT=str(out))
    test = "tests/browser/test_notebook_size.py"
    cmd = [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", test]
    status = subprocess.call(cmd, cwd=ROOT, env=env)
    if status == 0:
        print(out.read_text(), end="")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
