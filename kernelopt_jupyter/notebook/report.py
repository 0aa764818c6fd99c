"""A static HTML summary of a session, for places where widgets do not render.

Widgets do not survive on GitHub or nbviewer, and Notebook front ends without the widget
manager show nothing for them; the magic therefore also displays this summary (and updates it
when the session finishes), so the saved notebook keeps a readable record. Built from the event
stream only, through the same :class:`~kernelopt_jupyter.session.state.SessionState` as the panel.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from pathlib import Path

from kernelopt_jupyter.event_payloads import SessionFinished
from kernelopt_jupyter.events import Event, read_events
from kernelopt_jupyter.notebook.changes import ChangeNotes, change_text
from kernelopt_jupyter.notebook.phases import PhaseTracker, duration_text
from kernelopt_jupyter.session.state import SessionState, speedup_text
from kernelopt_jupyter.verify.report import GATE_NAMES as GATES

_BADGE = {
    "pass": ("#1a7f37", "#dafbe1", "✓"),
    "fail": ("#b00", "#ffebe9", "✗"),
    "skipped": ("#555", "#eee", "–"),
}


def _badge(name: str, status: str, detail: str) -> str:
    fg, bg, mark = _BADGE.get(status, ("#555", "#f6f8fa", "·"))
    return (
        f"<span title='{html.escape(f'{name}: {status} {detail}'.strip())}' "
        f"style='display:inline-block;padding:0 4px;margin:1px;border-radius:3px;"
        f"color:{fg};background:{bg};font-size:11px'>{mark} {html.escape(name)}</span>"
    )


def state_from_events(events: Iterable[Event]) -> SessionState:
    """Fold events into a panel state (no widgets)."""
    state = SessionState()
    state.apply_all(list(events))
    state.take_changes()
    return state


def _phases_html(events: list[Event], live: bool) -> str:
    tracker = PhaseTracker()
    for event in events:
        tracker.apply(event)
    items = []
    for phase in tracker.phases:
        if phase.end is not None:
            took = duration_text(phase.end - phase.start)
        else:  # an unfinished phase: still going in this kernel, or its run went away
            took = "running" if live else "interrupted"
        detail = f", {html.escape(phase.detail)}" if phase.detail else ""
        items.append(f"{html.escape(phase.label)} ({took}{detail})")
    return "<div class='kernelopt-summary-phases'>" + " → ".join(items) + "</div>" if items else ""


def render_summary(
    state: SessionState,
    *,
    out_dir: str | Path | None = None,
    events: list[Event] | None = None,
    beside_panel: bool = False,
    live: bool = False,
) -> str:
    """HTML summary: problem, status, phases, baselines, the best candidate and the table.

    ``events`` (the session's) add the phases' durations and each candidate's concrete change.
    ``beside_panel``: the live panel shows the same table, so it starts folded here (the saved
    notebook still carries it, for viewers without widgets). ``live``: the session runs in this
    kernel; an unfinished session that does not was interrupted, and says so.
    """
    s = state
    status = (s.finished.status if s.finished else "") or s.status
    if not s.finished and live:
        # Drawn as the magic starts the search, before its first event: it runs already.
        status = "running" if status == "starting" else status
        status += " (the live panel shows its progress; this summary is redrawn at the end)"
    elif not s.finished and s.status != "starting":
        status = "interrupted"
    head = [
        f"problem <b>{html.escape(s.problem or '?')}</b>",
        html.escape(s.kind) if s.kind else "",
        f"device {html.escape(s.device)}" if s.device else "",
        f"agents {html.escape(s.agents_option)}" if s.agents_option else "",
        f"status <b>{html.escape(status)}</b>",
        html.escape(s.budget_line()),
    ]
    parts = [
        "<div class='kernelopt-summary' style='font-family:sans-serif;font-size:13px'>",
        "<div style='font-weight:bold;font-size:14px'>KernelOPT session summary</div>",
        "<div>" + " · ".join(h for h in head if h) + "</div>",
    ]
    if events:
        parts.append(_phases_html(events, live))
    if out_dir is not None:
        folder = html.escape(str(out_dir))
        parts.append(
            f"<div style='color:#555'>saved in <code>{folder}</code> (reopen with "
            f"<code>%kernelopt open {folder}</code>; add <code>--resume</code> to continue "
            "an interrupted search)</div>"
        )
    measured = [
        f"{html.escape(name)} {b.ms:.4f} ms"
        for name, b in s.baselines.items()
        if b.measured and b.ms is not None
    ]
    if s.baselines:
        parts.append(
            "<div>baselines: "
            + (", ".join(measured) if measured else "not measured (no GPU)")
            + "</div>"
        )
    fin = s.finished or SessionFinished()
    if s.best:
        best = s.candidates.get(s.best)
        text = speedup_text(best) if best else ""
        extra = []
        for value, label in (
            (fin.speedup_vs_eager, "eager"),
            (fin.speedup_vs_compile, "torch.compile"),
        ):
            if value is not None:
                extra.append(f"{value:.2f}x vs {label}")
        parts.append(
            f"<div>best: <b>{html.escape(s.best)}</b> {html.escape(text)}"
            + (f" ({', '.join(extra)})" if extra else "")
            + "</div>"
        )
    elif s.status == "finished":
        parts.append("<div>no verified candidate</div>")
    if s.candidates:
        parts.append(_table_html(s, events or [], folded=beside_panel))
    if s.errors:
        parts.append(
            "<div style='color:#b00'>"
            + "<br>".join(f"⚠ {html.escape(e)}" for e in s.errors[-5:])
            + "</div>"
        )
    parts.append("</div>")
    return "".join(parts)


def _table_html(s: SessionState, events: list[Event], *, folded: bool) -> str:
    notes = ChangeNotes()
    for event in events:
        notes.apply(event)
    first_of: dict[str, str] = {}  # source -> the first candidate with it
    repeats: dict[str, list[str]] = {}
    for cand in s.candidates.values():
        first = first_of.setdefault(cand.source, cand.id)
        if first != cand.id:
            repeats.setdefault(first, []).append(cand.id)
    rows = [
        "<tr style='text-align:left'><th>id</th><th>parent</th><th>agent</th><th>change</th>"
        "<th>gates</th><th>speedup</th></tr>"
    ]
    for cand in s.candidates.values():
        if first_of[cand.source] != cand.id:
            continue  # a repeated source: named on its first row
        badges = "".join(_badge(g, cand.gates[g].status, cand.gates[g].detail) for g in GATES)
        star = " ★" if cand.id == s.best else ""
        change = html.escape(change_text(s, cand, notes))
        if cand.id in repeats:
            change += f" <small>(same code as {html.escape(', '.join(repeats[cand.id]))})</small>"
        rows.append(
            f"<tr><td><b>{html.escape(cand.id)}</b>{star}</td>"
            f"<td>{html.escape(cand.parent or 'ref')}</td>"
            f"<td>{html.escape(cand.agent)}</td>"
            f"<td>{change}</td><td>{badges}</td>"
            f"<td>{html.escape(speedup_text(cand) or (cand.verdict or ''))}</td></tr>"
        )
    table = (
        "<table class='kernelopt-summary-candidates' style='border-collapse:collapse'>"
        + "".join(rows)
        + "</table>"
    )
    shown = len(rows) - 1
    return (
        f"<details{'' if folded else ' open'}><summary>{shown} candidate(s)"
        + (" (the same table as the panel's)" if folded else "")
        + f"</summary>{table}</details>"
    )


def summary_of_events(
    events: list[Event],
    *,
    out_dir: str | Path | None = None,
    beside_panel: bool = False,
    live: bool = False,
) -> str:
    """The HTML summary of a session's events (``live``: it runs in this kernel)."""
    return render_summary(
        state_from_events(events),
        out_dir=out_dir,
        events=events,
        beside_panel=beside_panel,
        live=live,
    )


def summary_from_dir(out_dir: str | Path) -> str:
    """The HTML summary of a saved session folder (its events.jsonl)."""
    folder = Path(out_dir)
    return summary_of_events(read_events(folder / "events.jsonl"), out_dir=folder)
