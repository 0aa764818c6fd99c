"""The live panel: ipywidgets views of one session, fed only by its event stream.

Events arrive on the search's thread (``EventLog.subscribe``); the subscriber only queues them.
A refresher thread wakes when something is queued, waits one ``interval`` (100 ms) so a burst
collapses into one update, folds the batch into :class:`SessionState` and redraws only what the
batch changed: new text is appended (never resent), new candidates add rows, changed
candidates update their own badges. Buttons call the session's controls; they never run
candidate code in the kernel.

Stable CSS classes for browser tests and styling are listed in :data:`CSS_CLASSES`.
"""

from __future__ import annotations

import html
import json
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import ipywidgets as w
from ipywidgets.widgets.widget_string import HTMLStyle

from kernelopt_jupyter.events import Event, EventLog
from kernelopt_jupyter.notebook.accept import insert_with_bridge, render_accepted_cell
from kernelopt_jupyter.notebook.panel import plots
from kernelopt_jupyter.notebook.panel.diff import side_by_side
from kernelopt_jupyter.notebook.panel.stream import StreamView
from kernelopt_jupyter.problem import Problem
from kernelopt_jupyter.session.state import GATES, CandidateView, SessionState, speedup_text

#: DOM classes the panel puts on its widgets (browser tests select by these).
CSS_CLASSES = {
    "panel": "kernelopt-panel",
    "header": "kernelopt-header",
    "message": "kernelopt-message",
    "stop": "kernelopt-stop",
    "accept_mode": "kernelopt-accept-mode",
    "tabs": "kernelopt-tabs",
    "agents": "kernelopt-agents",
    "candidates": "kernelopt-candidates",
    "row": "kernelopt-candidate-row",  # plus kernelopt-candidate-<id>
    "gate": "kernelopt-gate",  # plus kernelopt-gate-<name> and kernelopt-gate-<status>
    "gate_detail": "kernelopt-gate-detail",
    "diff": "kernelopt-diff",  # the per-row button
    "accept": "kernelopt-accept",  # the per-row button
    "diff_candidate": "kernelopt-diff-candidate",
    "diff_against": "kernelopt-diff-against",
    "diff_view": "kernelopt-diff-view",
    "profile": "kernelopt-profile",
    "timeline_candidate": "kernelopt-timeline-candidate",
    "step_next": "kernelopt-step-next",
    "step_approve": "kernelopt-step-approve",
    "step_reject": "kernelopt-step-reject",
    "step_edit": "kernelopt-step-edit",
    "step_reason": "kernelopt-step-reason",
    "step_pending": "kernelopt-step-pending",
    "edit_source": "kernelopt-edit-source",
    "edit_kind": "kernelopt-edit-kind",
    "edit_submit": "kernelopt-edit-submit",
    "errors": "kernelopt-errors",
}
TAB_TITLES = ("Agents", "Candidates", "Diff", "Profile", "Edit")
_GATE_LABEL = {"static": "static", "correctness": "correct", "fp64": "fp64", "performance": "perf"}
_GATE_STYLE = {"pass": "success", "fail": "danger", "running": "info"}
_GATE_MARK = {"pass": "✓", "fail": "✗", "skipped": "–", "running": "…", "pending": "·"}
_COLUMNS = (("id", "48px"), ("parent", "52px"), ("agent", "70px"), ("plan", "130px"))
_INFO_WIDTH = "306px"
_BADGE_WIDTH = "76px"


def _cls(widget: w.DOMWidget, *names: str) -> w.DOMWidget:
    for name in names:
        widget.add_class(name)
    return widget


