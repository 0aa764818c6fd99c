"""The panel's top lines: what is being optimized and how far it got, a message line, errors."""

from __future__ import annotations

import html
import re

import ipywidgets as w

from kernelopt_jupyter.notebook.panel.context import CSS_CLASSES, PanelContext, cls
from kernelopt_jupyter.session.state import SessionState, speedup_text

_STATUS_COLOR = {
    "running": "#1a7f37",
    "paused": "#9a6700",
    "finished": "#555",
    "stopped": "#9a6700",
    "failed": "#b00",
}


#: The budget line's clock ("42 s", "42/300 s"): the phase rows' "Time" line is the clock.
_CLOCK = re.compile(r"\d+(/\d+)? s")


def budget_without_clock(line: str) -> str:
    """The budget line less its seconds: they come from the last event, so they stood still
    while the search was paused (194 s beside the live "Time 3 min 43 s")."""
    return " · ".join(p for p in line.split(" · ") if p and not _CLOCK.fullmatch(p))


def header_html(s: SessionState) -> str:
    """One line: problem, kind, device, agents, status, the running agent, budget, best."""
    bits = [f"<b>KernelOPT</b> · {html.escape(s.problem or 'starting…')}"]
    if s.kind:
        bits.append(html.escape(s.kind))
    if s.device:
        bits.append(f"device {html.escape(s.device)}")
    if s.agents_option:
        bits.append(f"agents {html.escape(s.agents_option)}")
    # How it ended (finished, stopped, failed), not just that it ended.
    status = (s.finished.status if s.finished else "") or s.status
    color = _STATUS_COLOR.get(status, "#555")
    bits.append(
        f"<span class='kernelopt-status' style='color:{color};font-weight:bold'>"
        f"{html.escape(status)}</span>"
    )
    agent = s.agents.get(s.current_agent or "")
    if agent is not None and s.status in ("running", "paused"):
        step = f" step {agent.step}" if agent.step is not None else ""
        bits.append(f"now: {html.escape(agent.agent)}{step}")
    budget = budget_without_clock(s.budget_line())
    if budget:
        bits.append(f"budget: {html.escape(budget)}")
    for name, base in s.baselines.items():
        if base.measured and base.ms is not None:
            bits.append(f"{html.escape(name)} {base.ms:.3f} ms")
    if s.best:
        best = s.candidates.get(s.best)
        text = speedup_text(best) if best else ""
        bits.append(f"best <b>{html.escape(s.best)}</b> {html.escape(text)}")
    return "<div style='padding:4px 0'>" + " · ".join(bits) + "</div>"


_KINDS = (
    ("input_tokens", "input"),
    ("output_tokens", "output"),
    ("cache_read_input_tokens", "cache read"),
    ("cache_creation_input_tokens", "cache write"),
)


def _bar(used: float, cap: float | None, label: str) -> str:
    """One meter: a progress bar against ``cap`` (none without one) and its label."""
    bar = (
        f"<progress max='1' value='{min(1.0, used / cap):.3f}' style='width:120px'></progress> "
        if cap
        else ""
    )
    return f"<span style='margin-right:12px'>{bar}{html.escape(label)}</span>"


def cost_html(s: SessionState) -> str:
    """The API cost meter: USD and tokens against ``--max-usd`` / ``--max-tokens``, with the
    tokens per kind (cache reads and writes are billed too); empty when nothing was spent."""
    c = s.cost()
    if not (c["tokens"] or c["cost_usd"] or c["max_tokens"] or c["max_usd"]):
        return ""
    usd = f"${c['cost_usd']:.4f}" + (f" of ${c['max_usd']:.2f}" if c["max_usd"] else "")
    tokens = f"{c['tokens']:,} tokens" + (f" of {c['max_tokens']:,}" if c["max_tokens"] else "")
    kinds = ", ".join(f"{name} {c['usage'][k]:,}" for k, name in _KINDS if c["usage"].get(k))
    return (
        "<div style='font-size:12px;padding:2px 0'>API cost (list prices, an estimate): "
        + _bar(c["cost_usd"], c["max_usd"], usd)
        + _bar(c["tokens"], c["max_tokens"], tokens)
        + (f"<span style='color:#555'>({html.escape(kinds)})</span>" if kinds else "")
        + "</div>"
    )


class HeaderView:
    """The header line, the message line (what the last action did) and the last errors."""

    def __init__(self, ctx: PanelContext, out_dir: str | None = None) -> None:
        self.ctx = ctx
        # The session folder rides along hidden: when the kernel has gone, the labextension
        # reads it to offer `%kernelopt open DIR --resume`.
        self._folder = (
            f"<span class='kernelopt-outdir' style='display:none'>{html.escape(out_dir)}</span>"
            if out_dir
            else ""
        )
        self.html = cls(w.HTML(self._draw()), CSS_CLASSES["header"])
        self.cost = cls(w.HTML(cost_html(ctx.state)), CSS_CLASSES["cost"])
        self.message = cls(w.HTML(""), CSS_CLASSES["message"])
        self.code = cls(w.HTML(""), CSS_CLASSES["code_view"])
        self.errors = cls(w.HTML(""), CSS_CLASSES["errors"])

    def _draw(self) -> str:
        return header_html(self.ctx.state) + self._folder

    def render(self) -> None:
        """Redraw the header line and the cost meter from the state."""
        self.html.value = self._draw()
        cost = cost_html(self.ctx.state)
        if self.cost.value != cost:
            self.cost.value = cost

    def show_code(self, html_text: str) -> None:
        """Show an accepted cell's code (with its Copy button) under the message line."""
        self.code.value = html_text

    def say(self, text: str) -> None:
        """Show ``text`` on the message line."""
        self.message.value = f"<div style='padding:2px 0'>{html.escape(text)}</div>"

    def render_errors(self) -> None:
        """Show the last five errors of the session."""
        shown = self.ctx.state.errors[-5:]
        self.errors.value = "".join(
            f"<div style='color:#b00'>⚠ {html.escape(e)}</div>" for e in shown
        )
