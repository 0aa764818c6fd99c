"""The Agents tab: one append-only stream per agent, with a status line and a follow switch.

The model's thinking (Claude's summarized thinking, ``agent_thinking`` events) streams into its
own view above the answer, folded until a person opens it; a ``retry`` of the step's API request
shows on the status line (status, wait, attempt) until the request gets through.
"""

from __future__ import annotations

import html

import ipywidgets as w

from kernelopt_jupyter.event_payloads import Retry
from kernelopt_jupyter.notebook.panel.context import CSS_CLASSES, PanelContext, cls
from kernelopt_jupyter.notebook.panel.stream import StreamView
from kernelopt_jupyter.session.state import AgentView, Changes


def agent_line(view: AgentView) -> str:
    """'running · step 2 · iteration 1 · 3 tool calls · 1200 tokens — summary'."""
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
    return f"<small>{' · '.join(parts)}{summary}{retry_html(view.retry)}</small>"


def retry_html(retry: Retry | None) -> str:
    """' · retrying: 529 overloaded, attempt 2/6 in 4.0 s' (empty when nothing is retried)."""
    if retry is None:
        return ""
    status = html.escape(retry.status or "error")
    reason = html.escape(retry.reason)
    attempt, most = retry.attempt, retry.max_attempts
    tries = f", attempt {attempt}" + (f"/{most}" if most else "") if attempt else ""
    after = f" in {retry.wait_s:.1f} s"
    return (
        f" · <span class='{CSS_CLASSES['retry']}' style='color:#9a6700'>retrying: {status}"
        f"{' ' + reason if reason else ''}{tries}{after}</span>"
    )


class AgentsView:
    """A tab per agent; new text is appended to its stream, never resent."""

    def __init__(self, ctx: PanelContext) -> None:
        self.ctx = ctx
        self.tabs = cls(w.Tab(children=[]), CSS_CLASSES["agents"])
        self.follow = w.Checkbox(value=True, description="follow the running agent")
        self.streams: dict[str, StreamView] = {}
        #: Each agent's thinking, in a folded Accordion shown once there is some.
        self.thinking: dict[str, StreamView] = {}
        self._folds: dict[str, w.Accordion] = {}
        self._lines: dict[str, w.HTML] = {}
        self.widget = w.VBox([self.follow, self.tabs])

    def stream(self, agent: str) -> StreamView:
        """The stream of ``agent``, made (with its tab) on first use."""
        view = self.streams.get(agent)
        if view is None:
            view = self.streams[agent] = StreamView()
            line = self._lines[agent] = w.HTML("")
            thinking = self.thinking[agent] = StreamView()
            fold = self._folds[agent] = cls(
                w.Accordion(children=[thinking], selected_index=None), CSS_CLASSES["thinking"]
            )
            fold.set_title(0, "thinking (the model's own summary; click to unfold)")
            fold.layout.display = "none"
            self.tabs.children = (*self.tabs.children, w.VBox([line, fold, view]))
            self.tabs.set_title(len(self.streams) - 1, agent)
        return view

    def render(self, changes: Changes) -> None:
        """Append new text, redraw changed status lines, follow the running agent."""
        for agent, pieces in changes.text.items():
            self.stream(agent).append("".join(pieces))
        for agent, pieces in changes.thinking.items():
            self.stream(agent)
            self.thinking[agent].append("".join(pieces))
            self._folds[agent].layout.display = None
        for agent in changes.agents | set(changes.text):
            self._render_line(agent)
        current = self.ctx.state.current_agent
        if self.follow.value and current in self.streams:
            index = list(self.streams).index(current)
            if self.tabs.selected_index != index:
                self.tabs.selected_index = index

    def _render_line(self, agent: str) -> None:
        self.stream(agent)
        view = self.ctx.state.agents.get(agent)
        if view is None:
            return
        self._lines[agent].value = agent_line(view)
        index = list(self.streams).index(agent)
        title = f"{agent} ●" if view.running else agent
        if self.tabs.get_title(index) != title:
            self.tabs.set_title(index, title)
