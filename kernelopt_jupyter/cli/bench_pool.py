"""``kernelopt bench --gpus N|all`` and ``--executor ray``: one bench spread over many devices.

The local pool starts one bench worker process per GPU (``CUDA_VISIBLE_DEVICES`` names its one
GPU; with ``--device cpu`` the workers are CPU stand-ins) and hands the problems out from one
queue: a problem goes to the next free worker, and a worker runs one problem at a time, so a
search is alone on its GPU. A worker runs the serial bench's own per-problem step
(``optimize.bench_one``), so a row is the row a serial run writes, plus ``worker`` (and
``reruns`` when it had to be re-run). A worker that dies mid-problem (a crash, a kill, a hang
past the deadline) is replaced, and its problem re-run once on another worker; a second death
makes it an error row. ``bench.json`` is rewritten atomically after every row, the rows in the
order of the problem list.

The worker is the trusted search process (it needs the caller's environment, API keys
included, as the serial bench does); candidates still run in scrubbed worker processes of their
own. A worker has its own process group, is a child subreaper, dies with the bench, and is
stopped with its whole tree.

With ``--executor ray`` each problem is a Ray task asking for one GPU (one CPU with
``--device cpu``); Ray is imported only then. The problem files and ``--out`` must be on a
filesystem every node sees at the same path (a shared volume, or a one-host cluster).

Run as ``python -m kernelopt_jupyter.cli.bench_pool ARGS_JSON`` (a worker: problems on stdin,
one JSON row per line on stdout).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from kernelopt_jupyter import tempdirs
from kernelopt_jupyter.cli.optimize import bench_one, bench_row, write_bench
from kernelopt_jupyter.deadline import Deadline
from kernelopt_jupyter.device import DeviceError, resolve_device
from kernelopt_jupyter.import_path import python_command, worker_env
from kernelopt_jupyter.worker import become_subreaper, die_with_parent, kill_tree, stop_process_tree

#: A problem is run this many times at most before it is recorded as an error row.
ATTEMPTS = 2
#: A worker silent this much longer than the search's own deadline counts as hung.
HANG_FACTOR, HANG_SLACK_S = 3.0, 300.0
#: Seconds a worker may take to leave after its input is closed.
CLOSE_GRACE_S = 10.0

Record = Callable[[int, dict[str, Any]], None]


class BenchPoolError(Exception):
    """A parallel bench that cannot start (no GPU, Ray missing): a one-line user error."""


@dataclass
class _Job:
    index: int
    path: Path
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    avoid: str | None = None  # the worker it died on: re-run it elsewhere


class _Queue:
    """The one queue: the next free worker takes the first problem it may run."""

    def __init__(self, jobs: list[_Job], labels: list[str]) -> None:
        self._pending = deque(jobs)
        self._busy = 0
        self._alone = len(labels) == 1
        self._cond = threading.Condition()

    def take(self, label: str) -> _Job | None:
        """The next problem for ``label``; None when every problem is finished."""
        with self._cond:
            while True:
                for job in self._pending:
                    if job.avoid != label or self._alone:
                        self._pending.remove(job)
                        self._busy += 1
                        return job
                if not self._pending and not self._busy:
                    return None
                # Nothing for us now; a problem in flight may still come back to the queue.
                self._cond.wait()

    def done(self, job: _Job, *, again: bool) -> None:
        with self._cond:
            self._busy -= 1
            if again:
                self._pending.appendleft(job)
            self._cond.notify_all()


# ---------------------------------------------------------------------------- worker slots


def _visible_gpus() -> list[str]:
    """The GPUs this process may use, as ``CUDA_VISIBLE_DEVICES`` entries."""
    given = os.environ.get("CUDA_VISIBLE_DEVICES")
    if given is not None:
        return [g.strip() for g in given.split(",") if g.strip()]
    import torch

    return [str(i) for i in range(torch.cuda.device_count())]


def local_slots(gpus: int | str, device: str) -> list[tuple[str, dict[str, str]]]:
    """(label, environment additions) per worker: one per GPU, or CPU stand-ins."""
    try:
        resolved = resolve_device(device)
    except DeviceError as exc:
        raise BenchPoolError(str(exc)) from None
    if resolved == "cpu":
        if gpus == "all":
            raise BenchPoolError(
                "--gpus all: no CUDA GPU is visible; give a number of CPU stand-in workers "
                "(--gpus 2 --device cpu) or run on a GPU machine"
            )
        return [(f"cpu{i}", {}) for i in range(int(gpus))]
    visible = _visible_gpus()
    count = len(visible) if gpus == "all" else int(gpus)
    if not visible or count > len(visible):
        raise BenchPoolError(f"--gpus {gpus}: {len(visible)} CUDA GPU(s) visible here")
    return [(f"gpu{g}", {"CUDA_VISIBLE_DEVICES": g}) for g in visible[:count]]


def _hang_limit(args: argparse.Namespace) -> float | None:
    """Seconds a worker may stay silent on one problem before it counts as hung."""
    limit = getattr(args, "time_limit", None)
    return float(limit) * HANG_FACTOR + HANG_SLACK_S if limit else None


class _BenchWorker:
    """One worker process: problems in on stdin, rows out on stdout, stderr prefixed."""

    def __init__(self, label: str, env: dict[str, str], args_json: str) -> None:
        self.label = label
        full = {**os.environ, **env, "KERNELOPT_BENCH_PARENT": str(os.getpid())}
        full["PYTHONUNBUFFERED"] = "1"
        self.proc = subprocess.Popen(
            # Never the user's folder on its sys.path (``import_path``).
            python_command("-m", "kernelopt_jupyter.cli.bench_pool", args_json),
            env=worker_env(full),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        assert self.proc.stderr is not None
        threading.Thread(target=self._relay, args=(self.proc.stderr,), daemon=True).start()

    def _relay(self, stream: IO[bytes]) -> None:
        for line in stream:
            text = line.decode(errors="replace").rstrip("\n")
            print(f"[{self.label}] {text}", file=sys.stderr, flush=True)

    def run(
        self, job: _Job, out: Path, hang_limit_s: float | None
    ) -> tuple[dict[str, Any] | None, str]:
        """The problem's row, or None and why the worker gave none (it is then stopped): it
        died, or said nothing for ``hang_limit_s`` seconds."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        request = {"path": str(job.path), "out": str(out)}
        try:
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
        except OSError:
            return None, self._why_gone()
        answer_by = Deadline.start(hang_limit_s)
        while True:
            left = answer_by.left()
            if left is not None and left <= 0:
                self.stop()
                return None, f"no answer after {hang_limit_s:.0f} s (hung)"
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                break
        line = self.proc.stdout.readline()
        if not line:
            return None, self._why_gone()
        return json.loads(line), ""

    def _why_gone(self) -> str:
        self.stop()
        code = self.proc.returncode
        if code is not None and code < 0:
            with contextlib.suppress(ValueError):
                return f"worker process died with {signal.Signals(-code).name}"
        return f"worker process exited with code {code}"

    def stop(self) -> None:
        """The worker and everything below it, gone."""
        if self.proc.poll() is None:
            stop_process_tree(self.proc)
        kill_tree(self.proc.pid)
        self.proc.wait()

    def close(self) -> None:
        """Let the worker leave on its own (its input closed), then make sure it did."""
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=CLOSE_GRACE_S)
        self.stop()


