"""Step mode as a conversation: every decision at every pause is acted on or answered at once
with why not, and where no plan is left the person ends the search, submits code or gives a
direction; the search never loops on empty Planner steps."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from test_search import ROOT, make_search
from test_stepping_replan import _drive

from kernelopt_jupyter.agents.search import BeamSearch
from kernelopt_jupyter.agents.stepping import StepControl

#: The person's own candidate: the root with the block size the stand-in GPU likes best.
PERSON_CODE = ROOT.replace("'XBLOCK': 256", "'XBLOCK': 1024")


def _pauses(search: BeamSearch) -> list[dict[str, Any]]:
    return [e.data for e in search.log.of_type("step_paused")]


def _last_pause(search: BeamSearch) -> dict[str, Any]:
    return _pauses(search)[-1]


def test_reject_then_no_plan_then_own_code_is_gated_and_the_search_ends(
    tmp_path: Path,
) -> None:
    search = make_search(tmp_path, max_candidates=12)

    def person(agent: str, nth: int) -> Callable[[StepControl], None]:
        pause = _last_pause(search)
        payload = pause["payload"]
        if agent == "planner" and payload.get("plans"):
            return lambda c: c.reject("not these")
        if "no_plan" in payload:
            if "answer" in payload:
                return lambda c: c.end()
            return lambda c: c.edit_candidate(PERSON_CODE)
        return lambda c: c.approve()

    _drive(search, person)
    no_plan = [p for p in _pauses(search) if "no_plan" in p["payload"]]
    assert no_plan, "the Planner's empty answer was never put to the person"
    first = no_plan[0]
    assert first["actions"] == ["end", "approve", "edit_candidate", "direction", "stop"]
    assert "No untried plan applies to c0" in first["payload"]["no_plan"]
    mine = [g for g in search.gated if g.candidate.agent == "person"]
    assert [g.candidate.source for g in mine] == [PERSON_CODE]
    assert mine[0].candidate.parent == "c0" and mine[0].passed
    # The pause was offered again with what became of the code, then the person ended it.
    answer = no_plan[1]["payload"]["answer"]
    assert f"gated as {mine[0].candidate.id}, a child of c0: it passed" in answer
    assert not search.control.stop_requested
    finished = search.log.of_type("step_resumed")[-1].data
    assert finished["action"] == "end"


def test_with_no_plan_left_anywhere_the_search_ends_instead_of_looping(tmp_path: Path) -> None:
    search = make_search(tmp_path, max_candidates=12, iterations=5)

    def person(agent: str, nth: int) -> Callable[[StepControl], None]:
        payload = _last_pause(search)["payload"]
        if agent == "planner" and payload.get("plans"):
            return lambda c: c.reject("no")
        return lambda c: c.approve()

    _drive(search, person, max_pauses=200)
    profilers = [p for p in _pauses(search) if p["agent"] == "profiler"]
    assert len(profilers) == 1  # not profiler -> empty planner for every iteration left
    ended = [e.data["reason"] for e in search.log.of_type("decision") if e.data["kind"] == "best"]
    assert ended  # it finished by itself, with the root as the best
    assert not search.control.stop_requested


def test_a_decision_the_pause_does_not_offer_is_answered_at_once(tmp_path: Path) -> None:
    search = make_search(tmp_path, max_candidates=12)
    answers: list[str | None] = []

    def person(agent: str, nth: int) -> Callable[[StepControl], None]:
        payload = _last_pause(search)["payload"]
        if "no_plan" in payload:

            def at_no_plan(c: StepControl) -> None:
                answers.append(c.edit_plan("use the vendor libraries"))
                c.end()

            return at_no_plan
        if agent == "planner" and payload.get("plans"):

            def at_planner(c: StepControl) -> None:
                answers.append(c.edit_plan("fuse it"))  # the offline Executor ignores text
                c.reject("no")

            return at_planner
        return lambda c: c.approve()

    _drive(search, person)
    assert answers[0] is not None and answers[0].startswith("Not sent (edit the plan)")
    assert "offline Executor applies a plan by its kind of change" in answers[0]
    assert "give a direction" in answers[0]
    plan_edit_at_no_plan = answers[-1]
    assert plan_edit_at_no_plan is not None and "no plan is left to edit" in plan_edit_at_no_plan
    assert "submit your own code" in plan_edit_at_no_plan


def test_a_direction_at_no_plan_brings_back_the_plan_it_names(tmp_path: Path) -> None:
    search = make_search(tmp_path, max_candidates=12)
    first_titles: list[str] = []

    def person(agent: str, nth: int) -> Callable[[StepControl], None]:
        payload = _last_pause(search)["payload"]
        plans = payload.get("plans") or []
        if agent == "planner" and plans and not first_titles:
            first_titles.extend(p["title"] for p in plans)
            return lambda c: c.reject("not now")
        if agent == "planner" and plans and "graph" in plans[0]["title"].lower():
            return lambda c: c.approve()
        if "no_plan" in payload and not search.ctx.directions:
            return lambda c: c.direct("the CUDA graph after all")
        if "no_plan" in payload:
            return lambda c: c.end()
        if agent == "planner":
            return lambda c: c.reject("no")
        return lambda c: c.approve()

    _drive(search, person)
    assert any("graph" in t.lower() for t in first_titles)
    assert search.ctx.directions == ["the CUDA graph after all"]
    graphed = [g for g in search.gated if "CUDA-graph capture" in g.candidate.source]
    assert graphed, "the direction did not bring back the rejected graph plan"
