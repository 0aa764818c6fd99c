"""Tasks the worker tests run in a child process."""

from __future__ import annotations

import os
import threading
import time
from typing import Any


def echo(value: Any) -> dict[str, Any]:
    """Return the value and whether the Triton interpreter was switched on."""
    return {"value": value, "interpret": os.environ.get("TRITON_INTERPRET")}


def hang() -> None:
    """Never return, with a non-daemon thread that would also block a normal exit."""
    threading.Thread(target=time.sleep, args=(3600,)).start()
    time.sleep(3600)


def fail() -> None:
    """Raise like a broken candidate."""
    raise RuntimeError("candidate exploded")
