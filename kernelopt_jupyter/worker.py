"""Run a task in a separate Python process with a time limit; no process outlives its result.

Untrusted code (candidates an LLM or a person wrote) and anything that may crash the process
(a CUDA illegal address poisons the whole context, a segfault kills it) runs here, never in the
caller. A task is named by ``"package.module:function"``; it receives keyword arguments and
returns plain picklable data. The payload and the result travel through files, not the
child's stdout, so a candidate that prints cannot corrupt them.

What every worker gets, whoever starts it:

* a scrubbed environment (``scrubbed_env``): only what Python, torch, Triton and CUDA need;
  no API keys, tokens, secrets or credentials, whatever the caller's environment holds;
* the installed packages before anything of the user's folder (``import_path``): the
  working folder is never on its ``sys.path`` (``python -P``, ``PYTHONSAFEPATH=1``), nor a
  ``PYTHONPATH`` entry inside it, so a ``z3/`` or ``triton/`` folder there is never imported;
  a problem's own sibling modules still import (``import_path.allow_sibling_imports``);
* a temporary folder of its own, removed when it ends, and every temporary folder it makes
  removed when it ends too (``tempdirs``);
* its own session and process group, and it is a child subreaper, so whatever the task forks
  stays findable below it;
* death with its parent: ``PR_SET_PDEATHSIG`` plus a watchdog that polls ``os.getppid()``;
  either way the worker kills everything below it before it goes;
* on a timeout the caller sends SIGTERM to the whole tree, waits a moment, then SIGKILL (a
  loop of interpreted launches does not stop on SIGTERM alone).

A task that ran untrusted code (``untrusted=True``) has its result read by a restricted
unpickler: the candidate could have written the result file itself, and an unrestricted
``pickle.loads`` in the caller would run whatever it put there.

A worker on the CPU is forked by a *launcher* (``kernelopt_jupyter.launcher``), a process of
the caller's that imported torch and Triton once and does nothing but fork: the same fresh
process, seconds sooner. ``KERNELOPT_LAUNCHER=0`` starts every worker as a new process.

Run as ``python -m kernelopt_jupyter.worker PAYLOAD RESULT``.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import io
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from kernelopt_jupyter import tempdirs
from kernelopt_jupyter.device import Device, interpreter_env
from kernelopt_jupyter.import_path import python_command, worker_env
from kernelopt_jupyter.secrets import is_secret_name, looks_like_secret

#: How much of the child's stderr is kept for diagnostics.
STDERR_TAIL = 4000
#: Seconds between SIGTERM and SIGKILL when a worker is stopped.
TERM_GRACE_S = 1.0
#: How often the watchdog looks for its parent.
WATCHDOG_PERIOD_S = 0.5

# ---------------------------------------------------------------------------- environment

#: Variables a worker keeps by exact name (what Python, compilers and the platform read).
_KEEP_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
        "TEMP",
        "TMP",
        "VIRTUAL_ENV",
        "LD_LIBRARY_PATH",
        "CC",
        "CXX",
        "CPATH",
        "LIBRARY_PATH",
        "PYTHONPATH",
        "PYTHONHASHSEED",
        "PYTHONUNBUFFERED",
        "PYTHONNOUSERSITE",
        "PYTHONDONTWRITEBYTECODE",
    }
)
#: Variables a worker keeps by prefix: torch, Triton, CUDA, BLAS threads, caches, our own.
_KEEP_PREFIXES = (
    "LC_",
    "TRITON_",
    "CUDA_",
    "CUBLAS_",
    "CUDNN_",
    "NVIDIA_",
    "NCCL_",
    "TORCH",
    "PYTORCH_",
    "INDUCTOR_",
    "HELION_",
    "KERNELOPT_",
    "OMP_",
    "MKL_",
    "OPENBLAS_",
    "XDG_",
    "CONDA_",
)


def scrubbed_env(env: Mapping[str, str]) -> dict[str, str]:
    """The part of ``env`` a worker may see: an allowlist of names, minus anything secret."""
    kept = {}
    for name, value in env.items():
        if name not in _KEEP_NAMES and not name.startswith(_KEEP_PREFIXES):
            continue
        if is_secret_name(name) or looks_like_secret(value):
            continue
        kept[name] = value
    return kept


def uncached_bytecode_note(package: str = "torch") -> str:
    """A note when Python can neither read nor write a bytecode cache for ``package`` (its
    ``__init__`` has no ``.pyc`` and writing one is off, by ``PYTHONDONTWRITEBYTECODE`` or
    ``-B``, which workers inherit, or impossible, by a read-only install); "" otherwise.

    Then every worker, a new process, compiles the package's Python source again. Measured on
    the H200 machine, whose image sets ``PYTHONDONTWRITEBYTECODE=1``: importing torch,
    ``torch._dynamo``, Triton and Inductor took 13-14.5 s per process, 4.5-5 s with a bytecode
    cache. The project does not write one itself (a cache its workers import from would be one
    more file a candidate could plant code in); the note says how to write it once.
    """
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return ""
    origin = Path(spec.origin)
    if Path(importlib.util.cache_from_source(str(origin))).exists():
        return ""
    if not sys.dont_write_bytecode and os.access(origin.parent, os.W_OK):
        return ""  # the first import writes the cache
    why = "PYTHONDONTWRITEBYTECODE is set" if sys.dont_write_bytecode else "its folder is read-only"
    dirs = [str(origin.parent)]
    triton = importlib.util.find_spec("triton")
    if triton is not None and triton.origin:
        dirs.append(str(Path(triton.origin).parent))
    return (
        f"{package} has no bytecode cache here ({why}): each worker process compiles its "
        "Python source again, about 9 s more per worker start on the H200 machine. To write it "
        f"once: {Path(sys.executable).name} -m compileall -q -j 0 {' '.join(dirs)}"
    )


# ---------------------------------------------------------------------------- process trees


def _parents(zombies: bool = False) -> dict[int, int]:
    """pid -> parent pid for every live process visible in /proc (empty where there is no
    /proc). A zombie is left out unless ``zombies``: it runs nothing, cannot be signalled, and
    waits only for its parent to reap it (after a tree is killed its members are zombies for a
    moment)."""
    table: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # The command name is in parentheses and may contain spaces: split after the last ')'.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1 and (zombies or fields[0] != "Z"):
            table[int(entry)] = int(fields[1])
    return table


def descendants(pid: int, *, zombies: bool = False) -> list[int]:
    """Every live process below ``pid`` (children, grandchildren...; zombies only if asked),
    through /proc."""
    parents = _parents(zombies)
    children: dict[int, list[int]] = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.append(child)
                todo.append(child)
    return found


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def kill_tree(pid: int, *, include_self: bool = True, rounds: int = 5) -> None:
    """SIGKILL ``pid``'s process group and every process below it, until none is left.

    Repeated because a process may fork while the tree is being killed.
    """
    for _ in range(rounds):
        # Zombies too: while any is left the tree is scanned again (a process reparented or
        # forked meanwhile is still found), as this did before zombies left descendants().
        below = descendants(pid, zombies=True)
        targets = below + ([pid] if include_self else [])
        if include_self:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        _signal_all(targets, signal.SIGKILL)
        if not below:
            return
        time.sleep(0.02)


def _linux_prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def die_with_parent(parent_pid: int) -> None:
    """Make this process die when ``parent_pid`` does: the kernel's parent-death signal and a
    watchdog thread (for platforms without it, and for a parent that was already gone).

    The signal is SIGTERM, whose handler (``main``) kills everything below this process first:
    a SIGKILL would orphan what the task forked. The watchdog still acts if the handler
    cannot run (the main thread stuck in C code)."""
    _linux_prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))
    if os.getppid() != parent_pid:
        os._exit(70)

    def watch() -> None:
        while True:
            time.sleep(WATCHDOG_PERIOD_S)
            if os.getppid() != parent_pid:
                kill_tree(os.getpid(), include_self=False)
                os._exit(70)

    threading.Thread(target=watch, name="kernelopt-parent-watchdog", daemon=True).start()


def become_subreaper() -> bool:
    """Orphans of anything this process forks are re-parented here, so they can be found."""
    return _linux_prctl(PR_SET_CHILD_SUBREAPER, 1)


# ---------------------------------------------------------------------------- caller side


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


#: Globals an untrusted result may name: plain containers and the project's own classes.
_SAFE_BUILTINS = frozenset({"set", "frozenset", "complex", "slice", "range", "bytearray"})


class _PlainDataUnpickler(pickle.Unpickler):
    """Loads plain data only: no function, no foreign class, so a forged file runs nothing."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _SAFE_BUILTINS:
            return super().find_class(module, name)
        if module == "collections" and name in ("OrderedDict", "Counter"):
            return super().find_class(module, name)
        if module == "copyreg" and name == "_reconstructor":
            return super().find_class(module, name)
        if module == "kernelopt_jupyter" or module.startswith("kernelopt_jupyter."):
            value = super().find_class(module, name)
            if isinstance(value, type) and not issubclass(value, BaseException):
                return value
        raise pickle.UnpicklingError(f"a worker result may not hold {module}.{name}")


