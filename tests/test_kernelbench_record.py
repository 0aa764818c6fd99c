"""``benchmarks/kernelbench_record.py``: rows of several runs merged into one record, the newest
row of each problem kept, each labelled with its run (or keeping the label it has)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _record() -> Any:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location(
        "kb_record", ROOT / "benchmarks/kernelbench_record.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(problem: str, verified: bool, speedup: float | None = None) -> dict[str, Any]:
    return {
        "problem": problem,
        "level": int(problem[5]),
        "verified": verified,
        "first_verdict_s": 5.0 if verified else None,
        "search_s": 65.0,
        "speedup_vs_best_peer": speedup,
        "speedup": {"eager": speedup, "compile": speedup},
    }


def test_a_later_run_replaces_rows_and_an_unlabelled_record_keeps_its_labels(
    tmp_path: Path,
) -> None:
    record = _record()
    old = tmp_path / "old.json"
    old.write_text(
        json.dumps(
            {
                "rows": [
                    {**_row("level1/a.py", True, 1.5), "run": "abc (H100)"},
                    {**_row("level1/b.py", False), "run": "abc (H100)"},
                ]
            }
        )
    )
    new = tmp_path / "new.json"
    new.write_text(json.dumps({"rows": [_row("level1/b.py", True, 2.0)]}))
    out = tmp_path / "rec"
    assert record.main([str(old), f"{new}:def (H100)", "-o", str(out), "--machine", "H100"]) == 0
    saved = json.loads(out.with_suffix(".json").read_text())
    runs = {r["problem"]: r["run"] for r in saved["rows"]}
    assert runs == {"level1/a.py": "abc (H100)", "level1/b.py": "def (H100)"}
    level1 = saved["summary"]["level1"]
    assert level1["problems"] == 2 and level1["verified"] == 2
    assert abs(level1["geomean_vs_best_peer"] - (1.5 * 2.0) ** 0.5) < 1e-9
    assert out.with_suffix(".svg").read_text().startswith("<svg")
