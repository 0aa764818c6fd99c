"""``kernelopt report DIR``: a saved session as a standalone notebook (structure, errors, and,
slow, that it executes on the CPU)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from kernelopt_jupyter.cli.main import main
from kernelopt_jupyter.session.report import dispatch_chart, report_notebook

SESSION = (
    Path(__file__).resolve().parent.parent / "notebooks" / "lessons" / "sessions" / "diag_scale"
)


def _session(tmp_path: Path) -> Path:
    run = tmp_path / "diag_scale-run"
    shutil.copytree(SESSION, run)
    return run


def test_report_tells_the_sessions_story(tmp_path: Path) -> None:
    run = _session(tmp_path)
    assert main(["report", str(run)]) == 0
    nb = nbformat.read(run / "report.ipynb", as_version=4)
    nbformat.validate(nb)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    for heading in (
        "# KernelOPT session report",
        "## The problem",
        "## Baselines and the dispatch map",
        "## The search",
        "## The result",
    ):
        assert heading in markdown
    assert "not timed" in markdown  # a CPU session says so
    # Its kept matmul ran ATen's CPU kernel: the dispatch table does not call it cuBLAS.
    assert "| CPU ATen; cuBLAS on GPU |" in markdown and "| cuBLAS |" not in markdown
    # Each candidate that passed has its own section with its gates and its diff.
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    passed = [
        e["data"]["candidate"]
        for e in events
        if e["type"] == "verdict" and e["data"]["verdict"] == "pass"
    ]
    for cid in passed:
        assert f"### {cid}:" in markdown
    assert "```diff" in markdown and "| correctness | pass |" in markdown
    # The chart is an SVG attachment, not a plotting library's bundle.
    charts = [c for c in nb.cells if c.cell_type == "markdown" and c.get("attachments")]
    assert charts and "<svg" in charts[0].attachments["dispatch.svg"]["image/svg+xml"]
    # The problem, then the winner as a runnable cell, then a check against the reference.
    assert any("class Model" in c and "REFERENCE = Model" in c for c in code)
    assert "class ModelNew" in code[-2] and "matches the reference" in code[-1]
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    assert len(nbformat.writes(nb)) < 200_000


def test_report_json_and_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _session(tmp_path)
    out = tmp_path / "elsewhere" / "story.ipynb"
    assert main(["report", str(run), "--out", str(out), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["report"] == str(out) and answer["cells"] > 5
    assert out.is_file()


def test_report_of_a_folder_without_session_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "events.jsonl" in err and str(tmp_path) in err


def test_unfinished_session_without_winner(tmp_path: Path) -> None:
    run = tmp_path / "cut"
    run.mkdir()
    lines = (SESSION / "events.jsonl").read_text().splitlines()
    first_candidate = next(i for i, line in enumerate(lines) if '"type":"candidate"' in line)
    (run / "events.jsonl").write_text("\n".join(lines[:first_candidate]) + "\n")
    nb = report_notebook(run)
    text = json.dumps(nb)
    assert "not finished" in text and "verified no candidate" in text and "no `problem.py`" in text


def test_dispatch_chart_draws_a_bar_per_timed_kernel() -> None:
    svg = dispatch_chart(
        [
            {"name": "k1", "kind": "triton", "ms": 2.0},
            {"name": "mm", "kind": "vendor", "bound_ms": 1.0},
            {"name": "x"},
        ]
    )
    assert svg.count("<rect") == 2 and "2 ms" in svg
    assert dispatch_chart([{"name": "x"}]) == ""


@pytest.mark.slow
def test_report_executes_on_the_cpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nbclient import NotebookClient

    monkeypatch.delenv("KERNELOPT_SMALL", raising=False)
    run = _session(tmp_path)
    assert main(["report", str(run)]) == 0
    nb = nbformat.read(run / "report.ipynb", as_version=4)
    NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(run)}}
    ).execute()
    assert "matches the reference" in "".join(o.get("text", "") for o in nb.cells[-1].outputs)
