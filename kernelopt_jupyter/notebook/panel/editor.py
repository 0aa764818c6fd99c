"""The Edit tab: a person's candidate sent through the gates, or, in step mode, a plan edit or
a direction in words for the Planner."""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as w

from kernelopt_jupyter.notebook.panel.context import (
    CSS_CLASSES,
    PanelContext,
    cls,
    failure_text,
    on_click,
)
from kernelopt_jupyter.notebook.panel.difftab import option_label
from kernelopt_jupyter.session.state import SessionState


def pending_source(state: SessionState, reference_source: str) -> tuple[str, str]:
    """What step mode is paused on, as (kind, text) for the editor: a plan or a candidate."""
    # The pause's payload is the paused step's own proposal, whose shape is the agent's.
    payload = state.paused.payload if state.paused else {}
    if isinstance(payload.get("source"), str):
        return "code", payload["source"]
    parent = state.candidates.get(str(payload.get("parent")))
    if payload.get("no_plan") and parent is not None:
        return "code", parent.source  # the person's own version of the parent
    plans = payload.get("plans") or []
    if state.paused is not None and state.paused.agent == "planner":
        if plans:  # the search replaces the first plan's rationale with the edit
            return "plan", str(plans[0].get("rationale") or plans[0].get("title") or "")
        if state.plans:
            plan = list(state.plans.values())[-1]
            return "plan", plan.rationale or plan.title
    if state.candidates:
        return "code", list(state.candidates.values())[-1].source
    return "code", reference_source


class EditorView:
    """Source (or plan) text, its parent, and Submit."""

    def __init__(
        self,
        ctx: PanelContext,
        *,
        after_submit: Callable[[], None],
        after_refusal: Callable[[str | None], None],
    ) -> None:
        self.ctx = ctx
        self.after_submit = after_submit
        #: Given what a pause answered to a decision it did not take (None: it was sent).
        self.after_refusal = after_refusal
        self.kind = cls(
            w.ToggleButtons(
                options=[("candidate code", "code"), ("plan", "plan"), ("direction", "direction")],
                value="code",
                tooltips=[
                    "Python source of a ModelNew, sent through the four gates",
                    "step mode: your text in place of the first plan's",
                    "step mode: a direction in words; the Planner is asked again with it",
                ],
            ),
            CSS_CLASSES["edit_kind"],
        )
        self.source = cls(
            w.Textarea(
                placeholder="Python source of a ModelNew (or a plan's text in step mode)",
                layout=w.Layout(width="100%", height="320px"),
            ),
            CSS_CLASSES["edit_source"],
        )
        self.submit = cls(
            w.Button(
                description="Submit through the gates",
                icon="paper-plane",
                layout=w.Layout(width="auto"),
            ),
            CSS_CLASSES["edit_submit"],
        )
        # A failure gives a paused step its buttons back (the decision may not have been sent).
        on_click(
            self.submit,
            self.send,
            lambda exc: self._locked_refusal(failure_text("submit", exc)),
        )
        self.parent = w.Dropdown(options=[("(reference)", "")], value="", description="parent")
        self.widget = w.VBox([w.HBox([self.kind, self.parent]), self.source, self.submit])
        if ctx.controller is None:
            self.submit.disabled = True

    def _locked_refusal(self, text: str) -> None:
        with self.ctx.lock:
            self.after_refusal(text)

    def set_parents(self) -> None:
        """Offer every candidate as a parent."""
        options = [(option_label(self.ctx, c), c) for c in self.ctx.state.candidates]
        self.parent.options = [("(reference)", ""), *options]

    def open(self, cid: str | None = None) -> None:
        """Prefill with candidate ``cid`` (or what step mode is paused on) and show the tab."""
        state = self.ctx.state
        if cid is not None and cid in state.candidates:
            kind, text = "code", state.candidates[cid].source
            self.parent.value = cid
        else:
            kind, text = pending_source(state, self.ctx.reference_source)
        self.kind.value = kind
        self.source.value = text
        self.ctx.select_tab("Edit")

    def send(self) -> None:
        """Submit the text: a plan edit or candidate edit while paused, else a new candidate."""
        ctx = self.ctx
        if ctx.controller is None:
            ctx.say("This saved session is read-only: open it with --resume to edit.")
            return
        text = self.source.value
        if not text.strip():
            ctx.say("Nothing to submit: the editor is empty.")
            return
        step = ctx.step()
        paused = ctx.state.paused is not None and step is not None
        if self.kind.value in ("plan", "direction"):
            if not paused or step is None:
                ctx.say(f"A {self.kind.value} applies while step mode is paused.")
                return
            # Said and greyed out before it is sent, under the lock the refresher draws with:
            # the search may pause again before this returns (ControlsView._answered).
            with ctx.lock:
                if self.kind.value == "plan":
                    ctx.say("Plan edit sent: the executor applies it next.")
                    self.after_submit()
                    self.after_refusal(step.edit_plan(text))
                else:
                    ctx.say("Direction sent: the Planner is asked again with it.")
                    self.after_submit()
                    self.after_refusal(step.direct(text))
            return
        if paused and step is not None:
            with ctx.lock:  # as for a plan edit
                ctx.say("Your code is sent: it goes through the four gates.")
                self.after_submit()
                self.after_refusal(step.edit_candidate(text))
            return
        parent = self.parent.value or None
        try:
            cid = ctx.controller.submit(text, parent=parent, agent="person")
        except Exception as exc:  # e.g. the search has not begun: say so, keep the text
            ctx.say(f"Not submitted: {exc}")
            return
        ctx.say(f"Submitted as {cid}: it goes through the four gates.")
        self.after_submit()
