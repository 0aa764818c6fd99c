"""The analysis cache: keyed by source, input shapes, torch, Triton and GPU; only complete
analyses are kept; a hit replays the same events without measuring again."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from kernelopt_jupyter.analysis import pipeline
from kernelopt_jupyter.analysis.baselines import Baselines
from kernelopt_jupyter.analysis.cache import AnalysisCache, input_signature
from kernelopt_jupyter.events import EventLog
from kernelopt_jupyter.problem import problem_from_source

SOURCE = """
import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.randn({n}, 64)]
"""


def _problem(n: int = 32) -> Any:
    return problem_from_source(SOURCE.format(n=n), "relu.py", validate=False)


def test_the_key_follows_source_shapes_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = AnalysisCache(Path("/nonexistent"))
    key = cache.key(_problem(), "cpu")
    assert key is not None and key == cache.key(_problem(), "cpu")
    assert input_signature(_problem(1 << 20)) == [[[1 << 20, 64], "torch.float32"]]  # meta: free
    assert cache.key(_problem(48), "cpu") != key  # other input shapes
    monkeypatch.setenv("KERNELOPT_SMALL", "1")
    assert cache.key(_problem(), "cpu") != key  # the switch that shrinks bundled problems
    monkeypatch.delenv("KERNELOPT_SMALL")
    import torch

    monkeypatch.setattr(torch, "__version__", "9.9.9")
    assert cache.key(_problem(), "cpu") != key  # another torch writes other kernels


def test_a_hit_replays_the_events_and_an_incomplete_analysis_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs: list[bool] = []
    complete = [False, True]

    def measure(
        problem: Any, device: str, deadline: Any, baselines: bool = True
    ) -> tuple[Baselines, dict[str, Any], bool]:
        runs.append(True)
        facts = pipeline.AnalysisFacts({"eager": None}, [], False, [], "src", False, "note")
        profile = {
            "dispatch_map": {"records": []},
            "summary": "s",
            "facts": facts.to_dict(),
            "timeline": [],
            "timeline_detail": "d",
        }
        return Baselines(measured=False, device=device, detail="cpu"), profile, complete.pop(0)

    monkeypatch.setattr(pipeline, "_measure", measure)
    cache = AnalysisCache(tmp_path)
    logs = [EventLog(None) for _ in range(3)]
    for log in logs:
        pipeline.analyse(_problem(), "cpu", log, cache=cache)
    assert len(runs) == 2  # the first was cut short (not stored), the second was kept
    cached = [[e.data["cached"] for e in log.events if e.type == "profile"] for log in logs]
    assert cached == [[False], [False], [True]]
    first = [e.data for e in logs[1].events]
    hit = [e.data for e in logs[2].events]
    assert [{k: v for k, v in d.items() if k != "cached"} for d in hit] == [
        {k: v for k, v in d.items() if k != "cached"} for d in first
    ]


def test_a_hit_names_this_sessions_problem_in_the_harvest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache is keyed by source: a hit stored by a session of another name still gives a
    root and dispatch variants whose docstring names this session's problem."""
    from kernelopt_jupyter.analysis.harvest import HARVEST_TITLE

    def harvested(name: str) -> str:
        return f'"""{HARVEST_TITLE.format(name=name)}.\n"""\nx = 1\n'

    def measure(
        problem: Any, device: str, deadline: Any, baselines: bool = True
    ) -> tuple[Baselines, dict[str, Any], bool]:
        variants = [("vendor mm", harvested("cell"))]
        facts = pipeline.AnalysisFacts(
            {"eager": None}, [], False, variants, harvested("cell"), False, "Inductor harvest"
        )
        profile = {"dispatch_map": {}, "summary": "s", "facts": facts.to_dict(), "timeline": []}
        profile["timeline_detail"] = "d"
        return Baselines(measured=False, device=device, detail="cpu"), profile, True

    monkeypatch.setattr(pipeline, "_measure", measure)
    cache = AnalysisCache(tmp_path)
    for name in ("first-cell2", "second-cell5"):
        problem = dataclasses.replace(_problem(), name=name)
        log = EventLog(None)
        facts = pipeline.analyse(problem, "cpu", log, cache=cache)
        assert f"for problem {name!r}." in facts.root_source
        assert f"for problem {name!r}." in facts.dispatch_variants[0][1]
        [event] = [e for e in log.events if e.type == "profile"]
        assert f"for problem {name!r}." in event.data["facts"]["root_source"]
    assert event.data["cached"] is True
