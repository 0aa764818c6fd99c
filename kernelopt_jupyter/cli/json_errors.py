"""``--json`` keeps its promise on bad input: exactly one JSON object on stdout.

A command that fails before it has a result (exit 2: a missing file, no ``Model``, an unknown
flag) writes its one-line error on stderr; with ``--json`` the same line also becomes the
object ``{"schema": 1, "error": "...", "exit": 2}`` on stdout, so a script parsing stdout gets
JSON either way.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

SCHEMA = 1


class _Tee(io.TextIOBase):
    """Writes through to a stream and remembers what went by."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.seen: list[str] = []

    def write(self, text: str) -> int:
        self.seen.append(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()


def error_object(stderr_text: str, code: int) -> str:
    """The JSON line for a failure whose stderr said ``stderr_text``."""
    lines = [line.strip() for line in stderr_text.splitlines() if line.strip()]
    message = lines[-1] if lines else f"failed with exit code {code}"
    return json.dumps({"schema": SCHEMA, "error": message, "exit": code})


@contextmanager
def _watched() -> Iterator[tuple[_Tee, _Tee]]:
    out, err = _Tee(sys.stdout), _Tee(sys.stderr)
    sys.stdout, sys.stderr = out, err  # type: ignore[assignment]
    try:
        yield out, err
    finally:
        sys.stdout, sys.stderr = out.stream, err.stream  # type: ignore[assignment]


def run_with_json_errors(run: Callable[[], int]) -> int:
    """Run a ``--json`` command; when it exits 2 without a JSON answer, print the error one."""
    with _watched() as (out, err):
        try:
            code = run()
        except SystemExit as exc:  # argparse and early exits
            code = exc.code if isinstance(exc.code, int) else 2
    if code == 2 and not "".join(out.seen).strip():
        print(error_object("".join(err.seen), code))
    return code
