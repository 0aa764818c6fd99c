"""The peers (eager, torch.compile's modes) are timed after the first verdict on the GPU:
the first candidate needs none of them, and they were most of the analysis. The order, the
events, the cache and the speedups computed before they came."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_search import make_search

from kernelopt_jupyter import worker
from kernelopt_jupyter.analysis import pipeline
from kernelopt_jupyter.analysis.baselines import Baselines
from kernelopt_jupyter.analysis.cache import AnalysisCache
from kernelopt_jupyter.deadline import Deadline
from kernelopt_jupyter.events import EventLog, read_events
from kernelopt_jupyter.problem import problem_from_source
from kernelopt_jupyter.worker import WorkerResult

SOURCE = """
import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.randn(32, 64)]
"""
PEERS = Baselines(
    measured=True, device="cuda", eager_ms=0.2, compile_ms=0.15, max_autotune_ms=0.14, rounds=9
)
#: A dispatch step that harvested (an analysis whose phases all ran can be cached).
HARVESTED = {
    "problem": "relu.py",
    "device": "cuda",
    "harvest_data": {"ok": True, "device": "cuda", "source": "class ModelNew: pass\n"},
}


@pytest.fixture(autouse=True)
def _no_worker_ahead(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests fake ``run_task`` for a "cuda" analysis on a machine without one: the
    peers' worker started ahead (a real process) is refused, so ``measure`` takes the
    ``run_task`` path they fake. The tests of the worker started ahead say so by name."""
    if "ahead" in request.node.name:
        return

    def refuse(**_: Any) -> Any:
        raise RuntimeError("no worker ahead in this test")

    monkeypatch.setattr(worker, "prestart_service", refuse)


def test_the_first_verdict_comes_before_the_peers_and_the_plans_after(tmp_path: Path) -> None:
    search = make_search(tmp_path, max_candidates=6)
    search.ctx.baselines = {"eager": None, "compile": None}
    seen: list[list[str]] = []

    def after_root() -> None:
        seen.append([e.type for e in read_events(tmp_path / "events.jsonl")])
        search.ctx.baselines.update(eager=0.2, compile=0.15)

    search.after_root = after_root
    result = search.run()
    assert len(seen) == 1, "timed once"
    assert seen[0].count("verdict") == 1 and "plan" not in seen[0]
    root = result.candidates[0]
    assert root.ms is not None and root.speedup_vs_eager == pytest.approx(0.2 / root.ms)
    # the root's speedup over torch.compile is scaled once the peers are known
    assert root.speedup_vs_compile == pytest.approx(root.speedup_vs_eager * 0.15 / 0.2)
    assert result.baselines == {"eager": 0.2, "compile": 0.15}


def test_deferred_analysis_events_and_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[list[str] | None] = []

    def run_task(task: str, kwargs: dict[str, Any], **_: Any) -> WorkerResult:
        calls.append(kwargs.get("steps"))
        if kwargs.get("steps") == ["baselines"]:
            return WorkerResult(
                True, value={"seconds": {"baselines": 9.0}, "baselines": PEERS.to_dict()}
            )
        value = {
            "seconds": {"dispatch": 3.0, "timeline": 1.0},
            "dispatch": HARVESTED,
            "timeline": {"timeline": [], "detail": "d"},
        }
        return WorkerResult(True, value=value)

    monkeypatch.setattr(worker, "run_task", run_task)
    problem = problem_from_source(SOURCE, "relu.py", validate=False)
    cache = AnalysisCache(tmp_path)
    log = EventLog(None)
    facts = pipeline.analyse(problem, "cuda", log, cache=cache, defer_baselines=True)
    assert calls == [["dispatch", "timeline"]] and facts.degraded == []
    types = [e.type for e in log.events]
    assert types == ["profile"] and log.events[0].data["baselines_deferred"] is True
    assert facts.deferred is not None and set(facts.baselines.values()) == {None}
    assert cache.load(cache.key(problem, "cuda")) is None  # not complete yet: not stored

    got = facts.deferred.measure()
    assert calls[-1] == ["baselines"]
    assert got["eager"] == 0.2 and facts.baselines["compile"] == 0.15  # filled in place
    assert [e.data["name"] for e in log.events if e.type == "baseline"] == [
        "eager",
        "compile",
        "max_autotune",
        "reduce_overhead",
    ]
    facts.deferred.measure()
    assert len(calls) == 2  # once

    # the cache now holds the whole analysis; a hit emits the peers first, as measured
    hit_log = EventLog(None)
    hit = pipeline.analyse(problem, "cuda", hit_log, cache=cache, defer_baselines=True)
    assert len(calls) == 2 and hit.deferred is None and hit.baselines["eager"] == 0.2
    assert [e.type for e in hit_log.events][:4] == ["baseline"] * 4

    # a resumed session reads the peers from their events, after the profile event
    resumed = pipeline.analysis_from_events(log.events)
    assert resumed is not None and resumed.baselines["max_autotune"] == 0.14


