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

from kernelopt_jupyter.event_payloads import (
    PAYLOADS,
    Payload,
    PayloadError,
    check_fields,
    declared_fields,
)
from kernelopt_jupyter.secrets import redact_data

EVENT_SCHEMA = 1

#: Every event type a search may emit, with every field its ``data`` may carry: the field names
#: of its payload class in ``event_payloads`` (docs/events.md says when each is sent). A field
#: an emit site sends must be declared there: tests run with strict validation
#: (``KERNELOPT_STRICT_EVENTS=1``), which also checks each field's type.
EVENT_TYPES: dict[str, tuple[str, ...]] = {name: declared_fields(name) for name in PAYLOADS}

#: Set to ``1`` to make every :class:`EventLog` refuse a field ``EVENT_TYPES`` does not declare
#: (tests/conftest.py turns it on for the whole test session, subprocesses included).
STRICT_ENV = "KERNELOPT_STRICT_EVENTS"


def validate_event(event_type: str, data: dict[str, Any]) -> None:
    """Raise :class:`EventError` for an unknown type, a field its type does not declare, or a
    field whose value, as it is written to ``events.jsonl``, is not of its declared type."""
    declared = EVENT_TYPES.get(event_type)
    if declared is None:
        raise EventError(f"unknown event type {event_type!r}")
    extra = sorted(set(data) - set(declared))
    if extra:
        raise EventError(f"event {event_type!r} sends undeclared field(s) {extra}")
    written = json.loads(json.dumps(data, default=_json_default))
    try:
        check_fields(event_type, written)
    except PayloadError as exc:
        raise EventError(str(exc)) from None


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

    def payload(self) -> Payload | None:
        """The typed data (``event_payloads``), or None for a type this version does not
        know. Raises :class:`EventError` for a field of the wrong type."""
        cls = PAYLOADS.get(self.type)
        if cls is None:
            return None
        try:
            return cls.from_dict(self.data)
        except PayloadError as exc:
            raise EventError(str(exc)) from None

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

    def publish(self, payload: Payload) -> Event:
        """Record a typed event: its payload class names the type, every field is written."""
        return self.emit(payload.TYPE, **payload.to_dict())

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
        event = Event.from_dict(raw)
        if event.type in PAYLOADS:
            # The boundary: a reader gets typed data or a message naming the line.
            try:
                check_fields(event.type, event.data)
            except PayloadError as exc:
                raise EventError(f"{p}: line {number}: {exc}") from None
        yield event


def read_events(path: str | Path) -> list[Event]:
    """All events of an ``events.jsonl`` file, in order."""
    return list(iter_events(path))
