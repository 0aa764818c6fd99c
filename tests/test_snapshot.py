"""A panel's static snapshot: the panel output's own mime data, and the chart of candidates."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython
from panel_sample import REFERENCE, sample_events

from kernelopt_jupyter.events import Event, EventLog
from kernelopt_jupyter.notebook import magic
from kernelopt_jupyter.notebook.panel.view import SessionPanel
from kernelopt_jupyter.notebook.report import state_from_events
from kernelopt_jupyter.notebook.snapshot import (
    PANEL_MIME,
    PANEL_TEXT,
    WIDGET_VIEW_MIME,
    panel_bundle,
    snapshot_bundle,
    snapshot_svg,
)
from kernelopt_jupyter.session.state import SessionState


def _events(tmp_path: Path, candidates: int) -> list[Event]:
    log = EventLog(tmp_path / "events.jsonl")
    for kind, data in sample_events(candidates=candidates):
        log.emit(kind, **data)
    return list(log.events)


def test_panel_bundle_names_the_model_and_the_connection_and_reads_as_text() -> None:
    widget = {"text/plain": "VBox(children=(...))", WIDGET_VIEW_MIME: {"model_id": "abc"}}
    bundle = panel_bundle(widget, "browser-1")
    assert bundle[PANEL_MIME] == {"model_id": "abc", "origin": "browser-1"}
    assert bundle[WIDGET_VIEW_MIME] == {"model_id": "abc"}
    assert bundle["text/plain"] == PANEL_TEXT  # not the widget's repr, on GitHub
    assert panel_bundle(widget, None)[PANEL_MIME]["origin"] == ""


def test_no_chart_before_the_first_candidate() -> None:
    assert snapshot_svg(SessionState()) is None
    assert snapshot_bundle(SessionState()) == {"text/plain": "KernelOPT: no candidate yet"}


def test_the_chart_draws_each_candidate_by_what_it_reached(tmp_path: Path) -> None:
    state = state_from_events(_events(tmp_path, candidates=3))  # c3 fails correctness
    svg = snapshot_svg(state)
    assert svg is not None
    root = ET.fromstring(svg)  # well-formed, so every viewer can draw it
    ns = "{http://www.w3.org/2000/svg}"
    titles = [t.text for t in root.iter(f"{ns}title")]
    speed = {c.id: c.speedup for c in state.candidates.values()}
    assert titles == [
        f"c1: {speed['c1']:.2f}x",
        f"c2: {speed['c2']:.2f}x",
        "c3: failed correctness",
    ]
    texts = [t.text for t in root.iter(f"{ns}text")]
    assert f"c2{'★' if state.best == 'c2' else ''}" in texts and "1x" in texts
    assert "speedup (x vs baseline)" in texts
    bars = {
        r.find(f"{ns}title").text.split(":")[0]: r
        for r in root.iter(f"{ns}rect")  # type: ignore[union-attr]
        if r.find(f"{ns}title") is not None
    }
    heights = {cid: float(r.get("height", "0")) for cid, r in bars.items()}
    assert heights["c2"] > heights["c1"] > heights["c3"]  # c2 is faster; c3 failed
    bundle = snapshot_bundle(state)
    assert bundle["image/svg+xml"] == svg and "3 candidate(s)" in bundle["text/plain"]


def test_an_untimed_pass_says_so(tmp_path: Path) -> None:
    state = state_from_events(_events(tmp_path, candidates=1))
    cand = state.candidates["c1"]
    cand.speedup = None  # as on the CPU: passed, nothing timed
    svg = snapshot_svg(state) or ""
    assert "c1: passed" in svg and "gate outcome (nothing timed)" in svg and ">1x<" not in svg


def test_open_displays_the_panel_with_its_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``%kernelopt open``: the panel's output carries PANEL_MIME beside the widget view, then
    the chart, then the summary."""
    shell = start_ipython() or get_ipython()
    assert shell is not None
    monkeypatch.chdir(tmp_path)
    shell.run_line_magic("load_ext", "kernelopt_jupyter")
    monkeypatch.setattr(magic, "has_widget_frontend", lambda shell: True)
    shown: list[Any] = []
    updates: dict[int, Any] = {}

    class Handle:
        def __init__(self, index: int) -> None:
            self.index = index

        def update(self, obj: Any, **kwargs: Any) -> None:
            updates[self.index] = obj

    def display(obj: Any, raw: bool = False, display_id: bool = False) -> Handle | None:
        shown.append(obj)
        return Handle(len(shown) - 1) if display_id else None

    monkeypatch.setattr(magic, "display", display)
    folder = tmp_path / "saved"
    _events(folder, candidates=3)
    (folder / "problem.py").write_text(REFERENCE)
    magic.SESSIONS.clear()
    try:
        shell.run_line_magic("kernelopt", f"open {folder}")
        assert len(shown) == 3, shown
        assert PANEL_MIME in shown[0] and WIDGET_VIEW_MIME in shown[0]
        assert (
            "image/svg+xml" in updates[1]
            and "c3: failed correctness" in updates[1]["image/svg+xml"]
        )
        assert "KernelOPT session summary" in updates[2].data
    finally:
        for record in magic.SESSIONS:
            if isinstance(record.panel, SessionPanel):
                record.panel.close()
        magic.SESSIONS.clear()


def test_the_live_chart_is_redrawn_at_each_verdict(tmp_path: Path) -> None:
    drawn: list[dict[str, Any]] = []

    class Handle:
        def update(self, obj: Any, **kwargs: Any) -> None:
            drawn.append(obj)

    read = magic._chart_redraw(Handle())
    events = _events(tmp_path, candidates=3)
    for event in events:
        read(event)
    verdicts = [e for e in events if e.type == "verdict"]
    assert len(drawn) == len(verdicts) == 3
    assert [d["text/plain"] for d in drawn] == [
        f"KernelOPT: {n} candidate(s); best c{min(n, 2)}" for n in (1, 2, 3)
    ]
