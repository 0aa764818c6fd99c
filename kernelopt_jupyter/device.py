"""Device choice: ``auto`` means CUDA when a GPU is present, else the CPU and Triton's interpreter."""

from __future__ import annotations

import os
from typing import Literal

Device = Literal["cpu", "cuda"]


class DeviceError(Exception):
    """The requested device cannot be used here (a user error: one line)."""


def resolve_device(requested: str = "auto") -> Device:
    """Map ``auto|cpu|cuda`` to a concrete device, checking that CUDA is really there."""
    import torch

    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda":
        if not torch.cuda.is_available():
            raise DeviceError("--device cuda: no CUDA GPU is visible on this machine")
        return "cuda"
    if requested == "cpu":
        return "cpu"
    raise DeviceError(f"unknown device {requested!r}; use auto, cpu or cuda")


def interpreter_env(device: Device) -> dict[str, str]:
    """Environment a worker needs for ``device``: the Triton interpreter on the CPU."""
    env = dict(os.environ)
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"
    else:
        env.pop("TRITON_INTERPRET", None)
    return env


#: Seconds a process waits for another's timed work on the same GPU before it goes on beside
#: it (and says so): a verification, or the analysis's profiling, of another search.
GPU_LOCK_WAIT_S = 60.0


def _gpu_key() -> str:
    """The visible GPU's identity (its UUID where torch reports one) as a file-name part."""
    import torch

    index = torch.cuda.current_device()
    uuid = getattr(torch.cuda.get_device_properties(index), "uuid", None)
    raw = str(uuid) if uuid else f"{os.environ.get('CUDA_VISIBLE_DEVICES', 'all')}-{index}"
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in raw)[:80]


class GpuLock:
    """One process's exclusive hold on its GPU for timed work, across processes: an advisory
    ``flock`` on a file per GPU in the temp folder, released by ``release`` or when the
    process ends (killed included). A search gates its first candidate while the harvest
    compiles (``session.optimization``); the verification (its performance gate times
    rounds) and the analysis's profiling each hold this, so neither times beside the other.

    Not a security boundary: a process that ignores it only perturbs timings, and every
    reported speedup comes from a performance gate that holds it."""

    def __init__(self, key: str | None = None) -> None:
        self.key = key  # None: this process's visible GPU (``_gpu_key``)
        self._fd: int | None = None
        self.waited_s = 0.0
        self.shared = False  # True: timed beside another holder (the wait ran out)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, wait_s: float = GPU_LOCK_WAIT_S) -> bool:
        """Hold the lock (waiting up to ``wait_s``); False where it could not be had."""
        if self._fd is not None:
            return True
        try:
            import fcntl
            import tempfile
            import time
            from pathlib import Path

            path = Path(tempfile.gettempdir()) / f"kernelopt-gpu-{self.key or _gpu_key()}.lock"
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except (ImportError, OSError, RuntimeError, AssertionError):
            return False  # no flock here, or the file is another user's: time as before
        start = time.monotonic()
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() - start >= wait_s:
                    os.close(fd)
                    self.waited_s, self.shared = time.monotonic() - start, True
                    return False
                time.sleep(0.02)
                continue
            except OSError:
                os.close(fd)
                return False
            self._fd, self.waited_s = fd, time.monotonic() - start
            return True

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the only descriptor of the open file releases the flock


#: This process's hold, for work that takes and releases it in different functions (the
#: analysis worker: its dispatch step takes it once the harvest has compiled, and the step
#: loop releases it).
GPU_LOCK = GpuLock()
