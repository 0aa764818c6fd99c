"""`kernelopt optimize --time-limit` end to end: a recorded Executor proposes a candidate that
never finishes its forward; the deadline cuts its gates, the worker tree is killed, and the
run ends with what it decided (result.json whole, nothing left running)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from kernelopt_jupyter.events import EventLog, read_events

ROOT = Path(__file__).resolve().parents[1]
PROBLEM = ROOT / "tests" / "data" / "problems" / "triton_axpy.py"

HANGS = """
import time
import torch
import triton
import triton.language as tl

@triton.jit
def _axpy_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, alpha * tl.load(x_ptr + offs, mask=mask), mask=mask)

def axpy(x, y):
    while True:  # never returns: only the deadline ends its gates
        time.sleep(0.05)

def get_inputs():
    return [torch.randn(100003), torch.randn(100003)]
"""


def _recording(path: Path) -> None:
    log = EventLog(path)
    answers = {
        "profiler": {"bottlenecks": [], "summary": "one kernel"},
        "planner": {
            "plans": [
                {
                    "id": "c0.p0",
                    "title": "rewrite the launcher",
                    "rationale": "",
                    "action": "rewrite",
                    "targets": [],
                    "params": {},
                }
            ]
        },
        "executor": {"source": HANGS, "explanation": "a slow one", "dispatch_only": False},
    }
    for step, (agent, output) in enumerate(answers.items()):
        log.emit("agent_finished", agent=agent, step=step, summary="", usage={}, output=output)


@pytest.mark.slow
def test_the_time_limit_cuts_a_hanging_candidate(tmp_path: Path) -> None:
    recording = tmp_path / "recording.jsonl"
    _recording(recording)
    out = tmp_path / "run"
    # Workers inherit KERNELOPT_* variables: this one marks every process of this run.
    marker = f"KERNELOPT_TEST_RUN={uuid.uuid4().hex}"
    env = {**os.environ, "KERNELOPT_HOME": str(tmp_path / "home")}
    env.update([marker.split("=", 1)])
    args = ["optimize", str(PROBLEM), "--device", "cpu", "--seeds", "1", "--json"]
    args += ["--agents", f"replay:{recording}", "--time-limit", "40", "--out", str(out)]
    proc = subprocess.run(
        [sys.executable, "-m", "kernelopt_jupyter.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,  # a broken deadline would hang forever: fail instead
        start_new_session=True,
    )
    assert proc.returncode in (0, 1), proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == "finished", result
    assert any("time limit" in note for note in result["notes"]), result["notes"]
    events = read_events(out / "events.jsonl")
    cancelled = [e for e in events if e.type == "decision" and e.data["kind"] == "cancelled"]
    assert len(cancelled) == 1
    # Cut at the deadline, not after a wait for the busy worker to end by itself (such a
    # wait costs 3 s more: the cut came at 33.2 s of a 30 s limit).
    assert cancelled[0].t <= 40 + 2.5, cancelled[0].t
    # The cut candidate is not listed; everything listed was decided.
    decided = {e.data["candidate"] for e in events if e.type == "verdict"}
    assert {c["id"] for c in result["candidates"]} == decided
    assert cancelled[0].data["candidate"] not in decided
    assert events[-1].type == "session_finished"
    # No process of this run (verification workers included) survived it.
    assert _carrying(marker) == []


def _carrying(marker: str) -> list[int]:
    """Live processes whose environment holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in environ and state != "Z":
            found.append(int(entry.name))
    return found