def _drive(
    label: str,
    env: dict[str, str],
    args: argparse.Namespace,
    out: Path,
    queue: _Queue,
    record: Record,
    workers: dict[str, _BenchWorker],
) -> None:
    """One worker slot: take problems until none is left; replace a worker that dies."""
    args_json = json.dumps(vars(args), default=str)
    hang_limit_s = _hang_limit(args)
    while (job := queue.take(label)) is not None:
        if label not in workers:
            workers[label] = _BenchWorker(label, env, args_json)
        start = time.monotonic()
        row, why = workers[label].run(job, out, hang_limit_s)
        job.seconds += time.monotonic() - start
        if row is None:
            workers.pop(label).stop()
            job.failures.append(f"{label}: {why}")
            if len(job.failures) < ATTEMPTS:
                print(f"[{label}] {job.path}: {why}; re-running it", file=sys.stderr, flush=True)
                job.avoid = label
                queue.done(job, again=True)
                continue
            error = f"the bench worker died on every attempt ({'; '.join(job.failures)})"
            row = bench_row(job.path, None, job.seconds, error)
        row["worker"] = label
        if job.failures:
            row.update(reruns=len(job.failures), rerun_reasons=list(job.failures))
        record(job.index, row)
        queue.done(job, again=False)
    if label in workers:
        workers.pop(label).close()


def run_pool(files: list[Path], args: argparse.Namespace, out: Path, record: Record) -> list[str]:
    """The local pool over ``files``; returns the workers' labels."""
    slots = local_slots(args.gpus, getattr(args, "device", "auto") or "auto")
    labels = [label for label, _ in slots]
    print(
        f"kernelopt: {len(files)} problems on {len(slots)} workers ({', '.join(labels)})",
        file=sys.stderr,
        flush=True,
    )
    queue = _Queue([_Job(i, path) for i, path in enumerate(files)], labels)
    workers: dict[str, _BenchWorker] = {}
    threads = [
        threading.Thread(
            target=_drive,
            args=(label, env, args, out, queue, record, workers),
            name=f"kernelopt-bench-{label}",
            daemon=True,
        )
        for label, env in slots
    ]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    finally:  # an interrupted bench leaves no worker behind
        for worker in list(workers.values()):
            worker.stop()
    return labels


# ---------------------------------------------------------------------------- Ray


