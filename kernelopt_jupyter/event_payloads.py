"""The typed payload of every event: one dataclass per event type, the one home of its fields.

``events.jsonl`` carries each event's ``data`` as a JSON object; these classes say what each
field holds. The same classes validate at both ends of the file: a strict log (tests) checks
what it writes, :func:`kernelopt_jupyter.events.iter_events` checks what it reads, and the
readers (the panel's state, the CLI, the report) fold the parsed payloads, never raw dicts.

Every field has a default, so a log written before a field existed still reads; a field a
reader does not know is ignored (a newer engine may add some). The ``verdict`` payload is the
one home of a candidate's decision: its ``report`` is the verifier's ``VerifyReport.to_dict()``
(read back with ``VerifyReport.from_dict``), and the ``gate`` events before it repeat the
report's gates for readers of older logs and live displays.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass, field, fields
from functools import cache
from typing import Any, ClassVar, Literal, TypeVar, Union, get_args, get_origin

P = TypeVar("P", bound="Payload")


class PayloadError(ValueError):
    """An event's data holds a field of the wrong type."""


@dataclass(frozen=True)
class Payload:
    """The data of one event type; subclasses name it in ``TYPE``."""

    TYPE: ClassVar[str] = ""

    @classmethod
    def from_dict(cls: type[P], data: dict[str, Any]) -> P:
        """Parse an event's data: declared fields checked against their types, missing ones
        take their defaults, unknown ones are ignored. Raises :class:`PayloadError`."""
        check_fields(cls.TYPE, data)
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def to_dict(self) -> dict[str, Any]:
        """The event's data as written (every field)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class SessionStarted(Payload):
    """A run (or a resumed run) begins."""

    TYPE: ClassVar[str] = "session_started"
    #: The problem file's path (logs written by early versions held a dict with ``name``).
    problem: str | dict[str, Any] = ""
    kind: str = ""
    device: str = ""
    agents: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    resumed: bool = False
    name: str = ""
    entry: str | None = None
    notice: str = ""
    mode: str = ""
    sizes: dict[str, Any] = field(default_factory=dict)

    @property
    def problem_path(self) -> str:
        """The problem file's path ("" in a log that recorded the problem as a dict)."""
        return self.problem if isinstance(self.problem, str) else ""

    @property
    def title(self) -> str:
        """The problem's name for a header: ``name``, else the problem's own."""
        if self.name:
            return self.name
        if isinstance(self.problem, dict):
            return str(self.problem.get("name", ""))
        return self.problem


@dataclass(frozen=True)
class Baseline(Payload):
    """A baseline's time (eager, torch.compile's modes); None where not measured."""

    TYPE: ClassVar[str] = "baseline"
    name: str = ""
    ms: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    measured: bool = False
    detail: str = ""
    compile_s: float | None = None


@dataclass(frozen=True)
class Profile(Payload):
    """The analysis's dispatch map and timeline, or (``candidate`` set) the winner's."""

    TYPE: ClassVar[str] = "profile"
    dispatch_map: dict[str, Any] | list[Any] = field(default_factory=dict)
    summary: str = ""
    facts: dict[str, Any] | None = None
    timeline: list[Any] | None = None
    timeline_detail: str = ""
    candidate: str | None = None
    cached: bool = False
    step_seconds: dict[str, Any] = field(default_factory=dict)
    baselines_deferred: bool = False


@dataclass(frozen=True)
class Degraded(Payload):
    """An analysis phase failed; the search goes on without it."""

    TYPE: ClassVar[str] = "degraded"
    phase: str = ""
    error: str = ""

    #: How ``error`` begins when the analysis was stopped at its share of the time limit
    #: (``pipeline.ANALYSIS_SHARE``): a cut the run chose, not a failure of the problem's.
    CUT: ClassVar[str] = "the analysis stopped at"

    def text(self) -> str:
        """One line for the console and the panel's warnings."""
        if self.error.startswith(self.CUT):
            return f"{self.error} (this analysis is not cached)"
        return (
            f"the analysis's {self.phase} phase failed: {self.error} "
            "(the search goes on without it; this analysis is not cached)"
        )


