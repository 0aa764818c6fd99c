"""The device's timing lock (``device.GpuLock``): one holder at a time across processes, a
bounded wait that says when it ran out, and a holder's death releases it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

from kernelopt_jupyter.device import GpuLock

HOLD = """
import sys, time
from kernelopt_jupyter.device import GpuLock
lock = GpuLock(sys.argv[1])
assert lock.acquire(wait_s=5.0)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
lock.release()
"""


def _holder(key: str, seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, key, str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_one_holder_at_a_time_and_a_wait_that_runs_out_is_said() -> None:
    key = f"test-{uuid.uuid4().hex[:8]}"
    holder = _holder(key, 60.0)
    try:
        lock = GpuLock(key)
        assert not lock.acquire(wait_s=0.3)
        assert lock.shared and lock.waited_s >= 0.3 and not lock.held
    finally:
        holder.kill()
        holder.wait()


def test_a_waiter_gets_it_when_the_holder_releases() -> None:
    key = f"test-{uuid.uuid4().hex[:8]}"
    holder = _holder(key, 0.5)
    lock = GpuLock(key)
    try:
        assert lock.acquire(wait_s=30.0)
        assert lock.held and not lock.shared and lock.waited_s > 0.0
        assert holder.wait(timeout=30) == 0  # it had released before the waiter got it
    finally:
        lock.release()
    assert not lock.held


def test_a_killed_holder_leaves_the_lock_free() -> None:
    key = f"test-{uuid.uuid4().hex[:8]}"
    holder = _holder(key, 60.0)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    lock = GpuLock(key)
    started = time.monotonic()
    assert lock.acquire(wait_s=10.0)
    assert time.monotonic() - started < 5.0
    lock.release()


def test_reentry_in_one_process_is_a_no_op() -> None:
    lock = GpuLock(f"test-{uuid.uuid4().hex[:8]}")
    assert lock.acquire(wait_s=0.1) and lock.acquire(wait_s=0.1)
    lock.release()
    lock.release()  # idempotent
    assert not lock.held
