"""The event stream: the only way results leave a search.

Events are small, typed and versioned. An :class:`EventLog` appends each event to
``events.jsonl`` (one JSON object per line, flushed as it happens) and hands it to live
subscribers (the panel, the CLI progress display). The saved session, replay, resume and the
report are all readers of the same file. The event types and their fields are documented in
docs/events.md; adding a field is compatible, renaming or removing one bumps ``EVENT_SCHEMA``.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kernelopt_jupyter.secrets import redact_data

EVENT_SCHEMA = 1

#: Every event type a search may emit, with every field its ``data`` may carry (docs/events.md
#: says when each is sent). A field an emit site sends must be declared here: tests run with
#: strict validation (``KERNELOPT_STRICT_EVENTS=1``), and ``--resume`` reads some of them back.
EVENT_TYPES: dict[str, tuple[str, ...]] = {
    "session_started": (
        "problem",
        "kind",
        "device",
        "agents",
        "options",
        "resumed",
        "name",
        "entry",
        "notice",
        "mode",
        "sizes",
    ),
    "baseline": ("name", "ms", "ci_low", "ci_high", "measured", "detail", "compile_s"),
    "profile": (
        "dispatch_map",
        "summary",
        "facts",
        "timeline",
        "timeline_detail",
        "candidate",
        "cached",
        "step_seconds",
        "baselines_deferred",
    ),
    # A phase of the analysis failed (``analysis.pipeline.PHASES``): the search goes on with
    # what the analysis has, and this analysis is never cached.
    "degraded": ("phase", "error"),
    "agent_started": ("agent", "step", "iteration"),
    "agent_text": ("agent", "step", "delta"),
    "agent_thinking": ("agent", "step", "delta"),
    "retry": ("agent", "step", "status", "reason", "wait_s", "attempt", "max_attempts"),
    "tool_call": ("agent", "step", "tool", "input"),
    "agent_finished": ("agent", "step", "summary", "usage", "output"),
    "agent_failed": ("agent", "step", "error", "usage"),
    "plan": ("plan_id", "agent", "title", "rationale", "targets", "parent", "action"),
    "candidate": ("id", "parent", "agent", "plan_id", "source", "diff", "dispatch_only", "note"),
    "gate": ("candidate", "name", "status", "detail", "metrics"),
    "verdict": (
        "candidate",
        "verdict",
        "ms",
        "speedup",
        "ci_low",
        "ci_high",
        "speedup_vs_eager",
        "speedup_vs_compile",
        "source_key",
        "report",
        "reused",
        "mode",
    ),
    "decision": ("kind", "candidate", "reason", "report", "screen"),
    "step_paused": ("agent", "step", "actions", "payload", "pause"),
    "step_resumed": ("action", "by"),
    "budget": (
        "candidates",
        "max_candidates",
        "seconds",
        "max_seconds",
        "tokens",
        "max_tokens",
        "cost_usd",
        "max_usd",
        "usage",
    ),
    "experience": ("item",),
    "explanation": ("candidate", "text"),
    "error": ("where", "message"),
    "session_finished": ("status", "best", "speedup_vs_eager", "speedup_vs_compile"),
}

#: Set to ``1`` to make every :class:`EventLog` refuse a field ``EVENT_TYPES`` does not declare
#: (tests/conftest.py turns it on for the whole test session, subprocesses included).
STRICT_ENV = "KERNELOPT_STRICT_EVENTS"


def validate_event(event_type: str, data: dict[str, Any]) -> None:
    """Raise :class:`EventError` for an unknown type or a field its type does not declare."""
    declared = EVENT_TYPES.get(event_type)
    if declared is None:
        raise EventError(f"unknown event type {event_type!r}")
    extra = sorted(set(data) - set(declared))
    if extra:
        raise EventError(f"event {event_type!r} sends undeclared field(s) {extra}")


class EventError(ValueError):
    """An event of an unknown type, or an unreadable events file."""


@dataclass(frozen=True)
class Event:
    """One thing that happened in a search."""

    type: str
    data: dict[str, Any]
    seq: int = 0
    t: float = 0.0
    session: str = ""
    schema: int = EVENT_SCHEMA

    def to_json(self) -> str:
        """One line of ``events.jsonl``."""
        return json.dumps(asdict(self), separators=(",", ":"), default=_json_default)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Event:
        """Parse an event written by :meth:`to_json` (unknown extra fields are kept in data)."""
        return cls(
            type=raw["type"],
            data=dict(raw.get("data", {})),
            seq=int(raw.get("seq", 0)),
            t=float(raw.get("t", 0.0)),
            session=str(raw.get("session", "")),
            schema=int(raw.get("schema", EVENT_SCHEMA)),
        )


def _json_default(obj: Any) -> Any:
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    if hasattr(obj, "__dataclass_fields__"):
        return asdict(obj)
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    return repr(obj)


Subscriber = Callable[[Event], None]


@dataclass
class EventLog:
    """Append-only event log with live subscribers; thread-safe.

    ``path`` may be None for an in-memory log (tests, previews). A subscriber that raises is
    dropped after its error is recorded, so a broken panel can never stop a search.
    """

    path: Path | None = None
    session: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    _subscribers: list[Subscriber] = field(default_factory=list)
    _events: list[Event] = field(default_factory=list)
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _t0: float = field(default_factory=time.monotonic)
    _seq: int = 0
    #: Refuse undeclared fields (tests); a production log only refuses unknown types, so a
    #: front end's newer field never stops a search.
    strict: bool = field(default_factory=lambda: os.environ.get(STRICT_ENV) == "1")

    def __post_init__(self) -> None:
        if self.path is not None:
            self.path = Path(self.path)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.exists():
                _drop_torn_tail(self.path)
                # Resuming: continue the sequence and the session id of the existing log.
                previous = read_events(self.path)
                self._events.extend(previous)
                if previous:
                    self._seq = previous[-1].seq + 1
                    self.session = previous[-1].session or self.session
                    self._t0 -= previous[-1].t

    def emit(self, event_type: str, /, **data: Any) -> Event:
        """Record an event of ``event_type`` with ``data``, write it and notify subscribers."""
        if self.strict:
            validate_event(event_type, data)
        elif event_type not in EVENT_TYPES:
            raise EventError(f"unknown event type {event_type!r}")
        with self._lock:
            event = Event(
                type=event_type,
                # Secrets never reach the log or a reader, whatever a layer below echoed.
                data=redact_data(data),
                seq=self._seq,
                t=round(time.monotonic() - self._t0, 4),
                session=self.session,
            )
            self._seq += 1
            self._events.append(event)
            if self.path is not None:
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(event.to_json() + "\n")
            subscribers = list(self._subscribers)
        for sub in subscribers:
            try:
                sub(event)
            except Exception as exc:  # a broken reader must never stop the search
                self.unsubscribe(sub)
                if event_type != "error":
                    self.emit("error", where="subscriber", message=f"{type(exc).__name__}: {exc}")
        return event

    def subscribe(self, fn: Subscriber, *, replay: bool = True) -> None:
        """Add a live reader; with ``replay`` it first receives every event so far, in order.

        Events emitted while the history is being replayed (the search runs on its own
        thread) are held back and handed over after it, so a reader never sees a verdict
        before the candidate it decides.
        """
        if not replay:
            with self._lock:
                self._subscribers.append(fn)
            return
        ordered = _Replaying(fn)
        with self._lock:
            history = list(self._events)
            self._subscribers.append(ordered)
        ordered.replay(history)

    def unsubscribe(self, fn: Subscriber) -> None:
        """Remove a reader (no error when it is already gone)."""
        with self._lock:
            self._subscribers = [
                s for s in self._subscribers if s != fn and getattr(s, "fn", None) != fn
            ]

    @property
    def events(self) -> list[Event]:
        """A snapshot of every event so far."""
        with self._lock:
            return list(self._events)

    def of_type(self, *types: str) -> list[Event]:
        """Events so far whose type is one of ``types``."""
        return [e for e in self.events if e.type in types]


class _Replaying:
    """A subscriber that receives a log's history before any live event.

    Live events that arrive while the history is replayed are queued and delivered right
    after it, in the order they were emitted.
    """

    def __init__(self, fn: Subscriber) -> None:
        self.fn = fn
        self._lock = threading.Lock()
        self._held: list[Event] | None = []  # None once the history has been delivered

    def __call__(self, event: Event) -> None:
        with self._lock:
            if self._held is not None:
                self._held.append(event)
                return
        self.fn(event)

    def replay(self, history: list[Event]) -> None:
        for event in history:
            self.fn(event)
        while True:
            with self._lock:
                held = self._held or []
                if not held:
                    self._held = None
                    return
                self._held = []
            for event in held:
                self.fn(event)


def _drop_torn_tail(path: Path) -> None:
    """Cut a last line left half-written by a crash, so appends start on a fresh line."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])


def iter_events(path: str | Path) -> Iterator[Event]:
    """Read an ``events.jsonl`` file; a torn last line (a crash mid-write) is ignored."""
    p = Path(path)
    if not p.is_file():
        raise EventError(f"{p}: no such events file")
    with p.open(encoding="utf-8") as fh:
        lines = fh.readlines()
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                return
            raise EventError(f"{p}: line {number} is not JSON") from None
        yield Event.from_dict(raw)


def read_events(path: str | Path) -> list[Event]:
    """All events of an ``events.jsonl`` file, in order."""
    return list(iter_events(path))
