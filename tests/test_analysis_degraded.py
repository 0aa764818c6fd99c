"""A failed analysis phase is loud and never cached: a ``degraded`` event per phase (a console
line, a panel warning), result.json's ``degraded``, no cache entry written or read."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kernelopt_jupyter import worker
from kernelopt_jupyter.analysis import pipeline
from kernelopt_jupyter.analysis.cache import AnalysisCache, degraded_of
from kernelopt_jupyter.event_payloads import Degraded
from kernelopt_jupyter.events import Event, EventLog, read_events
from kernelopt_jupyter.problem import problem_from_source
from kernelopt_jupyter.session.progress import TextProgress
from kernelopt_jupyter.session.state import SessionState
from kernelopt_jupyter.worker import WorkerResult

SOURCE = """
import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.randn(32, 64)]
"""
TIMELINE = {"timeline": [], "detail": "d"}
HARVESTED = {
    "problem": "relu.py",
    "device": "cpu",
    "harvest_data": {"ok": True, "device": "cpu", "source": "class ModelNew: pass\n"},
}
Z3 = "AttributeError: module 'z3' has no attribute 'ExprRef'"


def _problem() -> Any:
    return problem_from_source(SOURCE, "relu.py", validate=False)


def _fake_worker(monkeypatch: pytest.MonkeyPatch, *answers: WorkerResult) -> list[Any]:
    """``run_task`` answers ``answers`` in turn (the last one again); returns the calls."""
    calls: list[Any] = []
    left = list(answers)

    def run_task(task: str, kwargs: dict[str, Any], **_: Any) -> WorkerResult:
        calls.append(kwargs.get("steps"))
        return left.pop(0) if len(left) > 1 else left[0]

    monkeypatch.setattr(worker, "run_task", run_task)
    monkeypatch.setattr(worker, "take_kept", lambda key: None)
    return calls


def _steps(**steps: Any) -> WorkerResult:
    return WorkerResult(True, value={"seconds": {}, **steps})


@pytest.mark.parametrize(
    ("answer", "phase", "cause"),
    [
        (_steps(dispatch={"step_error": Z3}, timeline=TIMELINE), "harvest", Z3),
        (
            _steps(
                dispatch={**HARVESTED, "harvest_data": {"ok": False, "error": "graph breaks"}},
                timeline=TIMELINE,
            ),
            "harvest",
            "graph breaks",
        ),
        (_steps(dispatch=HARVESTED, timeline={"step_error": "OSError: x\ny"}), "timeline", "x y"),
        (WorkerResult(False, exitcode=-9, stderr="killed"), "analysis", "SIGKILL"),
        (WorkerResult(False, timed_out=True, seconds=9.0), "analysis", "timed out"),
    ],
)
def test_a_failed_phase_is_an_event_in_the_facts_and_never_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: WorkerResult, phase: str, cause: str
) -> None:
    good = _steps(dispatch=HARVESTED, timeline=TIMELINE)
    calls = _fake_worker(monkeypatch, answer, good)
    cache = AnalysisCache(tmp_path)
    log = EventLog(None)
    facts = pipeline.analyse(_problem(), "cpu", log, cache=cache)
    said = [e.data for e in log.events if e.type == "degraded"]
    assert [d["phase"] for d in said] == [phase] and cause in said[0]["error"]
    assert "\n" not in said[0]["error"]  # one line
    assert facts.degraded == said
    types = [e.type for e in log.events]
    assert types.index("degraded") > types.index("profile")  # after the analysis's answer
    assert not list((tmp_path / "analysis").glob("*.json"))  # not stored
    # the next run analyses again (nothing was kept), and this time keeps it
    again = EventLog(None)
    assert pipeline.analyse(_problem(), "cpu", again, cache=cache).degraded == []
    assert len(calls) == 2 and len(list((tmp_path / "analysis").glob("*.json"))) == 1
    hit = EventLog(None)
    pipeline.analyse(_problem(), "cpu", hit, cache=cache)
    assert len(calls) == 2 and [e.data["cached"] for e in hit.of_type("profile")] == [True]


def test_the_cache_refuses_to_store_or_read_a_degraded_analysis(tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path)
    bad = {"baselines": {}, "profile": {"facts": {"degraded": [{"phase": "harvest"}]}}}
    assert degraded_of(bad) and not cache.store("k", bad)
    assert not (tmp_path / "analysis" / "k.json").exists()
    # an entry written another way (an older version, by hand) is not read back either
    from kernelopt_jupyter.analysis.cache import CACHE_SCHEMA

    (tmp_path / "analysis").mkdir(parents=True, exist_ok=True)
    (tmp_path / "analysis" / "k.json").write_text(json.dumps({**bad, "schema": CACHE_SCHEMA}))
    assert cache.load("k") is None
    good = {"baselines": {}, "profile": {"facts": {"degraded": []}}}
    assert cache.store("g", good) and cache.load("g") is not None
    assert not list((tmp_path / "analysis").glob("*.tmp"))


def test_failed_deferred_peers_are_said_kept_in_the_facts_and_read_back_on_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(**_: Any) -> Any:
        raise RuntimeError("no worker ahead in this test")

    monkeypatch.setattr(worker, "prestart_service", refuse)
    failed = _steps(baselines={"step_error": "RuntimeError: CUDA error: out of memory"})
    _fake_worker(monkeypatch, _steps(dispatch={**HARVESTED, "device": "cuda"}, timeline=TIMELINE))
    cache = AnalysisCache(tmp_path)
    log = EventLog(None)
    facts = pipeline.analyse(_problem(), "cuda", log, cache=cache, defer_baselines=True)
    assert facts.degraded == [] and facts.deferred is not None
    _fake_worker(monkeypatch, failed)
    facts.deferred.measure()
    said = [e.data for e in log.events if e.type == "degraded"]
    assert said == [{"phase": "baselines", "error": "RuntimeError: CUDA error: out of memory"}]
    assert facts.degraded == said
    assert not list((tmp_path / "analysis").glob("*.json"))
    resumed = pipeline.analysis_from_events(log.events)
    assert resumed is not None and resumed.degraded == said


def test_the_console_and_the_panel_say_which_phase_failed() -> None:
    event = Event("degraded", {"phase": "harvest", "error": Z3}, t=4.3)
    out = io.StringIO()
    TextProgress(out)(event)
    line = out.getvalue().strip()
    assert line.startswith("[    4.3s] WARNING: the analysis's harvest phase failed: ")
    assert Z3 in line and "not cached" in line and "\n" not in line
    state = SessionState()
    state.apply(event)
    assert state.degraded == [Degraded(phase="harvest", error=Z3)]
    assert any("harvest phase failed" in e for e in state.take_changes().errors)
    pytest.importorskip("ipywidgets")
    from kernelopt_jupyter.notebook.panel.view import SessionPanel

    panel = SessionPanel()
    panel.feed([event])
    assert "harvest phase failed" in panel.header.errors.value and "ExprRef" in (
        panel.header.errors.value
    )


NOCOMPILE = """
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling():
            raise RuntimeError("this reference refuses torch.compile")
        return torch.relu(x) * 2.0