def load_plain(data: bytes) -> Any:
    """Unpickle data written by a process that ran untrusted code (plain data only)."""
    return _PlainDataUnpickler(io.BytesIO(data)).load()


def stop_process_tree(proc: Proc) -> None:
    """SIGTERM the worker's group and everything below it, then SIGKILL what is left."""
    below = descendants(proc.pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    _signal_all(below, signal.SIGTERM)
    try:
        proc.wait(timeout=TERM_GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    _signal_all(below, signal.SIGKILL)
    kill_tree(proc.pid)
    proc.wait()


def run_task(
    task: str,
    kwargs: dict[str, Any],
    *,
    device: Device,
    time_limit_s: float = 120.0,
    extra_env: dict[str, str] | None = None,
    untrusted: bool = False,
    preload: tuple[str, ...] = (),
    children: tuple[str, ...] = (),
) -> WorkerResult:
    """Run ``task(**kwargs)`` in a fresh process on ``device``; never raises for task failures.

    ``extra_env`` is added after scrubbing (the caller vouches for it). ``untrusted`` reads the
    result as plain data only (set it for tasks that run a candidate's code in the worker).

    ``children`` makes the worker a fork server: it imports ``preload`` (torch, the project:
    once), then, *before it reads the payload*, forks one child per entry (``"pkg.mod:fn"``,
    called as ``fn(sock)`` with a connected socket) and passes the task
    ``children=[(pid, socket), ...]``. A child so never holds the task's arguments, shares no
    file descriptor but its socket, runs in its own process group and dies with the worker;
    CUDA is initialised in each child, never before the fork.
    """
    with tempdirs.TempDir("kernelopt-worker-") as tmp:
        env = _prepare(tmp, task, kwargs, device, extra_env, preload, children)
        payload = Path(tmp) / "payload.pkl"
        result = Path(tmp) / "result.pkl"
        start = time.monotonic()
        with open(Path(tmp) / "stderr.txt", "w+b") as err:
            proc = _start_worker([str(payload), str(result)], env, err, device)
            try:
                proc.wait(timeout=time_limit_s)
                timed_out = False
            except subprocess.TimeoutExpired:
                stop_process_tree(proc)
                timed_out = True
            except BaseException:  # KeyboardInterrupt in the caller: leave nothing running
                stop_process_tree(proc)
                raise
            # Whatever is still in the worker's group (a daemon it forked) goes too.
            kill_tree(proc.pid)
            seconds = time.monotonic() - start
            err.seek(0)
            stderr = err.read().decode(errors="replace")[-STDERR_TAIL:]
        if timed_out:
            return WorkerResult(False, timed_out=True, seconds=seconds, stderr=stderr)
        if proc.returncode == 0 and result.exists():
            try:
                raw = result.read_bytes()
                outcome = load_plain(raw) if untrusted else pickle.loads(raw)
            except Exception as exc:
                return WorkerResult(
                    False,
                    error=f"the worker's result cannot be read ({exc})"[:500],
                    error_type="WorkerError",
                    exitcode=0,
                    stderr=stderr,
                    seconds=seconds,
                )
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


def _prepare(
    tmp: str,
    task: str | None,
    kwargs: dict[str, Any],
    device: Device,
    extra_env: dict[str, str] | None,
    preload: tuple[str, ...],
    children: tuple[str, ...],
) -> dict[str, str]:
    """Write a worker's payload and fork plan into ``tmp``; the worker's environment. With no
    ``task`` no payload is written: a service's comes over its control socket (``Service.begin``)."""
    # Never the user's folder on its sys.path (``import_path``): PYTHONSAFEPATH=1, PYTHONPATH
    # less what points into the working folder; ``extra_env`` is the caller's, kept as given.
    env = worker_env(scrubbed_env(interpreter_env(device)))
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault(
        "TORCHINDUCTOR_CACHE_DIR", str(Path(tempfile.gettempdir()) / "kernelopt-inductor")
    )
    if extra_env:
        env.update(extra_env)
    env["KERNELOPT_SRC_DIR"] = str(Path(tmp) / "src")
    env["KERNELOPT_WORKER_PARENT"] = str(os.getpid())
    if children:
        # A fork server must not initialise CUDA before it forks (a forked CUDA driver is
        # unusable): torch.cuda.is_available() then asks NVML instead of the driver.
        env.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    if task is not None:
        (Path(tmp) / "payload.pkl").write_bytes(pickle.dumps({"task": task, "kwargs": kwargs}))
    (Path(tmp) / "forks.pkl").write_bytes(
        pickle.dumps({"preload": list(preload), "children": list(children)})
    )
    return env


class ServiceError(Exception):
    """A service worker died, or answered with something that is not a reply."""


class ServiceTimeout(ServiceError):
    """A service worker did not answer in time; it has been killed with its whole tree."""


def send_frame(sock: Any, data: bytes) -> None:
    """One length-prefixed frame on a stream socket."""
    sock.sendall(len(data).to_bytes(8, "big") + data)


def recv_frame(sock: Any, limit: int = 1 << 31) -> bytes:
    """The next frame (``send_frame``); ``ServiceError`` when the peer closed or lied."""
    head = _recv_n(sock, 8)
    size = int.from_bytes(head, "big")
    if size > limit:
        raise ServiceError(f"a frame of {size} bytes is over the limit of {limit}")
    return bytes(_recv_n(sock, size))


def _recv_n(sock: Any, n: int) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ServiceError("the worker closed its connection")
        got += k
    return buf


class Service:
    """A worker that stays up and answers requests one at a time (``start_service``).

    Started like ``run_task`` (scrubbed environment, own session, a fork server's children
    forked before the payload is read), with one more thing: a socket to this process, over
    which the task reads requests (pickles from this trusted side) and writes replies, which
    are read back as plain data only. A request that is not answered in time kills the worker
    and everything below it. ``close`` ends it the same way; nothing it started survives.
    """

    def __init__(self, proc: Proc, sock: Any, tmp: Any, err: Any) -> None:
        self.proc = proc
        self.sock = sock
        self._tmp = tmp
        self._err = err
        self.closed = False
        self.begun = False  # its task handed over (``begin``)

    def begin(self, task: str, kwargs: dict[str, Any]) -> None:
        """Hand the worker its task: the first frame on its control socket, read after its
        children were forked (as a payload file is). ``ServiceError`` (the worker closed) if
        it died meanwhile; once only."""
        if self.begun or self.closed:
            raise ServiceError("the service already has a task" if self.begun else "closed")
        try:
            self.sock.settimeout(10.0)
            send_frame(self.sock, pickle.dumps({"task": task, "kwargs": kwargs}))
        except OSError as exc:
            tail = self.stderr()
            self.close()
            raise ServiceError(f"the service worker is gone ({exc}): {_last_line(tail)}") from None
        self.begun = True

    def alive(self) -> bool:
        """Whether the worker's process is still running (and not closed here)."""
        return not self.closed and self.proc.poll() is None

    def request(self, message: Any, timeout_s: float, *, trusted: bool = False) -> Any:
        """Send ``message``; its reply (plain data), or ``ServiceTimeout``/``ServiceError``.
        ``trusted`` unpickles the reply as it is, as ``run_task`` reads a worker's result that
        ran no candidate code (an analysis of the user's own reference)."""
        if self.closed:
            raise ServiceError("the service is closed")
        if not self.begun:
            raise ServiceError("the service has no task yet (Service.begin)")
        try:
            self.sock.settimeout(max(0.01, timeout_s))
            send_frame(self.sock, pickle.dumps(message))
            frame = recv_frame(self.sock)
            reply = pickle.loads(frame) if trusted else load_plain(frame)
        except TimeoutError:
            # Busy past its time (a deadline, a hang): it would not read a request to end,
            # and waiting for that was 3 s more of every deadline-cut search.
            self.close(kill=True)
            raise ServiceTimeout(f"no reply within {timeout_s:.0f} s") from None
        except (OSError, ServiceError, pickle.UnpicklingError, EOFError) as exc:
            tail = self.stderr()
            self.close()
            raise ServiceError(f"the service worker failed ({exc}): {_last_line(tail)}") from None
        return reply

    def stderr(self) -> str:
        """The tail of the worker's stderr so far."""
        try:
            self._err.flush()
            self._err.seek(0)
            return str(self._err.read().decode(errors="replace")[-STDERR_TAIL:])
        except (OSError, ValueError):
            return ""

    def close(self, *, kill: bool = False) -> None:
        """Ask the task to end, then take the worker's whole tree down; idempotent. ``kill``
        takes it down at once (a worker busy past its time)."""
        if self.closed:
            return
        self.closed = True
        if not kill:
            with contextlib.suppress(OSError, ServiceError):
                self.sock.settimeout(2.0)
                send_frame(self.sock, pickle.dumps(None))
        with contextlib.suppress(OSError):
            self.sock.close()
        if kill:
            kill_tree(self.proc.pid)
        try:
            self.proc.wait(timeout=0.5 if kill else 3.0)
        except subprocess.TimeoutExpired:
            stop_process_tree(self.proc)
        kill_tree(self.proc.pid)
        with contextlib.suppress(OSError):
            self._err.close()
        self._tmp.cleanup()


def start_service(
    task: str,
    kwargs: dict[str, Any],
    *,
    device: Device,
    extra_env: dict[str, str] | None = None,
    preload: tuple[str, ...] = (),
    children: tuple[str, ...] = (),
) -> Service:
    """Start ``task(**kwargs, control=socket)`` in a worker that serves requests until it is
    closed (see :class:`Service`); the task reads each request with ``recv_frame`` and
    answers with ``send_frame``, a ``None`` request meaning: end."""
    service = prestart_service(
        device=device, extra_env=extra_env, preload=preload, children=children
    )
    service.begin(task, kwargs)
    return service


def prestart_service(
    *,
    device: Device,
    extra_env: dict[str, str] | None = None,
    preload: tuple[str, ...] = (),
    children: tuple[str, ...] = (),
) -> Service:
    """A service worker started before its task is known: its process starts, imports
    ``preload`` and forks ``children`` while the caller does other work; ``Service.begin``
    then hands it the task. Until then it holds nothing but its imports, and its children
    are forked before it reads the task, as always. Who keeps one for later keys it by what
    it was started as (``keep_spare``): a task for another device or children needs another."""
    import socket

    tmp = tempdirs.TempDir("kernelopt-service-")
    env = _prepare(tmp.name, None, {}, device, extra_env, preload, children)
    env["KERNELOPT_PAYLOAD"] = "control"
    ours, theirs = socket.socketpair()
    env["KERNELOPT_CONTROL_FD"] = str(theirs.fileno())
    err = open(Path(tmp.name) / "stderr.txt", "w+b")  # noqa: SIM115 - closed by Service.close
    payload = Path(tmp.name) / "payload.pkl"
    proc = _start_worker(
        [str(payload), str(payload) + ".out"], env, err, device, fds=(theirs.fileno(),)
    )
    theirs.close()
    return Service(proc, ours, tmp, err)


#: Seconds a worker started ahead (``keep_spare``) waits to be taken before it is closed.
SPARE_TTL_S = 600.0
_spares: dict[tuple[Any, ...], tuple[Service, float]] = {}
_spares_lock = threading.Lock()


def keep_spare(key: tuple[Any, ...], start: Callable[[], Service]) -> None:
    """Keep a service worker started ahead (``start()``, a ``prestart_service``) under
    ``key`` until ``take_kept(key)`` takes it: one per key, a live fresh one kept as it is.
    Never raises (the taker then starts its own). Unused workers are closed after
    ``SPARE_TTL_S`` (when next looked at) or at exit (``discard_spares``), each with its tree."""
    with _spares_lock:
        held = _spares.get(key)
        if held is not None and held[0].alive() and time.monotonic() - held[1] < SPARE_TTL_S:
            return
    try:
        service = start()
    except Exception:
        return
    with _spares_lock:
        old = _spares.pop(key, None)
        _spares[key] = (service, time.monotonic())
    if old is not None:
        old[0].close()


def take_kept(key: tuple[Any, ...]) -> Service | None:
    """The worker kept under ``key`` (``keep_spare``), if one is alive and fresh; it is the
    caller's from then on (to ``begin`` and ``close``)."""
    with _spares_lock:
        held = _spares.pop(key, None)
    if held is None:
        return None
    service, made = held
    if not service.alive() or time.monotonic() - made >= SPARE_TTL_S:
        service.close()
        return None
    return service


def discard_spares() -> None:
    """Close every worker started ahead and not taken (each with its whole tree)."""
    with _spares_lock:
        held = list(_spares.values())
        _spares.clear()
    for service, _ in held:
        service.close()


atexit.register(discard_spares)


class Proc(Protocol):
    """A worker process as the caller handles it (``subprocess.Popen`` or ``launcher.Launched``)."""

    pid: int
    returncode: int | None

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


def _start_worker(
    argv: list[str], env: dict[str, str], err: Any, device: Device, fds: tuple[int, ...] = ()
) -> Proc:
    """``python -m kernelopt_jupyter.worker *argv`` in a session of its own, stderr to ``err``:
    forked by a launcher that already imported torch and Triton (``launcher``; CPU workers by
    default), or started as a new process. ``fds`` are passed on; the first one's number in
    the worker replaces ``KERNELOPT_CONTROL_FD``."""
    from kernelopt_jupyter import launcher

    if launcher.enabled(str(device)):
        try:
            return launcher.launcher_for(env).spawn(argv, env, str(err.name), fds)
        except launcher.LaunchError:
            pass  # a new process, as without a launcher
    if fds:
        env = {**env, "KERNELOPT_CONTROL_FD": str(fds[0])}
    return from_lasting_thread(
        lambda: subprocess.Popen(
            python_command("-m", "kernelopt_jupyter.worker", *argv),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,  # so a timeout kills the candidate's children too
            pass_fds=fds,
        )
    )


T = TypeVar("T")
_spawner: Any = None
_spawner_lock = threading.Lock()


def from_lasting_thread(start: Callable[[], T]) -> T:
    """``start()`` (a ``subprocess.Popen``) on a thread that lasts as long as this process.

    A worker dies with its parent by the kernel's parent-death signal (``die_with_parent``),
    and Linux sends it when the *thread* that started the worker ends, not the process. A
    worker started from a short-lived thread (a search's ``prewarm``, a notebook session's
    thread) was killed when that thread ended: a service worker then reset its connection at
    the first request, and a launcher took the workers it had forked with it. The main
    thread, which lasts as long as the process, starts its own."""
    global _spawner
    if threading.current_thread() is threading.main_thread():
        return start()
    from concurrent.futures import ThreadPoolExecutor

    with _spawner_lock:
        if _spawner is None:
            _spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kernelopt-spawner")
        spawner = _spawner
    try:
        future = spawner.submit(start)
    except RuntimeError:  # the interpreter is shutting down: no new thread can start
        return start()
    return future.result()


# ---------------------------------------------------------------------------- child side


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


def _refuse_forked_cuda(roles: list[str]) -> None:
    """Fail loudly (not with a child's obscure 'initialization error') if the preload
    initialised CUDA: children forked after that could not use the GPU."""
    torch = sys.modules.get("torch")
    if roles and torch is not None and torch.cuda.is_initialized():
        raise RuntimeError(
            "CUDA was initialised in the fork server before forking (by an import in its "
            "preload); the children could not use the GPU"
        )


def _fork_children(roles: list[str]) -> list[tuple[int, Any]]:
    """Fork one child per role; each gets one end of a socket pair and nothing else."""
    import socket

    made: list[tuple[int, Any]] = []
    for role in roles:
        ours, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # the child: drop every inherited descriptor but stdio and its socket
            keep = theirs.fileno()
            os.closerange(3, keep)
            os.closerange(keep + 1, 65536)
            os.setpgid(0, 0)
            parent = os.getppid()
            _linux_prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
            if os.getppid() != parent:
                os._exit(70)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            sys.argv = [sys.argv[0]]
            code = 0
            try:
                _resolve(role)(theirs)
            except BaseException:
                traceback.print_exc()
                code = 1
            sys.stderr.flush()
            os._exit(code)
        theirs.close()
        made.append((pid, ours))
    return made


def _on_term(signum: int, frame: Any) -> None:
    kill_tree(os.getpid(), include_self=False)
    tempdirs.remove_all()  # a task's own workers' folders (``run_task`` in a worker)
    os._exit(128 + signum)


def main(argv: list[str]) -> int:
    """Child side: load the payload, run the task, write the outcome, leave nothing behind."""
    payload_path, result_path = argv
    signal.signal(signal.SIGTERM, _on_term)
    parent = os.environ.pop("KERNELOPT_WORKER_PARENT", "")
    if parent.isdigit():
        die_with_parent(int(parent))
    become_subreaper()
    forks_path = Path(payload_path).with_name("forks.pkl")
    forks = pickle.loads(forks_path.read_bytes()) if forks_path.exists() else {}
    try:
        _true_fp32()
        for module in forks.get("preload", []):
            importlib.import_module(module)
        _refuse_forked_cuda(forks.get("children", []))
        made = _fork_children(forks.get("children", []))
    except BaseException as exc:  # pragma: no cover - an import error in the fork server
        made = []
        forks = {"error": exc}
    # Read only after forking, then remove: a child never sees the task's arguments (nor the
    # control socket of a service: every child closed all it inherited but its own socket).
    control_fd = os.environ.pop("KERNELOPT_CONTROL_FD", "")
    control = None
    if control_fd.isdigit():
        import socket

        control = socket.socket(fileno=int(control_fd))
    if os.environ.pop("KERNELOPT_PAYLOAD", "") == "control" and control is not None:
        # A service started ahead: its task is the first frame its caller sends. A caller
        # that closes without one (a worker started ahead and never used) ends it here.
        try:
            request = pickle.loads(recv_frame(control))
        except (OSError, ServiceError):
            request = None
        if not isinstance(request, dict):  # closed (``Service.close`` sends None) or gone
            kill_tree(os.getpid(), include_self=False)
            os._exit(0)
    else:
        request = pickle.loads(Path(payload_path).read_bytes())
        Path(payload_path).unlink()
    if made:
        request["kwargs"]["children"] = made
    if control is not None:
        request["kwargs"]["control"] = control
    try:
        if "error" in forks:
            raise forks["error"]
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
    # Nothing the task forked survives it (it is re-parented here: this is a subreaper),
    # nor a temporary folder it made (``os._exit`` skips ``atexit``).
    kill_tree(os.getpid(), include_self=False)
    tempdirs.remove_all()
    # Skip interpreter teardown: a candidate's threads or CUDA state must not hang the exit.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