@dataclass(frozen=True)
class AgentStarted(Payload):
    """An agent step begins."""

    TYPE: ClassVar[str] = "agent_started"
    agent: str = "agent"
    step: int | None = None
    iteration: int | None = None


@dataclass(frozen=True)
class AgentText(Payload):
    """A piece of an agent's answer, streamed."""

    TYPE: ClassVar[str] = "agent_text"
    agent: str = "agent"
    step: int | None = None
    delta: str = ""


@dataclass(frozen=True)
class AgentThinking(Payload):
    """A piece of the model's summarized thinking, streamed."""

    TYPE: ClassVar[str] = "agent_thinking"
    agent: str = "agent"
    step: int | None = None
    delta: str = ""


@dataclass(frozen=True)
class Retry(Payload):
    """A failed API request will be sent again after ``wait_s``."""

    TYPE: ClassVar[str] = "retry"
    agent: str = "agent"
    step: int | None = None
    status: str = ""
    reason: str = ""
    wait_s: float = 0.0
    attempt: int = 0
    max_attempts: int = 0


@dataclass(frozen=True)
class ToolCall(Payload):
    """A structured tool call an agent made."""

    TYPE: ClassVar[str] = "tool_call"
    agent: str = "agent"
    step: int | None = None
    tool: str = ""
    input: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AgentFinished(Payload):
    """An agent step ended; ``output`` is the role's whole structured answer."""

    TYPE: ClassVar[str] = "agent_finished"
    agent: str = "agent"
    step: int | None = None
    summary: str = ""
    usage: dict[str, float] = field(default_factory=dict)
    output: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AgentFailed(Payload):
    """An agent step raised; its usage still counts."""

    TYPE: ClassVar[str] = "agent_failed"
    agent: str = "agent"
    step: int | None = None
    error: str = ""
    usage: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class PlanProposed(Payload):
    """The Planner proposed a plan."""

    TYPE: ClassVar[str] = "plan"
    plan_id: str = ""
    agent: str = ""
    title: str = ""
    rationale: str = ""
    targets: list[str] = field(default_factory=list)
    parent: str | None = None
    action: str | None = None


@dataclass(frozen=True)
class CandidateProposed(Payload):
    """A candidate enters the gates."""

    TYPE: ClassVar[str] = "candidate"
    id: str = ""
    parent: str | None = None
    agent: str = ""
    plan_id: str | None = None
    source: str = ""
    diff: str = ""
    dispatch_only: bool = False
    note: str = ""


@dataclass(frozen=True)
class GateDecided(Payload):
    """One gate of a candidate, as its verdict's report also holds it."""

    TYPE: ClassVar[str] = "gate"
    candidate: str = ""
    name: str = ""
    status: str = ""
    detail: str = ""
    metrics: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict(Payload):
    """All gates of a candidate done: the one message that decides it.

    ``report`` is the verifier's whole report (``VerifyReport.to_dict()``); ``ms``, ``speedup``
    and the interval are its performance gate's, and the speedups over eager and
    torch.compile are the search's (derived from the baselines where the gate did not race
    them). None where not timed.
    """

    TYPE: ClassVar[str] = "verdict"
    candidate: str = ""
    verdict: str = ""
    ms: float | None = None
    speedup: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    speedup_vs_eager: float | None = None
    speedup_vs_compile: float | None = None
    source_key: str | None = None
    report: dict[str, Any] | None = None
    reused: bool = False
    mode: str = ""


@dataclass(frozen=True)
class Decision(Payload):
    """The beam moved, the winner was chosen or re-timed, a candidate was cut or screened."""

    TYPE: ClassVar[str] = "decision"
    kind: str = ""
    candidate: str | None = None
    reason: str = ""
    report: dict[str, Any] | None = None
    screen: list[dict[str, Any]] | None = None


