"""Which processes a test left running: live processes below the test process, its
launchers excepted (``kernelopt_jupyter.launcher``: they stay up between workers by design;
the workers they fork are counted). A process started during the test by another process
that was already there (a browser a fixture opened earlier in this pytest worker, starting a
helper of its own mid-test) is not the test's."""

from __future__ import annotations

import os
import time
from pathlib import Path

from kernelopt_jupyter.launcher import launcher_pids
from kernelopt_jupyter.worker import _parents, descendants


def below_us() -> set[int]:
    """Live processes below this test process, but its launchers."""
    return set(descendants(os.getpid())) - set(launcher_pids())


def _describe(pid: int) -> str:
    try:
        cmd = (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return f"{pid} (gone)"
    return f"{pid} [{state}] {cmd.strip()[:200]}"


def left_running(before: set[int], wait_s: float = 5.0) -> list[str]:
    """The processes below us that were not there ``before`` and are still alive after up to
    ``wait_s`` seconds (a killed tree takes a moment to be reaped), each with its state and
    command line; empty when none."""
    end = time.monotonic() + wait_s
    left = _started_by_us(below_us() - before, before)
    while left and time.monotonic() < end:
        time.sleep(0.1)
        left = _started_by_us(below_us() - before, before)
    return [_describe(pid) for pid in sorted(left)]


def _started_by_us(new: set[int], before: set[int]) -> set[int]:
    """Of the processes ``new`` since ``before``, those whose nearest ancestor that was
    already there is this process or one of its launchers (the launchers fork the workers)."""
    parents = _parents()
    ours = {os.getpid(), *launcher_pids()}
    kept = set()
    for pid in new:
        up = parents.get(pid)
        while up is not None and up not in ours and up not in before:
            up = parents.get(up)
        if up in ours:
            kept.add(pid)
    return kept
