"""``--no-cache`` (optimize, bench, the magic; profile accepts it) neither reads nor writes the
analysis cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kernelopt_jupyter import worker
from kernelopt_jupyter.analysis import pipeline
from kernelopt_jupyter.analysis.cache import AnalysisCache
from kernelopt_jupyter.cli.main import build_parser
from kernelopt_jupyter.cli.optimize import _options
from kernelopt_jupyter.events import EventLog
from kernelopt_jupyter.problem import problem_from_source
from kernelopt_jupyter.worker import WorkerResult

SOURCE = """
import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.randn(32, 64)]
"""
HARVESTED = {
    "problem": "relu.py",
    "device": "cpu",
    "harvest_data": {"ok": True, "device": "cpu", "source": "class ModelNew: pass\n"},
}
ANSWER = WorkerResult(
    True,
    value={"seconds": {}, "dispatch": HARVESTED, "timeline": {"timeline": [], "detail": "d"}},
)


def _problem() -> Any:
    return problem_from_source(SOURCE, "relu.py", validate=False)


def _fake_worker(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    calls: list[Any] = []

    def run_task(task: str, kwargs: dict[str, Any], **_: Any) -> WorkerResult:
        calls.append(kwargs.get("steps"))
        return ANSWER

    monkeypatch.setattr(worker, "run_task", run_task)
    monkeypatch.setattr(worker, "take_kept", lambda key: None)
    return calls


def test_no_cache_reaches_the_search_options_of_optimize_and_bench_and_profile_accepts_it() -> None:
    parser = build_parser()
    for argv in (["optimize", "p.py"], ["bench", "p.py"]):
        assert _options(parser.parse_args(argv), None).analysis_cache is True
        assert _options(parser.parse_args([*argv, "--no-cache"]), None).analysis_cache is False
    assert parser.parse_args(["profile", "p.py", "--no-cache"]).no_cache is True


def test_with_the_cache_off_nothing_is_read_or_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kernelopt_jupyter.session import OptimizationSession, SearchOptions

    calls = _fake_worker(monkeypatch)
    cache = AnalysisCache(tmp_path / "cache")
    pipeline.analyse(_problem(), "cpu", EventLog(None), cache=cache)  # a complete entry
    assert len(calls) == 1 and len(list(cache.root.glob("*.json"))) == 1
    entry = next(cache.root.glob("*.json"))

    for on, expected_calls in ((False, 2), (True, 2)):
        options = SearchOptions(
            device="cpu",
            out_dir=tmp_path / f"run-{on}",
            memory_path=None,
            cache_dir=tmp_path / "cache",
            analysis_cache=on,
        )
        session = OptimizationSession(_problem(), options)
        session._analyse()
        cached = [e.data["cached"] for e in session.log.of_type("profile")]
        assert len(calls) == expected_calls and cached == [on]  # off: measured, not read
    entry.unlink()
    session = OptimizationSession(
        _problem(),
        SearchOptions(
            device="cpu",
            out_dir=tmp_path / "run-off-2",
            memory_path=None,
            cache_dir=tmp_path / "cache",
            analysis_cache=False,
        ),
    )
    session._analyse()
    assert not list(cache.root.glob("*.json"))  # off: not written
