"""The Candidates tab: one row per candidate with its gate badges, speedup, Diff and Accept.

Rows are born with their final values and share Layout/Style models, so a row costs a few comm
opens and no follow-up updates (see benchmarks/panel_events.py); later events update a row's
own badges in place.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from functools import partial
from typing import Any

import ipywidgets as w
from ipywidgets.widgets.widget_string import HTMLStyle

from kernelopt_jupyter.notebook.changes import ChangeNotes, change_text
from kernelopt_jupyter.notebook.panel.context import CSS_CLASSES, PanelContext, cls
from kernelopt_jupyter.notebook.panel.gatedetail import gate_detail_html
from kernelopt_jupyter.session.state import CandidateView, speedup_text
from kernelopt_jupyter.verify.report import GATE_NAMES as GATES

_GATE_LABEL = {"static": "static", "correctness": "correct", "fp64": "fp64", "performance": "perf"}
_GATE_STYLE = {"pass": "success", "fail": "danger", "running": "info"}
_GATE_MARK = {"pass": "✓", "fail": "✗", "skipped": "–", "running": "…", "pending": "·"}
# The parent column fits its bold header ("parent" ran into "agent" at 46 px).
_COLUMNS = (("id", "46px"), ("parent", "58px"), ("agent", "66px"), ("change", "228px"))
# Sized to fit a 1000 px notebook: the change wraps; a badge fits "✓ correct" whole.
_INFO_WIDTH = "398px"
_BADGE_WIDTH = "72px"
#: A change such as ``XBLOCK 256->512``: its "old->new" is kept on one line.
_ARROWED = re.compile(r"\S*-&gt;\S*")


def unbroken_arrows(escaped: str) -> str:
    """``escaped`` (HTML) with each ``a->b`` in a span that does not wrap (it broke after "-")."""
    return _ARROWED.sub(lambda m: f"<span style='white-space:nowrap'>{m.group(0)}</span>", escaped)


def badge_look(view: Any) -> dict[str, str]:
    """How one gate's badge looks: text, style, tooltip and its status class."""
    return {
        "description": f"{_GATE_MARK.get(view.status, '?')} {_GATE_LABEL[view.name]}",
        "button_style": _GATE_STYLE.get(view.status, ""),
        "tooltip": f"{view.name}: {view.status}" + (f" — {view.detail}" if view.detail else ""),
        "class": f"kernelopt-gate-{view.status}",
    }