def profile_summary_html(profile: dict[str, Any]) -> str:
    """The profile's summary line, with the dispatch map's error and notes when it has them."""
    parts = []
    if profile.get("summary"):
        parts.append(f"<div>{html.escape(str(profile['summary']))}</div>")
    dmap = profile.get("dispatch_map")
    if isinstance(dmap, dict):
        if dmap.get("ok") is False and dmap.get("error"):
            parts.append(
                f"<div style='color:#b00'>profiling failed: {html.escape(str(dmap['error']))}</div>"
            )
        if dmap.get("ranked_by") and str(dmap["ranked_by"]) not in str(profile.get("summary")):
            parts.append(
                f"<div><small>ranked by {html.escape(str(dmap['ranked_by']))}</small></div>"
            )
        if dmap.get("library_dominated"):
            parts.append("<div>library-dominated: most time is in vendor-library calls</div>")
        for note in dmap.get("notes") or []:
            parts.append(f"<div><small>{html.escape(str(note))}</small></div>")
    return "".join(parts)


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
    ) -> None:
        self.controller = controller
        self.problem = problem
        self.cell_id = cell_id
        self.step_mode = step_mode
        self.interval = interval
        self.reference_source = reference_source or (problem.source if problem else "")
        self.state = SessionState()
        self.created = time.monotonic()
        self.first_render_s: float | None = None
        self.rendered = 0  # events applied and drawn so far
        self.on_finished: list[Callable[[SessionState], None]] = []
        self._queue: list[Event] = []
        self._qlock = threading.Lock()
        self._render_lock = threading.RLock()
        self._wake = threading.Event()
        self._closed = False
        self._thread: threading.Thread | None = None
        self._log: EventLog | None = None
        self._rows: dict[str, dict[str, Any]] = {}
        self._streams: dict[str, StreamView] = {}
        self._agent_lines: dict[str, w.HTML] = {}
        self._figs: dict[str, Any] = {}
        self._plots_started = False
        self._shared = {
            # flex "0 0 auto": a narrow notebook scrolls the row rather than squeezing it.
            "info": w.Layout(width=_INFO_WIDTH, flex="0 0 auto", overflow="hidden"),
            "badge": w.Layout(width=_BADGE_WIDTH, flex="0 0 auto", padding="0 4px"),
            "speed": w.Layout(width="130px", flex="0 0 auto"),
            "diff": w.Layout(width="48px", flex="0 0 auto", padding="0 4px"),
            "accept": w.Layout(width="64px", flex="0 0 auto", padding="0 4px"),
            "row": w.Layout(),
            "button": w.ButtonStyle(),
            "html": HTMLStyle(),
        }
        self._build()

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
                self._set_message(f"panel error: {type(exc).__name__}: {exc}")

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
        with self._render_lock:
            self.state.apply_all(batch)
            changes = self.state.take_changes()
            if changes.any():
                self._render(changes)
            self.rendered += len(batch)
            if batch and self.first_render_s is None:
                self.first_render_s = time.monotonic() - self.created
        if changes.finished:
            for callback in list(self.on_finished):
                callback(self.state)
        if not self._plots_started and self.state.status != "starting":
            self._plots_started = True
            if self._log is None:
                self._build_plots()
            else:
                # The first plotly widget costs ~2 s of imports: never on the refresh path.
                threading.Thread(
                    target=self._build_plots, name="kernelopt-charts", daemon=True
                ).start()
        return len(batch)

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        self.header = _cls(w.HTML(self._header_html()), CSS_CLASSES["header"])
        self.message = _cls(w.HTML(""), CSS_CLASSES["message"])
        self.stop_button = _cls(
            w.Button(description="Stop", icon="stop", button_style="warning"),
            CSS_CLASSES["stop"],
        )
        self.stop_button.on_click(lambda _b: self._stop())
        self.accept_mode = _cls(
            w.Dropdown(
                options=[("insert below", "below"), ("replace cell", "replace")],
                value="below",
                description="accept:",
                layout=w.Layout(width="190px"),
            ),
            CSS_CLASSES["accept_mode"],
        )
        self.step_buttons = {
            "next": _cls(w.Button(description="Next", icon="forward"), CSS_CLASSES["step_next"]),
            "approve": _cls(
                w.Button(description="Approve", icon="check", button_style="success"),
                CSS_CLASSES["step_approve"],
            ),
            "reject": _cls(
                w.Button(description="Reject", icon="times", button_style="danger"),
                CSS_CLASSES["step_reject"],
            ),
            "edit": _cls(w.Button(description="Edit", icon="pencil"), CSS_CLASSES["step_edit"]),
        }
        for action, button in self.step_buttons.items():
            button.on_click(lambda _b, a=action: self._step_action(a))
            button.disabled = True
        self.reject_reason = _cls(
            w.Text(placeholder="reason (optional)", layout=w.Layout(width="180px")),
            CSS_CLASSES["step_reason"],
        )
        self.step_box = w.HBox(
            [*self.step_buttons.values(), self.reject_reason],
            layout=w.Layout(display="flex" if self.step_mode else "none"),
        )
        controls = w.HBox([self.stop_button, self.accept_mode, self.step_box])
        self.pending = _cls(w.HTML(""), CSS_CLASSES["step_pending"])

        self.agent_tabs = _cls(w.Tab(children=[]), CSS_CLASSES["agents"])
        self.follow_agent = w.Checkbox(value=True, description="follow the running agent")
        agents_page = w.VBox([self.follow_agent, self.agent_tabs])

        columns = "".join(
            f"<b style='display:inline-block;width:{width}'>{name}</b>" for name, width in _COLUMNS
        )
        header_row = w.HBox(
            [
                w.HTML(columns, layout=w.Layout(width=_INFO_WIDTH, flex="0 0 auto")),
                w.HTML("<b>gates</b>", layout=w.Layout(width="320px", flex="0 0 auto")),
                w.HTML("<b>speedup</b>", layout=w.Layout(width="130px", flex="0 0 auto")),
            ]
        )
        self.rows_box = _cls(
            w.VBox([header_row], layout=w.Layout(overflow_x="auto")), CSS_CLASSES["candidates"]
        )
        self.gate_detail = _cls(w.HTML(""), CSS_CLASSES["gate_detail"])
        candidates_page = w.VBox([self.rows_box, self.gate_detail])

        self.diff_candidate = _cls(
            w.Dropdown(options=[], description="candidate"), CSS_CLASSES["diff_candidate"]
        )
        self.diff_against = _cls(
            w.ToggleButtons(options=["parent", "reference"], value="parent"),
            CSS_CLASSES["diff_against"],
        )
        self.diff_view = _cls(w.HTML("<i>no candidate yet</i>"), CSS_CLASSES["diff_view"])
        self.diff_candidate.observe(lambda _c: self._render_diff(), names="value")
        self.diff_against.observe(lambda _c: self._render_diff(), names="value")
        diff_page = w.VBox([w.HBox([self.diff_candidate, self.diff_against]), self.diff_view])

        self.timeline_candidate = _cls(
            w.Dropdown(options=[("(none)", "")], value="", description="timeline of"),
            CSS_CLASSES["timeline_candidate"],
        )
        self.timeline_candidate.observe(lambda _c: self._render_timeline(), names="value")
        self.profile_summary = w.HTML("")
        self.plot_box = w.VBox([w.HTML("<i>charts appear when the session starts…</i>")])
        self.chart_notes = w.HTML("")
        self._notes: dict[str, str] = {}
        profile_page = _cls(
            w.VBox(
                [self.profile_summary, self.plot_box, self.chart_notes, self.timeline_candidate]
            ),
            CSS_CLASSES["profile"],
        )

        self.edit_kind = _cls(
            w.ToggleButtons(options=[("candidate code", "code"), ("plan", "plan")], value="code"),
            CSS_CLASSES["edit_kind"],
        )
        self.edit_source = _cls(
            w.Textarea(
                placeholder="Python source of a ModelNew (or a plan's text in step mode)",
                layout=w.Layout(width="100%", height="320px"),
            ),
            CSS_CLASSES["edit_source"],
        )
        self.edit_submit = _cls(
            w.Button(description="Submit through the gates", icon="paper-plane"),
            CSS_CLASSES["edit_submit"],
        )
        self.edit_submit.on_click(lambda _b: self._submit_edit())
        self.edit_parent = w.Dropdown(options=[("(reference)", "")], value="", description="parent")
        edit_page = w.VBox(
            [w.HBox([self.edit_kind, self.edit_parent]), self.edit_source, self.edit_submit]
        )

        self.tabs = _cls(
            w.Tab(children=[agents_page, candidates_page, diff_page, profile_page, edit_page]),
            CSS_CLASSES["tabs"],
        )
        for i, title in enumerate(TAB_TITLES):
            self.tabs.set_title(i, title)
        self.errors = _cls(w.HTML(""), CSS_CLASSES["errors"])
        self.widget = _cls(
            w.VBox([self.header, controls, self.message, self.pending, self.tabs, self.errors]),
            CSS_CLASSES["panel"],
        )
        if self.controller is None:
            self.stop_button.disabled = True
            self.edit_submit.disabled = True

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    # ------------------------------------------------------------------ rendering

    def _render(self, changes: Any) -> None:
        s = self.state
        if changes.header or changes.agents:
            self.header.value = self._header_html()
        for agent, pieces in changes.text.items():
            self._stream(agent).append("".join(pieces))
        for agent in changes.agents | set(changes.text):
            self._render_agent_line(agent)
        if self.follow_agent.value and s.current_agent in self._streams:
            index = list(self._streams).index(s.current_agent)
            if self.agent_tabs.selected_index != index:
                self.agent_tabs.selected_index = index
        if changes.new_candidates:
            self._add_rows(changes.new_candidates)
        for cid in changes.candidates - set(changes.new_candidates):
            if cid in self._rows:
                self._update_row(s.candidates[cid])
        if changes.profile:
            self._render_profile()
        if changes.progress or changes.finished:
            self._render_progress()
        if changes.step:
            self._render_step()
        if changes.errors:
            shown = s.errors[-5:]
            self.errors.value = "".join(
                f"<div style='color:#b00'>⚠ {html.escape(e)}</div>" for e in shown
            )
        if changes.finished:
            self.stop_button.disabled = True
            for button in self.step_buttons.values():  # nothing is left to approve
                button.disabled = True
            self.pending.value = ""
            fin = s.finished or {}
            best = fin.get("best")
            self._set_message(
                f"Finished ({fin.get('status', 'done')})."
                + (
                    f" Best: {best}. Click its Accept button to bring it into the notebook."
                    if best
                    else ""
                )
            )

    def _header_html(self) -> str:
        s = self.state
        bits = [f"<b>KernelOPT</b> · {html.escape(s.problem or 'starting…')}"]
        if s.kind:
            bits.append(html.escape(s.kind))
        if s.device:
            bits.append(f"device {html.escape(s.device)}")
        if s.agents_option:
            bits.append(f"agents {html.escape(s.agents_option)}")
        color = {"running": "#1a7f37", "paused": "#9a6700", "finished": "#555"}.get(
            s.status, "#555"
        )
        bits.append(f"<span style='color:{color};font-weight:bold'>{s.status}</span>")
        agent = s.agents.get(s.current_agent or "")
        if agent is not None and s.status in ("running", "paused"):
            step = f" step {agent.step}" if agent.step is not None else ""
            bits.append(f"now: {html.escape(agent.agent)}{step}")
        if s.budget_line():
            bits.append(f"budget: {html.escape(s.budget_line())}")
        for name, base in s.baselines.items():
            if base.get("measured") and base.get("ms") is not None:
                bits.append(f"{html.escape(name)} {float(base['ms']):.3f} ms")
        if s.best:
            best = s.candidates.get(s.best)
            text = speedup_text(best) if best else ""
            bits.append(f"best <b>{html.escape(s.best)}</b> {html.escape(text)}")
        return "<div style='padding:4px 0'>" + " · ".join(bits) + "</div>"

    def _stream(self, agent: str) -> StreamView:
        view = self._streams.get(agent)
        if view is None:
            view = self._streams[agent] = StreamView()
            line = self._agent_lines[agent] = w.HTML("")
            self.agent_tabs.children = (*self.agent_tabs.children, w.VBox([line, view]))
            self.agent_tabs.set_title(len(self._streams) - 1, agent)
        return view

    def _render_agent_line(self, agent: str) -> None:
        self._stream(agent)
        view = self.state.agents.get(agent)
        if view is None:
            return
        parts = ["running" if view.running else "idle"]
        if view.step is not None:
            parts.append(f"step {view.step}")
        if view.iteration is not None:
            parts.append(f"iteration {view.iteration}")
        if view.tool_calls:
            parts.append(f"{view.tool_calls} tool calls")
        tokens = sum(v for k, v in view.usage.items() if "tokens" in k)
        if tokens:
            parts.append(f"{tokens:.0f} tokens")
        if view.usage.get("cost_usd"):
            parts.append(f"${view.usage['cost_usd']:.3f}")
        summary = f" — {html.escape(view.summary)}" if view.summary else ""
        self._agent_lines[agent].value = f"<small>{' · '.join(parts)}{summary}</small>"
        index = list(self._streams).index(agent)
        title = f"{agent} ●" if view.running else agent
        if self.agent_tabs.get_title(index) != title:
            self.agent_tabs.set_title(index, title)

    def _add_rows(self, ids: list[str]) -> None:
        # Widgets are born with their final values and share Layout/Style models: a row costs
        # a few comm opens and no follow-up updates (see benchmarks/panel_events.py).
        shared = self._shared
        new_rows = []
        for cid in ids:
            cand = self.state.candidates[cid]
            values = self._row_values(cand)
            info = w.HTML(values["info"], layout=shared["info"], style=shared["html"])
            badges = {}
            for gate in GATES:
                look = values["badges"][gate]
                badge = w.Button(
                    description=look["description"],
                    button_style=look["button_style"],
                    tooltip=look["tooltip"],
                    layout=shared["badge"],
                    style=shared["button"],
                    _dom_classes=(CSS_CLASSES["gate"], f"kernelopt-gate-{gate}", look["class"]),
                )
                badge.on_click(lambda _b, c=cid, g=gate: self.show_gate(c, g))
                badges[gate] = badge
            speed = w.HTML(values["speed"], layout=shared["speed"], style=shared["html"])
            diff = w.Button(
                description="Diff",
                layout=shared["diff"],
                style=shared["button"],
                _dom_classes=(CSS_CLASSES["diff"],),
            )
            diff.on_click(lambda _b, c=cid: self.show_diff(c))
            accept = w.Button(
                description="Accept",
                disabled=values["accept_disabled"],
                layout=shared["accept"],
                style=shared["button"],
                _dom_classes=(CSS_CLASSES["accept"],),
            )
            accept.on_click(lambda _b, c=cid: self.accept(c))
            box = w.HBox(
                [info, w.HBox(list(badges.values()), layout=shared["row"]), speed, diff, accept],
                layout=shared["row"],
                _dom_classes=(CSS_CLASSES["row"], f"kernelopt-candidate-{cid}"),
            )
            self._rows[cid] = {
                "box": box,
                "info": info,
                "badges": badges,
                "speed": speed,
                "accept": accept,
            }
            new_rows.append(box)
        self.rows_box.children = (*self.rows_box.children, *new_rows)
        options = [(self._option_label(c), c) for c in self.state.candidates]
        keep = self.diff_candidate.value
        self.diff_candidate.options = options
        self.edit_parent.options = [("(reference)", ""), *options]
        if keep is None or self.diff_candidate.value is None:
            self.diff_candidate.value = ids[-1]

    def _option_label(self, cid: str) -> str:
        cand = self.state.candidates[cid]
        plan = self.state.plan_title(cand.plan_id)
        return f"{cid} ({cand.agent}{': ' + plan if plan else ''})"[:80]

    def _row_values(self, cand: CandidateView) -> dict[str, Any]:
        """What a candidate's row shows: info cells, badge looks, speedup, accept state."""
        best = cand.id == self.state.best
        plan = self.state.plan_title(cand.plan_id)
        if cand.dispatch_only:
            plan = (plan + " " if plan else "") + "[dispatch]"
        cells = {
            "id": f"<b>{html.escape(cand.id)}</b>" + (" ★" if best else ""),
            "parent": html.escape(cand.parent or "ref"),
            "agent": html.escape(cand.agent),
            "plan": html.escape(plan),
        }
        info = "".join(
            f"<span class='kernelopt-col-{name}' style='display:inline-block;width:{width};"
            f"overflow:hidden;white-space:nowrap;vertical-align:middle'>{cells[name]}</span>"
            for name, width in _COLUMNS
        )
        badges = {}
        for gate in GATES:
            view = cand.gates[gate]
            badges[gate] = {
                "description": f"{_GATE_MARK.get(view.status, '?')} {_GATE_LABEL[gate]}",
                "button_style": _GATE_STYLE.get(view.status, ""),
                "tooltip": f"{gate}: {view.status}" + (f" — {view.detail}" if view.detail else ""),
                "class": f"kernelopt-gate-{view.status}",
            }
        verdict = cand.verdict or ""
        color = {"pass": "#1a7f37", "fail": "#b00"}.get(verdict, "#555")
        text = speedup_text(cand) or verdict or "gating…"
        hover = "\n".join(t for t in (cand.note, cand.explanation) if t)
        style = f"color:{color};white-space:nowrap;font-size:12px"
        return {
            "info": f"<div style='white-space:nowrap' title='{html.escape(hover)}'>{info}</div>",
            "badges": badges,
            "speed": f"<span style='{style}'>{html.escape(text)}</span>",
            "accept_disabled": verdict != "pass",
        }

    def _update_row(self, cand: CandidateView) -> None:
        row = self._rows[cand.id]
        values = self._row_values(cand)
        row["info"].value = values["info"]
        for gate, badge in row["badges"].items():
            look = values["badges"][gate]
            classes = (CSS_CLASSES["gate"], f"kernelopt-gate-{gate}", look["class"])
            with badge.hold_sync():  # one message per badge, however many traits change
                if tuple(badge._dom_classes) != classes:
                    badge._dom_classes = classes
                badge.description = look["description"]
                badge.button_style = look["button_style"]
                badge.tooltip = look["tooltip"]
        row["speed"].value = values["speed"]
        row["accept"].disabled = values["accept_disabled"]

    def show_gate(self, cid: str, gate: str) -> None:
        """Show a gate's diagnostics (detail and metrics) under the candidates table."""
        cand = self.state.candidates.get(cid)
        if cand is None:
            return
        view = cand.gates[gate]
        metrics = (
            f"<pre style='margin:2px 0'>{html.escape(json.dumps(view.metrics, indent=1, default=str))}</pre>"
            if view.metrics
            else ""
        )
        self.gate_detail.value = (
            f"<div><b>{html.escape(cid)} · {gate}: {view.status}</b></div>"
            f"<pre style='white-space:pre-wrap;margin:2px 0'>{html.escape(view.detail or '(no detail)')}</pre>"
            + metrics
            + (f"<div>{html.escape(cand.explanation)}</div>" if cand.explanation else "")
        )

    def show_diff(self, cid: str, against: str | None = None) -> None:
        """Open the Diff tab on candidate ``cid`` (against 'parent' or 'reference')."""
        with self._render_lock:
            if against is not None:
                self.diff_against.value = against
            if self.diff_candidate.value != cid:
                self.diff_candidate.value = cid  # observer redraws
            else:
                self._render_diff()
            self.tabs.selected_index = TAB_TITLES.index("Diff")

    def _render_diff(self) -> None:
        cid = self.diff_candidate.value
        cand = self.state.candidates.get(cid) if cid else None
        if cand is None:
            self.diff_view.value = "<i>no candidate yet</i>"
            return
        parent = self.state.candidates.get(cand.parent) if cand.parent else None
        if self.diff_against.value == "parent" and parent is not None:
            old, label = parent.source, f"parent {parent.id}"
        else:
            old, label = self.reference_source, "reference"
            if not old:
                self.diff_view.value = "<i>the reference source is not known for this session</i>"
                return
        self.diff_view.value = side_by_side(old, cand.source, label, cand.id)

    def _build_plots(self) -> None:
        try:
            import plotly.graph_objects as go

            fig = plots.new_charts(go.FigureWidget)
        except ImportError as exc:  # plotly missing: the rest of the panel still works
            self.plot_box.children = (w.HTML(f"<i>charts need plotly and anywidget ({exc})</i>"),)
            return
        with self._render_lock:
            self._figs = {"charts": fig}
            self.plot_box.children = (fig,)
            self._render_profile()
            self._render_progress()

    def _render_profile(self) -> None:
        s = self.state
        ref = s.reference_profile()
        if ref is not None:
            self.profile_summary.value = profile_summary_html(ref)
        profiled = [p.get("candidate") for p in s.profiles if p.get("candidate")]
        options = [("(none)", ""), *[(str(c), str(c)) for c in dict.fromkeys(profiled)]]
        if list(self.timeline_candidate.options) != options:
            keep = self.timeline_candidate.value
            self.timeline_candidate.options = options
            self.timeline_candidate.value = keep if keep in dict(options).values() else ""
        if "charts" not in self._figs:
            return
        self._note("dispatch", plots.update_dispatch(self._figs["charts"], ref))
        self._note("roofline", plots.update_roofline(self._figs["charts"], ref))
        self._render_timeline()

    def _render_timeline(self) -> None:
        if "charts" not in self._figs:
            return
        cid = self.timeline_candidate.value or ""
        cand = self.state.candidate_profile(cid) if cid else None
        note = plots.update_timeline(
            self._figs["charts"], self.state.reference_profile(), cand, cid or "candidate"
        )
        self._note("timeline", note)

    def _render_progress(self) -> None:
        if "charts" in self._figs:
            note = plots.update_progress(
                self._figs["charts"], self.state.progress, self.state.last_t
            )
            self._note("progress", note)

    def _note(self, chart: str, note: str) -> None:
        """Caveats under the charts (no GPU timings, no timeline...), one per chart."""
        if self._notes.get(chart, "") == note:
            return
        self._notes[chart] = note
        items = [
            f"<b>{html.escape(plots.TITLES[name].split(':')[0].split('(')[0].strip())}</b>: "
            f"{html.escape(text)}"
            for name, text in self._notes.items()
            if text
        ]
        self.chart_notes.value = "<small>" + " · ".join(items) + "</small>" if items else ""

    def _render_step(self) -> None:
        paused = self.state.paused
        if paused is not None:
            self.step_mode = True
            self.step_box.layout.display = "flex"
        actions = set(paused.get("actions") or ()) if paused else set()
        live = paused is not None and self.controller is not None
        for action, button in self.step_buttons.items():
            allowed = (
                not actions
                or action in actions
                or (action == "edit" and bool(actions & {"edit_candidate", "edit_plan", "edit"}))
                or (action == "next" and bool(actions & {"approve", "next"}))
            )
            button.disabled = not (live and allowed)
        if paused is not None:
            where = f"{paused.get('agent')} step {paused.get('step')}"
            self._set_message(
                f"Paused after {where}: Next/Approve to continue, Reject to drop it, "
                "Edit to change the plan or the code."
            )
        self.pending.value = self._pending_html(paused) if paused is not None else ""

    def _pending_html(self, paused: dict[str, Any]) -> str:
        """What the paused step proposes: the profile summary, the plans, or the edit (a diff)."""
        payload = paused.get("payload") or {}
        agent = str(paused.get("agent"))
        parts = [f"<div><b>{html.escape(agent)} proposes:</b></div>"]
        if payload.get("summary"):
            parts.append(f"<div>{html.escape(str(payload['summary']))}</div>")
        for plan in payload.get("plans") or []:
            parts.append(
                f"<div>• <b>{html.escape(str(plan.get('title', '')))}</b> "
                f"({html.escape(str(plan.get('action', '')))}): "
                f"{html.escape(str(plan.get('rationale', '')))}</div>"
            )
        if payload.get("variants"):
            labels = ", ".join(str(v) for v in payload["variants"])
            parts.append(f"<div>launch configurations to measure: {html.escape(labels)}</div>")
        if payload.get("explanation"):
            parts.append(f"<div>{html.escape(str(payload['explanation']))}</div>")
        source = payload.get("source")
        if isinstance(source, str):
            plan = self.state.plans.get(str(payload.get("plan_id")), {})
            parent = self.state.candidates.get(str(plan.get("parent")))
            old, label = (
                (parent.source, f"parent {parent.id}")
                if parent is not None
                else (self.reference_source, "reference")
            )
            parts.append(side_by_side(old, source, label, "proposed"))
        elif "source" in payload:
            parts.append("<div>(the executor produced no source this time)</div>")
        return (
            "<div style='border-left:3px solid #9a6700;padding:2px 8px;margin:4px 0'>"
            + "".join(parts)
            + "</div>"
        )

    def _set_message(self, text: str) -> None:
        self.message.value = f"<div style='padding:2px 0'>{html.escape(text)}</div>"

    # ------------------------------------------------------------------ actions

    def _stop(self) -> None:
        if self.controller is None:
            return
        self.controller.stop()
        self.stop_button.disabled = True
        self._set_message("Stopping after the current step…")

    def _step_action(self, action: str) -> None:
        step = getattr(self.controller, "step", None)
        if step is None:
            self._set_message("This session is not in step mode.")
            return
        if action == "edit":
            self.open_editor()
            return
        if action == "next":
            (getattr(step, "next", None) or step.approve)()
        elif action == "approve":
            step.approve()
        elif action == "reject":
            step.reject(self.reject_reason.value or "rejected in the panel")
            self.reject_reason.value = ""
        for button in self.step_buttons.values():
            button.disabled = True  # until the next pause
        self._set_message(f"{action}: sent")

    def pending_source(self) -> tuple[str, str]:
        """What step mode is paused on, as (kind, text) for the editor: a plan or a candidate."""
        paused = self.state.paused or {}
        payload = paused.get("payload") or {}
        if isinstance(payload.get("source"), str):
            return "code", payload["source"]
        plans = payload.get("plans") or []
        if paused.get("agent") == "planner":
            if plans:  # the search replaces the first plan's rationale with the edit
                return "plan", str(plans[0].get("rationale") or plans[0].get("title") or "")
            if self.state.plans:
                plan = list(self.state.plans.values())[-1]
                return "plan", str(plan.get("rationale") or plan.get("title") or "")
        if self.state.candidates:
            return "code", list(self.state.candidates.values())[-1].source
        return "code", self.reference_source

    def open_editor(self, cid: str | None = None) -> None:
        """Prefill the Edit tab with candidate ``cid`` (or what step mode is paused on)."""
        with self._render_lock:
            if cid is not None and cid in self.state.candidates:
                kind, text = "code", self.state.candidates[cid].source
                self.edit_parent.value = cid
            else:
                kind, text = self.pending_source()
            self.edit_kind.value = kind
            self.edit_source.value = text
            self.tabs.selected_index = TAB_TITLES.index("Edit")

    def _submit_edit(self) -> None:
        if self.controller is None:
            self._set_message("This saved session is read-only: open it with --resume to edit.")
            return
        text = self.edit_source.value
        if not text.strip():
            self._set_message("Nothing to submit: the editor is empty.")
            return
        step = getattr(self.controller, "step", None)
        paused = self.state.paused is not None and step is not None
        if self.edit_kind.value == "plan":
            if not paused or step is None:
                self._set_message("A plan edit applies while step mode is paused.")
                return
            step.edit_plan(text)
            self._set_message("Plan edit sent: the executor applies it next.")
        elif paused and step is not None:
            step.edit_candidate(text)
            self._set_message("Edited candidate sent: it goes through the four gates.")
        else:
            parent = self.edit_parent.value or None
            try:
                cid = self.controller.submit(text, parent=parent, agent="person")
            except Exception as exc:  # e.g. the search has not begun: say so, keep the text
                self._set_message(f"Not submitted: {exc}")
                return
            self._set_message(f"Submitted as {cid}: it goes through the four gates.")
        for button in self.step_buttons.values():
            button.disabled = True

    def accept(self, cid: str) -> str:
        """Bring candidate ``cid`` into the notebook below the magic's cell; returns the cell."""
        cand = self.state.candidates[cid]
        text = render_accepted_cell(
            self.problem,
            cand,
            cand.gates,
            (cand.speedup, cand.ci_low, cand.ci_high) if cand.speedup is not None else None,
        )
        fallback = f"Run `%kernelopt accept {cid}` in a new cell to insert it."

        def done(ok: bool, detail: str) -> None:
            if ok:
                self._set_message(f"Inserted {cid} into the notebook.")
            else:
                self._set_message(f"{fallback} ({detail})" if detail else fallback)

        self._set_message(f"Inserting {cid}…")
        insert_with_bridge(self.cell_id, text, self.accept_mode.value, done)
        return text
