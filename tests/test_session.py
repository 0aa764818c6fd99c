"""`kernelopt optimize` end to end on the CPU: Claude against the fake API, resume, replay.

Each run is a real subprocess of the console script with real gates (worker processes under
Triton's interpreter) on the bundled Triton problem, which needs no Inductor harvest.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from fake_anthropic import FakeAnthropic, plain_model

from kernelopt_jupyter.events import read_events

ROOT = Path(__file__).resolve().parents[1]
PROBLEM = ROOT / "kernelopt_jupyter" / "problems" / "row_softmax.py"
FAKE_KEY = "sk-ant-fake-cli-key-9876543210abcdef"


def _kernelopt(args: list[str], env: dict[str, str], **kw: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "kernelopt_jupyter.cli", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("ANTHROPIC_API_KEY", None)
    env["KERNELOPT_HOME"] = str(tmp_path / "home")
    env.update(extra)
    return env


def _verify(best: Path, env: dict[str, str]) -> dict[str, Any]:
    proc = _kernelopt(["verify", str(PROBLEM), str(best), "--device", "cpu", "--json"], env)
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    report: dict[str, Any] = json.loads(out)
    return report


def test_claude_agents_end_to_end_against_the_fake_api(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeAnthropic(responder=plain_model) as fake:
        env = _env(tmp_path, ANTHROPIC_API_KEY=FAKE_KEY, ANTHROPIC_BASE_URL=fake.base_url)
        args = ["optimize", str(PROBLEM), "--agents", "claude", "--budget", "3"]
        proc = _kernelopt(
            [*args, "--device", "cpu", "--seeds", "1", "--out", str(out), "--json"], env
        )
        stdout, stderr = proc.communicate(timeout=400)
        assert proc.returncode == 0, stderr
        assert fake.requests, "the SDK never reached the fake server"
    result = json.loads(stdout)
    assert result["agents"] == "claude" and result["best"]
    assert _verify(out / "best.py", env)["verdict"] == "pass"
    events = read_events(out / "events.jsonl")
    assert {"profiler", "planner", "executor"} <= {
        e.data["agent"] for e in events if e.type == "agent_finished"
    }
    assert any(e.type == "agent_text" for e in events)
    # The key is read from the environment only: no file written anywhere holds it.
    for path in [*out.rglob("*"), *(tmp_path / "home").rglob("*")]:
        if path.is_file():
            assert FAKE_KEY not in path.read_text(errors="replace"), path


def test_interrupted_search_resumes_and_a_recording_replays(tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = _env(tmp_path)
    base = ["optimize", str(PROBLEM), "--device", "cpu", "--seeds", "1", "--budget", "4"]
    proc = _kernelopt([*base, "--out", str(out)], env, start_new_session=True)
    events_file = out / "events.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if events_file.exists() and events_file.read_text().count('"type":"verdict"') >= 2:
            break
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # a crash mid-search: no chance to clean up
    proc.communicate()
    before = [e for e in read_events(events_file) if e.type == "verdict"]
    assert len(before) >= 2
    # Killed at any moment: result.json and best.py are whole and list what was decided.
    saved = json.loads((out / "result.json").read_text())
    assert saved["status"] == "interrupted"
    decided = [e.data["candidate"] for e in before]
    assert [c["id"] for c in saved["candidates"]] == decided[: len(saved["candidates"])]
    assert len(saved["candidates"]) >= len(decided) - 1  # a verdict may land as the kill comes
    if saved["best"]:
        assert (out / "best.py").read_text().startswith("# KernelOPT candidate")

    resumed = _kernelopt([*base, "--out", str(out), "--resume", "--json"], env)
    stdout, stderr = resumed.communicate(timeout=400)
    assert resumed.returncode == 0, stderr
    result = json.loads(stdout)
    events = read_events(events_file)
    restarts = [i for i, e in enumerate(events) if e.type == "session_started"]
    assert len(restarts) == 2 and events[restarts[1]].data["resumed"] is True
    after = [e for e in events[restarts[1] :] if e.type == "verdict"]
    # Everything decided before the kill is taken as decided, not gated again.
    for old in before:
        match = next(e for e in after if e.data["candidate"] == old.data["candidate"])
        assert match.data["reused"] is True
        assert match.data["source_key"] == old.data["source_key"]
    assert any(e.data["reused"] is False for e in after)
    assert len(before) <= len(result["candidates"]) <= 4
    assert len({c["id"] for c in result["candidates"]}) == len(result["candidates"])
    assert _verify(out / "best.py", env)["verdict"] == "pass"

    # The finished log replays: the same agent outputs, every candidate gated afresh.
    replay_out = tmp_path / "replay"
    replay = _kernelopt(
        [*base, "--agents", f"replay:{events_file}", "--out", str(replay_out), "--json"], env
    )
    stdout, stderr = replay.communicate(timeout=400)
    assert replay.returncode == 0, stderr
    replayed = json.loads(stdout)
    assert [c["id"] for c in replayed["candidates"]] == [c["id"] for c in result["candidates"]]
    original = {c["id"]: c["verdict"] for c in result["candidates"]}
    assert {c["id"]: c["verdict"] for c in replayed["candidates"]} == original
    fresh = [e for e in read_events(replay_out / "events.jsonl") if e.type == "verdict"]
    assert fresh and all(e.data["reused"] is False for e in fresh)


def test_terminal_step_mode_takes_decisions_from_stdin(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["optimize", str(PROBLEM), "--device", "cpu", "--seeds", "1", "--budget", "3"]
    proc = _kernelopt([*args, "--step", "--out", str(out)], _env(tmp_path), stdin=subprocess.PIPE)
    # approve the Profiler, reject the Planner's plans, then the search has nothing left
    _, stderr = proc.communicate("a\nr not this one\n", timeout=300)
    assert proc.returncode in (0, 1), stderr
    assert "paused after profiler" in stderr and "step>" in stderr
    events = read_events(out / "events.jsonl")
    assert [e.data["action"] for e in events if e.type == "step_resumed"][:2] == [
        "approve",
        "reject",
    ]
    assert events[-1].type == "session_finished"


def test_bench_summarises_per_level(tmp_path: Path) -> None:
    suite = tmp_path / "suite" / "level1"
    suite.mkdir(parents=True)
    (suite / "softmax_a.py").write_text(PROBLEM.read_text())
    bad = suite / "broken.py"
    bad.write_text("import torch\nx = 1\n")
    out = tmp_path / "bench"
    proc = _kernelopt(
        [
            *("bench", str(suite.parent), "--device", "cpu", "--budget", "1", "--seeds", "1"),
            *("--out", str(out), "--json"),
        ],
        _env(tmp_path),
    )
    stdout, stderr = proc.communicate(timeout=400)
    assert proc.returncode == 0, stderr
    payload = json.loads(stdout)
    rows = {Path(r["problem"]).name: r for r in payload["rows"]}
    assert rows["broken.py"]["verdict"] == "error" and "defines no" in rows["broken.py"]["error"]
    assert rows["softmax_a.py"]["verdict"] == "verified (not timed)"
    assert payload["summary"]["1"]["count"] == 2
    # Nothing is timed on the CPU: the summary says so instead of claiming 1.0.
    assert payload["summary"]["1"]["geomean_speedup_vs_compile"] == "not timed"
    assert payload["summary"]["1"]["timed"] == 0 and payload["complete"] is True
    assert json.loads((out / "bench.json").read_text()) == payload
