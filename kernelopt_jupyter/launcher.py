"""Workers started by fork from a process that already imported torch, Triton and the project.

Starting a worker (``worker.run_task``, ``worker.start_service``) is a new Python process that
imports torch, ``torch._dynamo`` and Triton before it does anything: 4-9 seconds of CPU per
worker, most of a CPU verification's time (``kernelopt verify`` on a small problem: 10 s, of
which the checks are 1 s). A *launcher* is a process, started once per caller and worker
environment, that has done those imports and then only forks: each worker is a fresh child of
it, as clean as a new process (it ran nothing but imports), in a session of its own, with the
environment the caller gave it and every descriptor closed but the ones it is handed.

* The launcher is started like a worker (the same scrubbed environment, its own session) and
  dies with its caller. It never runs a task, never initialises CUDA and never touches a
  tensor; a candidate cannot reach it: the worker's child closes the launcher's socket before
  anything else, and candidate processes are forked below the worker.
* Its environment *is* the worker's (one launcher per distinct environment, a few at most),
  so what a module read at import time is what a fresh process would have read.
* The caller gets a process handle with ``pid``, ``poll``, ``wait`` and ``returncode``, like
  ``subprocess.Popen``: the launcher reaps its children and reports each exit status.

Launchers serve CPU workers by default (``KERNELOPT_LAUNCHER``: ``cpu``, ``all`` or ``0``).
A worker on the GPU is started as a new process until this path has been measured there.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import socket
import subprocess
import sys
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

#: Modules a launcher imports before it forks its first worker (Triton imports its Gluon
#: frontend at a kernel's first launch, a tenth of a second in every worker otherwise; a
#: Triton without it is skipped).
PRELOAD = (
    "torch",
    "torch._dynamo",
    "triton",
    "triton.experimental.gluon",
    "kernelopt_jupyter.worker",
)
#: Launchers kept per caller (one per distinct worker environment); the oldest goes first.
MAX_LAUNCHERS = 3
#: Variables that differ from worker to worker; the launcher's environment has none of them.
PER_WORKER = (
    "KERNELOPT_SRC_DIR",
    "KERNELOPT_WORKER_PARENT",
    "KERNELOPT_CONTROL_FD",
    "KERNELOPT_PAYLOAD",
)
_MESSAGE = 1 << 20


class LaunchError(Exception):
    """The launcher could not start a worker (the caller then starts a process itself)."""


def enabled(device: str) -> bool:
    """Whether workers for ``device`` come from a launcher (``KERNELOPT_LAUNCHER``)."""
    mode = os.environ.get("KERNELOPT_LAUNCHER", "cpu").strip().lower()
    if mode in ("0", "off", "no", "false") or not sys.platform.startswith("linux"):
        return False
    return mode == "all" or (mode == "cpu" and device == "cpu")


class Launched:
    """A worker a launcher forked, as the caller sees it (the subset of ``Popen`` it uses)."""

    def __init__(self, launcher: Launcher, pid: int) -> None:
        self.launcher = launcher
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.launcher.exit_status(self.pid, 0.0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            code = self.launcher.exit_status(self.pid, timeout)
            if code is None:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0.0)
            self.returncode = code
        return self.returncode


class Launcher:
    """The caller's side of one launcher process."""

    def __init__(self, env: dict[str, str]) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        launch_env = {**env, "KERNELOPT_WORKER_PARENT": str(os.getpid())}
        from kernelopt_jupyter.import_path import python_command
        from kernelopt_jupyter.worker import from_lasting_thread

        # Started from a thread that lasts: it dies with that thread (``die_with_parent``).
        self.proc = from_lasting_thread(
            lambda: subprocess.Popen(
                python_command("-m", "kernelopt_jupyter.launcher", str(theirs.fileno())),
                env=launch_env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                pass_fds=(theirs.fileno(),),
            )
        )
        theirs.close()
        self.sock = ours
        self._send = threading.Lock()
        self._cond = threading.Condition()
        self._spawned: dict[int, dict[str, Any]] = {}
        self._exits: dict[int, int] = {}
        self._next = 0
        self.dead = False
        threading.Thread(target=self._read, name="kernelopt-launcher", daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                data = self.sock.recv(_MESSAGE)
            except OSError:
                data = b""
            if not data:
                with self._cond:
                    self.dead = True
                    self._cond.notify_all()
                return
            message = pickle.loads(data)  # from our own launcher, which runs no task
            with self._cond:
                if "exit" in message:
                    self._exits[int(message["exit"])] = int(message["status"])
                else:
                    self._spawned[int(message["id"])] = message
                self._cond.notify_all()

    def spawn(
        self, argv: list[str], env: dict[str, str], stderr: str, fds: tuple[int, ...] = ()
    ) -> Launched:
        """Fork a worker running ``python -m kernelopt_jupyter.worker *argv`` with ``env``,
        stderr appended to the file ``stderr``, and the descriptors ``fds`` (in order, their
        numbers in the worker given as ``KERNELOPT_CONTROL_FD`` for the first)."""
        with self._cond:
            if self.dead:
                raise LaunchError("the launcher is gone")
            self._next += 1
            ident = self._next
        request = pickle.dumps({"id": ident, "argv": argv, "env": env, "stderr": stderr})
        try:
            with self._send:
                socket.send_fds(self.sock, [request], list(fds))
        except OSError as exc:
            raise LaunchError(f"the launcher did not take the request ({exc})") from None
        with self._cond:
            ok = self._cond.wait_for(lambda: ident in self._spawned or self.dead, timeout=30.0)
            reply = self._spawned.pop(ident, None)
        if not ok or reply is None or "pid" not in reply:
            raise LaunchError(str((reply or {}).get("error", "the launcher did not answer")))
        return Launched(self, int(reply["pid"]))

    def exit_status(self, pid: int, timeout: float | None) -> int | None:
        """The worker's exit code (negative: killed by that signal), or None if still running
        after ``timeout`` seconds."""
        with self._cond:
            self._cond.wait_for(lambda: pid in self._exits or self.dead, timeout=timeout)
            if pid in self._exits:
                return self._exits.pop(pid)
            if self.dead:
                return -int(signal.SIGKILL)  # the launcher took its children with it
            return None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=3.0)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


