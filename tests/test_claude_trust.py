"""Issue 14: Claude agents a person can trust with a key and a budget, against the fake API.

Fail-fast preflight, x-should-retry, per-call deadlines, budgets that stop a search, stop that
closes the stream in flight, agent_failed with usage, and no key in anything written or sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _reports import report_of
from fake_anthropic import (
    CutStream,
    ErrorReply,
    FakeAnthropic,
    overloaded,
    plain_model,
    rate_limited,
    reply,
)

from kernelopt_jupyter.agents.base import AgentContext, AgentIO, KernelUnit, Plan, ProfileReport
from kernelopt_jupyter.agents.claude import ClaudePolicy
from kernelopt_jupyter.agents.claude_client import ClaudeError, ClaudeUnavailable
from kernelopt_jupyter.agents.search import (
    BeamSearch,
    BudgetExhausted,
    SearchConfig,
    SearchStopped,
    source_key,
)
from kernelopt_jupyter.candidate import Candidate
from kernelopt_jupyter.events import EventLog, read_events
from kernelopt_jupyter.problem import Problem, problem_from_source
from kernelopt_jupyter.verify.report import VerifyReport

DATA = Path(__file__).parent / "data" / "claude"
FAKE_KEY = "sk-ant-fake-trust-key-0123456789abcdef"
REPORT = {"summary": "s", "bottlenecks": []}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(api_key=FAKE_KEY) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.delenv("KERNELOPT_MODEL", raising=False)
        yield server


def problem() -> Problem:
    return problem_from_source((DATA / "linear_relu.py").read_text(), "linear_relu.py")


def ctx(device: str = "cpu") -> AgentContext:
    return AgentContext(problem=problem(), device=device, baselines={"eager": None}, kernels=[])


def io(log: EventLog | None = None, agent: str = "profiler") -> AgentIO:
    return AgentIO(log if log is not None else EventLog(), agent, step=0)


# ----------------------------------------------------------------- 5: fail fast


def test_preflight_catches_a_bad_key_before_anything_else(
    fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong-key-000000000000")
    policy = ClaudePolicy(sleep=lambda s: None)
    with pytest.raises(ClaudeUnavailable, match=r"401 authentication_error.*ANTHROPIC_API_KEY"):
        policy.preflight()
    (req,) = fake.requests
    assert req.path == "/v1/messages/count_tokens"  # free: nothing was generated or billed


def test_preflight_catches_an_unknown_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeAnthropic(models={"claude-opus-5-5"}) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        ClaudePolicy(model="claude-opus-5-5").preflight()
        with pytest.raises(ClaudeUnavailable, match=r"does not know model 'claude-nope-9' \(404\)"):
            ClaudePolicy(model="claude-nope-9").preflight()


def test_session_fails_fast_on_401_before_analysis(
    fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from kernelopt_jupyter.cli import main

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-revoked-key-1111111111")
    monkeypatch.setenv("KERNELOPT_HOME", str(tmp_path / "home"))
    problem_file = Path(__file__).parents[1] / "kernelopt_jupyter" / "problems" / "row_softmax.py"
    out = tmp_path / "run"
    code = main(["optimize", str(problem_file), "--agents", "claude", "--out", str(out)])
    assert code == 2
    # Nothing was analysed: no event beyond the start, no baseline, no profile.
    events = read_events(out / "events.jsonl") if (out / "events.jsonl").exists() else []
    assert not [e for e in events if e.type in ("baseline", "profile", "candidate")]
    assert [r.path for r in fake.requests] == ["/v1/messages/count_tokens"]


def test_missing_key_exits_2_with_a_message(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kernelopt_jupyter.cli import main

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("KERNELOPT_HOME", str(tmp_path / "home"))
    problem_file = Path(__file__).parents[1] / "kernelopt_jupyter" / "problems" / "row_softmax.py"
    code = main(["optimize", str(problem_file), "--agents", "claude", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("kernelopt: --agents claude: ANTHROPIC_API_KEY is not set")
    assert "\n" not in err and "Traceback" not in err


# ----------------------------------------------------------------- 4: retries


def test_x_should_retry_false_is_not_retried(fake: FakeAnthropic) -> None:
    sleeps: list[float] = []
    refused = overloaded()
    refused.headers["x-should-retry"] = "false"
    fake.script(refused)
    with pytest.raises(ClaudeError, match=r"529 overloaded_error, not retryable"):
        ClaudePolicy(sleep=sleeps.append).profile(ctx(), io())
    assert len(fake.requests) == 1 and sleeps == []


def test_x_should_retry_true_retries_even_a_4xx(fake: FakeAnthropic) -> None:
    sleeps: list[float] = []
    conflict = ErrorReply(423, "locked_error", "try again", {"x-should-retry": "true"})
    fake.script(conflict, reply("ok", ("report_bottlenecks", REPORT)))
    log = EventLog()
    ClaudePolicy(sleep=sleeps.append).profile(ctx(), io(log))
    (retry,) = log.of_type("retry")
    assert retry.data["status"] == "423" and retry.data["attempt"] == 1 and len(sleeps) == 1


def test_retry_after_beyond_the_call_deadline_gives_up_at_once(fake: FakeAnthropic) -> None:
    sleeps: list[float] = []
    fake.script(rate_limited(retry_after=120))
    with pytest.raises(ClaudeError, match=r"would pass the 60 s deadline of one agent call"):
        ClaudePolicy(sleep=sleeps.append, call_deadline_s=60).profile(ctx(), io())
    assert sleeps == [] and len(fake.requests) == 1


def test_stream_cut_mid_tool_input_is_retried_and_counted(fake: FakeAnthropic) -> None:
    long_report = {"summary": "The epilogue is memory-bound. " * 8, "bottlenecks": []}
    full = reply("Reading.", ("report_bottlenecks", long_report))
    pieces = len(json.dumps(long_report)) // 64 + 1
    assert pieces >= 3  # the tool input streams in several deltas
    # Events: start, ping, text start/delta/stop, tool start, first input delta -> cut.
    fake.script(CutStream(full, after_events=7), full)
    log = EventLog()
    agent_io = io(log)
    report = ClaudePolicy(sleep=lambda s: None).profile(ctx(), agent_io)
    assert report.summary == long_report["summary"] and len(fake.requests) == 2
    assert [e.data["status"] for e in log.of_type("retry")] == ["stream"]
    assert len(log.of_type("tool_call")) == 1
    # The cut request was billed too: it wrote the cache that the second one read.
    assert agent_io.usage["cache_creation_input_tokens"] > 0
    assert agent_io.usage["cache_read_input_tokens"] > 0


# ----------------------------------------------------------------- 3: budgets and stop


def stand_in_gates(problem: Problem, candidate: Candidate) -> VerifyReport:
    return report_of(candidate.id)


def search(
    policy: ClaudePolicy, log: EventLog, gate_runner: Any = stand_in_gates, **config: Any
) -> BeamSearch:
    root = Candidate("c0", (DATA / "linear_relu_fused.py").read_text(), agent="harvest")
    context = AgentContext(
        problem=problem(),
        device="cpu",
        baselines={"eager": None},
        kernels=[KernelUnit("bias_relu_kernel", "triton")],
    )
    cfg = SearchConfig(device="cpu", iterations=3, plans=1, retries=1, beam=1, **config)
    return BeamSearch(
        problem(), policy, log, cfg, gate_runner=gate_runner, context=context, root=root
    )


def test_a_dollar_budget_stops_the_search_and_cost_is_in_budget_events(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with FakeAnthropic(responder=plain_model) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        policy = ClaudePolicy(budget_usd=0.05)
        log = EventLog(tmp_path / "events.jsonl")
        result = search(policy, log, max_candidates=50).run()
    assert result.status == "finished"
    assert any(n.startswith("dollar budget used") for n in result.notes), result.notes
    spent = policy.meter.cost_usd
    assert spent >= 0.05
    # Stopped at the first request past the line: at most one request's cost over it.
    biggest = max(e.data["usage"].get("cost_usd", 0) for e in log.of_type("agent_finished"))
    assert spent < 0.05 + biggest
    budgets = log.of_type("budget")
    assert budgets and budgets[-1].data["cost_usd"] > 0
    # A live meter: a budget event after every agent step too, the cost never going down.
    assert len(budgets) > len(result.candidates) + 2
    costs = [e.data["cost_usd"] for e in budgets]
    assert costs == sorted(costs) and costs[-1] == pytest.approx(spent, rel=1e-3)
    # The budget counts cache reads and writes: the tokens are far more than input + output.
    counts = policy.meter.counts
    assert policy.meter.tokens > 2 * (counts["input_tokens"] + counts["output_tokens"])
    # Every agent was told what was left.
    first = server.requests[0].body["messages"][0]["content"]
    assert "API budget: $0.0500 of $0.05 left" in json.dumps(first)


def test_a_token_budget_counts_cache_reads_and_writes(fake: FakeAnthropic) -> None:
    fake.script(reply("ok", ("report_bottlenecks", REPORT)))
    policy = ClaudePolicy(budget_tokens=100)
    policy.profile(ctx(), io())
    assert policy.meter.tokens > 100
    with pytest.raises(BudgetExhausted, match="token budget used"):
        policy.plan(ctx(), ProfileReport([], "s"), parent(), 1, io())
    assert len(fake.requests) == 1


def parent() -> Candidate:
    return Candidate("c1", (DATA / "linear_relu_fused.py").read_text(), agent="harvest")


def test_stop_closes_the_stream_in_flight(fake: FakeAnthropic) -> None:
    slow = reply("x" * 4000, ("report_bottlenecks", REPORT))
    slow.chunk = 1  # thousands of tiny deltas: the stream is still open when stop comes
    fake.script(slow)
    policy = ClaudePolicy(sleep=lambda s: None)
    log = EventLog()
    started = threading.Event()
    log.subscribe(lambda e: started.set() if e.type == "agent_text" else None)
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            policy.profile(ctx(), io(log))
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    assert started.wait(30)
    policy.cancel()
    worker.join(30)
    assert not worker.is_alive()
    assert outcome and isinstance(outcome[0], SearchStopped)
    said = "".join(e.data["delta"] for e in log.of_type("agent_text"))
    assert 0 < len(said) < 4000  # cut short, not read to the end
    assert len(fake.requests) == 1  # and not retried


# ----------------------------------------------------------------- 6: agent_failed


def test_agent_failed_carries_usage_and_error(fake: FakeAnthropic, tmp_path: Path) -> None:
    # The Profiler answers twice without its tool: the search ends failed, and the failed
    # step's tokens are on record.
    fake.script(reply("just talk"), reply("more talk"))
    log = EventLog(tmp_path / "events.jsonl")
    result = search(ClaudePolicy(sleep=lambda s: None), log).run()
    assert result.status == "failed"
    (failed,) = log.of_type("agent_failed")
    assert failed.data["agent"] == "profiler" and "did not call" in failed.data["error"]
    assert failed.data["usage"]["output_tokens"] > 0 and failed.data["usage"]["cost_usd"] > 0


# ----------------------------------------------------------------- 9: thinking, max_tokens


def test_max_tokens_stop_raises_the_role_limit(fake: FakeAnthropic) -> None:
    fake.script(
        reply("cut", ("report_bottlenecks", REPORT), stop_reason="max_tokens"),
        reply("ok", ("report_bottlenecks", REPORT)),
    )
    policy = ClaudePolicy(sleep=lambda s: None)
    effort, before = policy.limits("profiler")
    policy.profile(ctx(), io())
    assert [r.body["max_tokens"] for r in fake.requests] == [before, 2 * before]
    assert policy.limits("profiler") == (effort, 2 * before)
    assert fake.requests[0].body["output_config"] == {"effort": effort}
    # Roles differ: the Executor gets more room and effort than the Summarizer.
    assert policy.limits("executor")[1] > policy.limits("summarizer")[1]
    assert policy.limits("executor")[0] == "high" and policy.limits("summarizer")[0] == "low"


# ----------------------------------------------------------------- 2: repair, 8: hunks


def test_executor_hunks_then_a_repair_on_its_own_attempt(fake: FakeAnthropic) -> None:
    source = parent().source
    old = "tl.maximum(y + b, 0.0)"
    assert source.count(old) == 1
    first = {"hunks": [{"search": old, "replace": "tl.maximum(y, 0.0)"}]}
    fix = {"hunks": [{"search": "tl.maximum(y, 0.0)", "replace": old}]}
    fake.script(
        reply("", ("edit_candidate", {**first, "explanation": "a", "dispatch_only": False})),
        reply("", ("edit_candidate", {**fix, "explanation": "b", "dispatch_only": False})),
    )
    policy = ClaudePolicy(sleep=lambda s: None)
    plan = Plan("p1", "Tidy", "r", "rewrite")
    log = EventLog()
    attempt = policy.execute(ctx(), plan, parent(), None, io(log, "executor"))
    assert attempt.source == source.replace(old, "tl.maximum(y, 0.0)")
    # The search records the verdict of that attempt with every gate's detail.
    gates = [
        {"name": "static", "status": "pass", "detail": "ok"},
        {"name": "correctness", "status": "fail", "detail": "seed 1: max_abs_err 0.31"},
        {"name": "fp64", "status": "skipped", "detail": "an earlier gate failed"},
    ]
    log.emit(
        "verdict",
        candidate="c2",
        verdict="fail",
        source_key=source_key(attempt.source or ""),
        report={"gates": gates},
    )
    repaired = policy.execute(
        ctx(), plan, parent(), "correctness gate failed: seed 1", io(log, "executor")
    )
    assert repaired.source == source  # the hunk applied to the failed attempt, not the parent
    body = fake.requests[1].body["messages"]
    assert [m["role"] for m in body] == ["user", "assistant", "user"]
    result = body[2]["content"][0]["content"]
    assert "seed 1: max_abs_err 0.31" in result and "an earlier gate failed" in result
    assert "-" in result and "tl.maximum(y, 0.0)" in result


def test_hunk_that_does_not_match_is_corrected(fake: FakeAnthropic) -> None:
    bad = {"hunks": [{"search": "no such text", "replace": "x"}]}
    good = {"source": parent().source, "explanation": "whole", "dispatch_only": False}
    fake.script(
        reply("", ("edit_candidate", {**bad, "explanation": "a", "dispatch_only": False})),
        reply("", ("submit_candidate", good)),
    )
    edit = ClaudePolicy(sleep=lambda s: None).execute(
        ctx(), Plan("p", "t", "r", "rewrite"), parent(), None, io(agent="executor")
    )
    assert edit.source == parent().source
    assert "does not occur in the source" in json.dumps(fake.requests[1].body["messages"][2])


def test_a_dollar_budget_on_an_unpriced_model_is_refused(fake: FakeAnthropic) -> None:
    with pytest.raises(ClaudeUnavailable, match=r"--max-usd needs a known price"):
        ClaudePolicy(model="claude-unlisted-7", budget_usd=1.0)
    assert ClaudePolicy(model="claude-unlisted-7", budget_tokens=1000).meter.max_tokens == 1000


def test_search_retry_is_a_repair_with_the_gates_own_report(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    # In the real search loop: attempt 1 fails the correctness gate; the second Executor
    # request continues the same conversation with that verdict's every gate.
    good = parent().source
    bad = good.replace("tl.maximum(y + b, 0.0)", "tl.maximum(y, 0.0)")

    def gates(problem: Problem, candidate: Candidate) -> VerifyReport:
        if "tl.maximum(y, 0.0)" in candidate.source:
            return report_of(candidate.id, fail_at="correctness", detail="seed 2: max_abs_err 0.4")
        return report_of(candidate.id)

    def summary(cid: str) -> dict[str, Any]:
        return {"explanations": [{"candidate": cid, "text": "t"}], "experience": []}

    edit = {"explanation": "x", "dispatch_only": False}
    plan = {"title": "t", "rationale": "r", "action": "rewrite", "targets": [], "params": []}
    hunk = {"search": "tl.maximum(y, 0.0)", "replace": "tl.maximum(y + b, 0.0)"}
    fake.script(
        reply("", ("report_bottlenecks", REPORT)),
        reply("", ("propose_plans", {"plans": [plan]})),
        reply("", ("submit_candidate", {**edit, "source": bad})),
        reply("", ("record_experience", summary("c1"))),
        reply("", ("edit_candidate", {**edit, "hunks": [hunk]})),
        reply("", ("record_experience", summary("c2"))),
    )
    log = EventLog(tmp_path / "events.jsonl")
    s = search(ClaudePolicy(sleep=lambda s: None), log, gates, max_candidates=4)
    s.config.iterations, s.config.retries = 1, 2
    # The root differs from the repaired source, which would otherwise repeat it (a duplicate).
    s.root = Candidate("c0", good.replace("0.0)", "0.0) * 1.0", 1), agent="harvest")
    result = s.run()
    assert [(g.candidate.id, g.verdict) for g in result.candidates] == [
        ("c0", "pass"),
        ("c1", "fail"),
        ("c2", "pass"),
    ], [e.data for e in log.of_type("decision", "error", "agent_failed")]
    repair = fake.requests[4].body["messages"]
    assert [m["role"] for m in repair] == ["user", "assistant", "user"]
    text = repair[2]["content"][0]["content"]
    for gate in ("static: pass", "correctness: fail", "fp64: skipped", "performance: skipped"):
        assert gate in text
    assert "seed 2: max_abs_err 0.4" in text and "tl.maximum(y, 0.0)" in text


def test_the_cli_progress_shows_retries_and_failed_steps(fake: FakeAnthropic) -> None:
    import io as text_io

    from kernelopt_jupyter.session.progress import TextProgress

    fake.script(overloaded(retry_after=1.5), reply("just talk"), reply("still talk"))
    out = text_io.StringIO()
    log = EventLog()
    log.subscribe(TextProgress(out), replay=False)
    result = search(ClaudePolicy(sleep=lambda s: None), log).run()
    printed = out.getvalue()
    assert result.status == "failed"
    assert "profiler: 529 overloaded; retry 1/6 in 1.5 s" in printed
    assert "profiler step 0 failed: ClaudeNoAnswer: profiler: no usable answer" in printed


def test_a_key_in_the_problem_file_is_not_sent(fake: FakeAnthropic) -> None:
    context = ctx()
    context.problem = problem_from_source(
        problem().source + f'\nTOKEN = "{FAKE_KEY}"  # pasted by mistake\n', "p.py"
    )
    fake.script(reply("ok", ("report_bottlenecks", REPORT)))
    ClaudePolicy(sleep=lambda s: None).profile(context, io())
    body = json.dumps(fake.requests[0].body)
    assert FAKE_KEY not in body and 'TOKEN = \\"[redacted]\\"' in body
