"""Run a task in a separate Python process with a time limit.

Untrusted code (candidates an LLM or a person wrote) and anything that may crash the process
(a CUDA illegal address poisons the whole context, a segfault kills it) runs here, never in the
caller. A task is named by ``"package.module:function"``; it receives keyword arguments and
returns plain picklable data. The payload and the result travel through files, not the
child's stdout, so a candidate that prints cannot corrupt them.

Run as ``python -m kernelopt_jupyter.worker PAYLOAD RESULT``.
"""

from __future__ import annotations

import importlib
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelopt_jupyter.device import Device, interpreter_env

#: How much of the child's stderr is kept for diagnostics.
STDERR_TAIL = 4000


@dataclass
class WorkerResult:
    """What came back from a worker: a value, or why there is none."""

    ok: bool
    value: Any = None
    error: str = ""
    error_type: str = ""
    traceback: str = ""
    timed_out: bool = False
    exitcode: int | None = None
    stderr: str = ""
    seconds: float = 0.0

    def describe(self) -> str:
        """One line for a gate's detail."""
        if self.ok:
            return "ok"
        if self.timed_out:
            return f"timed out after {self.seconds:.1f} s (the candidate hung or ran too long)"
        if self.error:
            return f"{self.error_type}: {self.error}"
        if self.exitcode is not None and self.exitcode < 0:
            try:
                name = signal.Signals(-self.exitcode).name
            except ValueError:
                name = f"signal {-self.exitcode}"
            return f"worker process died with {name}" + _last_line(self.stderr)
        return f"worker process exited with code {self.exitcode}" + _last_line(self.stderr)


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return f": {lines[-1][:300]}" if lines else ""


def run_task(
    task: str,
    kwargs: dict[str, Any],
    *,
    device: Device,
    time_limit_s: float = 120.0,
    extra_env: dict[str, str] | None = None,
) -> WorkerResult:
    """Run ``task(**kwargs)`` in a fresh process on ``device``; never raises for task failures."""
    env = interpreter_env(device)
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault(
        "TORCHINDUCTOR_CACHE_DIR", str(Path(tempfile.gettempdir()) / "kernelopt-inductor")
    )
    if extra_env:
        env.update(extra_env)
    with tempfile.TemporaryDirectory(prefix="kernelopt-worker-") as tmp:
        env["KERNELOPT_SRC_DIR"] = str(Path(tmp) / "src")
        payload = Path(tmp) / "payload.pkl"
        result = Path(tmp) / "result.pkl"
        payload.write_bytes(pickle.dumps({"task": task, "kwargs": kwargs}))
        start = time.monotonic()
        with open(Path(tmp) / "stderr.txt", "w+b") as err:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "kernelopt_jupyter.worker",
                    str(payload),
                    str(result),
                ],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,  # so a timeout kills the candidate's children too
            )
            try:
                proc.wait(timeout=time_limit_s)
                timed_out = False
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                timed_out = True
            seconds = time.monotonic() - start
            err.seek(0)
            stderr = err.read().decode(errors="replace")[-STDERR_TAIL:]
        if timed_out:
            return WorkerResult(False, timed_out=True, seconds=seconds, stderr=stderr)
        if proc.returncode == 0 and result.exists():
            outcome = pickle.loads(result.read_bytes())
            return WorkerResult(
                ok=outcome["ok"],
                value=outcome.get("value"),
                error=outcome.get("error", ""),
                error_type=outcome.get("error_type", ""),
                traceback=outcome.get("traceback", ""),
                exitcode=0,
                stderr=stderr,
                seconds=seconds,
            )
        return WorkerResult(False, exitcode=proc.returncode, stderr=stderr, seconds=seconds)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _resolve(task: str) -> Any:
    module_name, _, func_name = task.partition(":")
    return getattr(importlib.import_module(module_name), func_name)


def _true_fp32() -> None:
    """fp32 means fp32: TF32 off for matmuls and cuDNN in every worker (baselines, harvest,
    gates alike), so a candidate cannot gain speed from a precision the reference never used.
    ``KERNELOPT_ALLOW_TF32=1`` keeps PyTorch's defaults instead."""
    if os.environ.get("KERNELOPT_ALLOW_TF32") == "1":
        return
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def main(argv: list[str]) -> int:
    """Child side: load the payload, run the task, write the outcome."""
    payload_path, result_path = argv
    request = pickle.loads(Path(payload_path).read_bytes())
    try:
        _true_fp32()
        value = _resolve(request["task"])(**request["kwargs"])
        outcome: dict[str, Any] = {"ok": True, "value": value}
    except BaseException as exc:  # report everything, including SystemExit from a candidate
        outcome = {
            "ok": False,
            "error": str(exc)[:2000] or repr(exc),
            "error_type": type(exc).__name__,
            "traceback": traceback.format_exc()[-STDERR_TAIL:],
        }
    try:
        data = pickle.dumps(outcome)
    except Exception as exc:
        data = pickle.dumps(
            {"ok": False, "error": f"result not picklable: {exc}", "error_type": "WorkerError"}
        )
    Path(result_path).write_bytes(data)
    sys.stdout.flush()
    # Skip interpreter teardown: a candidate's threads or CUDA state must not hang the exit.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
