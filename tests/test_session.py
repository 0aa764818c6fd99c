"""`kernelopt optimize` end to end on the CPU: Claude against the fake API, resume, replay.

Each run is a real subprocess of the console script with real gates (worker processes under
Triton's interpreter) on the bundled Triton problem, which needs no Inductor harvest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _small import SMALL_SOFTMAX, small_softmax
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


def _verify(best: Path, env: dict[str, str], problem: Path = PROBLEM) -> dict[str, Any]:
    proc = _kernelopt(["verify", str(problem), str(best), "--device", "cpu", "--json"], env)
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    report: dict[str, Any] = json.loads(out)
    return report


@pytest.mark.slow
def test_claude_agents_end_to_end_against_the_fake_api(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeAnthropic(responder=plain_model) as fake:
        env = _env(tmp_path, ANTHROPIC_API_KEY=FAKE_KEY, ANTHROPIC_BASE_URL=fake.base_url)
        problem = small_softmax(tmp_path / "problem")
        args = ["optimize", str(problem), "--agents", "claude", "--budget", "3"]
        proc = _kernelopt(
            [*args, "--device", "cpu", "--seeds", "1", "--out", str(out), "--json"], env
        )
        stdout, stderr = proc.communicate(timeout=400)
        assert proc.returncode == 0, stderr
        assert fake.requests, "the SDK never reached the fake server"
    result = json.loads(stdout)
    assert result["agents"] == "claude" and result["best"]
    assert _verify(out / "best.py", env, problem)["verdict"] == "pass"
    events = read_events(out / "events.jsonl")
    assert {"profiler", "planner", "executor"} <= {
        e.data["agent"] for e in events if e.type == "agent_finished"
    }
    assert any(e.type == "agent_text" for e in events)
    # The key is read from the environment only: no file written anywhere holds it.
    for path in [*out.rglob("*"), *(tmp_path / "home").rglob("*")]:
        if path.is_file():
            assert FAKE_KEY not in path.read_text(errors="replace"), path


def test_terminal_step_mode_takes_decisions_from_stdin(tmp_path: Path) -> None:
    out = tmp_path / "run"
    problem = small_softmax(tmp_path / "problem")
    args = ["optimize", str(problem), "--device", "cpu", "--seeds", "1", "--budget", "3"]
    proc = _kernelopt([*args, "--step", "--out", str(out)], _env(tmp_path), stdin=subprocess.PIPE)
    # A line it does not understand is answered and the same pause asked again; then approve
    # the Profiler, reject the Planner's plans, and the search has nothing left.
    _, stderr = proc.communicate("x\na\nr not this one\n", timeout=300)
    assert proc.returncode in (0, 1), stderr
    assert "paused after profiler" in stderr and "step>" in stderr
    assert "step> not understood: 'x'" in stderr
    events = read_events(out / "events.jsonl")
    assert [e.data["action"] for e in events if e.type == "step_resumed"][:2] == [
        "approve",
        "reject",
    ]
    assert events[-1].type == "session_finished"


def test_bench_summarises_per_level(tmp_path: Path) -> None:
    suite = tmp_path / "suite" / "level1"
    suite.mkdir(parents=True)
    (suite / "softmax_a.py").write_text(SMALL_SOFTMAX)
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