def get_inputs():
    return [torch.randn(8, 16)]


def get_init_inputs():
    return []
"""


def _optimize(problem: Path, out: Path, env: dict[str, str], *flags: str) -> Any:
    return subprocess.run(
        [
            *(sys.executable, "-m", "kernelopt_jupyter.cli", "optimize", str(problem)),
            *("--device", "cpu", "--budget", "1", "--out", str(out), *flags),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


@pytest.mark.slow
def test_a_real_failed_harvest_is_said_recorded_and_analysed_again_next_time(
    tmp_path: Path,
) -> None:
    """Inductor cannot compile this reference (it refuses torch.compile): the harvest fails;
    the search goes on from the reference's own ops and says so, twice analysed afresh."""
    problem = tmp_path / "nocompile.py"
    problem.write_text(NOCOMPILE)
    env = {**os.environ, "KERNELOPT_CACHE_DIR": str(tmp_path / "cache")}
    for run in ("first", "second"):
        done = _optimize(problem, tmp_path / run, env)
        assert done.returncode == 0, done.stderr[-2000:]
        warning = [ln for ln in done.stderr.splitlines() if "harvest phase failed" in ln]
        assert len(warning) == 2, done.stderr[-2000:]  # as it happens, and at the end
        assert "torch.compile produced 0 graphs" in warning[0]
        result = json.loads((tmp_path / run / "result.json").read_text())
        assert [d["phase"] for d in result["degraded"]] == ["harvest"]
        events = read_events(tmp_path / run / "events.jsonl")
        assert [e.data["phase"] for e in events if e.type == "degraded"] == ["harvest"]
        analyses = [e for e in events if e.type == "profile" and "candidate" not in e.data]
        assert [e.data["cached"] for e in analyses] == [False]
    assert not list((tmp_path / "cache").rglob("*.json"))
