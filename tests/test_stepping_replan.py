"""Step mode: rejecting an Executor's edit or a Tuner's step re-plans with the person's reason,
as a rejected Planner step does, and the search goes on; the budget clock counts from the
start of the run (the analysis included)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_search import make_search

from kernelopt_jupyter.agents.search import BeamSearch
from kernelopt_jupyter.agents.stepping import StepControl
from kernelopt_jupyter.analysis import pipeline
from kernelopt_jupyter.analysis.pipeline import AnalysisFacts
from kernelopt_jupyter.deadline import Deadline
from kernelopt_jupyter.events import EventLog
from kernelopt_jupyter.problem import Problem, problem_from_source
from kernelopt_jupyter.session import OptimizationSession, SearchOptions

#: A person's answer to a pause: (agent paused, how many pauses of that agent so far) -> call.
Person = Callable[[str, int], Callable[[StepControl], None]]


def _drive(search: BeamSearch, person: Person, max_pauses: int = 40) -> None:
    """Run ``search`` in step mode, answering each pause with ``person``; stop after enough."""
    search.control = StepControl(enabled=True)
    seen: dict[str, int] = {}

    def answer() -> None:
        answered = 0
        while answered < max_pauses:
            while not (search.control.pending and search.control.pause_count > answered):
                if not runner.is_alive():
                    return
                threading.Event().wait(0.002)
            answered = search.control.pause_count
            agent = search.log.of_type("step_paused")[-1].data["agent"]
            seen[agent] = seen.get(agent, 0) + 1
            person(agent, seen[agent])(search.control)
        search.control.stop()

    runner = threading.Thread(target=search.run, daemon=True)
    runner.start()
    helper = threading.Thread(target=answer, daemon=True)
    helper.start()
    runner.join(60)
    helper.join(5)
    assert not runner.is_alive()


def _planner_texts(search: BeamSearch) -> list[str]:
    """The Planner's streamed text, one string per Planner step."""
    steps: dict[int, str] = {}
    for e in search.log.of_type("agent_text"):
        if e.data["agent"] == "planner":
            steps[e.data["step"]] = steps.get(e.data["step"], "") + e.data["delta"]
    return [steps[k] for k in sorted(steps)]


def _paused(search: BeamSearch) -> list[str]:
    return [e.data["agent"] for e in search.log.of_type("step_paused")]


def test_rejecting_an_executor_edit_replans_with_the_reason(tmp_path: Path) -> None:
    search = make_search(tmp_path, max_candidates=12)

    def person(agent: str, nth: int) -> Callable[[StepControl], None]:
        if agent == "executor" and nth == 1:
            return lambda c: c.reject("keep the launch configs, graph it instead")
        return lambda c: c.approve()

    _drive(search, person)
    paused = _paused(search)
    first_reject = paused.index("executor")
    # The next pause after the rejected edit is the Planner's, asked again for the same parent.
    assert paused[first_reject + 1] == "planner"
    texts = _planner_texts(search)
    assert "keep the launch configs, graph it instead" not in texts[0]
    assert "keep the launch configs, graph it instead" in texts[1]
    assert "the Executor's edit for c0.p0" in texts[1]
    # The rejected edit was never gated, and the search went on to gate others.
    rejected = search.log.of_type("step_paused")[first_reject].data["payload"]["source"]
    assert rejected not in [g.candidate.source for g in search.gated]
    assert len(search.gated) > 2


def test_rejecting_a_tuner_step_replans_with_the_reason(tmp_path: Path) -> None:
    search = make_search(tmp_path, max_candidates=12)  # a stand-in GPU: the Tuner runs

    def person(agent: str, nth: int) -> Callable[[StepControl], None]:
        if agent == "tuner" and nth == 1:
            return lambda c: c.reject("no tuning before the graph is in")
        return lambda c: c.approve()

    _drive(search, person)
    paused = _paused(search)
    assert "tuner" in paused
    after = paused[paused.index("tuner") + 1 :]
    # The Summarizer never pauses between; the Planner comes right after the rejected step.
    assert after[0] == "planner"
    texts = _planner_texts(search)
    rejected_in = [t for t in texts if "no tuning before the graph is in" in t]
    assert rejected_in and "the Tuner's variants of c" in rejected_in[0]
    assert not any(g.candidate.agent == "tuner" for g in search.gated[:3])
    assert len(search.gated) > 2  # the search went on


def test_replans_after_rejected_edits_are_bounded(tmp_path: Path) -> None:
    search = make_search(tmp_path, max_candidates=12, iterations=2)

    def person(agent: str, nth: int) -> Callable[[StepControl], None]:
        return (lambda c: c.reject("no")) if agent == "executor" else (lambda c: c.approve())

    _drive(search, person, max_pauses=200)
    assert not search.control.stop_requested  # the search ended by itself
    planners: dict[int, int] = {}
    for e in search.log.of_type("agent_started"):
        if e.data["agent"] == "planner":
            planners[e.data["iteration"]] = planners.get(e.data["iteration"], 0) + 1
    # Every edit rejected: per parent the Planner is asked once and re-asked at most twice.
    assert planners and all(n <= 3 for n in planners.values())
    assert max(planners.values()) == 3
    assert [g.candidate.id for g in search.gated] == ["c0"]


# ------------------------------------------------------------------ the budget clock


def test_budget_seconds_count_from_the_run_start(tmp_path: Path) -> None:
    search = make_search(tmp_path, max_candidates=2, deadline=Deadline(time.monotonic() - 100.0))
    search.run()
    budgets = search.log.of_type("budget")
    assert budgets and budgets[0].data["seconds"] >= 100.0


def test_the_time_budget_includes_what_came_before_the_search(tmp_path: Path) -> None:
    search = make_search(
        tmp_path, max_candidates=30, deadline=Deadline(time.monotonic() - 60.0, 50.0)
    )
    result = search.run()
    assert any("time limit" in n for n in result.notes)
    assert result.candidates == []  # not even the root: the budget was spent before it


ROOT = "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n"


def test_session_budget_clock_counts_the_analysis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from _reports import report_of

    def slow_analysis(problem: Problem, device: str, log: EventLog, **_: Any) -> AnalysisFacts:
        time.sleep(1.5)  # stands in for minutes of CPU analysis
        facts = AnalysisFacts({"eager": None}, [], False, [], ROOT, False, "stand-in harvest")
        log.emit("profile", dispatch_map={}, summary="stand-in", facts=facts.to_dict())
        return facts

    monkeypatch.setattr(pipeline, "analyse", slow_analysis)
    monkeypatch.setattr(pipeline, "profile_candidate", lambda *a, **k: None)
    problem = problem_from_source(
        "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
        "        return x\ndef get_inputs():\n    return [torch.randn(4)]\n",
        "ident.py",
        validate=False,
    )
    options = SearchOptions(
        device="cpu", out_dir=tmp_path, memory_path=None, budget=1, max_seconds=120.0
    )
    session = OptimizationSession(problem, options)
    session._gate = lambda p, c, baselines=(): report_of(c.id, device="cpu")  # type: ignore[method-assign]
    session.run()
    (first, *_) = session.log.of_type("budget")
    assert first.data["seconds"] >= 1.5 and first.data["max_seconds"] == 120.0
