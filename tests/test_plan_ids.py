"""Plan ids name one plan for the whole session, even when a parent is planned again (a later
iteration, or a re-plan after a person's rejection), and whatever reads plans by id (the panel's
state, the report, the change notes) shows each candidate under the plan that made it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_search import make_search
from test_stepping_replan import _drive

from kernelopt_jupyter.agents.base import Plan, plan_id_prefix
from kernelopt_jupyter.agents.memory import ExperienceMemory
from kernelopt_jupyter.agents.offline import OfflinePolicy
from kernelopt_jupyter.agents.replay import ReplayPolicy
from kernelopt_jupyter.agents.search import BeamSearch
from kernelopt_jupyter.agents.stepping import StepControl
from kernelopt_jupyter.events import Event, EventLog, read_events
from kernelopt_jupyter.notebook.changes import ChangeNotes, change_text
from kernelopt_jupyter.session.report import report_notebook
from kernelopt_jupyter.session.state import SessionState


def _plan_events(events: list[Event]) -> list[dict[str, Any]]:
    return [e.data for e in events if e.type == "plan"]


def _assert_each_candidate_under_its_own_plan(events: list[Event]) -> None:
    """Every plan id is given once, and each executor candidate's plan id is the plan whose
    title it carries (its note is the title, '(retry n)' added on a retry)."""
    plans = _plan_events(events)
    ids = [p["plan_id"] for p in plans]
    assert len(ids) == len(set(ids)), ids
    titles = {p["plan_id"]: p["title"] for p in plans}
    made = [e.data for e in events if e.type == "candidate" and e.data["agent"] == "executor"]
    assert made
    for cand in made:
        assert cand["note"].startswith(titles[cand["plan_id"]]), cand["id"]


def _cpu_search(tmp_path: Path, **overrides: Any) -> BeamSearch:
    """One plan per Planner step over three iterations: the root is planned again."""
    settings: dict[str, Any] = {
        "device": "cpu",
        "max_candidates": 8,
        "iterations": 3,
        "plans": 1,
        "early_stop": False,
    }
    return make_search(tmp_path, **{**settings, **overrides})


# ------------------------------------------------------------------ the ids the search gives


def test_plan_id_prefix_numbers_a_parents_later_plannings_apart() -> None:
    assert plan_id_prefix("c1", set()) == "c1.p"
    assert plan_id_prefix("c1", {"c1.p0", "c1.p1", "c10.p0", "c1.tune"}) == "c1.r1.p"
    assert plan_id_prefix("c1", {"c1.p0", "c1.r1.p0", "c1.r1.p1"}) == "c1.r2.p"
    assert plan_id_prefix("c1", {"c10.p0", "c11.r1.p0"}) == "c1.p"


def test_a_parent_planned_in_two_iterations_gets_new_plan_ids(tmp_path: Path) -> None:
    search = _cpu_search(tmp_path)
    search.run()
    events = read_events(tmp_path / "events.jsonl")
    plans = _plan_events(events)
    rounds: dict[str, list[str]] = {}
    for p in plans:
        rounds.setdefault(p["parent"], []).append(p["plan_id"])
    again = {parent: ids for parent, ids in rounds.items() if len(ids) > 1}
    assert "c0" in again  # the fixture's point: the root is planned twice
    # The first planning reads as before; a later one says it is a later round.
    assert again["c0"][:2] == ["c0.p0", "c0.r1.p0"]
    _assert_each_candidate_under_its_own_plan(events)
    # The Planner's recorded answer (what a replay hands back) carries the same ids.
    answered = [
        p["id"]
        for e in events
        if e.type == "agent_finished" and e.data["agent"] == "planner"
        for p in e.data["output"]["plans"]
    ]
    assert answered == [p["plan_id"] for p in plans]
    assert search.ctx.plan_ids == set(answered)


def test_a_rejected_planner_step_replans_under_new_ids_and_a_plan_rejection_finds_its_plan(
    tmp_path: Path,
) -> None:
    search = make_search(tmp_path, max_candidates=6, iterations=1)
    rejected: list[str] = []

    def person(agent: str, nth: int) -> Callable[[StepControl], None]:
        if agent == "planner" and nth == 1:
            return lambda c: c.reject("not these")
        if agent == "planner" and nth == 2:
            # Reject one plan of the second answer by its id.
            payload = search.log.of_type("step_paused")[-1].data["payload"]
            rejected.append(payload["plans"][0]["id"])
            return lambda c: c.reject_plan(rejected[0], "not this one either")
        return lambda c: c.approve()

    _drive(search, person)
    events = search.log.events
    plans = _plan_events(events)
    first = [p["plan_id"] for p in plans[:4]]
    assert first == ["c0.p0", "c0.p1", "c0.p2", "c0.p3"]
    # Asked again for the same parent: new ids, none of the rejected step's.
    assert rejected and rejected[0].startswith("c0.r1.p") and rejected[0] not in first
    ids = [p["plan_id"] for p in plans]
    assert len(ids) == len(set(ids))
    # The rejection reached the plan it named, and only it.
    ran = {
        e.data["payload"]["plan_id"]
        for e in events
        if e.type == "step_paused" and e.data["agent"] == "executor"
    }
    assert rejected[0] not in ran and not ran & set(first)
    assert ran and all(pid.startswith("c0.r1.p") for pid in ran)
    assert any(f"{rejected[0]} (" in r for r in search.ctx.rejections)
    _assert_each_candidate_under_its_own_plan(events)


class _ParentIndexIds(OfflinePolicy):
    """The offline Planner numbering its plans by parent and index only (as it once did)."""

    def plan(self, ctx: Any, report: Any, parent: Any, n: int, io: Any) -> list[Plan]:
        plans = super().plan(ctx, report, parent, n, io)
        for i, plan in enumerate(plans):
            plan.id = f"{parent.id}.p{i}"
        return plans


def test_the_search_renames_a_reused_id_from_any_policy(tmp_path: Path) -> None:
    search = _cpu_search(tmp_path)
    search.policy = _ParentIndexIds(ExperienceMemory(None))
    search.run()
    events = read_events(tmp_path / "events.jsonl")
    ids = [p["plan_id"] for p in _plan_events(events)]
    assert "c0.p0" in ids and "c0.p0.2" in ids
    _assert_each_candidate_under_its_own_plan(events)


def test_a_replay_and_a_resume_keep_the_recorded_plan_ids(tmp_path: Path) -> None:
    _cpu_search(tmp_path / "a").run()
    recording = read_events(tmp_path / "a" / "events.jsonl")
    original = [p["plan_id"] for p in _plan_events(recording)]
    assert len(original) == len(set(original)) > 2

    replay = _cpu_search(tmp_path / "b")
    replay.policy = ReplayPolicy(recording)
    replay.run()
    assert [p["plan_id"] for p in _plan_events(replay.log.events)] == original

    # Interrupted before the third Planner step: the recording's two are replayed with their
    # ids, and the live Planner that takes over numbers its plans around them.
    starts = [
        i
        for i, e in enumerate(recording)
        if e.type == "agent_started" and e.data["agent"] == "planner"
    ]
    resumed = _cpu_search(tmp_path / "c")
    resumed.policy = ReplayPolicy(recording[: starts[2]], fallback=OfflinePolicy())
    resumed.run()
    ids = [p["plan_id"] for p in _plan_events(resumed.log.events)]
    assert ids[:2] == original[:2]
    assert len(ids) == len(set(ids)) > 2
    _assert_each_candidate_under_its_own_plan(resumed.log.events)


# ------------------------------------------------------------------ readers of plan ids


def _plan(plan_id: str, title: str, parent: str) -> tuple[str, dict[str, Any]]:
    return "plan", {"plan_id": plan_id, "agent": "planner", "title": title, "parent": parent}


def _cand(cid: str, parent: str, agent: str, plan_id: str, note: str) -> tuple[str, dict[str, Any]]:
    return "candidate", {
        "id": cid,
        "parent": parent,
        "agent": agent,
        "plan_id": plan_id,
        "source": f"# {cid}\n",
        "diff": "",
        "dispatch_only": False,
        "note": note,
    }


def _executor(plan_id: str, explanation: str) -> tuple[str, dict[str, Any]]:
    output = {"source": "x", "explanation": explanation, "plan_id": plan_id, "attempt": 0}
    return "agent_finished", {"agent": "executor", "step": 1, "output": output}


#: A log written before plan ids were unique: c0 planned twice, both times ``c0.p0``.
REUSED = [
    _plan("c0.p0", "retune _row_max_kernel", "c0"),
    _executor("c0.p0", "_row_max_kernel: num_warps 1->2"),
    _cand("c1", "c0", "executor", "c0.p0", "retune _row_max_kernel"),
    _cand("c2", "c1", "tuner", "c0.p0", "tune XBLOCK 256->512"),
    _plan("c0.p0", "launch config: retune _shift_exp_kernel", "c0"),
    _executor("c0.p0", "_shift_exp_kernel: num_warps 1->4"),
    _cand("c3", "c0", "executor", "c0.p0", "launch config: retune _shift_exp_kernel"),
]


def _log(tmp_path: Path | None = None) -> EventLog:
    log = EventLog(tmp_path / "events.jsonl" if tmp_path else None)
    for kind, data in REUSED:
        log.emit(kind, **data)
    return log


def test_a_candidate_keeps_its_own_plans_title_after_a_later_plan_event() -> None:
    events = _log().events
    state = SessionState()
    state.apply_all(events[:4])
    state.take_changes()
    state.apply(events[4])  # the later plan reusing the id
    assert "c1" not in state.take_changes().candidates  # nothing to redraw
    state.apply_all(events[5:])
    assert state.candidate_plan_title(state.candidates["c1"]) == "retune _row_max_kernel"
    assert state.candidate_plan_title(state.candidates["c2"]) == "retune _row_max_kernel"
    assert state.candidate_plan_title(state.candidates["c3"]) == (
        "launch config: retune _shift_exp_kernel"
    )
    notes = ChangeNotes()
    for event in events:
        notes.apply(event)
    assert change_text(state, state.candidates["c1"], notes) == "_row_max_kernel: num_warps 1->2"
    assert change_text(state, state.candidates["c3"], notes) == "_shift_exp_kernel: num_warps 1->4"


def test_a_candidate_seen_before_its_plan_takes_that_plan() -> None:
    state = SessionState()
    state.apply(Event("candidate", _cand("c1", "c0", "executor", "s2-p1", "")[1]))
    state.take_changes()
    state.apply(Event("plan", _plan("s2-p1", "fuse the epilogue", "c0")[1]))
    assert state.take_changes().candidates == {"c1"}
    state.apply(Event("plan", _plan("s2-p1", "something else", "c0")[1]))
    assert state.candidate_plan_title(state.candidates["c1"]) == "fuse the epilogue"


def test_the_report_shows_each_candidate_under_its_own_plan(tmp_path: Path) -> None:
    _log(tmp_path)
    text = "".join(
        "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        for cell in report_notebook(tmp_path)["cells"]
    )
    rows = {
        line.split("|")[1].strip(): line for line in text.splitlines() if line.startswith("| c")
    }
    assert "retune _row_max_kernel" in rows["c1"] and "_shift_exp" not in rows["c1"]
    assert "retune _row_max_kernel" in rows["c2"]
    assert "retune _shift_exp_kernel" in rows["c3"]


def test_the_claude_planner_gives_new_ids_when_a_parent_is_planned_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from fake_anthropic import FakeAnthropic
    from test_claude_search import DATA, FAKE_KEY, KERNEL, answer, stand_in_gates

    from kernelopt_jupyter.agents.base import AgentContext, KernelUnit
    from kernelopt_jupyter.agents.claude import ClaudePolicy
    from kernelopt_jupyter.agents.search import SearchConfig
    from kernelopt_jupyter.candidate import Candidate
    from kernelopt_jupyter.problem import problem_from_source

    problem = problem_from_source((DATA / "linear_relu.py").read_text(), "linear_relu.py")
    ctx = AgentContext(
        problem=problem,
        device="cpu",
        baselines={"eager": 0.2},
        kernels=[KernelUnit(KERNEL, "triton", share=0.4, bound="memory")],
    )
    config = SearchConfig(
        device="cpu", iterations=2, plans=2, retries=1, beam=4, max_candidates=8, early_stop=False
    )
    with FakeAnthropic(responder=answer) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        search = BeamSearch(
            problem,
            ClaudePolicy(sleep=lambda s: None),
            EventLog(tmp_path / "events.jsonl"),
            config,
            gate_runner=stand_in_gates,
            context=ctx,
            root=Candidate("c0", (DATA / "linear_relu_fused.py").read_text(), agent="harvest"),
        )
        search.run()
    events = read_events(tmp_path / "events.jsonl")
    parents = [p["parent"] for p in _plan_events(events)]
    assert parents.count("c0") >= 4  # two plans in each of two iterations
    _assert_each_candidate_under_its_own_plan(events)