def test_peers_that_fail_are_said_and_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def run_task(task: str, kwargs: dict[str, Any], **_: Any) -> WorkerResult:
        if kwargs.get("steps") == ["baselines"]:
            return WorkerResult(False, timed_out=True, seconds=5.0)
        return WorkerResult(True, value={"seconds": {}, "dispatch": {"step_error": "x"}})

    monkeypatch.setattr(worker, "run_task", run_task)
    problem = problem_from_source(SOURCE, "relu.py", validate=False)
    cache = AnalysisCache(tmp_path)
    log = EventLog(None)
    facts = pipeline.analyse(problem, "cuda", log, cache=cache, defer_baselines=True)
    assert facts.deferred is not None
    assert facts.deferred.measure()["eager"] is None
    details = {e.data["detail"] for e in log.events if e.type == "baseline"}
    assert len(details) == 1 and "not measured" in details.pop()
    assert cache.load(cache.key(problem, "cuda")) is None


def test_on_the_cpu_nothing_is_deferred(monkeypatch: pytest.MonkeyPatch) -> None:
    def run_task(task: str, kwargs: dict[str, Any], **_: Any) -> WorkerResult:
        assert "steps" not in kwargs
        return WorkerResult(True, value={"seconds": {}, "dispatch": {"step_error": "x"}})

    monkeypatch.setattr(worker, "run_task", run_task)
    problem = problem_from_source(SOURCE, "relu.py", validate=False)
    log = EventLog(None)
    facts = pipeline.analyse(problem, "cpu", log, defer_baselines=True)
    assert facts.deferred is None
    profile = [e for e in log.events if e.type != "degraded"][-1]  # the failed steps: said
    assert profile.type == "profile" and "baselines_deferred" not in profile.data


def test_the_heartbeat_says_the_baselines_are_being_timed() -> None:
    import io
    import time

    from kernelopt_jupyter.session.progress import TextProgress

    out = io.StringIO()
    progress = TextProgress(out, heartbeat_s=0.05)
    log = EventLog(None)
    log.subscribe(progress)
    log.emit("session_started", problem="p.py", kind="module", device="cuda", agents="offline")
    log.emit("profile", dispatch_map={}, summary="s", facts={}, baselines_deferred=True)
    log.emit("candidate", id="c0", parent=None, agent="harvest", source="x")
    log.emit("verdict", candidate="c0", verdict="pass")
    for _ in range(200):  # wait for the line, however slow the machine (no timing asserted)
        if "still timing the baselines" in out.getvalue():
            break
        time.sleep(0.02)
    progress.close()
    assert "still timing the baselines" in out.getvalue(), out.getvalue()


