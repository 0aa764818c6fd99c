"""A verification worker kept for a whole search: torch, Triton and the project imported once.

``verify_candidate`` starts a verification worker (a fork server) per call: a process start
and the torch, Triton and Inductor imports, several seconds per candidate before anything is
checked. A :class:`VerifyService` starts one such worker for many candidates of one problem.
The isolation is the same as per call, because the worker forks the reference's process and a
pool of candidate processes *before* it reads anything (``worker.start_service``):

* each candidate runs in a process of its own, forked for it alone and killed (with anything
  it started) before the next candidate's process is used; none holds the task's arguments,
  the control socket, or anything a previous candidate left, since none ran before;
* the reference's process serves every candidate (it is the user's trusted code, rebuilt at
  each candidate's ``setup``);
* the checker decides as before; its reply per candidate is read here as plain data.

A worker can be started before the problem is known (``prestart``: the CLI does so on the
GPU before it imports torch): it holds nothing but its imports and its forked children until
the service hands it the task over its control socket, so the isolation is the same.

A pool holds ``pool`` candidate processes; when it is used up the next candidate starts a
fresh worker. A worker that dies or misses its time leaves its candidate to the per-call way
(a worker of its own, whose verdict counts), and after two such workers in a row the service
takes no more candidates: a service that cannot work on a machine costs a search nothing but
the two tries. Closing the service, or the caller's
exit, takes the whole tree down.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

from kernelopt_jupyter.device import Device
from kernelopt_jupyter.problem import Problem
from kernelopt_jupyter.verify.report import VerificationCancelled, VerifyOptions
from kernelopt_jupyter.worker import (
    Service,
    ServiceError,
    ServiceTimeout,
    keep_spare,
    prestart_service,
    take_kept,
)

#: Modules the verification worker imports once, before it forks (the fork server's preload).
PRELOAD = (
    "torch",
    # Entering a TorchDispatchMode imports dynamo, which wraps torch.manual_seed & co.: done
    # here, before any snapshot, so the guard does not charge it to the candidate.
    "torch._dynamo",
    "triton",
    "kernelopt_jupyter.problem",
    "kernelopt_jupyter.cpu_triton",
    "kernelopt_jupyter.verify.sandbox",
    "kernelopt_jupyter.verify.reference",
    "kernelopt_jupyter.verify.checker",
    "kernelopt_jupyter.verify.perf",
    "kernelopt_jupyter.verify.timing",
    "kernelopt_jupyter.verify.ipc",
)
#: The fork server's children: one reference process, then one process per candidate.
REFERENCE_ROLE = "kernelopt_jupyter.verify.reference:serve"
SANDBOX_ROLE = "kernelopt_jupyter.verify.sandbox:serve"
#: Candidate processes forked per service worker (idle ones share the fork server's pages).
DEFAULT_POOL = 8
#: Seconds one candidate's checks may take beyond its three phase limits (the checker bounds
#: each phase itself; this is the last resort against a stuck worker).
REQUEST_ALLOWANCE_S = 60.0
#: Workers in a row that may die or miss their time before the service takes no more work.
MAX_FAILURES = 2
#: Extra seconds when the reference must first torch.compile the "compile" baseline.
COMPILE_ALLOWANCE_S = 240.0


#: The verification worker's task (in its process, after the children were forked).
TASK = "kernelopt_jupyter.verify.checker:verify_service"


def roles(pool: int) -> tuple[str, ...]:
    """A verification worker's children: the reference's process, then ``pool`` candidates'."""
    return (REFERENCE_ROLE,) + (SANDBOX_ROLE,) * max(1, pool)


def pool_for_budget(budget: int) -> int:
    """Candidate processes per worker for a search of ``budget`` candidates (its first worker
    serves the whole search, the harvest's candidate included, up to 16)."""
    return max(2, min(int(budget) + 1, 16))


def prestart(device: Device, pool: int) -> None:
    """Start a verification worker ahead, before the problem is known (its process start and
    imports, 4-14 s on the H200, then overlap whatever the caller does next: reading and
    validating the problem, the analysis). The next :class:`VerifyService` on ``device``
    with ``pool`` candidate processes takes it; the worker holds nothing but its imports and
    its forked children until then (``worker.keep_spare``: closed unused after
    ``SPARE_TTL_S`` or at exit). Never raises: the service then starts its own worker."""
    keep_spare(
        ("verify", str(device), max(1, pool)),
        lambda: prestart_service(device=device, preload=PRELOAD, children=roles(pool)),
    )


def take_spare(device: Device, pool: int) -> Service | None:
    """The worker ``prestart`` started for ``device`` and ``pool``, if one is alive and fresh."""
    return take_kept(("verify", str(device), max(1, pool)))


