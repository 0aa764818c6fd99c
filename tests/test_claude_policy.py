"""The Claude policy driven through the real anthropic SDK against a local fake of the API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import (
    CutStream,
    FakeAnthropic,
    StreamError,
    bad_request,
    overloaded,
    rate_limited,
    reply,
    server_error,
    unauthorized,
)

from kernelopt_jupyter.agents.base import (
    AgentContext,
    AgentIO,
    Bottleneck,
    ExperienceItem,
    KernelUnit,
    Plan,
    ProfileReport,
    StepRecord,
)
from kernelopt_jupyter.agents.claude import (
    DEFAULT_MODEL,
    PRICES,
    ClaudeError,
    ClaudePolicy,
    ClaudeUnavailable,
)
from kernelopt_jupyter.candidate import Candidate
from kernelopt_jupyter.events import EventLog
from kernelopt_jupyter.problem import problem_from_source

DATA = Path(__file__).parent / "data" / "claude"
FAKE_KEY = "sk-ant-fake-0123456789-NEVER-LOG-ME"
EPILOGUE = "triton_poi_fused_addmm_relu_0"

REPORT = {
    "summary": "The matmul dominates; the fused bias+ReLU epilogue is memory-bound.",
    "bottlenecks": [
        {"kernel": "extern_kernels.mm", "share": 0.7, "bound": "compute", "note": "cuBLAS"},
        {"kernel": EPILOGUE, "share": 0.3, "bound": "memory", "note": "one extra round trip"},
    ],
}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """A running fake API with the environment pointing the SDK at it."""
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.delenv("KERNELOPT_MODEL", raising=False)
        yield server


@pytest.fixture
def sleeps() -> list[float]:
    """Waits the policy asked for (recorded instead of slept)."""
    return []


def make_policy(sleeps: list[float], **kw: Any) -> ClaudePolicy:
    return ClaudePolicy(sleep=sleeps.append, **kw)


def make_ctx() -> AgentContext:
    problem = problem_from_source(
        (DATA / "linear_relu.py").read_text(), str(DATA / "linear_relu.py"), validate=False
    )
    kernels = [
        KernelUnit("extern_kernels.mm", "vendor", ops=["mm"], share=0.7, ms=0.02, bound="compute"),
        KernelUnit(
            EPILOGUE,
            "triton",
            source="@triton.jit\ndef triton_poi_fused_addmm_relu_0(...): ...",
            ops=["add", "relu"],
            share=0.3,
            ms=0.009,
            bound="memory",
            roofline_fraction=0.41,
        ),
    ]
    memory = [ExperienceItem("epilogue after matmul", "fuse", 1.2, "fuse bias+act", "other")]
    return AgentContext(
        problem=problem,
        device="cpu",
        baselines={"eager": None, "compile": None},
        kernels=kernels,
        memory=memory,
        iteration=1,
    )


def parent() -> Candidate:
    return Candidate("c1", (DATA / "linear_relu_fused.py").read_text(), agent="harvest")


def io_for(log: EventLog | None = None, agent: str = "profiler") -> AgentIO:
    return AgentIO(log if log is not None else EventLog(), agent, step=3)


def texts(io: AgentIO) -> str:
    return "".join(e.data["delta"] for e in io.log.of_type("agent_text"))


def thoughts(io: AgentIO) -> str:
    return "".join(e.data["delta"] for e in io.log.of_type("agent_thinking"))


def retries(io: AgentIO) -> list[tuple[str, str, float, int]]:
    """(status, reason, wait_s, attempt) of every retry event."""
    return [
        (e.data["status"], e.data["reason"], e.data["wait_s"], e.data["attempt"])
        for e in io.log.of_type("retry")
    ]


# ----------------------------------------------------------------- each role


def test_profiler_streams_text_and_returns_a_report(
    fake: FakeAnthropic, sleeps: list[float]
) -> None:
    fake.script(
        reply(
            "The matmul is 70% of the time.",
            ("report_bottlenecks", REPORT),
            thinking="Amdahl says look at the matmul first.",
        )
    )
    io = io_for()
    report = make_policy(sleeps).profile(make_ctx(), io)
    assert [b.kernel for b in report.bottlenecks] == ["extern_kernels.mm", EPILOGUE]
    assert report.bottlenecks[1].bound == "memory" and report.bottlenecks[1].share == 0.3
    # Thinking and text are separate event types, each in small deltas as they arrived.
    assert thoughts(io) == "Amdahl says look at the matmul first."
    assert texts(io) == "The matmul is 70% of the time."
    assert len(io.log.of_type("agent_text")) > 2 and len(io.log.of_type("agent_thinking")) > 2
    kinds = [e.type for e in io.log.events if e.type in ("agent_text", "agent_thinking")]
    assert kinds.index("agent_text") > kinds.index("agent_thinking")
    (call,) = io.log.of_type("tool_call")
    assert call.data["tool"] == "report_bottlenecks" and call.data["input"] == REPORT
    assert sleeps == []


def test_request_shape_caching_and_tool_choice(fake: FakeAnthropic, sleeps: list[float]) -> None:
    fake.script(reply("ok", ("report_bottlenecks", REPORT)))
    make_policy(sleeps).profile(make_ctx(), io_for())
    (req,) = fake.requests
    body = req.body
    # The SDK sent the key from the environment (SDK 2.x as a bearer token, 0.x as x-api-key).
    assert (
        req.headers.get("x-api-key") == FAKE_KEY
        or req.headers.get("authorization") == f"Bearer {FAKE_KEY}"
    )
    assert body["model"] == DEFAULT_MODEL and body["stream"] is True
    assert [t["name"] for t in body["tools"]] == [
        "report_bottlenecks",
        "propose_plans",
        "edit_candidate",
        "submit_candidate",
        "propose_launch_configs",
        "record_experience",
    ]
    assert all(t["strict"] is True for t in body["tools"])
    system = body["system"]
    assert [b.get("cache_control") for b in system] == [{"type": "ephemeral"}] * 2
    assert "Every candidate goes through four gates" in system[0]["text"]
    assert "class Model(nn.Module)" in system[1]["text"]  # the problem source
    assert EPILOGUE in system[1]["text"] and "41" not in system[0]["text"]
    # A 5.x model thinks by default: it may not be forced, so it chooses and is checked.
    assert body["tool_choice"] == {"type": "auto"}
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}


def test_older_model_gets_the_tool_forced(fake: FakeAnthropic, sleeps: list[float]) -> None:
    fake.script(reply("", ("report_bottlenecks", REPORT)))
    make_policy(sleeps, model="claude-sonnet-4-6").profile(make_ctx(), io_for())
    body = fake.requests[0].body
    assert body["model"] == "claude-sonnet-4-6"
    assert body["tool_choice"] == {"type": "tool", "name": "report_bottlenecks"}
    assert "thinking" not in body


def test_model_from_environment(
    fake: FakeAnthropic, sleeps: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KERNELOPT_MODEL", "claude-haiku-4-5")
    assert make_policy(sleeps).model == "claude-haiku-4-5"
    assert make_policy(sleeps, model="claude-opus-4-8").model == "claude-opus-4-8"


def test_planner_returns_plans_with_fresh_ids(fake: FakeAnthropic, sleeps: list[float]) -> None:
    plans = {
        "plans": [
            {
                "title": "Fuse bias and ReLU into the matmul's epilogue",
                "rationale": "Saves one round trip of the output.",
                "action": "fuse",
                "targets": [EPILOGUE],
            },
            {"title": "Keep the baseline", "rationale": "x", "action": "keep_baseline"},
            {"title": "Third", "rationale": "y", "action": "rewrite"},
        ]
    }
    fake.script(reply("Two ideas.", ("propose_plans", plans)))
    report = ProfileReport([Bottleneck(EPILOGUE, 0.3, "memory", "n")], "summary")
    io = io_for(agent="planner")
    got = make_policy(sleeps).plan(make_ctx(), report, parent(), 2, io)
    assert [p.id for p in got] == ["s3-p1", "s3-p2"]
    assert got[0].action == "fuse" and got[0].targets == [EPILOGUE]
    user = fake.requests[0].body["messages"][0]["content"]
    assert user[0]["cache_control"] == {"type": "ephemeral"}  # the parent, cached
    assert "LAUNCH_CONFIGS" in user[0]["text"]
    assert "up to 2 plans" in user[1]["text"] and "fuse bias+act" in user[1]["text"]


def test_executor_returns_a_source_and_sees_gate_feedback(
    fake: FakeAnthropic, sleeps: list[float]
) -> None:
    new = parent().source.replace('num_warps": 4', 'num_warps": 8')
    fake.script(
        reply(
            "Applying the plan.",
            ("submit_candidate", {"source": new, "explanation": "fused", "dispatch_only": False}),
        )
    )
    plan = Plan("s3-p1", "Fuse", "why", "fuse", [EPILOGUE])
    edit = make_policy(sleeps).execute(
        make_ctx(), plan, parent(), "correctness: max_abs_err 0.3 at seed 1", io_for()
    )
    assert edit.source == new and edit.explanation == "fused" and not edit.dispatch_only
    task = fake.requests[0].body["messages"][0]["content"][1]["text"]
    assert "max_abs_err 0.3 at seed 1" in task and "Plan s3-p1: Fuse" in task


def test_executor_may_decline(fake: FakeAnthropic, sleeps: list[float]) -> None:
    fake.script(
        reply(
            "",
            ("submit_candidate", {"source": "", "explanation": "unsafe", "dispatch_only": False}),
        )
    )
    plan = Plan("p", "Fuse", "why", "fuse")
    edit = make_policy(sleeps).execute(make_ctx(), plan, parent(), None, io_for())
    assert edit.source is None and edit.explanation == "unsafe"


def test_tuner_rewrites_only_launch_configs(fake: FakeAnthropic, sleeps: list[float]) -> None:
    variants = {
        "explanation": "bigger blocks",
        "variants": [
            {"label": "B2048 w8", "configs": {"bias_relu_kernel": {"BLOCK": 2048, "num_warps": 8}}},
            {"label": "same", "configs": {"bias_relu_kernel": {"BLOCK": 1024}}},  # a no-op
        ],
    }
    fake.script(reply("Memory-bound: larger blocks.", ("propose_launch_configs", variants)))
    ctx = make_ctx()
    ctx.device = "cuda"
    proposal = make_policy(sleeps).tune(ctx, parent(), io_for(agent="tuner"))
    assert [label for label, _ in proposal.variants] == ["B2048 w8"]
    source = proposal.variants[0][1]
    assert '"BLOCK": 2048' in source.replace("'", '"') and "num_warps" in source
    compile(source, "variant.py", "exec")
    # Everything but the dict is untouched.
    assert source.split("@triton.jit")[1] == parent().source.split("@triton.jit")[1]


def test_tuner_skips_a_candidate_without_launch_configs(
    fake: FakeAnthropic, sleeps: list[float]
) -> None:
    cand = Candidate("c0", "import torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n")
    proposal = make_policy(sleeps).tune(make_ctx(), cand, io_for())
    assert proposal.variants == [] and fake.requests == []


def test_summarizer_explains_each_step(fake: FakeAnthropic, sleeps: list[float]) -> None:
    child = Candidate("c2", parent().source + "\n", parent="c1", agent="claude", plan_id="s3-p1")
    step = StepRecord(
        child, parent().source, None, "pass", 1.3, 1.0, [{"name": "static", "status": "pass"}]
    )
    data = {
        "explanations": [{"candidate": "c2", "text": "We fused the epilogue."}],
        "experience": [
            {"pattern": "bias+relu after mm", "action": "fuse", "outcome": 1.3, "lesson": "fuse it"}
        ],
    }
    fake.script(reply("Summing up.", ("record_experience", data)))
    summary = make_policy(sleeps).summarize(make_ctx(), [step], io_for(agent="summarizer"))
    assert summary.explanations == {"c2": "We fused the epilogue."}
    (item,) = summary.experience
    assert item.outcome == 1.3 and item.problem == "linear_relu"
    assert "1.300x" in fake.requests[0].body["messages"][0]["content"][0]["text"]


# ----------------------------------------------------------------- corrective retry


def test_bad_tool_input_gets_one_correction(fake: FakeAnthropic, sleeps: list[float]) -> None:
    bad = {"summary": "s", "bottlenecks": [{"kernel": "nope", "bound": "memory", "note": ""}]}
    fake.script(
        reply("First try.", ("report_bottlenecks", bad), thinking="hmm"),
        reply("Fixed.", ("report_bottlenecks", REPORT)),
    )
    io = io_for()
    report = make_policy(sleeps).profile(make_ctx(), io)
    assert len(report.bottlenecks) == 2
    second = fake.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[1]["content"][0]["type"] == "thinking"  # passed back with its signature
    result = second[2]["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] is True
    assert "`nope` is not a listed kernel" in result["content"]
    assert "asking for a correction" in texts(io)
    assert len(io.log.of_type("tool_call")) == 2  # both calls are on record


def test_missing_tool_call_twice_is_a_clear_error(fake: FakeAnthropic, sleeps: list[float]) -> None:
    fake.script(reply("I think it is fine."), reply("Still just talking."))
    with pytest.raises(ClaudeError, match=r"profiler: .*did not call `report_bottlenecks`"):
        make_policy(sleeps).profile(make_ctx(), io_for())
    assert "Call `report_bottlenecks` again" in json.dumps(fake.requests[1].body["messages"][-1])


def test_executor_source_that_does_not_parse_is_corrected(
    fake: FakeAnthropic, sleeps: list[float]
) -> None:
    good = parent().source
    fake.script(
        reply(
            "",
            (
                "submit_candidate",
                {"source": "class ModelNew(:\n", "explanation": "x", "dispatch_only": False},
            ),
        ),
        reply(
            "", ("submit_candidate", {"source": good, "explanation": "y", "dispatch_only": False})
        ),
    )
    edit = make_policy(sleeps).execute(
        make_ctx(), Plan("p", "t", "r", "fuse"), parent(), None, io_for()
    )
    assert edit.source == good
    assert "does not parse" in json.dumps(fake.requests[1].body["messages"][2])


# ----------------------------------------------------------------- transient failures


def test_529_and_429_are_retried_then_succeed(fake: FakeAnthropic, sleeps: list[float]) -> None:
    fake.script(
        overloaded(), rate_limited(retry_after=0.5), reply("ok", ("report_bottlenecks", REPORT))
    )
    io = io_for()
    report = make_policy(sleeps, backoff_s=0.2).profile(make_ctx(), io)
    assert len(report.bottlenecks) == 2 and len(fake.requests) == 3
    assert len(sleeps) == 2 and 0.1 <= sleeps[0] <= 0.2  # backoff with jitter
    assert sleeps[1] == 0.5  # retry-after honoured
    (first, second) = retries(io)
    assert first[:2] == ("529", "529 overloaded") and first[3] == 1
    assert second == ("429", "429 rate limited", 0.5, 2)


def test_5xx_and_midstream_error_are_retried(fake: FakeAnthropic, sleeps: list[float]) -> None:
    fake.script(
        server_error(),
        StreamError(reply("partial words here", ("report_bottlenecks", REPORT))),
        reply("ok", ("report_bottlenecks", REPORT)),
    )
    io = io_for()
    make_policy(sleeps).profile(make_ctx(), io)
    assert len(sleeps) == 2
    assert [r[1] for r in retries(io)] == ["500 api_error", "529 overloaded"]


@pytest.mark.parametrize("clean", [False, True], ids=["socket-dropped", "no-message-stop"])
def test_stream_cut_midway_is_restarted(
    fake: FakeAnthropic, sleeps: list[float], clean: bool
) -> None:
    full = reply("The epilogue is memory bound.", ("report_bottlenecks", REPORT))
    fake.script(CutStream(full, after_events=5, clean=clean), full)
    io = io_for()
    report = make_policy(sleeps).profile(make_ctx(), io)
    assert len(report.bottlenecks) == 2 and len(fake.requests) == 2
    assert [r[0] for r in retries(io)] == ["stream"]
    assert texts(io).endswith("The epilogue is memory bound.")


def test_attempts_are_bounded(fake: FakeAnthropic, sleeps: list[float]) -> None:
    fake.script(*[overloaded() for _ in range(3)])
    with pytest.raises(ClaudeError, match="gave up after 3 attempts; last error: 529 overloaded"):
        make_policy(sleeps, max_attempts=3).profile(make_ctx(), io_for())
    assert len(fake.requests) == 3 and len(sleeps) == 2


def test_forced_tool_choice_rejected_is_dropped(fake: FakeAnthropic, sleeps: list[float]) -> None:
    fake.script(
        bad_request("tool_choice: forcing tool use is not supported for this model"),
        reply("", ("report_bottlenecks", REPORT)),
    )
    make_policy(sleeps, model="claude-sonnet-4-6").profile(make_ctx(), io_for())
    assert fake.requests[0].body["tool_choice"]["type"] == "tool"
    assert fake.requests[1].body["tool_choice"] == {"type": "auto"}
    assert sleeps == []


# ----------------------------------------------------------------- keys, errors, usage


def test_401_fails_fast_without_the_key(fake: FakeAnthropic, sleeps: list[float]) -> None:
    fake.script(unauthorized())
    with pytest.raises(ClaudeUnavailable) as info:
        make_policy(sleeps).profile(make_ctx(), io_for())
    message = str(info.value)
    assert "401" in message and "ANTHROPIC_API_KEY" in message and "\n" not in message
    assert FAKE_KEY not in message and FAKE_KEY not in repr(info.value)
    assert len(fake.requests) == 1 and sleeps == []


def test_other_4xx_is_not_retried(fake: FakeAnthropic, sleeps: list[float]) -> None:
    fake.script(bad_request("messages.0: something is wrong"))
    with pytest.raises(ClaudeError, match=r"\(400 invalid_request_error\): messages.0"):
        make_policy(sleeps).profile(make_ctx(), io_for())
    assert len(fake.requests) == 1


def test_missing_key_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(
        ClaudeUnavailable, match=r"^ANTHROPIC_API_KEY is not set: .*--agents offline$"
    ):
        ClaudePolicy()


def test_usage_and_cost_accumulate_and_the_cache_is_read(
    fake: FakeAnthropic, sleeps: list[float]
) -> None:
    fake.script(
        reply("one", ("report_bottlenecks", REPORT)),
        reply("two", ("report_bottlenecks", REPORT)),
    )
    io = io_for()
    make_policy(sleeps).profile(make_ctx(), io)
    first = dict(io.usage)
    # A second policy: one policy would not ask its Profiler twice about the same data.
    make_policy(sleeps).profile(make_ctx(), io)
    u = io.usage
    assert (
        first["cache_creation_input_tokens"] > 1000 and first.get("cache_read_input_tokens", 0) == 0
    )
    # The second call reads the rules and the problem from the cache instead of writing them.
    assert u["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert u["cache_creation_input_tokens"] == first["cache_creation_input_tokens"]
    assert u["output_tokens"] > first["output_tokens"] > 0
    price = PRICES[DEFAULT_MODEL]
    expected = price.cost(
        u["input_tokens"],
        u["output_tokens"],
        u["cache_creation_input_tokens"],
        u["cache_read_input_tokens"],
    )
    assert u["cost_usd"] == pytest.approx(expected)


def test_key_never_reaches_files_events_or_errors(
    fake: FakeAnthropic, sleeps: list[float], tmp_path: Path
) -> None:
    log = EventLog(tmp_path / "run" / "events.jsonl")
    fake.script(
        overloaded(),
        CutStream(reply("cut", ("report_bottlenecks", REPORT))),
        reply("fine", ("report_bottlenecks", REPORT)),
        unauthorized(),
    )
    policy = make_policy(sleeps)
    assert FAKE_KEY not in repr(policy) and FAKE_KEY not in str(vars(policy))
    policy.profile(make_ctx(), io_for(log))
    with pytest.raises(ClaudeUnavailable) as info:
        make_policy(sleeps).profile(make_ctx(), io_for(log))
    log.emit("error", where="claude", message=str(info.value))
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written, "the event log should have been written"
    for path in written:
        assert FAKE_KEY not in path.read_text(errors="replace"), path
    assert all(FAKE_KEY not in e.to_json() for e in log.events)


def test_executor_without_a_usable_answer_gives_up_the_attempt(
    fake: FakeAnthropic, sleeps: list[float]
) -> None:
    # The search treats an Edit without source as "this plan gave nothing"; one bad answer
    # must not end the whole search (a PolicyError would).
    fake.script(reply("Let me think."), reply("Still thinking."))
    io = io_for(agent="executor")
    edit = make_policy(sleeps).execute(make_ctx(), Plan("p", "t", "r", "fuse"), parent(), None, io)
    assert edit.source is None
    assert "did not call `edit_candidate` or `submit_candidate`" in edit.explanation
    assert "no usable answer" in texts(io)


def test_errors_are_policy_errors_the_search_ends_on() -> None:
    from kernelopt_jupyter.agents.base import PolicyError

    assert issubclass(ClaudeError, PolicyError) and issubclass(ClaudeUnavailable, ClaudeError)


def test_connection_errors_are_retried_then_reported(
    monkeypatch: pytest.MonkeyPatch, sleeps: list[float]
) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on once this socket is closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    io = io_for()
    with pytest.raises(
        ClaudeError, match="gave up after 2 attempts; last error: a connection error"
    ):
        make_policy(sleeps, max_attempts=2).profile(make_ctx(), io)
    assert len(sleeps) == 1 and retries(io)[0][:2] == ("connection", "a connection error")


def test_effort_and_max_tokens_reach_the_request(fake: FakeAnthropic, sleeps: list[float]) -> None:
    fake.script(reply("ok", ("report_bottlenecks", REPORT)))
    make_policy(sleeps, effort="high", max_tokens=12_000).profile(make_ctx(), io_for())
    body = fake.requests[0].body
    assert body["output_config"] == {"effort": "high"} and body["max_tokens"] == 12_000


def test_planner_reads_the_experience_store_and_summarizer_gets_pattern_tags(
    fake: FakeAnthropic, sleeps: list[float]
) -> None:
    from kernelopt_jupyter.agents.memory import ExperienceMemory

    store = ExperienceMemory(None)
    store.items = [
        ExperienceItem("launch-bound", "cuda_graph", 1.01, "barely helped"),
        ExperienceItem("vendor+epilogue", "fuse", 1.4, "fuse bias and activation", "p9"),
    ]
    plan = {"title": "t", "rationale": "r", "action": "fuse"}
    child = Candidate("c2", parent().source, parent="c1")
    summary = {"explanations": [{"candidate": "c2", "text": "t"}], "experience": []}
    fake.script(
        reply("", ("propose_plans", {"plans": [plan]})),
        reply("", ("record_experience", summary)),
    )
    ctx = make_ctx()
    ctx.memory = []  # the session leaves it empty: the policy's own store is used
    policy = make_policy(sleeps, memory=store)
    policy.plan(ctx, ProfileReport([], "s"), parent(), 1, io_for())
    task = fake.requests[0].body["messages"][0]["content"][1]["text"]
    # Matching pattern first, then the rest by strength.
    assert task.index("fuse bias and activation") < task.index("barely helped")
    policy.summarize(ctx, [StepRecord(child, parent().source, None, "pass", None, None)], io_for())
    task = fake.requests[1].body["messages"][0]["content"][0]["text"]
    assert "pattern tags: " in task and "vendor+epilogue" in task and "kind:module" in task
