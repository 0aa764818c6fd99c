"""benchmarks/summarize.py: shards merge, each winner's chain of moves is read from its run, and
the per-level gain is split over the kinds of move."""

from __future__ import annotations

import importlib.util
import json
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _summarize() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_summarize", ROOT / "benchmarks" / "summarize.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(tmp: Path, name: str, chain: list[str]) -> str:
    out = tmp / name
    out.mkdir()
    cands = [{"id": "c0", "parent": None, "note": "Inductor harvest"}]
    for i, note in enumerate(chain, start=1):
        cands.append({"id": f"c{i}", "parent": f"c{i - 1}", "note": note})
    cands.append({"id": "c9", "parent": "c0", "note": "dispatch: a loser"})
    best = f"c{len(chain)}" if chain else "c0"
    (out / "result.json").write_text(json.dumps({"candidates": cands, "best": best}))
    return str(out)


def _row(level: int, name: str, out_dir: str, vs_peer: float) -> dict:
    return {
        "problem": f"benchmarks/problems/level{level}/{name}.py",
        "level": level,
        "verdict": "improved" if vs_peer > 1.03 else "not improved",
        "timed": True,
        "speedup_vs_eager": vs_peer,
        "speedup_vs_compile": vs_peer,
        "speedup_vs_peer": {"eager": vs_peer, "compile": vs_peer, "best_baseline": vs_peer},
        "seconds": 50.0,
        "out_dir": out_dir,
    }


def test_merge_reads_chains_and_splits_gains_by_kind(tmp_path: Path) -> None:
    s = _summarize()
    a = _run(tmp_path, "a", ["rewrite: fold BatchNorm", "CUDA graph on [rewrite: fold BatchNorm]"])
    b = _run(tmp_path, "b", ["inductor config: coordinate_descent_tuning", "tune k: XBLOCK 1->2"])
    c = _run(tmp_path, "c", [])
    shard1 = tmp_path / "gpu0.json"
    shard1.write_text(json.dumps({"rows": [_row(2, "x", a, 4.0), _row(1, "z", c, 1.0)]}))
    shard2 = tmp_path / "gpu1.json"
    shard2.write_text(json.dumps({"rows": [_row(2, "y", b, 2.0)]}))
    broken = tmp_path / "gpu2.json"
    broken.write_text('{"rows": [')
    data = s.merge([shard1, shard2, broken])
    assert [r["problem"].rsplit("/", 1)[-1] for r in data["rows"]] == ["z.py", "x.py", "y.py"]
    by = {Path(r["problem"]).stem: r for r in data["rows"]}
    assert by["x"]["moves"] == [
        "rewrite: fold BatchNorm",
        "CUDA graph on [rewrite: fold BatchNorm]",
    ]
    assert by["x"]["move_kinds"] == ["graph rewrite", "CUDA graph"]
    assert by["y"]["move_kinds"] == ["inductor config", "launch config"]
    assert by["z"]["moves"] == []
    shares = data["move_kinds"]["2"]
    # log 4 split over two kinds, log 2 over two: rewrite and graph 1/3 each, the others 1/6.
    assert (
        abs(shares["graph rewrite"] - 1 / 3) < 1e-3 and abs(shares["launch config"] - 1 / 6) < 1e-3
    )
    assert data["summary"]["2"]["count"] == 2 and data["summary"]["2"]["improved"] == 2
    assert len(data["broken_shards"]) == 1
    text = s.markdown(data)
    assert "rewrite: fold BatchNorm -> CUDA graph" in text and "graph rewrite 33%" in text
    # the Executor's seconds, those of steps that gave no candidate in brackets
    assert s.executor_cell({"executor_s": 35.3, "executor_no_candidate_s": 35.3}) == "35.3 (35.3)"
    assert s.executor_cell({}) == "-"


def test_latest_keeps_each_problems_last_row_and_names_its_run(tmp_path: Path) -> None:
    s = _summarize()
    c = _run(tmp_path, "c", [])
    old = tmp_path / "s6.json"
    old.write_text(json.dumps({"rows": [_row(1, "x", c, 0.5), _row(1, "y", c, 1.5)]}))
    new = tmp_path / "s14.json"
    new.write_text(
        json.dumps({"rows": [{**_row(1, "x", c, 1.2), "problem": "/other/level1/x.py"}]})
    )
    data = s.merge([old, new], latest=True)
    by = {Path(r["problem"]).stem: r for r in data["rows"]}
    assert by["x"]["speedup_vs_peer"]["best_baseline"] == 1.2 and by["x"]["source"] == str(new)
    assert by["y"]["source"] == str(old) and data["superseded"] == 1
    assert data["summary"]["1"]["count"] == 2
    # without it, both rows of x stay
    assert len(s.merge([old, new])["rows"]) == 3
