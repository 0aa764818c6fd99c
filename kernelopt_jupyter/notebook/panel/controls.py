"""The control row: Stop, the Accept mode, and step mode's buttons with what is pending.

In step mode the search pauses after each agent step (``step_paused``); the buttons answer that
pause through the session's step control and stay disabled until the next one.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from functools import partial
from typing import Any

import ipywidgets as w

from kernelopt_jupyter.event_payloads import StepPaused
from kernelopt_jupyter.notebook.panel.context import (
    CSS_CLASSES,
    PanelContext,
    cls,
    failure_text,
    on_click,
)
from kernelopt_jupyter.notebook.panel.diff import side_by_side
from kernelopt_jupyter.session.state import SessionState

_EDIT_ACTIONS = {"edit_candidate", "edit_plan", "direction", "edit"}
#: Steps whose Reject asks the Planner again with the reason (agents/search.py).
_REPLANNED = {"planner", "executor", "tuner"}


def pending_html(state: SessionState, paused: StepPaused, reference_source: str) -> str:
    """What the paused step proposes: the profile summary, the plans, or the edit (a diff)."""
    payload = paused.payload  # the paused step's own proposal, shaped by its agent
    agent = paused.agent
    if payload.get("no_plan"):
        parts = [f"<div><b>{html.escape(agent)}: no plan left.</b></div>"]
        parts.append(f"<div>{html.escape(str(payload['no_plan']))}</div>")
    else:
        parts = [f"<div><b>{html.escape(agent)} proposes:</b></div>"]
    if payload.get("answer"):
        parts.append(
            f"<div class='kernelopt-step-answer'><i>{html.escape(str(payload['answer']))}</i></div>"
        )
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
        plan = state.plans.get(str(payload.get("plan_id")))
        parent = state.candidates.get(str(plan.parent)) if plan is not None else None
        old, label = (
            (parent.source, f"parent {parent.id}")
            if parent is not None
            else (reference_source, "reference")
        )
        parts.append(side_by_side(old, source, label, "proposed"))
    elif "source" in payload:
        parts.append("<div>(the executor produced no source this time)</div>")
    return (
        "<div style='border-left:3px solid #9a6700;padding:2px 8px;margin:4px 0'>"
        + "".join(parts)
        + "</div>"
    )


def pause_message(paused: StepPaused) -> str:
    """The message line for a pause: what each offered decision does."""
    where = f"{paused.agent} step {paused.step}"
    actions = set(paused.actions)
    if paused.payload.get("no_plan"):
        return (
            f"Paused after {where}, no plan left: End to finish, Next/Approve to go on without "
            "a plan for it, or Edit to submit your own code or give the Planner a direction."
        )
    said = ["Next/Approve to continue"]
    if "reject" in actions:
        said.append(
            "Reject to ask the Planner for other plans (your reason goes to it)"
            if paused.agent in _REPLANNED
            else "Reject to drop it (the search goes on)"
        )
    edits = [
        words
        for action, words in (
            ("edit_plan", "change the plan"),
            ("edit_candidate", "submit your own code"),
            ("direction", "give a direction"),
        )
        if action in actions
    ]
    if edits:
        said.append("Edit to " + ", ".join(edits[:-1]) + (" or " if edits[1:] else "") + edits[-1])
    return f"Paused after {where}: " + ", ".join(said) + "."


def _naming(pause: int | None) -> dict[str, int]:
    """The keyword that binds a decision to its pause (none for a pause without a number, as
    in a log written before pauses were numbered)."""
    return {} if pause is None else {"pause": pause}


class ControlsView:
    """Stop, the Accept mode and (in step mode) Next / Approve / Reject / Edit with a reason."""

    def __init__(self, ctx: PanelContext, *, step_mode: bool, on_edit: Callable[[], None]) -> None:
        self.ctx = ctx
        self.step_mode = step_mode
        self.on_edit = on_edit
        self.stop_button = cls(
            w.Button(description="Stop", icon="stop", button_style="warning"),
            CSS_CLASSES["stop"],
        )
        on_click(self.stop_button, self.stop, self.stop_failed)
        self.accept_mode = cls(
            w.Dropdown(
                options=[("insert below", "below"), ("replace cell", "replace")],
                value="below",
                description="accept:",
                layout=w.Layout(width="190px"),
            ),
            CSS_CLASSES["accept_mode"],
        )
        #: The pause the step buttons answer (``step_paused``'s ``pause``), and the last pause
        #: answered: a click from an older pause's buttons, or a second click on an answered
        #: one, is dropped here and by the step control, never sent to the next pause.
        self._buttons_pause: int | None = None
        self._answered_pause: int | None = None
        # One layout for every step button: as wide as its label, never squeezed to "R…".
        self._button_layout = w.Layout(width="auto", flex="0 0 auto")
        self.step_buttons = self._step_buttons(None)
        self.reject_reason = cls(
            w.Text(placeholder="reason (optional)", layout=w.Layout(width="180px")),
            CSS_CLASSES["step_reason"],
        )
        self.step_box = w.HBox(
            [*self.step_buttons.values(), self.reject_reason],
            layout=w.Layout(display="flex" if step_mode else "none", flex_flow="row wrap"),
        )
        self.widget = w.HBox(
            [self.stop_button, self.accept_mode, self.step_box],
            layout=w.Layout(flex_flow="row wrap"),
        )
        self.pending_text = cls(w.HTML(""), CSS_CLASSES["step_pending"])
        # After the Planner's step: one Reject per plan (the others go on).
        self.plan_rejects = w.HBox([])
        self.pending = w.VBox([self.pending_text, self.plan_rejects])
        if ctx.controller is None:
            self.stop_button.disabled = True

    def _step_buttons(self, pause: int | None) -> dict[str, w.Button]:
        """Next / Approve / Reject / Edit for one pause (new buttons per pause: a click queued
        on the buttons of a pause already answered names that pause, not the next one)."""
        buttons = {
            "next": cls(w.Button(description="Next", icon="forward"), CSS_CLASSES["step_next"]),
            "approve": cls(
                w.Button(description="Approve", icon="check", button_style="success"),
                CSS_CLASSES["step_approve"],
            ),
            "reject": cls(
                w.Button(description="Reject", icon="times", button_style="danger"),
                CSS_CLASSES["step_reject"],
            ),
            "edit": cls(w.Button(description="Edit", icon="pencil"), CSS_CLASSES["step_edit"]),
            "end": cls(
                w.Button(description="End", icon="flag-checkered", tooltip="end the search now"),
                CSS_CLASSES["step_end"],
            ),
        }
        for action, button in buttons.items():
            on_click(
                button,
                partial(self.step_action, action, pause=pause),
                partial(self.step_failed, action),
            )
            button.disabled = True
            button.layout = self._button_layout
        return buttons

    def _buttons_for(self, pause: int) -> None:
        """Fresh step buttons bound to ``pause`` in place of the previous pause's."""
        old = self.step_buttons
        self.step_buttons = self._step_buttons(pause)
        self._buttons_pause = pause
        self.step_box.children = [*self.step_buttons.values(), self.reject_reason]
        for button in old.values():
            button.close()

    def _stale(self, pause: int | None) -> bool:
        """Whether a click names a pause that is not the one shown, or one already answered."""
        return pause is not None and (pause != self._buttons_pause or pause == self._answered_pause)

    def disable_steps(self) -> None:
        """Grey out the step buttons (until the next pause)."""
        for button in self.step_buttons.values():
            button.disabled = True
        for button in self.plan_rejects.children:
            button.disabled = True

    def render_step(self) -> None:
        """Enable the actions the pause allows and show what it proposes."""
        state = self.ctx.state
        paused = state.paused
        pause = paused.pause if paused is not None else None
        if paused is not None:
            self.step_mode = True
            self.step_box.layout.display = "flex"
            if isinstance(pause, int) and pause != self._buttons_pause:
                self._buttons_for(pause)
        actions = set(paused.actions) if paused else set()
        live = paused is not None and self.ctx.controller is not None
        for action, button in self.step_buttons.items():
            allowed = (
                not actions
                or action in actions
                or (action == "edit" and bool(actions & _EDIT_ACTIONS))
                or (action == "next" and bool(actions & {"approve", "next"}))
            )
            button.disabled = not (live and allowed)
        if paused is not None:
            self.ctx.say(pause_message(paused))
        self.pending_text.value = (
            pending_html(state, paused, self.ctx.reference_source) if paused is not None else ""
        )
        plans = paused.payload.get("plans") or [] if paused else []
        offered = live and "reject_plan" in actions and len(plans) > 1
        self.plan_rejects.children = (
            [self._plan_reject_button(plan, pause) for plan in plans if plan.get("id")]
            if offered
            else []
        )

    def _plan_reject_button(self, plan: dict[str, Any], pause: Any = None) -> w.Button:
        pid = str(plan["id"])
        pause = pause if isinstance(pause, int) else None
        button = w.Button(
            description=f"Reject {pid}",
            tooltip=f"drop '{plan.get('title', '')}' only; the other plans go on",
            icon="times",
            _dom_classes=(CSS_CLASSES["step_reject_plan"], f"kernelopt-plan-{pid}"),
        )
        on_click(
            button,
            lambda: self.reject_plan(pid, pause=pause),
            lambda exc: self.step_failed(f"reject {pid}", exc),
        )
        return button

    def reject_plan(self, plan_id: str, pause: int | None = None) -> None:
        """Drop one plan of the paused Planner step, with the typed reason."""
        step = self.ctx.step()
        if step is None or not hasattr(step, "reject_plan"):
            self.ctx.say("This session cannot reject a single plan.")
            return
        reason = self.reject_reason.value or "rejected in the panel"
        with self.ctx.lock:  # see _answered
            if self._stale(pause):
                return
            self.reject_reason.value = ""
            self._answered(f"reject {plan_id}: sent (the other plans go on)", pause)
            self.refused(step.reject_plan(plan_id, reason, **_naming(pause)))

    def _answered(self, said: str, pause: int | None = None) -> None:
        """Grey out the answered pause and say what is sent; call it before sending it.

        A decision wakes the search at once, which may pause again, and the refresher thread
        draw that pause, before the button's handler returns: greying out or saying anything
        after the decision would land on the new pause (its buttons off, its message gone,
        the search waiting on a pause nobody can answer). So callers hold ``ctx.lock``, under
        which the refresher draws, from here until the decision is sent.
        """
        self._answered_pause = pause
        self.disable_steps()
        self.ctx.say(said)

    def refused(self, answer: str | None) -> None:
        """A decision the pause did not take: say why, and give the pause its buttons back."""
        if not answer:
            return
        self._answered_pause = None
        self.render_step()
        self.ctx.say(answer)

    def step_failed(self, action: str, exc: BaseException) -> None:
        """A step button's handler raised: say so and give the pause its buttons back (the
        decision may not have been sent, and a pause nobody can answer would hang the search).
        """
        with self.ctx.lock:
            self.refused(failure_text(action, exc))

    def finished(self) -> None:
        """Nothing is left to stop or approve."""
        self.stop_button.disabled = True
        self.disable_steps()
        self.pending_text.value = ""
        self.plan_rejects.children = []

    def stop(self) -> None:
        """Ask the session to stop after its current step."""
        if self.ctx.controller is None:
            return
        # Said before stopping, under the lock the refresher draws with: a paused search stops
        # at once, and its "Stopped." must not be overwritten by this line (see _answered).
        with self.ctx.lock:
            self.stop_button.disabled = True
            self.ctx.say("Stopping after the current step…")
            self.ctx.controller.stop()

    def stop_failed(self, exc: BaseException) -> None:
        """Stopping raised: say so and offer Stop again."""
        with self.ctx.lock:
            self.stop_button.disabled = self.ctx.controller is None
            self.ctx.say(failure_text("stop", exc))

    def step_action(self, action: str, pause: int | None = None) -> None:
        """Answer the pause with ``action`` (next, approve, reject, edit); ``pause`` is the
        pause the clicked button was drawn for (None: whichever is shown)."""
        step = self.ctx.step()
        if step is None:
            self.ctx.say("This session is not in step mode.")
            return
        if action == "edit":
            self.on_edit()
            return
        with self.ctx.lock:  # see _answered
            if self._stale(pause):
                return
            naming = _naming(pause)
            if action == "reject":
                reason = self.reject_reason.value or "rejected in the panel"
                paused = self.ctx.state.paused
                replanned = paused is not None and paused.agent in _REPLANNED
                self.reject_reason.value = ""
                self._answered(
                    "reject: sent (the Planner is asked again, with the reason)"
                    if replanned
                    else "reject: sent",
                    pause,
                )
                self.refused(step.reject(reason, **naming))
                return
            self._answered(f"{action}: sent", pause)
            if action in ("next", "approve"):
                self.refused(step.approve(**naming))
            elif action == "end":
                self.refused(step.end(**naming))