def test_the_bench_timeline_says_how_long_the_deferred_baselines_took(tmp_path: Path) -> None:
    from kernelopt_jupyter.cli.optimize import search_timeline

    log = EventLog(tmp_path / "events.jsonl")
    log.emit("profile", dispatch_map={}, summary="s", facts={}, baselines_deferred=True)
    log.emit("candidate", id="c0", parent=None, agent="harvest", source="x")
    log.emit("verdict", candidate="c0", verdict="pass")
    log.emit("baseline", name="eager", ms=0.2, measured=True)
    timeline = search_timeline(tmp_path / "events.jsonl")
    assert timeline["first_verdict_s"] is not None
    assert timeline["baselines_after_first_verdict_s"] is not None
    assert timeline["baselines_after_first_verdict_s"] >= 0


def test_with_little_time_left_after_the_first_verdict_the_peers_are_not_timed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the H200 the deferred peers took 11-18 s; with 25 s left they took the time of the
    next candidates. Under ``DEFER_SKIP_S`` left they are not timed, say why, and nothing
    partial is cached."""

    calls: list[list[str] | None] = []

    def run_task(task: str, kwargs: dict[str, Any], **_: Any) -> WorkerResult:
        calls.append(kwargs.get("steps"))
        return WorkerResult(True, value={"seconds": {}, "dispatch": {"step_error": "x"}})

    monkeypatch.setattr(worker, "run_task", run_task)
    problem = problem_from_source(SOURCE, "relu.py", validate=False)
    cache = AnalysisCache(tmp_path)
    log = EventLog(None)
    deadline = Deadline.start(pipeline.DEFER_SKIP_S - 10)
    facts = pipeline.analyse(
        problem, "cuda", log, cache=cache, defer_baselines=True, deadline=deadline
    )
    assert facts.deferred is not None
    got = facts.deferred.measure()
    assert ["baselines"] not in calls and set(got.values()) == {None}
    details = [e.data["detail"] for e in log.events if e.type == "baseline"]
    assert details and all("kept for candidates" in d for d in details)
    assert cache.load(cache.key(problem, "cuda")) is None
    # with time enough they are timed as before
    roomy = pipeline.analyse(
        problem, "cuda", EventLog(None), defer_baselines=True, deadline=Deadline.start(300)
    )
    assert roomy.deferred is not None
    roomy.deferred.measure()
    assert calls[-1] == ["baselines"]


def test_eager_comes_from_the_first_gate_when_the_peers_were_not_timed(tmp_path: Path) -> None:
    from test_search import fake_gpu_gates

    search = make_search(tmp_path, max_candidates=3)
    search.ctx.baselines = {"eager": None, "compile": None}

    def gates(problem: Any, candidate: Any) -> Any:
        report = fake_gpu_gates(problem, candidate)
        perf = report.gate("performance")
        if perf is not None and perf.metrics:
            perf.metrics["eager_ms"] = 0.25
        return report

    search.gate_runner = gates
    search.after_root = lambda: None  # the peers were not timed
    result = search.run()
    assert result.baselines["eager"] == 0.25 and result.baselines["compile"] is None
    root = result.candidates[0]
    assert root.ms is not None and root.speedup_vs_eager == pytest.approx(0.25 / root.ms)
    said = [e.data for e in read_events(tmp_path / "events.jsonl") if e.type == "baseline"]
    assert (
        len(said) == 1
        and said[0]["name"] == "eager"
        and "c0's performance gate" in (said[0]["detail"])
    )


class _FakeAhead:
    """A worker started ahead, as ``DeferredBaselines`` drives it (``begin``, ``request``,
    ``close``), answering with the peers or failing as told."""

    def __init__(self, fail: Exception | None = None) -> None:
        self.fail = fail
        self.begun: tuple[str, dict[str, Any]] | None = None
        self.closed = False

    def begin(self, task: str, kwargs: dict[str, Any]) -> None:
        self.begun = (task, kwargs)

    def request(self, message: Any, timeout_s: float, *, trusted: bool = False) -> Any:
        assert trusted  # the analysis worker ran only the user's reference
        if self.fail is not None:
            raise self.fail
        return {"ok": True, "value": {"seconds": {"baselines": 4.0}, "baselines": PEERS.to_dict()}}

    def close(self) -> None:
        self.closed = True


def _deferred(monkeypatch: pytest.MonkeyPatch, ahead: Any) -> tuple[Any, list[Any]]:
    calls: list[Any] = []

    def run_task(task: str, kwargs: dict[str, Any], **_: Any) -> WorkerResult:
        calls.append(kwargs.get("steps"))
        if kwargs.get("steps") == ["baselines"]:
            return WorkerResult(True, value={"seconds": {}, "baselines": PEERS.to_dict()})
        return WorkerResult(True, value={"seconds": {}, "dispatch": {"step_error": "x"}})

    monkeypatch.setattr(worker, "run_task", run_task)
    monkeypatch.setattr(worker, "prestart_service", lambda **_: ahead)
    problem = problem_from_source(SOURCE, "relu.py", validate=False)
    facts = pipeline.analyse(problem, "cuda", EventLog(None), defer_baselines=True)
    assert facts.deferred is not None
    return facts.deferred, calls


def test_the_peers_worker_started_ahead_times_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """The analysis starts the peers' worker as it returns (its imports then overlap the
    first candidate's verification); ``measure`` hands it the baselines step, reads its
    answer and closes it. No other worker is started."""
    ahead = _FakeAhead()
    deferred, calls = _deferred(monkeypatch, ahead)
    assert deferred.worker is ahead and ahead.begun is None  # started, given nothing yet
    got = deferred.measure()
    assert got["eager"] == 0.2 and got["max_autotune"] == 0.14
    assert ahead.begun is not None
    task, kwargs = ahead.begun
    assert task == "kernelopt_jupyter.analysis.pipeline:analysis_service"
    assert kwargs["task"]["steps"] == ["baselines"] and "relu" in kwargs["task"]["source"]
    assert ahead.closed and deferred.worker is None
    assert calls == [["dispatch", "timeline"]]  # no second worker for the peers


def test_a_dead_worker_ahead_gives_way_to_a_new_one_and_a_late_one_is_said(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kernelopt_jupyter.worker import ServiceError, ServiceTimeout

    dead = _FakeAhead(ServiceError("the worker closed its connection"))
    deferred, calls = _deferred(monkeypatch, dead)
    assert deferred.measure()["eager"] == 0.2  # from the new worker (run_task)
    assert calls[-1] == ["baselines"] and dead.closed

    late = _FakeAhead(ServiceTimeout("no reply within 30 s"))
    deferred, calls = _deferred(monkeypatch, late)
    assert deferred.measure()["eager"] is None
    assert calls == [["dispatch", "timeline"]] and late.closed  # killed, not started again
    details = {e.data["detail"] for e in deferred.log.events if e.type == "baseline"}
    assert len(details) == 1 and "timed out" in details.pop()


def test_a_worker_ahead_the_search_never_used_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    """With little time left after the first verdict, or a search that ended before it, the
    worker started ahead is closed, not left waiting."""
    ahead = _FakeAhead()
    deferred, _ = _deferred(monkeypatch, ahead)
    deferred.close()
    assert ahead.closed and deferred.worker is None
    deferred.close()  # idempotent

    ahead = _FakeAhead()
    deferred, _ = _deferred(monkeypatch, ahead)
    deferred.deadline = Deadline.start(5.0)  # under DEFER_SKIP_S left
    assert deferred.measure()["eager"] is None
    assert ahead.closed and ahead.begun is None


def test_a_real_worker_ahead_answers_as_a_new_worker_does() -> None:
    """The real thing on the CPU: a worker started before its task (``prestart_service``),
    handed ``analysis_service`` later, answers what ``run_task`` of ``analysis_task`` does,
    and leaves no process behind."""
    from _processes import below_us, left_running

    problem = problem_from_source(SOURCE, "relu.py", validate=False)
    before = below_us()
    ahead = worker.prestart_service(device="cpu", preload=pipeline.BASELINES_PRELOAD)
    got = pipeline._run_ahead(ahead, problem, None, ["baselines"])
    direct = pipeline._analysis_worker(problem, "cpu", None, ["baselines"])
    assert direct.ok and got is not None and got.ok
    assert got.value == direct.value == {"seconds": {}}  # no peers off the GPU
    assert not ahead.alive()
    # The whole analysis (dispatch map with the harvest, timeline) in a worker started ahead
    # for it (``prestart_analysis``, taken by ``_analysis_worker``) equals a new worker's.
    pipeline.prestart_analysis("cpu")
    ahead_all = pipeline._analysis_worker(problem, "cpu", None)
    assert worker.take_kept(("analysis", "cpu")) is None  # it was taken
    direct_all = pipeline._analysis_worker(problem, "cpu", None)
    assert ahead_all.ok and direct_all.ok, (ahead_all.describe(), direct_all.describe())
    assert set(ahead_all.value) == set(direct_all.value) == {"seconds", "dispatch", "timeline"}
    for step in ("dispatch", "timeline"):
        assert "step_error" not in ahead_all.value[step], ahead_all.value[step]
        assert ahead_all.value[step].keys() == direct_all.value[step].keys()
    harvest = ahead_all.value["dispatch"]["harvest_data"]
    assert harvest["ok"] and "@triton.jit" in harvest["source"]
    assert harvest["source"] == direct_all.value["dispatch"]["harvest_data"]["source"]
    # A step that raises is its step_error in the worker ahead as in a new worker.
    broken = problem_from_source(
        SOURCE.replace("torch.relu(x)", "undefined_name(x)"), "b.py", validate=False
    )
    pipeline.prestart_analysis("cpu")
    failed = pipeline._analysis_worker(broken, "cpu", None, ["timeline"])
    failed_direct = pipeline._analysis_worker(broken, "cpu", None, ["timeline"])
    assert failed.ok and "step_error" in failed.value["timeline"]
    assert failed.value["timeline"] == failed_direct.value["timeline"]
    assert left_running(before) == []


def test_the_analysis_service_answers_a_task_that_raises_with_its_error() -> None:
    """``analysis_service`` sends the task's exception as data (``run_task`` reports one so),
    not a dead connection the caller would take for a dead worker and run again."""
    import pickle
    import socket

    ours, theirs = socket.socketpair()
    worker.send_frame(ours, pickle.dumps("run"))
    pipeline.analysis_service({"no_such_argument": 1}, theirs)
    reply = worker.load_plain(worker.recv_frame(ours))
    assert reply["ok"] is False and reply["error_type"] == "TypeError"
    ours.close()
    theirs.close()


def test_after_the_quick_start_verdict_the_heartbeat_says_the_analysis_goes_on() -> None:
    """The quick start's verdict comes while the analysis still runs: the phase named is the
    analysis again, not the gate that has ended."""
    import io
    import time

    from kernelopt_jupyter.session.progress import TextProgress

    out = io.StringIO()
    progress = TextProgress(out, heartbeat_s=0.05)
    log = EventLog(None)
    log.subscribe(progress)
    log.emit("session_started", problem="p.py", kind="module", device="cuda", agents="offline")
    log.emit("candidate", id="c1", parent=None, agent="quickstart", source="x")
    log.emit("verdict", candidate="c1", verdict="fail")
    for _ in range(200):  # wait for the line, however slow the machine (no timing asserted)
        if "still analysing" in out.getvalue():
            break
        time.sleep(0.02)
    progress.close()
    text = out.getvalue()
    assert "still analysing" in text.split("c1: ")[-1], text  # said after the verdict's line
