"""Issue 14, item 1: a candidate that reads the environment cannot carry the API key anywhere.

A whole session on the CPU (real analysis, real gates in worker processes) where the Claude
Executor's first candidate reads ``os.environ`` and puts what it found into its output and its
error; then every file of the run and every request body the fake API received is scanned.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from _small import small_softmax
from fake_anthropic import FakeAnthropic, Scripted, reply, role_of

from kernelopt_jupyter.problem import load_problem
from kernelopt_jupyter.session import OptimizationSession, SearchOptions

ROOT = Path(__file__).resolve().parents[1]
PROBLEM = ROOT / "kernelopt_jupyter" / "problems" / "row_softmax.py"
FAKE_KEY = "sk-ant-fake-keyscan-0123456789abcdefXYZ"

LEAK = """
import os
import sys

_FOUND = {k: v for k, v in os.environ.items() if "KEY" in k or "ANTHROPIC" in k}
print("LEAK-OUT", _FOUND)
print("LEAK-ERR", _FOUND, file=sys.stderr)
_original = row_softmax


def row_softmax(x):
    raise RuntimeError(f"LEAK-RAISE {_FOUND} {os.environ.get('ANTHROPIC_API_KEY')}")
"""


def responder(body: dict[str, Any]) -> Scripted:
    role = role_of(body)
    task = "\n".join(b.get("text", "") for b in body["messages"][0]["content"])
    if role == "profiler":
        return reply("ok", ("report_bottlenecks", {"summary": "one kernel", "bottlenecks": []}))
    if role == "planner":
        plan = {"title": "Try", "rationale": "r", "action": "rewrite", "targets": [], "params": []}
        return reply("plan", ("propose_plans", {"plans": [plan]}))
    if role == "executor":
        parent = re.search(r"```python\n(.*?)\n```", task, re.S)
        assert parent is not None
        repairing = len(body["messages"]) > 1
        source = parent.group(1) + "\n" + ("" if repairing else LEAK)
        edit = {"source": source, "explanation": "x", "dispatch_only": False}
        return reply("edit", ("submit_candidate", edit))
    ids = re.findall(r"## Step: candidate `(\w+)`", task)
    data = {"explanations": [{"candidate": i, "text": "t"} for i in ids], "experience": []}
    return reply("sum", ("record_experience", data))


def test_no_key_in_any_file_or_request_after_a_candidate_reads_the_environment(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    capfd: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "run"
    # At 32 rows (a third of each gate's time), outside tmp_path: only the run's files are counted.
    problem = small_softmax(tmp_path_factory.mktemp("problem"))
    with FakeAnthropic(responder=responder, api_key=FAKE_KEY) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("KERNELOPT_HOME", str(tmp_path / "home"))
        opts = SearchOptions(
            agents="claude",
            device="cpu",
            seeds=1,
            budget=4,
            iterations=1,
            plans=1,
            retries=2,
            beam=1,
            out_dir=out,
            memory_path=tmp_path / "home" / "memory.json",
        )
        session = OptimizationSession(load_problem(str(problem)), opts)
        result = session.run()
    captured = capfd.readouterr()

    # The leaking candidate really ran in the gates, and said what it found.
    events = (out / "events.jsonl").read_text()
    assert "LEAK-RAISE" in events
    assert result.best is not None and result.best.candidate.id != "c1"
    # The key reached the API's auth header only.
    assert any(FAKE_KEY in h for h in (json.dumps(r.headers) for r in fake.requests))
    for i, request in enumerate(fake.requests):
        assert FAKE_KEY not in json.dumps(request.body), f"request {i} body"
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) >= 4
    for path in written:
        assert FAKE_KEY not in path.read_text(errors="replace"), path
    assert FAKE_KEY not in captured.out and FAKE_KEY not in captured.err
    # The repair prompt carried the gate's detail (so the scan above saw it), minus the key.
    assert any("LEAK-RAISE" in json.dumps(r.body) for r in fake.requests)


@pytest.mark.slow
def test_session_stop_closes_the_claude_stream_in_flight(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The Profiler's answer streams in thousands of tiny pieces; stop comes after the first.
    from kernelopt_jupyter.analysis import pipeline

    # A pre-made analysis: this test is about stopping, not about measuring.
    source = PROBLEM.read_text()
    facts = pipeline.AnalysisFacts({"eager": None}, [], False, [], source, False, "the kernel")
    monkeypatch.setattr(pipeline, "analyse", lambda *args, **kwargs: facts)
    slow = reply("y" * 6000, ("report_bottlenecks", {"summary": "s", "bottlenecks": []}))
    slow.chunk = 1
    with FakeAnthropic(api_key=FAKE_KEY) as fake:
        fake.script(slow)
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        opts = SearchOptions(
            agents="claude",
            device="cpu",
            seeds=1,
            out_dir=tmp_path / "run",
            memory_path=tmp_path / "memory.json",
        )
        session = OptimizationSession(load_problem(str(PROBLEM)), opts)
        streaming = threading.Event()
        session.log.subscribe(lambda e: streaming.set() if e.type == "agent_text" else None)
        session.start()
        assert streaming.wait(120), session.error
        session.stop()
        assert session.wait(60)
        messages = [r for r in fake.requests if r.path == "/v1/messages"]
    assert session.error is None and session.result is not None
    assert session.result.status == "stopped"
    said = "".join(e.data["delta"] for e in session.log.of_type("agent_text"))
    assert 0 < len(said) < 6000 and len(messages) == 1  # cut short, and not retried
    finished = session.log.of_type("session_finished")[-1]
    assert finished.data["status"] == "stopped"