def _ray_problem(path: str, args_dict: dict[str, Any], out: str, cwd: str) -> dict[str, Any]:
    """A Ray task: one problem's bench row, run in the driver's working directory."""
    import socket

    here = os.getcwd()
    node = f"ray:{socket.gethostname()}"
    gpu = os.environ.get("CUDA_VISIBLE_DEVICES")
    label = f"{node}:gpu{gpu}" if args_dict.get("device") == "cuda" and gpu else node
    if not Path(cwd, path).is_file():
        row = bench_row(
            Path(path),
            None,
            0.0,
            f"{path}: not visible on {node} (in {cwd}); "
            "the problems and --out must be on a filesystem every node shares",
        )
    else:
        os.chdir(cwd)
        try:
            # Only the driver's stdout is the one JSON object: a search's prints go to stderr.
            with contextlib.redirect_stdout(sys.stderr):
                row = bench_one(Path(path), argparse.Namespace(**args_dict), Path(out))
        finally:
            os.chdir(here)
    row["worker"] = label
    return row


def _ray_device(requested: str, gpus: float, address: str | None) -> str:
    where = f"the Ray cluster at {address}" if address else "the local Ray instance"
    if requested == "cpu" or (requested == "auto" and gpus < 1):
        return "cpu"
    if gpus < 1:
        raise BenchPoolError(f"--executor ray --device cuda: {where} has no GPU")
    return "cuda"


def run_on_ray(files: list[Path], args: argparse.Namespace, out: Path, record: Record) -> None:
    """Each problem a Ray task (one GPU, or one CPU with ``--device cpu``)."""
    try:
        import ray
    except ImportError:
        raise BenchPoolError(
            "--executor ray: Ray is not installed (pip install 'kernelopt-jupyter[ray]')"
        ) from None
    address = getattr(args, "address", None)
    started = not ray.is_initialized()
    if started:
        try:
            if address or os.environ.get("RAY_ADDRESS"):
                ray.init(address=address)
            else:  # a local instance of this machine's CPUs and GPUs
                ray.init(include_dashboard=False)
        except Exception as exc:  # ConnectionError and Ray's own: the cluster is not there
            where = address or "a local instance"
            raise BenchPoolError(f"--executor ray: cannot start or reach {where}: {exc}") from None
    try:
        gpus = float(ray.cluster_resources().get("GPU", 0))
        device = _ray_device(getattr(args, "device", "auto") or "auto", gpus, address)
        args_dict = {**vars(args), "device": device}
        gpus_each = 1 if device == "cuda" else 0
        # A task whose worker process dies is retried once by Ray (then an error row).
        task = ray.remote(_ray_problem).options(
            num_cpus=1, num_gpus=gpus_each, max_retries=ATTEMPTS - 1
        )
        cwd = os.getcwd()
        refs = {task.remote(str(p), args_dict, str(out), cwd): i for i, p in enumerate(files)}
        print(
            f"kernelopt: {len(files)} problems as Ray tasks (each 1 CPU, {gpus_each} GPU)",
            file=sys.stderr,
            flush=True,
        )
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                index = refs[ref]
                try:
                    row = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                    error = f"the Ray task failed on every attempt: {type(exc).__name__}: {first}"
                    row = bench_row(files[index], None, 0.0, error)
                print(
                    f"[{row.get('worker', 'ray')}] {files[index]}: {row.get('verdict')}",
                    file=sys.stderr,
                    flush=True,
                )
                record(index, row)
    finally:
        if started:
            ray.shutdown()


# ---------------------------------------------------------------------------- entry points


def run_parallel(files: list[Path], args: argparse.Namespace, out: Path) -> list[dict[str, Any]]:
    """Every problem's row, in the order of ``files``, with ``bench.json`` rewritten as each
    finishes; raises ``BenchPoolError`` when the pool or the cluster cannot start."""
    rows: dict[int, dict[str, Any]] = {}
    lock = threading.Lock()
    total = len(files)

    def record(index: int, row: dict[str, Any]) -> None:
        with lock:
            rows[index] = row
            write_bench(out, [rows[i] for i in sorted(rows)], complete=False)
            print(
                f"kernelopt: {len(rows)}/{total} done ({row.get('worker')}: {files[index]} "
                f"{row.get('verdict')})",
                file=sys.stderr,
                flush=True,
            )

    if getattr(args, "executor", "local") == "ray":
        if getattr(args, "gpus", None):
            raise BenchPoolError("--gpus is for the local pool; a Ray task asks for one GPU each")
        run_on_ray(files, args, out, record)
    else:
        if getattr(args, "address", None):
            raise BenchPoolError("--address needs --executor ray")
        run_pool(files, args, out, record)
    return [rows[i] for i in sorted(rows)]


def serve(args_json: str) -> None:
    """Worker side: run each problem named on stdin, answer with its row on stdout."""
    # SIGTERM (the pool stops a worker past its time): its tree killed, its folders removed.
    signal.signal(signal.SIGTERM, tempdirs.on_sigterm)
    parent = os.environ.pop("KERNELOPT_BENCH_PARENT", "")
    if parent.isdigit():
        die_with_parent(int(parent))
    become_subreaper()
    # The rows get the real stdout; anything else printed goes to the log.
    rows = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    args = argparse.Namespace(**json.loads(args_json))
    for line in sys.stdin:
        request = json.loads(line)
        row = bench_one(Path(request["path"]), args, Path(request["out"]))
        rows.write(json.dumps(row, default=str) + "\n")
        rows.flush()
    kill_tree(os.getpid(), include_self=False)


if __name__ == "__main__":
    serve(sys.argv[1])
