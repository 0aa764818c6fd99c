"""The live panel: small ipywidgets views of one session, fed only by its event stream.

Events arrive on the search's thread (``EventLog.subscribe``); the subscriber only queues them.
A refresher thread wakes when something is queued, waits one ``interval`` (100 ms) so a burst
collapses into one update, folds the batch into :class:`SessionState` and hands each view what
the batch changed: new text is appended (never resent), new candidates add rows, changed
candidates update their own badges. Buttons call the session's controls; they never run
candidate code in the kernel.

The views (header, controls, agents, table, diff, charts, editor) live in their own modules and
share a :class:`PanelContext`; stable CSS classes are listed in :data:`CSS_CLASSES`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import ipywidgets as w

from kernelopt_jupyter.event_payloads import SessionFinished
from kernelopt_jupyter.events import Event, EventLog
from kernelopt_jupyter.notebook.accept import (
    code_view_html,
    insert_with_bridge,
    render_accepted_cell,
)
from kernelopt_jupyter.notebook.panel.agents import AgentsView
from kernelopt_jupyter.notebook.panel.charts import ChartsView, profile_summary_html
from kernelopt_jupyter.notebook.panel.context import CSS_CLASSES, TAB_TITLES, PanelContext, cls
from kernelopt_jupyter.notebook.panel.controls import ControlsView
from kernelopt_jupyter.notebook.panel.difftab import DiffTab
from kernelopt_jupyter.notebook.panel.editor import EditorView
from kernelopt_jupyter.notebook.panel.export import ExportView
from kernelopt_jupyter.notebook.panel.header import HeaderView
from kernelopt_jupyter.notebook.panel.progress import PhaseView
from kernelopt_jupyter.notebook.panel.report import ReportView
from kernelopt_jupyter.notebook.panel.table import CandidatesTable
from kernelopt_jupyter.notebook.phases import PhaseTracker
from kernelopt_jupyter.problem import Problem
from kernelopt_jupyter.session.state import Changes, SessionState

__all__ = ["CSS_CLASSES", "TAB_TITLES", "SessionPanel", "profile_summary_html"]


class SessionPanel:
    """The widget panel of one optimization session.

    ``controller`` is the running :class:`~kernelopt_jupyter.session.OptimizationSession` (or
    None for a saved session shown read-only); it must offer ``stop()``, ``step`` (a step
    control in step mode, else None) and ``submit(source, parent=..., agent=...)``.
    """

    def __init__(
        self,
        *,
        controller: Any = None,
        problem: Problem | None = None,
        cell_id: str | None = None,
        step_mode: bool = False,
        interval: float = 0.1,
        reference_source: str | None = None,
        out_dir: str | None = None,
    ) -> None:
        self.controller = controller
        self.problem = problem
        self.cell_id = cell_id
        self._inserted = ""  # the last insertion's confirmation (kept when the search ends)
        self.interval = interval
        self.state = SessionState()
        self.created = time.monotonic()
        self.first_render_s: float | None = None
        self.rendered = 0  # events applied and drawn so far
        self.on_finished: list[Callable[[SessionState], None]] = []
        self._queue: list[Event] = []
        self._qlock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._thread: threading.Thread | None = None
        self._log: EventLog | None = None
        self.ctx = PanelContext(
            state=self.state,
            controller=controller,
            problem=problem,
            reference_source=reference_source or (problem.source if problem else ""),
            say=self._say,
        )
        self.header = HeaderView(self.ctx, out_dir)
        self.phases = PhaseTracker()
        self.phase_view = PhaseView()
        self._clock: float | None = None  # wall-clock time of the session's t=0, when live
        self.controls = ControlsView(self.ctx, step_mode=step_mode, on_edit=self.open_editor)
        self.export = ExportView(self.ctx, out_dir)
        self.report = ReportView(self.ctx, out_dir)
        self.controls.widget.children = (
            *self.controls.widget.children,
            self.export.button,
            self.report.button,
            self.report.path_html,
        )
        self.agents = AgentsView(self.ctx)
        self.table = CandidatesTable(self.ctx, on_diff=self.show_diff, on_accept=self.accept)
        self.diff = DiffTab(self.ctx)
        self.charts = ChartsView(self.ctx)
        self.editor = EditorView(
            self.ctx,
            after_submit=self.controls.disable_steps,
            after_refusal=self.controls.refused,
        )
        pages = [
            self.agents.widget,
            self.table.widget,
            self.diff.widget,
            self.charts.widget,
            self.editor.widget,
        ]
        self.tabs = cls(w.Tab(children=pages), CSS_CLASSES["tabs"])
        for i, title in enumerate(TAB_TITLES):
            self.tabs.set_title(i, title)
        self.ctx.tabs = self.tabs
        self.widget = cls(
            w.VBox(
                [
                    self.header.html,
                    self.header.cost,
                    self.phase_view,
                    self.controls.widget,
                    self.header.message,
                    self.header.code,
                    self.controls.pending,
                    self.tabs,
                    self.header.errors,
                ]
            ),
            CSS_CLASSES["panel"],
        )

    @property
    def step_mode(self) -> bool:
        """Whether the step buttons show (set, or seen a pause)."""
        return self.controls.step_mode

    def _say(self, text: str) -> None:
        self.header.say(text)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    # ------------------------------------------------------------------ feeding events

    def attach(self, log: EventLog) -> None:
        """Subscribe to ``log`` (history first, then live events) and start refreshing."""
        self._log = log
        self._start_refresher()
        log.subscribe(self._on_event, replay=True)

    def feed(self, events: Iterable[Event]) -> None:
        """Show events that are not live (a saved session): applied and drawn at once."""
        with self._qlock:
            self._queue.extend(events)
        self.flush()

    def _on_event(self, event: Event) -> None:
        # Runs on the search's thread: only queue, never touch widgets here.
        with self._qlock:
            self._queue.append(event)
        self._wake.set()

    def _start_refresher(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(
                target=self._refresh_loop, name="kernelopt-panel", daemon=True
            )
            self._thread.start()

    def _refresh_loop(self) -> None:
        while not self._closed:
            self._wake.wait()
            if self._closed:
                return
            time.sleep(self.interval)  # let a burst of events collapse into one update
            self._wake.clear()
            try:
                self.flush()
            except Exception as exc:  # keep refreshing: one bad event must not freeze the panel
                self._say(f"panel error: {type(exc).__name__}: {exc}")

    def close(self) -> None:
        """Stop listening and refreshing (the widgets stay as they are)."""
        self._closed = True
        self._wake.set()
        if self._log is not None:
            self._log.unsubscribe(self._on_event)

    def flush(self) -> int:
        """Apply every queued event and redraw what changed; returns how many were applied."""
        with self._qlock:
            batch, self._queue = self._queue, []
        with self.ctx.lock:
            for event in batch:
                self.table.notes.apply(event)
            self.state.apply_all(batch)
            changes = self.state.take_changes()
            if changes.any():
                self._render(changes)
            self._render_phases(batch)
            self.rendered += len(batch)
            if batch and self.first_render_s is None:
                self.first_render_s = time.monotonic() - self.created
        if changes.finished:
            for callback in list(self.on_finished):
                callback(self.state)
        if self.state.status != "starting":
            self.charts.start(background=self._log is not None)
        return len(batch)

    # ------------------------------------------------------------------ rendering

    def _render_phases(self, batch: list[Event]) -> None:
        changed = False
        for event in batch:
            changed |= self.phases.apply(event)
        if self._log is not None and batch and self._clock is None:
            # Live events were emitted a moment ago: their t dates the session's start.
            self._clock = time.time() - max(e.t for e in batch)
        if changed:
            self.phase_view.show(self.phases, self._clock)

    def _render(self, changes: Changes) -> None:
        s = self.state
        if changes.header or changes.agents:
            self.header.render()
        self.agents.render(changes)
        if changes.new_candidates:
            self.table.add_rows(changes.new_candidates)
            self.diff.set_candidates(changes.new_candidates[-1])
            self.editor.set_parents()
        for cid in changes.candidates - set(changes.new_candidates):
            self.table.update_row(s.candidates[cid])
        if changes.profile:
            self.charts.render_profile()
        if changes.progress or changes.finished:
            self.charts.render_progress()
        if changes.step:
            self.controls.render_step()
        if changes.errors:
            self.header.render_errors()
        if changes.finished:
            self.controls.finished()
            self.export.render()
            self.report.render()
            fin = s.finished or SessionFinished()
            best = fin.best
            ended = {"stopped": "Stopped", "failed": "Failed"}.get(fin.status, "Finished")
            # An insertion confirmed before the search ended stays on the line: the person
            # accepted while it ran, and the end must not erase that it worked.
            self._say(
                f"{ended}."
                + (
                    f" Best: {best}. Click its Accept button to bring it into the notebook."
                    if best
                    else ""
                )
                + (f" {self._inserted}" if self._inserted else "")
            )

    # ------------------------------------------------------------------ actions

    def show_diff(self, cid: str, against: str | None = None) -> None:
        """Open the Diff tab on candidate ``cid`` (against 'parent' or 'reference')."""
        with self.ctx.lock:
            self.diff.show(cid, against)

    def open_editor(self, cid: str | None = None) -> None:
        """Prefill the Edit tab with candidate ``cid`` (or what step mode is paused on)."""
        with self.ctx.lock:
            self.editor.open(cid)

    def accept(self, cid: str) -> str:
        """Bring candidate ``cid`` into the notebook below the magic's cell; returns the cell."""
        cand = self.state.candidates[cid]
        text = render_accepted_cell(
            self.problem,
            cand,
            cand.gates,
            (cand.speedup, cand.ci_low, cand.ci_high) if cand.speedup is not None else None,
            device=self.state.device or None,
        )

        def done(ok: bool, detail: str) -> None:
            if ok:
                self.header.show_code("")
                self._inserted = f"Inserted {cid} into the notebook."
                self._say(self._inserted)
                return
            # No cell could be made from here (set_next_input from a button lands under a
            # later cell, if anywhere): show the code to copy, and say what did happen.
            self.header.show_code(code_view_html(text, cid))
            self._say(
                f"No cell was inserted ({detail or 'no JupyterLab extension answered'}): "
                f"{cid}'s code is shown below with a Copy button, or run "
                f"`%kernelopt accept {cid}` in a new cell."
            )

        self._say(f"Inserting {cid}…")
        insert_with_bridge(self.cell_id, text, self.controls.accept_mode.value, done)
        return text