class VerifyService:
    """Verification workers for one problem, started on demand and reused across candidates.

    The per-service settings (device, seeds, float64 factor, phase time limit) come from the
    options it was made with; a candidate verified with other settings goes the per-call way
    (``accepts`` says which).
    """

    def __init__(
        self, problem: Problem, device: Device, options: VerifyOptions, pool: int = DEFAULT_POOL
    ) -> None:
        self.problem = problem
        self.device = device
        self.options = options
        self.pool = max(1, pool)
        self._roles = roles(self.pool)
        self._preload = PRELOAD
        self._worker: Service | None = None
        self._left = 0
        self.started = 0  # workers started (each a process start and the imports)
        self.from_spare = 0  # of them, workers started ahead (``prestart``) and taken here
        self.served = 0  # candidates checked
        self.failures = 0  # workers in a row that died or missed their time
        self.last_failure = ""
        self.pids: list[dict[str, Any]] = []  # the processes that judged each candidate
        self._warming: threading.Thread | None = None

    def prewarm(self) -> None:
        """Start the first worker in the background (a search does this while its analysis
        runs, so the first candidate does not wait for a process start and the imports)."""
        if self._worker is not None or self._warming is not None:
            return

        def warm() -> None:
            with contextlib.suppress(Exception):  # the first check then starts one itself
                self._worker = self._launch()

        self._warming = threading.Thread(target=warm, name="kernelopt-verify-warm", daemon=True)
        self._warming.start()

    def _join(self) -> None:
        warming, self._warming = self._warming, None
        if warming is not None and warming is not threading.current_thread():
            warming.join()

    def accepts(self, options: VerifyOptions, device: Device) -> bool:
        """Whether a verification with ``options`` can run here (same per-worker settings)."""
        mine = self.options
        return (
            self.failures < MAX_FAILURES
            and device == self.device
            and max(1, options.seeds) == max(1, mine.seeds)
            and options.fp64_factor == mine.fp64_factor
            and options.time_limit_s == mine.time_limit_s
        )

    def _start(self) -> Service:
        self.close()
        self._worker = self._launch()
        return self._worker

    def _launch(self) -> Service:
        task = {
            "problem": self.problem,
            "device": self.device,
            "seeds": max(1, self.options.seeds),
            "fp64_factor": self.options.fp64_factor,
            "time_limit_s": self.options.time_limit_s,
        }
        worker = take_spare(self.device, self.pool)
        if worker is not None:
            try:
                worker.begin(TASK, task)
                self.from_spare += 1
            except ServiceError:
                worker = None  # it died while it waited: a worker of its own, as without one
        if worker is None:
            worker = prestart_service(
                device=self.device, preload=self._preload, children=self._roles
            )
            worker.begin(TASK, task)
        self._left = self.pool
        self.started += 1
        return worker

    def check(
        self, spec: dict[str, Any], options: VerifyOptions
    ) -> dict[str, dict[str, Any]] | None:
        """One candidate's phases (as ``checker.verify_task`` gives them), or None when the
        worker died or missed its time: the caller then verifies the candidate the per-call
        way (a worker of its own), and after ``MAX_FAILURES`` such workers in a row the
        service takes no more candidates (``accepts`` is False).

        Raises :class:`VerificationCancelled` when ``options.deadline`` passed while it ran
        (the worker is killed).
        """
        begun = time.monotonic()
        self._join()
        fresh = self._worker is None or self._left <= 0
        worker = self._start() if fresh else self._worker
        assert worker is not None
        self._left -= 1
        limit = 3 * options.time_limit_s + REQUEST_ALLOWANCE_S
        if "compile" in (spec.get("performance") or []):
            limit += COMPILE_ALLOWANCE_S
        limit = options.bounded(limit)
        try:
            phases = worker.request(spec, limit)
        except ServiceTimeout as exc:
            self._worker = None
            if options.late():
                raise VerificationCancelled("the deadline passed during the verification") from None
            self._failed(f"timed out ({exc})")
            return None
        except ServiceError as exc:
            self._worker = None
            self._failed(str(exc))
            return None
        if not isinstance(phases, dict):
            self.close()
            self._failed(f"answered {type(phases).__name__}")
            return None
        self.failures = 0
        self.served += 1
        timings = phases.setdefault("timings", {})
        if isinstance(timings, dict):
            timings["service"] = {
                "fresh_worker": fresh,
                "request_s": round(time.monotonic() - begun, 3),
                "workers_started_ahead": self.from_spare,
            }
        self.pids.append(dict(phases.get("processes") or {}))
        if self._left <= 0:
            self.close()  # its pool is used up: the next candidate starts a fresh worker
        return phases

    def _failed(self, why: str) -> None:
        self.failures += 1
        self.last_failure = f"the verification service's worker {why}"

    def close(self) -> None:
        """End the current worker (and everything below it); the service can start again."""
        self._join()
        if self._worker is not None:
            self._worker.close()
            self._worker = None
        self._left = 0
