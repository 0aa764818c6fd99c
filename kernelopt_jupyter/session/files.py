"""Writing a session's files so that a kill at any moment leaves a whole file behind."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from kernelopt_jupyter.secrets import redact


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one rename: a reader sees the old file or the new one,
    never half of either (the temporary file sits beside it, on the same filesystem).
    Secrets are redacted first: a gate's detail may quote what a candidate printed."""
    text = redact(text)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
