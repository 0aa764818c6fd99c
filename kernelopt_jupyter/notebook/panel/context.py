"""What every view of the panel shares: the DOM class names, the session state and the controls.

The panel is a few small views (header, step controls, agents, candidates, diff, charts,
editor), each owning its widgets and drawing one part of :class:`SessionState`. They meet only
through :class:`PanelContext`, so a view never reaches into another's widgets.
"""

from __future__ import annotations

import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import ipywidgets as w

from kernelopt_jupyter.problem import Problem
from kernelopt_jupyter.session.protocols import SessionController
from kernelopt_jupyter.session.state import SessionState

#: DOM classes the panel puts on its widgets (browser tests select by these).
CSS_CLASSES = {
    "panel": "kernelopt-panel",
    "header": "kernelopt-header",
    "message": "kernelopt-message",
    "code_view": "kernelopt-code",  # an accepted cell's code with Copy, when no cell was made
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
    "step_end": "kernelopt-step-end",
    "step_reason": "kernelopt-step-reason",
    "step_reject_plan": "kernelopt-step-reject-plan",  # one per proposed plan
    "step_pending": "kernelopt-step-pending",
    "edit_source": "kernelopt-edit-source",
    "edit_kind": "kernelopt-edit-kind",
    "edit_submit": "kernelopt-edit-submit",
    "errors": "kernelopt-errors",
    "thinking": "kernelopt-thinking",  # an agent's folded thinking
    "retry": "kernelopt-retry",  # a retried API request, on the agent's status line
    "cost": "kernelopt-cost",  # the API cost meter
    "export": "kernelopt-export",  # the Export button
    "report": "kernelopt-report",  # the Report button
    "report_path": "kernelopt-report-path",  # where the last report was written
}
TAB_TITLES = ("Agents", "Candidates", "Diff", "Profile", "Edit")


def on_click(
    button: Any, action: Callable[[], object], failed: Callable[[BaseException], None]
) -> None:
    """Run ``action`` when ``button`` is clicked; an exception it raises goes to ``failed``.

    ipywidgets prints a click handler's traceback as output of the comm message, which
    JupyterLab shows only in its log console: the person would see a click that did nothing.
    Here the traceback still goes to the kernel's stderr (the server's log), and ``failed``
    says what went wrong on the panel's message line.
    """

    def handler(_button: Any) -> None:
        try:
            action()
        except Exception as exc:
            traceback.print_exc(file=sys.stderr)
            failed(exc)

    button.on_click(handler)


def failure_text(what: str, exc: BaseException) -> str:
    """The message line for a click whose handler raised ``exc``."""
    return f"{what} failed: {type(exc).__name__}: {exc}"


def cls(widget: Any, *names: str) -> Any:
    """``widget`` with the DOM classes ``names`` added (for tests and styling)."""
    for name in names:
        widget.add_class(name)
    return widget


class StepControl(Protocol):
    """What the panel asks of a session's step control (``agents.stepping.StepControl``)."""

    # Each returns None when the decision was sent, else why the pause did not take it.
    def approve(self, pause: int | None = ...) -> str | None: ...
    def reject(self, reason: str = ..., pause: int | None = ...) -> str | None: ...
    def reject_plan(
        self, plan_id: str, reason: str = ..., pause: int | None = ...
    ) -> str | None: ...
    def edit_candidate(self, source: str, pause: int | None = ...) -> str | None: ...
    def edit_plan(self, text: str, pause: int | None = ...) -> str | None: ...
    def direct(self, text: str, pause: int | None = ...) -> str | None: ...
    def end(self, pause: int | None = ...) -> str | None: ...


@dataclass
class PanelContext:
    """The state the views draw, the session they steer and the panel-wide services."""

    state: SessionState
    controller: SessionController | None  # None: a saved session shown read-only
    problem: Problem | None
    reference_source: str
    say: Callable[[str], None]
    lock: threading.RLock = field(default_factory=threading.RLock)
    tabs: w.Tab | None = None

    def select_tab(self, title: str) -> None:
        """Bring the panel's tab ``title`` to the front."""
        if self.tabs is not None:
            self.tabs.selected_index = TAB_TITLES.index(title)

    def click(self, button: Any, what: str, action: Callable[[], object]) -> None:
        """:func:`on_click` that says a failure on the message line as ``what failed: ...``."""
        on_click(button, action, lambda exc: self.say(failure_text(what, exc)))

    def step(self) -> StepControl | None:
        """The session's step control, or None when it is not in step mode."""
        return getattr(self.controller, "step", None)
