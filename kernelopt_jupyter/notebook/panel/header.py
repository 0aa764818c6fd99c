"""The panel's top lines: what is being optimized and how far it got, a message line, errors."""

from __future__ import annotations

import html

import ipywidgets as w

from kernelopt_jupyter.notebook.panel.context import CSS_CLASSES, PanelContext, cls
from kernelopt_jupyter.session.state import SessionState, speedup_text

_STATUS_COLOR = {"running": "#1a7f37", "paused": "#9a6700", "finished": "#555"}


def header_html(s: SessionState) -> str:
    """One line: problem, kind, device, agents, status, the running agent, budget, best."""
    bits = [f"<b>KernelOPT</b> · {html.escape(s.problem or 'starting…')}"]
    if s.kind:
        bits.append(html.escape(s.kind))
    if s.device:
        bits.append(f"device {html.escape(s.device)}")
    if s.agents_option:
        bits.append(f"agents {html.escape(s.agents_option)}")
    color = _STATUS_COLOR.get(s.status, "#555")
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


class HeaderView:
    """The header line, the message line (what the last action did) and the last errors."""

    def __init__(self, ctx: PanelContext) -> None:
        self.ctx = ctx
        self.html = cls(w.HTML(header_html(ctx.state)), CSS_CLASSES["header"])
        self.message = cls(w.HTML(""), CSS_CLASSES["message"])
        self.errors = cls(w.HTML(""), CSS_CLASSES["errors"])

    def render(self) -> None:
        """Redraw the header line from the state."""
        self.html.value = header_html(self.ctx.state)

    def say(self, text: str) -> None:
        """Show ``text`` on the message line."""
        self.message.value = f"<div style='padding:2px 0'>{html.escape(text)}</div>"

    def render_errors(self) -> None:
        """Show the last five errors of the session."""
        shown = self.ctx.state.errors[-5:]
        self.errors.value = "".join(
            f"<div style='color:#b00'>⚠ {html.escape(e)}</div>" for e in shown
        )
