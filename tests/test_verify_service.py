"""The verification worker kept for a whole search (``verify.service``): one process start for
many candidates, each candidate still in a process of its own that nothing before it touched."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from _processes import below_us, left_running
from _verify_corpus import DATA, problem
from test_deadline_worker import HANGS, PROBLEM

from kernelopt_jupyter.agents.search import DeadlineReached
from kernelopt_jupyter.deadline import Deadline
from kernelopt_jupyter.problem import problem_from_source
from kernelopt_jupyter.session.gating import verify_before
from kernelopt_jupyter.verify import VerifyOptions, verify_candidate
from kernelopt_jupyter.verify.service import VerifyService
from kernelopt_jupyter.worker import _spares as _kept
from kernelopt_jupyter.worker import discard_spares

pytestmark = pytest.mark.slow

GOOD = (DATA / "candidates" / "scaled_residual" / "good_fused.py").read_text()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_many_candidates_share_one_worker_and_each_gets_a_fresh_process() -> None:
    prob = problem("scaled_residual")
    options = VerifyOptions(device="cpu", seeds=1)
    service = VerifyService(prob, "cpu", options, pool=4)
    try:
        reports = [verify_candidate(prob, GOOD, options, service=service) for _ in range(3)]
        for report in reports:
            assert report.verdict == "pass", [(g.name, g.status, g.detail) for g in report.gates]
        pids = service.pids
        assert service.started == 1 and service.served == 3
        # One reference process for all; a new candidate process for each, gone after it.
        assert len({p["reference_pid"] for p in pids}) == 1
        assert len({p["candidate_pid"] for p in pids}) == 3
        assert not any(_alive(p["candidate_pid"]) for p in pids)
    finally:
        service.close()
    assert not _alive(pids[0]["reference_pid"])


def test_a_used_up_pool_or_a_hang_gets_a_fresh_worker() -> None:
    prob = problem_from_source(PROBLEM, "double.py")
    options = VerifyOptions(device="cpu", seeds=1, time_limit_s=4.0)
    service = VerifyService(prob, "cpu", options, pool=1)
    good = HANGS.replace(
        "        while True:\n            time.sleep(0.05)", "        return x * 2.0"
    )
    good = good.replace("class ModelNew(torch.nn.Module):", "class ModelNew(torch.nn.Module):")
    try:
        hang = verify_candidate(prob, HANGS, options, service=service)
        after = verify_candidate(
            prob, HANGS.replace("time.sleep(0.05)", "break"), options, service=service
        )
    finally:
        service.close()
    assert hang.verdict == "fail" and "timed out" in " ".join(g.detail for g in hang.gates)
    assert after.verdict == "fail"  # returns None: a wrong answer, judged by a fresh worker
    assert service.started == 2


def test_the_deadline_kills_the_service_worker_in_flight() -> None:
    prob = problem_from_source(PROBLEM, "double.py")
    options = VerifyOptions(device="cpu", seeds=1, time_limit_s=600.0)
    service = VerifyService(prob, "cpu", options, pool=2)
    before = below_us()
    with pytest.raises(DeadlineReached, match="time limit"):
        verify_before(
            prob,
            HANGS,
            options,
            "<hangs>",
            device="cpu",
            deadline=Deadline.start(8.0),
            service=service,
        )
    service.close()
    left = left_running(before)
    assert not left, f"processes left running after the deadline: {left}"


def test_a_service_that_cannot_work_here_costs_two_tries_then_steps_aside() -> None:
    prob = problem("scaled_residual")
    options = VerifyOptions(device="cpu", seeds=1)
    service = VerifyService(prob, "cpu", options, pool=4)
    service._preload = ("kernelopt_no_such_module",)  # every worker of it dies at start
    try:
        reports = [verify_candidate(prob, GOOD, options, service=service) for _ in range(3)]
    finally:
        service.close()
    # Each candidate was still verified (the per-call way) and its verdict counts.
    for report in reports:
        assert report.verdict == "pass", [(g.name, g.status, g.detail) for g in report.gates]
    assert service.started == 2 and service.served == 0 and service.failures == 2
    assert not service.accepts(options, "cpu") and "worker" in service.last_failure


def test_a_prewarmed_service_serves_its_first_candidate_from_the_warm_worker() -> None:
    """``prewarm`` (a search calls it while its analysis runs) starts the worker in the
    background; the first candidate waits for that worker instead of starting another, and
    its request time no longer includes the process start."""
    prob = problem("scaled_residual")
    options = VerifyOptions(device="cpu", seeds=1)
    service = VerifyService(prob, "cpu", options, pool=2)
    try:
        service.prewarm()
        service.prewarm()  # a second call changes nothing
        report = verify_candidate(prob, GOOD, options, service=service)
        assert report.verdict == "pass", [(g.name, g.status, g.detail) for g in report.gates]
        assert service.started == 1 and service.served == 1
        timings = report.gate("correctness").metrics["timings"]
        assert timings["service"]["fresh_worker"] is False
        assert timings["transfer"] == "bytes"
    finally:
        service.close()


def test_a_worker_started_ahead_serves_the_next_service_and_holds_no_task_before() -> None:
    """``prestart`` (the CLI calls it on the GPU before it imports torch and reads the problem)
    starts a worker that knows no problem; the next service with the same pool takes it, its
    children were forked before the task reached it, and its first candidate is checked with
    no process start of its own. A service with another pool does not take it."""
    from kernelopt_jupyter.verify import service as svc

    prob = problem("scaled_residual")
    options = VerifyOptions(device="cpu", seeds=1)
    before = below_us()
    svc.prestart("cpu", 3)
    try:
        other = VerifyService(prob, "cpu", options, pool=2)
        assert svc.take_spare("cpu", 2) is None  # another pool: another kind of worker
        spare = _kept[("verify", "cpu", 3)][0]
        assert spare.alive() and not spare.begun
        # Waiting for its task, the worker holds no payload file: nothing of a problem yet.
        assert not (Path(spare._tmp.name) / "payload.pkl").exists()
        svc.prestart("cpu", 3)  # a second call keeps the live one
        assert _kept[("verify", "cpu", 3)][0] is spare
        service = VerifyService(prob, "cpu", options, pool=3)
        try:
            report = verify_candidate(prob, GOOD, options, service=service)
            assert report.verdict == "pass", [(g.name, g.status, g.detail) for g in report.gates]
            assert service.started == 1 and service.from_spare == 1
            assert service._worker is spare and spare.begun
            timings = report.gate("correctness").metrics["timings"]
            assert timings["service"]["workers_started_ahead"] == 1
            assert ("verify", "cpu", 3) not in _kept
        finally:
            service.close()
            other.close()
    finally:
        discard_spares()
    assert left_running(before) == []


def test_a_worker_started_ahead_and_never_used_ends_with_nothing_left() -> None:
    """Closed before it had a task (a problem that failed to load, the process exiting), or
    dead before it was taken: its whole tree goes, and the service starts its own."""
    from kernelopt_jupyter.verify import service as svc
    from kernelopt_jupyter.worker import ServiceError, prestart_service

    before = below_us()
    worker = prestart_service(device="cpu", preload=("json",), children=svc.roles(1))
    with pytest.raises(ServiceError, match="no task"):
        worker.request({"cmd": "x"}, 5.0)
    worker.close()
    assert not worker.alive()
    with pytest.raises(ServiceError):
        worker.begin("json:dumps", {"obj": 1})
    svc.prestart("cpu", 2)
    dead = _kept[("verify", "cpu", 2)][0]
    dead.close()  # as if it had died while it waited
    prob = problem("scaled_residual")
    options = VerifyOptions(device="cpu", seeds=1)
    service = VerifyService(prob, "cpu", options, pool=2)
    try:
        report = verify_candidate(prob, GOOD, options, service=service)
        assert report.verdict == "pass"
        assert service.started == 1 and service.from_spare == 0
    finally:
        service.close()
        discard_spares()
    assert left_running(before) == []


@pytest.mark.parametrize("launcher", ["cpu", "0"])
def test_a_worker_started_from_a_thread_that_ends_lives_on(
    launcher: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Linux sends the parent-death signal when the *thread* that started a process ends. A
    worker (or the launcher that forks it) started from a short-lived thread, as a search's
    ``prewarm`` does, was killed when the thread ended, and its first request then failed
    ("connection reset by peer"). Processes are started from a thread that lasts."""
    import threading
    import uuid

    from kernelopt_jupyter.worker import prestart_service

    monkeypatch.setenv("KERNELOPT_LAUNCHER", launcher)
    # An environment no launcher serves yet: with the launcher on, the thread starts one.
    env = {
        "PYTHONPATH": str(Path(__file__).parent),
        "KERNELOPT_TEST_FRESH": uuid.uuid4().hex,
    }
    box: dict[str, Any] = {}

    def start() -> None:
        box["service"] = prestart_service(device="cpu", extra_env=env)
        box["service"].begin("_worker_tasks:echo_service", {"prefix": "got "})

    thread = threading.Thread(target=start)
    thread.start()
    thread.join()
    time.sleep(2.0)  # the thread is gone; a worker tied to it would be dead by now
    service = box["service"]
    try:
        assert service.alive()
        assert service.request("hello", 60.0) == "got hello"
    finally:
        service.close()
