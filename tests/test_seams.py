"""Typed seams: answers and reports cross the search as objects; their dict forms round-trip."""

from __future__ import annotations

from typing import Any

import pytest

from kernelopt_jupyter.agents.base import (
    PLAN_ACTION_NAMES,
    PLAN_ACTIONS,
    Bottleneck,
    Edit,
    ExperienceItem,
    Plan,
    ProfileReport,
    Summary,
    TuneProposal,
)
from kernelopt_jupyter.verify.report import GATE_STATUSES, GateResult, VerifyReport

ANSWERS: list[Any] = [
    ProfileReport([Bottleneck("k", 0.5, "memory", "hot"), Bottleneck("v", None, None, "")], "s"),
    Plan("c1.p0", "Retune k", "why", "retile", ["k"], {"kernel": "k"}),
    Edit("import torch\n", "changed", True),
    Edit(None, "could not"),
    TuneProposal([("XBLOCK 2048", "src a"), ("4 warps", "src b")], "two"),
    Summary({"c1": "faster"}, [ExperienceItem("p", "retile", 1.2, "bigger blocks", "relu")]),
]


@pytest.mark.parametrize("answer", ANSWERS, ids=lambda a: type(a).__name__)
def test_agent_answers_round_trip(answer: Any) -> None:
    back = type(answer).from_dict(answer.to_dict())
    assert back == answer
    assert back.to_dict() == answer.to_dict()


def test_edit_from_a_recorded_executor_output_ignores_search_fields() -> None:
    recorded = {**Edit("s", "e").to_dict(), "plan_id": "c0.p1", "attempt": 2, "_texts": ["x"]}
    assert Edit.from_dict(recorded) == Edit("s", "e")


def test_verify_report_round_trips_and_refuses_other_shapes() -> None:
    report = VerifyReport(
        "p.py",
        "c3",
        "cuda",
        [
            GateResult("static", "pass", "ok", {"launches": 2}),
            GateResult("correctness", "pass", "3 seeds", {"seeds": [0, 1, 2], "max_abs_err": 1e-6}),
            GateResult("fp64", "skipped", "not needed"),
            GateResult("performance", "pass", "1.5x", {"speedup": 1.5, "candidate_ms": 0.1}),
        ],
        dispatch_only=False,
        seconds=2.25,
    )
    back = VerifyReport.from_dict(report.to_dict())
    assert back.to_dict() == report.to_dict()
    assert back.speedup == 1.5 and back.gates[0].metrics == {"launches": 2}
    # The shape a test fake used to send (timings at the gate's top level, no schema) is
    # not a report: the search no longer accepts it anywhere.
    fake = {"verdict": "pass", "gates": [{"name": "performance", "status": "pass"}]}
    with pytest.raises(ValueError, match="schema-1"):
        VerifyReport.from_dict(fake)
    broken = report.to_dict()
    broken["gates"][0]["status"] = "ok"
    with pytest.raises(ValueError, match="status"):
        VerifyReport.from_dict(broken)
    assert set(GATE_STATUSES) == {"pass", "fail", "skipped"}


def test_one_list_of_plan_actions() -> None:
    from kernelopt_jupyter.agents import claude_tools, offline

    assert len(set(PLAN_ACTION_NAMES)) == len(PLAN_ACTIONS)
    assert all(a.description for a in PLAN_ACTIONS)
    # The Claude planner's tool takes its list from the one home, not a copy of it.
    assert claude_tools.PLAN_ACTION_NAMES is PLAN_ACTION_NAMES
    # Every action the offline policy can carry out has a description there, and no other.
    assert set(offline._WHY) == {a.name for a in PLAN_ACTIONS if a.offline}


def test_the_session_is_a_controller(tmp_path: Any) -> None:
    from kernelopt_jupyter.problem import problem_from_source
    from kernelopt_jupyter.session import (
        OptimizationSession,
        SearchOptions,
        SessionController,
        StepDecisions,
    )

    source = "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
    source += "        return x + 1\ndef get_inputs():\n    return [torch.ones(4)]\n"
    problem = problem_from_source(source, "add1.py", validate=False)
    session = OptimizationSession(problem, SearchOptions(device="cpu", out_dir=tmp_path))
    assert isinstance(session, SessionController)
    assert isinstance(session.step, StepDecisions)
    assert not session.running
