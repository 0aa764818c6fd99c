"""The Claude policy inside the real beam search: the fake API answers each role, a stand-in
for the GPU gates times candidates by their launch configuration, and the search must end on
the Tuner's best variant, with every agent's text, tool calls and usage in the event log."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from _reports import report_of
from fake_anthropic import FakeAnthropic, Scripted, overloaded, plain_model, reply, role_of

from kernelopt_jupyter.agents.base import AgentContext, KernelUnit
from kernelopt_jupyter.agents.claude import ClaudePolicy
from kernelopt_jupyter.agents.claude_tools import launch_configs
from kernelopt_jupyter.agents.search import BeamSearch, SearchConfig
from kernelopt_jupyter.candidate import Candidate
from kernelopt_jupyter.events import EventLog, read_events
from kernelopt_jupyter.problem import Problem, problem_from_source
from kernelopt_jupyter.verify.report import VerifyReport

DATA = Path(__file__).parent / "data" / "claude"
FAKE_KEY = "sk-ant-fake-search-key-9876543210"
KERNEL = "bias_relu_kernel"


def stand_in_gates(problem: Problem, candidate: Candidate) -> VerifyReport:
    """Pass what defines ModelNew; 'time' it by BLOCK (best at 2048), as a GPU would differ."""
    found = launch_configs(candidate.source)
    if found is None or "class ModelNew" not in candidate.source:
        return report_of(candidate.id, fail_at="static", detail="x")
    block = found[KERNEL]["BLOCK"]
    ms = 0.1 + abs(block - 2048) / 10000
    return report_of(candidate.id, ms=ms, speedup=0.2 / ms)


def answer(body: dict[str, Any]) -> Scripted:
    """The fake model: a fixed, sensible answer per role."""
    role = role_of(body)
    task = "\n".join(b.get("text", "") for b in body["messages"][0]["content"])
    if role == "profiler":
        report = {
            "summary": "The epilogue kernel is memory-bound.",
            "bottlenecks": [{"kernel": KERNEL, "share": 0.4, "bound": "memory", "note": "x"}],
        }
        return reply("Looking at the dispatch map.", ("report_bottlenecks", report))
    if role == "planner":
        plan = {"title": "Tidy the epilogue", "rationale": "r", "action": "rewrite"}
        return reply("One plan.", ("propose_plans", {"plans": [plan, plan]}))
    if role == "executor":
        parent = re.search(r"```python\n(.*?)\n```", task, re.S)
        assert parent is not None
        source = parent.group(1).replace("tl.maximum(y + b, 0.0)", "tl.maximum(b + y, 0.0)")
        edit = {"source": source + "\n", "explanation": "commuted", "dispatch_only": False}
        return reply("Editing.", ("submit_candidate", edit))
    if role == "tuner":
        variants = [
            {"label": f"BLOCK {b}", "configs": {KERNEL: {"BLOCK": b}}} for b in (256, 2048, 4096)
        ]
        data = {"explanation": "memory-bound: try block sizes", "variants": variants}
        return reply("Block sizes.", ("propose_launch_configs", data))
    if role == "summarizer":
        ids = re.findall(r"## Step: candidate `(\w+)`", task)
        data = {
            "explanations": [{"candidate": i, "text": f"step {i}"} for i in ids],
            "experience": [
                {"pattern": "epilogue", "action": "retile", "outcome": 1.2, "lesson": "big blocks"}
            ],
        }
        return reply("Summary.", ("record_experience", data))
    raise AssertionError(f"unexpected request for role {role}")


def test_beam_search_with_the_claude_policy(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    problem = problem_from_source((DATA / "linear_relu.py").read_text(), "linear_relu.py")
    root = Candidate("c0", (DATA / "linear_relu_fused.py").read_text(), agent="harvest")
    ctx = AgentContext(
        problem=problem,
        device="cuda",
        baselines={"eager": 0.2},
        kernels=[
            KernelUnit("extern_kernels.mm", "vendor", share=0.6),
            KernelUnit(KERNEL, "triton", share=0.4, bound="memory"),
        ],
    )
    log = EventLog(tmp_path / "events.jsonl")
    config = SearchConfig(device="cuda", iterations=1, plans=1, retries=2, beam=1, max_candidates=8)
    with FakeAnthropic(responder=answer) as fake:
        fake.script(overloaded())  # the very first request is turned away once
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        policy = ClaudePolicy(sleep=lambda s: None)
        search = BeamSearch(
            problem, policy, log, config, gate_runner=stand_in_gates, context=ctx, root=root
        )
        result = search.run()

    assert result.status == "finished" and result.best is not None
    best = launch_configs(result.best.candidate.source)
    assert best is not None and best[KERNEL]["BLOCK"] == 2048
    assert result.best.candidate.agent == "tuner"

    events = read_events(tmp_path / "events.jsonl")
    tools = {e.data["tool"] for e in events if e.type == "tool_call"}
    assert tools == {
        "report_bottlenecks",
        "propose_plans",
        "submit_candidate",
        "propose_launch_configs",
        "record_experience",
    }
    said = "".join(e.data["delta"] for e in events if e.type == "agent_text")
    assert "Block sizes." in said
    (retry,) = [e for e in events if e.type == "retry"]
    assert retry.data["status"] == "529" and retry.data["agent"] == "profiler"
    finished = [e for e in events if e.type == "agent_finished"]
    assert all(e.data["usage"].get("cost_usd", 0) > 0 for e in finished)
    assert any(e.type == "explanation" for e in events)
    assert FAKE_KEY not in (tmp_path / "events.jsonl").read_text()


def test_plain_model_answers_a_whole_search(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The generic responder the CLI's end-to-end test can use: any problem, any call order.
    problem = problem_from_source((DATA / "linear_relu.py").read_text(), "linear_relu.py")
    root = Candidate("c0", (DATA / "linear_relu_fused.py").read_text(), agent="harvest")
    ctx = AgentContext(problem=problem, device="cuda", baselines={"eager": 0.2}, kernels=[])
    config = SearchConfig(device="cuda", iterations=1, plans=2, retries=1, beam=1)
    with FakeAnthropic(responder=plain_model) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        search = BeamSearch(
            problem,
            ClaudePolicy(),
            EventLog(tmp_path / "events.jsonl"),
            config,
            gate_runner=stand_in_gates,
            context=ctx,
            root=root,
        )
        result = search.run()
    assert result.status == "finished" and not result.notes
    best = launch_configs(result.best.candidate.source) if result.best else None
    assert best is not None and best[KERNEL]["BLOCK"] == 2048  # 1024 doubled by the Tuner