@dataclass(frozen=True)
class StepPaused(Payload):
    """Step mode waits for a person."""

    TYPE: ClassVar[str] = "step_paused"
    agent: str = ""
    step: int | None = None
    actions: list[str] = field(default_factory=list)
    payload: dict[str, Any] = field(default_factory=dict)
    pause: int | None = None


@dataclass(frozen=True)
class StepResumed(Payload):
    """The person decided."""

    TYPE: ClassVar[str] = "step_resumed"
    action: str = ""
    by: str = ""


@dataclass(frozen=True)
class Budget(Payload):
    """What the search has spent and its caps (None: no cap)."""

    TYPE: ClassVar[str] = "budget"
    candidates: int | None = None
    max_candidates: int | None = None
    seconds: float | None = None
    max_seconds: float | None = None
    tokens: int | None = None
    max_tokens: int | None = None
    cost_usd: float | None = None
    max_usd: float | None = None
    usage: dict[str, float] | None = None


@dataclass(frozen=True)
class Experience(Payload):
    """A lesson stored in the experience memory."""

    TYPE: ClassVar[str] = "experience"
    item: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Explanation(Payload):
    """The Summarizer explained a step."""

    TYPE: ClassVar[str] = "explanation"
    candidate: str = ""
    text: str = ""


@dataclass(frozen=True)
class ErrorRaised(Payload):
    """A policy stopped, a subscriber broke, the session failed."""

    TYPE: ClassVar[str] = "error"
    where: str = ""
    message: str = ""


@dataclass(frozen=True)
class SessionFinished(Payload):
    """The run ended (also after a failure)."""

    TYPE: ClassVar[str] = "session_finished"
    status: str = ""
    best: str | None = None
    speedup_vs_eager: float | None = None
    speedup_vs_compile: float | None = None


#: Every event type a search may emit -> its payload class (docs/events.md says when).
PAYLOADS: dict[str, type[Payload]] = {
    cls.TYPE: cls
    for cls in (
        SessionStarted,
        Baseline,
        Profile,
        Degraded,
        AgentStarted,
        AgentText,
        AgentThinking,
        Retry,
        ToolCall,
        AgentFinished,
        AgentFailed,
        PlanProposed,
        CandidateProposed,
        GateDecided,
        Verdict,
        Decision,
        StepPaused,
        StepResumed,
        Budget,
        Experience,
        Explanation,
        ErrorRaised,
        SessionFinished,
    )
}


@cache
def _hints(event_type: str) -> dict[str, Any]:
    cls = PAYLOADS[event_type]
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in fields(cls)}


def declared_fields(event_type: str) -> tuple[str, ...]:
    """The fields an event type's data may carry, in their declared order."""
    return tuple(_hints(event_type))


def check_fields(event_type: str, data: dict[str, Any]) -> None:
    """Raise :class:`PayloadError` for a declared field whose value (as JSON reads it back)
    is not of its type; undeclared fields are not looked at here."""
    for name, hint in _hints(event_type).items():
        if name in data and not _matches(data[name], hint):
            raise PayloadError(
                f"event {event_type!r} field {name!r} holds {type(data[name]).__name__} "
                f"{_short(data[name])}, not {_type_name(hint)}"
            )


def _matches(value: Any, hint: Any) -> bool:
    """Whether a JSON value fits a type hint (a float field takes a JSON integer)."""
    if hint is Any:
        return True
    if hint is None or hint is type(None):
        return value is None
    origin = get_origin(hint)
    if origin is Union or origin is types.UnionType:
        return any(_matches(value, arg) for arg in get_args(hint))
    if origin is Literal:
        return value in get_args(hint)
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin is list:
        (item,) = get_args(hint) or (Any,)
        return isinstance(value, list) and all(_matches(v, item) for v in value)
    if origin is dict:
        key, item = get_args(hint) or (Any, Any)
        return isinstance(value, dict) and all(
            _matches(k, key) and _matches(v, item) for k, v in value.items()
        )
    raise TypeError(f"no JSON check for the type {hint!r}")


def _type_name(hint: Any) -> str:
    return str(hint).replace("typing.", "")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
