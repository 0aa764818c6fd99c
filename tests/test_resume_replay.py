"""`kernelopt optimize` killed mid-search, resumed, and its recording replayed (CPU).

Its own file (the suite's longest test) so the test workers can run it beside
``test_session.py``; the helpers are that file's.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from _small import small_softmax
from test_session import _env, _kernelopt, _verify

from kernelopt_jupyter.events import read_events


@pytest.mark.slow
def test_interrupted_search_resumes_and_a_recording_replays(tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = _env(tmp_path)
    problem = small_softmax(tmp_path / "problem")  # 32 rows: a third of each gate's time
    base = ["optimize", str(problem), "--device", "cpu", "--seeds", "1", "--budget", "4"]
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
    assert _verify(out / "best.py", env, problem)["verdict"] == "pass"

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
