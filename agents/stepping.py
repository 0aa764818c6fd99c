"""Step mode: the search pauses after each agent step until a person decides.

The search thread calls :meth:`StepControl.wait`; the panel or the terminal calls one of the
decision methods from another thread. Every decision is also an event, so a saved session shows
who approved what.

A pause is one turn of a conversation: each decision the pause offers is acted on, and one it
does not offer is answered at once (the method returns a sentence saying why not and what is
possible now) without waking the search, so nothing a person sends is lost in silence.
"""

from __future__ import annotations

import threading
from typing import Any

#: What a person may do after each agent's step. ``no_plan`` is the Planner's pause when no
#: plan is left for a parent: the person ends the search, submits code or gives a direction.
ACTIONS = {
    "profiler": ["approve", "edit_candidate", "direction", "stop"],
    "planner": [
        "approve",
        "reject",
        "reject_plan",
        "edit_plan",
        "edit_candidate",
        "direction",
        "stop",
    ],
    "no_plan": ["end", "approve", "edit_candidate", "direction", "stop"],
    "executor": ["approve", "reject", "edit_candidate", "stop"],
    "tuner": ["approve", "reject", "stop"],
    "summarizer": ["approve", "stop"],
}

#: Each decision in words, for the answer to one a pause does not offer.
_SAID = {
    "approve": "approve",
    "reject": "reject",
    "reject_plan": "reject one plan",
    "edit_plan": "edit the plan",
    "edit_candidate": "submit your own code",
    "direction": "give a direction",
    "end": "end the search",
    "stop": "stop",
}

#: Why a pause does not take a decision, where there is more to say than that it is not offered.
_WHY_NOT = {
    ("no_plan", "reject"): "no plan is left to reject",
    ("no_plan", "reject_plan"): "no plan is left to reject",
    ("no_plan", "edit_plan"): "no plan is left to edit (a direction asks the Planner for one)",
    ("tuner", "edit_candidate"): (
        "the Tuner's variants are not code of yours; approve or reject them, then submit at "
        "the next pause"
    ),
}


def refusal(agent: str, action: str, offered: list[str], why: str = "") -> str:
    """The one-sentence answer to ``action`` at a pause after ``agent`` that offers ``offered``."""
    what = _SAID.get(action, action)
    reason = why or _WHY_NOT.get((agent, action)) or f"the {agent} step does not take it"
    possible = ", ".join(_SAID.get(a, a) for a in offered if a != "stop")
    return f"Not sent ({what}): {reason}. Possible now: {possible or 'stop'}."


class StepControl:
    """A one-slot mailbox between the search thread and the person."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._cond = threading.Condition()
        self._decision: tuple[str, Any] | None = None
        self._waiting = False
        self.stop_requested = False
        #: Pauses so far: a decision answers the pause it was made for, which this tells apart.
        self.pause_count = 0
        #: Decisions dropped because the pause they named was no longer the one waiting.
        self.stale = 0
        #: The pause waiting now: its agent, the decisions it offers (None: any), and the
        #: search's own reasons for decisions it does not offer.
        self._agent = ""
        self._offered: list[str] | None = None
        self._why_not: dict[str, str] = {}

    @staticmethod
    def actions_for(agent: str) -> list[str]:
        """The decisions offered after ``agent``'s step."""
        return ACTIONS.get(agent, ["approve", "stop"])

    @property
    def pending(self) -> bool:
        """Whether the search is paused waiting for a decision."""
        with self._cond:
            return self._waiting

    def wait(
        self,
        timeout: float | None = None,
        *,
        agent: str = "",
        offered: list[str] | None = None,
        why_not: dict[str, str] | None = None,
    ) -> tuple[str, Any]:
        """Search side: block until a decision arrives (or stop was requested).

        ``offered`` (with ``agent``) are the decisions this pause takes; any other is answered
        at once by the deciding method, with ``why_not``'s reason where it has one."""
        with self._cond:
            self._waiting = True
            self.pause_count += 1
            self._agent, self._offered, self._why_not = agent, offered, dict(why_not or {})
            try:
                while self._decision is None and not self.stop_requested:
                    if not self._cond.wait(timeout):
                        return "approve", None  # a timeout means "carry on"
                decision = self._decision or ("stop", None)
                self._decision = None
                return decision
            finally:
                self._waiting = False
                self._offered = None

    def _decide(self, action: str, value: Any = None, pause: int | None = None) -> str | None:
        """Hand over a decision; returns None when it was sent, else why it was not.

        With ``pause`` (the number the ``step_paused`` event gave), it answers that pause
        only: if the search is not waiting on that pause any more (a second click of a double
        click, after the first one's answer let the search go on and perhaps pause again) it
        is dropped and counted in ``stale``; it never answers a pause the person has not seen.
        Without ``pause`` it answers whatever pause comes next. A decision the waiting pause
        does not offer is not sent: the answer says why and what the pause offers."""
        with self._cond:
            if pause is not None and (not self._waiting or pause != self.pause_count):
                self.stale += 1
                return None
            offered = self._offered
            if self._waiting and offered is not None and action not in offered:
                return refusal(self._agent, action, offered, self._why_not.get(action, ""))
            self._decision = (action, value)
            self._cond.notify_all()
            return None

    def approve(self, pause: int | None = None) -> str | None:
        """Accept the step and go on."""
        return self._decide("approve", pause=pause)

    def reject(self, reason: str = "", pause: int | None = None) -> str | None:
        """Drop what the step proposed (plans, an edit or tune variants); the Planner is then
        asked again for the same parent, with the reason (after an Executor's or a Tuner's
        step too: the plans not yet tried go on after its new ones)."""
        return self._decide("reject", reason, pause)

    def reject_plan(self, plan_id: str, reason: str = "", pause: int | None = None) -> str | None:
        """Drop one of the Planner's plans (the others go on); the reason goes to the Planner."""
        return self._decide("reject_plan", {"plan_id": plan_id, "reason": reason}, pause)

    def edit_plan(self, text: str, pause: int | None = None) -> str | None:
        """Replace the first plan's rationale with the person's text before the Executor runs."""
        return self._decide("edit_plan", text, pause)

    def edit_candidate(self, source: str, pause: int | None = None) -> str | None:
        """Gate the person's code: in place of the Executor's edit after its step, else as a
        child of the parent being planned (the pause is then offered again, with its verdict)."""
        return self._decide("edit_candidate", source, pause)

    def direct(self, text: str, pause: int | None = None) -> str | None:
        """Give the Planner a direction in words; it is asked again for the same parent."""
        return self._decide("direction", text, pause)

    def end(self, pause: int | None = None) -> str | None:
        """End the search where no plan is left (it finishes with what it has decided)."""
        return self._decide("end", pause=pause)

    def stop(self) -> None:
        """Stop the search after the current step (works in and out of step mode)."""
        with self._cond:
            self.stop_requested = True
            self._cond.notify_all()