_launchers: OrderedDict[tuple[tuple[str, str], ...], Launcher] = OrderedDict()
_lock = threading.Lock()


def _key(env: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in env.items() if k not in PER_WORKER))


def launcher_for(env: dict[str, str]) -> Launcher:
    """This caller's launcher for workers with ``env`` (started on first use)."""
    key = _key(env)
    with _lock:
        found = _launchers.get(key)
        if found is not None and not found.dead and found.proc.poll() is None:
            _launchers.move_to_end(key)
            return found
        if found is not None:
            del _launchers[key]
        while len(_launchers) >= MAX_LAUNCHERS:
            _, oldest = _launchers.popitem(last=False)
            oldest.close()
        if not _launchers:
            import atexit

            atexit.register(shutdown)
        made = Launcher(dict(key))
        _launchers[key] = made
        return made


def launcher_pids() -> list[int]:
    """The pids of this caller's launchers (processes that stay up between workers)."""
    with _lock:
        return [launcher.proc.pid for launcher in _launchers.values()]


def shutdown() -> None:
    """End every launcher of this caller."""
    with _lock:
        while _launchers:
            _, launcher = _launchers.popitem()
            launcher.close()


# ---------------------------------------------------------------------------- launcher side


def _child(message: dict[str, Any], fds: list[int], control: socket.socket) -> None:
    """In the forked child: become a fresh worker process, then run the worker's main."""
    try:
        os.setsid()
        control.close()
        keep = set(fds)
        devnull = os.open(os.devnull, os.O_RDWR)
        err = os.open(message["stderr"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        os.dup2(err, 2)
        for fd in (devnull, err):
            if fd > 2 and fd not in keep:
                os.close(fd)
        os.closerange(3, min(keep, default=65536))
        for a, b in zip(sorted(keep), [*sorted(keep)[1:], 65536]):
            os.closerange(a + 1, b)
        env = dict(message["env"])
        env["KERNELOPT_WORKER_PARENT"] = str(os.getppid())
        if fds:
            env["KERNELOPT_CONTROL_FD"] = str(fds[0])
        os.environ.clear()
        os.environ.update(env)
        for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        sys.argv = [str(Path(__file__).with_name("worker.py")), *message["argv"]]
        from kernelopt_jupyter import worker

        worker.main(list(message["argv"]))
    except BaseException:
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
    os._exit(0)


def _serve(control: socket.socket) -> None:
    children: set[int] = set()
    while True:
        ready, _, _ = select.select([control], [], [], 0.1)
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            children.discard(pid)
            code = os.waitstatus_to_exitcode(status)
            with contextlib.suppress(OSError):
                control.send(pickle.dumps({"exit": pid, "status": code}))
        if not ready:
            continue
        try:
            data, fds, _, _ = socket.recv_fds(control, _MESSAGE, 4)
        except OSError:
            return
        if not data:
            return  # the caller is gone
        message = pickle.loads(data)  # from the caller that started this launcher
        try:
            pid = os.fork()
        except OSError as exc:
            control.send(pickle.dumps({"id": message["id"], "error": f"fork failed: {exc}"}))
            for fd in fds:
                os.close(fd)
            continue
        if pid == 0:
            _child(message, fds, control)
        for fd in fds:
            os.close(fd)
        children.add(pid)
        control.send(pickle.dumps({"id": message["id"], "pid": pid}))


def main(argv: list[str]) -> None:
    """Launcher side: import, then fork a worker per request until the caller goes."""
    from kernelopt_jupyter import worker

    control = socket.socket(fileno=int(argv[0]))
    signal.signal(signal.SIGTERM, worker._on_term)
    parent = os.environ.pop("KERNELOPT_WORKER_PARENT", "")
    if parent.isdigit():
        worker.die_with_parent(int(parent))
    import importlib

    for module in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(module)
    _serve(control)
    worker.kill_tree(os.getpid(), include_self=False)
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
