"""Step mode: the search pauses after each agent step until a person decides.

The search thread calls :meth:`StepControl.wait`; the panel or the terminal calls one of the
decision methods from another thread. Every decision is also an event, so a saved session shows
who approved what.
"""

from __future__ import annotations

import threading
from typing import Any

#: What a person may do after each agent's step.
ACTIONS = {
    "profiler": ["approve", "stop"],
    "planner": ["approve", "reject", "reject_plan", "edit_plan", "stop"],
    "executor": ["approve", "reject", "edit_candidate", "stop"],
    "tuner": ["approve", "reject", "stop"],
    "summarizer": ["approve", "stop"],
}


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

    @staticmethod
    def actions_for(agent: str) -> list[str]:
        """The decisions offered after ``agent``'s step."""
        return ACTIONS.get(agent, ["approve", "stop"])

    @property
    def pending(self) -> bool:
        """Whether the search is paused waiting for a decision."""
        with self._cond:
            return self._waiting

    def wait(self, timeout: float | None = None) -> tuple[str, Any]:
        """Search side: block until a decision arrives (or stop was requested)."""
        with self._cond:
            self._waiting = True
            self.pause_count += 1
            try:
                while self._decision is None and not self.stop_requested:
                    if not self._cond.wait(timeout):
                        return "approve", None  # a timeout means "carry on"
                decision = self._decision or ("stop", None)
                self._decision = None
                return decision
            finally:
                self._waiting = False

    def _decide(self, action: str, value: Any = None, pause: int | None = None) -> None:
        """Hand over a decision. With ``pause`` (the number the ``step_paused`` event gave),
        it answers that pause only: if the search is not waiting on that pause any more (a
        second click of a double click, after the first one's answer let the search go on and
        perhaps pause again) it is dropped and counted in ``stale``; it never answers a pause
        the person has not seen. Without ``pause`` it answers whatever pause comes next."""
        with self._cond:
            if pause is not None and (not self._waiting or pause != self.pause_count):
                self.stale += 1
                return
            self._decision = (action, value)
            self._cond.notify_all()

    def approve(self, pause: int | None = None) -> None:
        """Accept the step and go on."""
        self._decide("approve", pause=pause)

    def reject(self, reason: str = "", pause: int | None = None) -> None:
        """Drop what the step proposed (plans, an edit or tune variants); the Planner is then
        asked again for the same parent, with the reason (after an Executor's or a Tuner's
        step too: the plans not yet tried go on after its new ones)."""
        self._decide("reject", reason, pause)

    def reject_plan(self, plan_id: str, reason: str = "", pause: int | None = None) -> None:
        """Drop one of the Planner's plans (the others go on); the reason goes to the Planner."""
        self._decide("reject_plan", {"plan_id": plan_id, "reason": reason}, pause)

    def edit_plan(self, text: str, pause: int | None = None) -> None:
        """Replace the first plan's rationale with the person's text before the Executor runs."""
        self._decide("edit_plan", text, pause)

    def edit_candidate(self, source: str, pause: int | None = None) -> None:
        """Gate the person's version of the candidate instead of the Executor's."""
        self._decide("edit_candidate", source, pause)

    def stop(self) -> None:
        """Stop the search after the current step (works in and out of step mode)."""
        with self._cond:
            self.stop_requested = True
            self._cond.notify_all()
