"""What a front end may ask of a session: typed seams instead of ``Any`` and ``getattr``.

The panel, the magic and the CLI steer an :class:`~kernelopt_jupyter.session.OptimizationSession`
(or, in tests, a stand-in). They type the object they hold as :class:`SessionController`, so the
checker sees every call; a saved session opened read-only is still a controller (its ``log``
holds the saved events, ``running`` is False).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from kernelopt_jupyter.agents.search import SearchResult
from kernelopt_jupyter.events import EventLog
from kernelopt_jupyter.problem import Problem


@runtime_checkable
class StepDecisions(Protocol):
    """A person's answers to a paused step (``agents.stepping.StepControl`` provides them).

    Each decision returns None when it was sent, else one sentence saying why the pause did
    not take it and what it offers."""

    def approve(self, pause: int | None = None) -> str | None:
        """Go on with what the agent proposed (``pause``: answer that pause only)."""
        ...

    def reject(self, reason: str = "", pause: int | None = None) -> str | None:
        """Refuse the proposal; ``reason`` goes back to the agents."""
        ...

    def edit_candidate(self, source: str, pause: int | None = None) -> str | None:
        """Gate the person's source (in place of the Executor's edit after its step)."""
        ...

    def edit_plan(self, text: str, pause: int | None = None) -> str | None:
        """Replace the proposed plan's rationale with the person's text."""
        ...

    def direct(self, text: str, pause: int | None = None) -> str | None:
        """Give the Planner a direction in words."""
        ...

    def end(self, pause: int | None = None) -> str | None:
        """End the search where no plan is left."""
        ...

    def stop(self) -> None:
        """End the search after the current step."""
        ...


@runtime_checkable
class SessionController(Protocol):
    """The calls a front end makes on a running or saved session."""

    problem: Problem
    log: EventLog
    out_dir: Path
    result: SearchResult | None
    error: str | None

    @property
    def running(self) -> bool:
        """Whether the search is still going."""
        ...

    @property
    def step(self) -> StepDecisions:
        """Step-mode decisions."""
        ...

    def start(self) -> None:
        """Run the search in the background."""
        ...

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the search; whether it finished."""
        ...

    def stop(self) -> None:
        """Ask the search to stop; decided results are kept."""
        ...

    def submit(self, source: str, parent: str | None = None, agent: str = "person") -> str:
        """Gate a person's candidate like any other; its id."""
        ...


if TYPE_CHECKING:
    from kernelopt_jupyter.agents.stepping import StepControl
    from kernelopt_jupyter.session.optimization import OptimizationSession

    # Checked by mypy, never run: the session and its step control keep fitting the seams.
    def _session_conforms(session: OptimizationSession) -> SessionController:
        return session

    def _steps_conform(control: StepControl) -> StepDecisions:
        return control
