"""Which pytest-xdist worker group each test belongs to, and the scheduler that keeps a group
on one worker (``--dist loadgroup``, scripts/test.sh).

xdist's own loadgroup reads ``xdist_group`` marks by appending the group to each test's node
id; pytest 9 no longer takes a node id changed that way, and every test was a group of its
own: a file's module fixtures and cached verifications were made on both workers. Here the
controller groups the node ids itself, from their file, with nothing to append.
"""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest
from xdist.scheduler import LoadScopeScheduling

#: Files whose tests are shared out between the workers in this many parts: whole, the
#: adversarial corpus (each case a verification of its own) took one worker about as long as
#: every other file took the other, and was the suite's critical path.
SPLIT_FILES = {"test_adversarial.py": 2}
#: Folders whose tests form one group, and the seconds each of their tests takes: they share
#: session fixtures that are costly to start (tests/browser/: a JupyterLab server and a
#: Chromium), started once instead of once per worker.
SHARED_FOLDERS = {"browser": 35.0}


def unit(path: str) -> str:
    """The file at ``path``, or the folder of ``SHARED_FOLDERS`` that holds it."""
    file = PurePosixPath(path)
    return str(file.parent) if file.parent.name in SHARED_FOLDERS else path


def group(path: str, index: int) -> str:
    """The group of the ``index``-th test (counted from 0) of the file at ``path``."""
    parts = SPLIT_FILES.get(PurePosixPath(path).name, 1)
    return unit(path) if parts == 1 else f"{path}:{index % parts}"


class FileGroupScheduling(LoadScopeScheduling):
    """xdist's scope scheduling with ``group`` as the scope, the groups taken in the order of
    the collection (tests/conftest.py puts the longest first)."""

    def __init__(self, config: pytest.Config, log: object = None) -> None:
        super().__init__(config, log)  # type: ignore[arg-type]
        self._groups: dict[str, str] = {}

    def _split_scope(self, nodeid: str) -> str:
        if not self._groups:
            seen: dict[str, int] = {}
            for test in self.collection or []:
                path = test.split("::", 1)[0]
                self._groups[test] = group(path, seen.get(path, 0))
                seen[path] = seen.get(path, 0) + 1
        return self._groups[nodeid]
