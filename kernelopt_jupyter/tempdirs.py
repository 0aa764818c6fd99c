"""Temporary folders that go when the process that made them ends.

Every temporary folder of the project (``kernelopt-src-*``, ``kernelopt-worker-*``,
``kernelopt-service-*``, ``kernelopt-ncu-*``) is made here and recorded with the process that
made it. A folder is removed when its owner is done with it (``TempDir.cleanup``, the end of a
``with`` block, an exception through it) and, whatever is left, when that process ends:

* a normal exit (the end of the program, ``sys.exit``, an uncaught exception): ``atexit``;
* SIGTERM, where the process asked for it (``remove_on_sigterm``: the CLI, a bench worker) or
  is a worker (``worker._on_term``): everything below the process is killed first, so no
  worker writes into a folder while it goes, then the folders are removed and the process
  exits with status 128 + 15;
* a worker's own exit (``os._exit`` after its task, which skips ``atexit``): ``remove_all``.

SIGKILL (and a machine that stops) leaves them: nothing runs then. A forked child inherits the
record but not the ownership: only the process that made a folder removes it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import tempfile
import threading
from types import TracebackType
from typing import Any

#: Folder -> pid of the process that made it.
_owned: dict[str, int] = {}
_lock = threading.Lock()


def make(prefix: str, dir: str | None = None) -> str:
    """A new temporary folder (``tempfile.mkdtemp``), removed at the latest when this
    process ends."""
    path = tempfile.mkdtemp(prefix=prefix, dir=dir)
    with _lock:
        _owned[path] = os.getpid()
    return path


def remove(path: str) -> None:
    """Remove ``path`` (made by ``make``) now; errors are ignored (it may be gone already)."""
    with _lock:
        _owned.pop(path, None)
    shutil.rmtree(path, ignore_errors=True)


def remove_all() -> None:
    """Remove every folder this process made and has not removed yet."""
    me = os.getpid()
    with _lock:
        mine = [path for path, pid in _owned.items() if pid == me]
        for path in mine:
            del _owned[path]
    for path in mine:
        shutil.rmtree(path, ignore_errors=True)


def owned() -> list[str]:
    """The folders this process made and has not removed yet (for tests)."""
    me = os.getpid()
    with _lock:
        return [path for path, pid in _owned.items() if pid == me]


class TempDir:
    """``tempfile.TemporaryDirectory`` through ``make``: ``name``, ``cleanup()``, and a
    ``with`` block whose value is the folder's path (removed at its end, exceptions
    included)."""

    def __init__(self, prefix: str) -> None:
        self.name = make(prefix)

    def cleanup(self) -> None:
        remove(self.name)

    def __enter__(self) -> str:
        return self.name

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.cleanup()


def on_sigterm(signum: int, frame: Any) -> None:
    """SIGTERM: kill everything below this process, remove its folders, exit 128 + signum."""
    from kernelopt_jupyter.worker import kill_tree

    with contextlib.suppress(Exception):
        kill_tree(os.getpid(), include_self=False)
    remove_all()
    os._exit(128 + signum)


def remove_on_sigterm() -> bool:
    """Make SIGTERM end this process through ``on_sigterm`` (its temporary folders removed),
    where SIGTERM would otherwise end it at once (the default action) and this is the main
    thread; whether it was set. A front end with a handler of its own keeps it."""
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return False
    signal.signal(signal.SIGTERM, on_sigterm)
    return True


atexit.register(remove_all)
