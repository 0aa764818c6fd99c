"""The panel's Report button: the ended session as a standalone notebook in its folder, never
over an earlier report, a one-line error when it cannot, and off while the search runs."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest

from kernelopt_jupyter.events import Event, read_events
from kernelopt_jupyter.notebook.panel import report as report_view
from kernelopt_jupyter.notebook.panel.view import SessionPanel

SESSION = (
    Path(__file__).resolve().parent.parent / "notebooks" / "lessons" / "sessions" / "diag_scale"
)
STARTED = Event("session_started", {"problem": "p.py", "name": "p", "device": "cpu"}, t=0.0)


def _wait(predicate: Any, timeout: float = 20.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end and not predicate():
        time.sleep(0.01)
    return bool(predicate())


def _finished_panel(tmp_path: Path) -> tuple[SessionPanel, Path]:
    run = tmp_path / "diag_scale-run"
    shutil.copytree(SESSION, run)
    panel = SessionPanel(out_dir=str(run))
    panel.feed(read_events(run / "events.jsonl"))
    return panel, run


def test_report_button_writes_the_sessions_notebook(tmp_path: Path) -> None:
    panel, run = _finished_panel(tmp_path)
    button = panel.report.button
    assert "kernelopt-report" in button._dom_classes and button.description == "Report"
    assert button in panel.controls.widget.children
    assert panel.report.path_html in panel.controls.widget.children
    assert not button.disabled
    button.click()
    assert _wait(lambda: panel.report.path is not None or panel.report.error)
    assert panel.report.error is None
    out = run / "report.ipynb"
    assert panel.report.path == out and out.is_file()
    nb = nbformat.read(out, as_version=4)
    nbformat.validate(nb)
    assert nb.cells[0].source.startswith("# KernelOPT session report")
    assert nb.metadata["kernelopt"]["best"] == "c0"
    assert f"Report written to {out}" in panel.header.message.value
    assert str(out) in panel.report.path_html.value
    assert _wait(lambda: not button.disabled)
    # A second report takes a fresh name: the first (perhaps edited) stays as it was.
    out.write_text(out.read_text() + " ")
    before = out.read_text()
    thread = panel.report.start()
    assert thread is not None
    thread.join(20)
    assert panel.report.path == run / "report-2.ipynb"
    nbformat.validate(nbformat.read(run / "report-2.ipynb", as_version=4))
    assert out.read_text() == before


def test_report_failure_is_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "no-session"
    empty.mkdir()
    panel = SessionPanel(out_dir=str(empty))
    panel.feed([STARTED, Event("session_finished", {"status": "finished", "best": None}, t=2.0)])
    thread = panel.report.start()
    assert thread is not None
    thread.join(20)
    assert panel.report.path is None and panel.report.error
    message = panel.header.message.value
    assert "Report failed: " in message and "events.jsonl" in message and "\n" not in message
    assert not (empty / "report.ipynb").exists()
    assert not panel.report.button.disabled  # free to try again


def test_report_is_off_while_the_search_runs_and_on_once_stopped(tmp_path: Path) -> None:
    calls: list[tuple[Path, Path, dict[str, Any]]] = []

    def reporter(run_dir: Path, out: Path, **kwargs: Any) -> int:
        calls.append((run_dir, out, kwargs))
        return 3

    panel = SessionPanel(out_dir=str(tmp_path))
    panel.report.reporter = reporter
    assert panel.report.button.disabled  # nothing has started
    panel.feed([STARTED, Event("baseline", {"name": "eager"}, t=1.0)])
    assert panel.report.button.disabled
    assert panel.report.start() is None and not calls
    assert "has not ended" in panel.header.message.value
    panel.feed([Event("session_finished", {"status": "stopped", "best": None}, t=5.0)])
    assert not panel.report.button.disabled
    thread = panel.report.start()
    assert thread is not None
    thread.join(5)
    assert calls == [(tmp_path, tmp_path / "report.ipynb", {"overwrite": False})]
    assert "(3 cells)" in panel.header.message.value


def test_no_session_folder_no_report() -> None:
    panel = SessionPanel()
    panel.feed([STARTED, Event("session_finished", {"status": "finished", "best": "c1"}, t=1.0)])
    assert panel.report.button.disabled and panel.report.start() is None


def test_the_default_reporter_is_kernelopt_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    from kernelopt_jupyter.session import report

    seen: list[Any] = []
    monkeypatch.setattr(report, "write_report", lambda *a, **kw: seen.append((a, kw)) or 1)
    assert report_view._default_reporter(Path("r"), Path("r/x.ipynb"), overwrite=False) == 1
    assert seen == [((Path("r"), Path("r/x.ipynb")), {"overwrite": False})]
