"""A scripted Claude session end to end: the real SDK against the fake API, the Executor's
sources sent through the real gates (``verify_candidate`` on CPU), the failing gate's
diagnostic fed back to the Executor, everything written through an on-disk EventLog."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropic, overloaded, reply

from kernelopt_jupyter.agents.base import (
    AgentContext,
    AgentIO,
    KernelUnit,
    StepRecord,
)
from kernelopt_jupyter.agents.claude import ClaudePolicy
from kernelopt_jupyter.candidate import Candidate
from kernelopt_jupyter.events import EventLog, read_events
from kernelopt_jupyter.problem import problem_from_source
from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

DATA = Path(__file__).parent / "data" / "claude"
FAKE_KEY = "sk-ant-fake-session-key-0123456789"
EPILOGUE = "triton_poi_fused_addmm_relu_0"


def test_scripted_session_produces_a_candidate_that_passes_the_gates(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    problem_path = DATA / "linear_relu.py"
    problem = problem_from_source(problem_path.read_text(), str(problem_path))
    good = (DATA / "linear_relu_fused.py").read_text()
    # A plausible first attempt with a real bug: the bias is dropped from the epilogue.
    buggy = good.replace("tl.maximum(y + b, 0.0)", "tl.maximum(y, 0.0)")
    assert buggy != good
    ctx = AgentContext(
        problem=problem,
        device="cpu",
        baselines={"eager": None},
        kernels=[
            KernelUnit("extern_kernels.mm", "vendor", ops=["mm"], bound="compute"),
            KernelUnit(EPILOGUE, "triton", ops=["add", "relu"], bound="memory"),
        ],
    )
    root = Candidate("c0", good.replace("tl.maximum(y + b, 0.0)", "tl.maximum(y + b, 0.0) * 1.0"))

    log = EventLog(tmp_path / "run" / "events.jsonl")
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        fake.script(
            reply(
                "The matmul stays with cuBLAS; the epilogue is memory-bound.",
                (
                    "report_bottlenecks",
                    {
                        "summary": "Epilogue after a vendor matmul.",
                        "bottlenecks": [
                            {"kernel": EPILOGUE, "share": None, "bound": "memory", "note": "x"}
                        ],
                    },
                ),
            ),
            reply(
                "One plan.",
                (
                    "propose_plans",
                    {
                        "plans": [
                            {
                                "title": "Drop the redundant multiply in the epilogue",
                                "rationale": "One fewer op per element.",
                                "action": "rewrite",
                                "targets": [EPILOGUE],
                            }
                        ]
                    },
                ),
            ),
            overloaded(),  # the first Executor request meets an overloaded API
            reply(
                "Editing.",
                ("submit_candidate", {"source": buggy, "explanation": "a", "dispatch_only": False}),
            ),
            reply(
                "I dropped the bias; putting it back.",
                ("submit_candidate", {"source": good, "explanation": "b", "dispatch_only": False}),
            ),
            reply(
                "Done.",
                (
                    "record_experience",
                    {
                        "explanations": [{"candidate": "c2", "text": "Removed a multiply."}],
                        "experience": [],
                    },
                ),
            ),
        )
        policy = ClaudePolicy(sleep=lambda s: None)

        def io(agent: str, step: int) -> AgentIO:
            return AgentIO(log, agent, step)

        report = policy.profile(ctx, io("profiler", 0))
        (plan,) = policy.plan(ctx, report, root, 4, io("planner", 1))
        options = VerifyOptions(device="cpu", seeds=3)

        first = policy.execute(ctx, plan, root, None, io("executor", 2))
        assert first.source == buggy
        verdict1 = verify_candidate(problem, first.source, options)
        assert verdict1.verdict == "fail"
        failing = next(g for g in verdict1.gates if g.status == "fail")
        assert failing.name == "correctness"
        feedback = f"{failing.name} gate failed: {failing.detail}"

        second = policy.execute(ctx, plan, root, feedback, io("executor", 3))
        assert second.source == good
        verdict2 = verify_candidate(problem, second.source, options)
        assert verdict2.verdict == "pass", verdict2.to_dict()
        assert [g.status for g in verdict2.gates] == ["pass", "pass", "pass", "skipped"]

        child = Candidate("c2", second.source, parent="c0", agent="claude", plan_id=plan.id)
        step = StepRecord(
            child, root.source, plan, verdict2.verdict, None, None, verdict2.to_dict()["gates"]
        )
        summary = policy.summarize(ctx, [step], io("summarizer", 4))
        assert summary.explanations == {"c2": "Removed a multiply."}

        # The retry is a repair in the same conversation: the model's own failed call is
        # answered with the gate's diagnostic and the diff of its attempt.
        repair = fake.requests[4].body["messages"]
        assert [m["role"] for m in repair] == ["user", "assistant", "user"]
        result = repair[2]["content"][0]
        assert result["type"] == "tool_result" and result["is_error"] is True
        assert result["tool_use_id"] == repair[1]["content"][-1]["id"]
        assert failing.detail[:60] in result["content"]
        assert "-    tl.store" in result["content"] or "tl.maximum(y, 0.0)" in result["content"]
        assert fake.pending == 0

    events = read_events(tmp_path / "run" / "events.jsonl")
    said = "".join(e.data["delta"] for e in events if e.type == "agent_text")
    assert "Editing." in said
    assert [(e.data["agent"], e.data["status"]) for e in events if e.type == "retry"] == [
        ("executor", "529")
    ]
    assert [e.data["tool"] for e in events if e.type == "tool_call"] == [
        "report_bottlenecks",
        "propose_plans",
        "submit_candidate",
        "submit_candidate",
        "record_experience",
    ]
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert FAKE_KEY not in path.read_text(errors="replace"), path
