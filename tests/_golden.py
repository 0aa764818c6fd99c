"""Golden files: output compared byte for byte with tests/golden/<name>.

``KERNELOPT_UPDATE_GOLDEN=1`` rewrites the files instead of comparing (review the diff, then
commit it). Callers normalise what is not deterministic before comparing.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"
UPDATE_ENV = "KERNELOPT_UPDATE_GOLDEN"


def assert_golden(name: str, text: str) -> None:
    """``text`` equals tests/golden/<name>; with ``KERNELOPT_UPDATE_GOLDEN=1`` it becomes it."""
    path = GOLDEN / name
    if os.environ.get(UPDATE_ENV) == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    if not path.is_file():
        raise AssertionError(f"{path} missing: run with {UPDATE_ENV}=1 to create it")
    expected = path.read_text()
    if text != expected:
        diff = difflib.unified_diff(
            expected.splitlines(True), text.splitlines(True), "golden", "now"
        )
        raise AssertionError(
            f"{path} differs; if the change is intended, refresh with {UPDATE_ENV}=1:\n"
            + "".join(diff)
        )