class CandidatesTable:
    """The rows of the candidates and, under them, the diagnostics of a clicked gate."""

    def __init__(
        self,
        ctx: PanelContext,
        *,
        on_diff: Callable[[str], None],
        on_accept: Callable[[str], Any],
    ) -> None:
        self.ctx = ctx
        self.on_diff = on_diff
        self.on_accept = on_accept
        self.rows: dict[str, dict[str, Any]] = {}
        self.notes = ChangeNotes()
        #: Candidates whose source repeats an earlier one's: no row, the first row names them.
        self.same_as: dict[str, str] = {}
        self._shared = {
            # flex "0 0 auto": a narrow notebook scrolls the row rather than squeezing it.
            "info": w.Layout(width=_INFO_WIDTH, flex="0 0 auto", overflow="hidden"),
            "badge": w.Layout(width=_BADGE_WIDTH, flex="0 0 auto", padding="0 2px"),
            "speed": w.Layout(width="104px", flex="0 0 auto"),
            "diff": w.Layout(width="48px", flex="0 0 auto", padding="0 4px"),
            "accept": w.Layout(width="64px", flex="0 0 auto", padding="0 4px"),
            "row": w.Layout(),
            # The badges keep their width: squeezed, the last one ran under the speedup.
            "badges": w.Layout(flex="0 0 auto"),
            "button": w.ButtonStyle(),
            "html": HTMLStyle(),
        }
        columns = "".join(
            f"<b style='display:inline-block;width:{width}'>{name}</b>" for name, width in _COLUMNS
        )
        header_row = w.HBox(
            [
                w.HTML(columns, layout=w.Layout(width=_INFO_WIDTH, flex="0 0 auto")),
                w.HTML("<b>gates</b>", layout=w.Layout(width="296px", flex="0 0 auto")),
                w.HTML("<b>speedup</b>", layout=w.Layout(width="104px", flex="0 0 auto")),
            ]
        )
        self.rows_box = cls(
            w.VBox([header_row], layout=w.Layout(overflow_x="auto")), CSS_CLASSES["candidates"]
        )
        self.gate_detail = cls(w.HTML(""), CSS_CLASSES["gate_detail"])
        self.widget = w.VBox([self.rows_box, self.gate_detail])

    def row_values(self, cand: CandidateView) -> dict[str, Any]:
        """What a candidate's row shows: info cells, badge looks, speedup, accept state."""
        state = self.ctx.state
        best = cand.id == state.best
        change = unbroken_arrows(html.escape(change_text(state, cand, self.notes)))
        also = [d for d, first in self.same_as.items() if first == cand.id]
        if also:
            change += (
                f" <small style='color:#555'>(same code as {html.escape(', '.join(also))})</small>"
            )
        plan = state.candidate_plan_title(cand)
        if plan and plan not in change:
            change += f"<br><small style='color:#555'>plan: {html.escape(plan)}</small>"
        cells = {
            "id": f"<b>{html.escape(cand.id)}</b>" + (" ★" if best else ""),
            "parent": html.escape(cand.parent or "ref"),
            "agent": html.escape(cand.agent),
            "change": change,
        }
        # The change wraps rather than being cut: it is what the row is about.
        info = "".join(
            f"<span class='kernelopt-col-{name}' style='display:inline-block;width:{width};"
            f"overflow:hidden;white-space:{'normal' if name == 'change' else 'nowrap'};"
            f"vertical-align:middle;line-height:1.25'>{cells[name]}</span>"
            for name, width in _COLUMNS
        )
        verdict = cand.verdict or ""
        color = {"pass": "#1a7f37", "fail": "#b00"}.get(verdict, "#555")
        text = speedup_text(cand) or verdict or "gating…"
        hover = "\n".join(t for t in (cand.note, cand.explanation) if t)
        style = f"color:{color};white-space:nowrap;font-size:12px"
        return {
            "info": f"<div style='white-space:nowrap' title='{html.escape(hover)}'>{info}</div>",
            "badges": {gate: badge_look(cand.gates[gate]) for gate in GATES},
            "speed": f"<span style='{style}'>{html.escape(text)}</span>",
            "accept_disabled": verdict != "pass",
        }

    def _first_with_source(self, cand: CandidateView) -> str | None:
        for other in self.ctx.state.candidates.values():
            if other.id == cand.id:
                return None
            if other.source == cand.source and other.id in self.rows:
                return other.id
        return None

    def add_rows(self, ids: list[str]) -> list[str]:
        """Append a row for each new candidate id whose source is new; returns the repeats."""
        shared = self._shared
        new_rows = []
        repeats = []
        for cid in ids:
            cand = self.ctx.state.candidates[cid]
            first = self._first_with_source(cand)
            if first is not None:
                self.same_as[cid] = first
                repeats.append(first)
                continue
            values = self.row_values(cand)
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
                self.ctx.click(badge, f"{gate} details", partial(self.show_gate, cid, gate))
                badges[gate] = badge
            speed = w.HTML(values["speed"], layout=shared["speed"], style=shared["html"])
            diff = w.Button(
                description="Diff",
                layout=shared["diff"],
                style=shared["button"],
                _dom_classes=(CSS_CLASSES["diff"],),
            )
            self.ctx.click(diff, "diff", partial(self.on_diff, cid))
            accept = w.Button(
                description="Accept",
                disabled=values["accept_disabled"],
                layout=shared["accept"],
                style=shared["button"],
                _dom_classes=(CSS_CLASSES["accept"],),
            )
            self.ctx.click(accept, "accept", partial(self.on_accept, cid))
            box = w.HBox(
                [info, w.HBox(list(badges.values()), layout=shared["badges"]), speed, diff, accept],
                layout=shared["row"],
                _dom_classes=(CSS_CLASSES["row"], f"kernelopt-candidate-{cid}"),
            )
            self.rows[cid] = {
                "box": box,
                "info": info,
                "badges": badges,
                "speed": speed,
                "accept": accept,
            }
            new_rows.append(box)
        if new_rows:
            self.rows_box.children = (*self.rows_box.children, *new_rows)
        for first in dict.fromkeys(repeats):
            self.update_row(self.ctx.state.candidates[first])
        return repeats

    def update_row(self, cand: CandidateView) -> None:
        """Redraw an existing row from its candidate (badges change in place)."""
        row = self.rows.get(self.same_as.get(cand.id, cand.id))
        if row is None or cand.id in self.same_as:
            return
        values = self.row_values(cand)
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

    def disable_accept(self, reason: str) -> None:
        """Grey out every Accept button (the kernel that could run them is gone)."""
        for row in self.rows.values():
            row["accept"].disabled = True
            row["accept"].tooltip = reason

    def show_gate(self, cid: str, gate: str) -> None:
        """Show a gate's diagnostics (detail and metrics) under the table."""
        cand = self.ctx.state.candidates.get(cid)
        if cand is None:
            return
        self.gate_detail.value = gate_detail_html(cid, cand.gates[gate], cand.explanation)
