"""Each event's data has one typed shape (``event_payloads``), checked where it is written
(strict logs) and where it is read back (``events.jsonl``); readers fold typed payloads."""

from __future__ import annotations

import json
from dataclasses import MISSING, fields
from pathlib import Path

import pytest
from _reports import report_of

from kernelopt_jupyter.event_payloads import (
    PAYLOADS,
    CandidateProposed,
    GateDecided,
    PayloadError,
    SessionStarted,
    Verdict,
)
from kernelopt_jupyter.events import EVENT_TYPES, Event, EventError, EventLog, read_events
from kernelopt_jupyter.session.state import SessionState
from kernelopt_jupyter.verify.report import GATE_NAMES


def test_every_declared_field_has_a_type_and_a_default() -> None:
    """EVENT_TYPES is the payload classes' fields, and a log missing any field still reads."""
    assert set(EVENT_TYPES) == set(PAYLOADS)
    for name, cls in PAYLOADS.items():
        assert EVENT_TYPES[name] == tuple(f.name for f in fields(cls))
        for f in fields(cls):
            assert f.default is not MISSING or f.default_factory is not MISSING, (name, f.name)
        assert cls.from_dict({}) == cls()  # every field defaulted
        assert cls.from_dict(cls().to_dict()) == cls()


def test_a_strict_log_refuses_a_field_of_the_wrong_type(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl", strict=True)
    with pytest.raises(EventError, match=r"'verdict' field 'ms' holds str 'fast', not"):
        log.emit("verdict", candidate="c1", verdict="pass", ms="fast")
    with pytest.raises(EventError, match="undeclared field"):
        log.emit("verdict", candidate="c1", milliseconds=1.0)
    # What JSON writes is what is checked: a Path is written as its text.
    log.emit("session_started", problem=tmp_path / "p.py", name="p")
    assert read_events(tmp_path / "events.jsonl")[0].data["problem"] == str(tmp_path / "p.py")


def test_a_production_log_writes_what_it_is_given() -> None:
    """Outside strict mode a front end's newer field never stops a search."""
    log = EventLog(None, strict=False)
    log.emit("verdict", candidate="c1", newer_field=1)
    with pytest.raises(EventError, match="unknown event type"):
        log.emit("no_such_event")


def test_reading_back_checks_each_field_and_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    good = Event("candidate", {"id": "c1", "source": "x", "later_field": [1]}).to_json()
    bad = Event("verdict", {"candidate": "c1", "speedup": "2x"}).to_json()
    path.write_text(good + "\n" + bad + "\n")
    with pytest.raises(EventError, match=r"events\.jsonl: line 2: event 'verdict' field 'speedup'"):
        read_events(path)
    path.write_text(good + "\n")
    (event,) = read_events(path)
    # An unknown field is kept in the data and ignored by the typed read; a missing one
    # takes its default.
    assert event.data["later_field"] == [1]
    assert event.payload() == CandidateProposed(id="c1", source="x")


def test_an_unknown_event_type_reads_as_no_payload(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(Event("from_a_newer_engine", {"x": 1}).to_json() + "\n")
    (event,) = read_events(path)
    assert event.payload() is None
    state = SessionState()
    state.apply(event)
    assert state.events_seen == 1 and not state.errors


def test_live_data_of_the_wrong_type_is_noted_not_fatal() -> None:
    """A production log does not check types; the panel's state notes the bad event."""
    state = SessionState()
    state.apply(Event("candidate", {"id": "c1", "source": "x"}))
    state.apply(Event("verdict", {"candidate": "c1", "ms": "slow"}, seq=7))
    assert state.candidates["c1"].verdict is None
    assert state.errors and "event 7 not shown" in state.errors[0] and "'ms'" in state.errors[0]


def test_payloads_parse_the_older_shapes_they_accept() -> None:
    """Logs of early versions recorded the problem as a dict; it still names the session."""
    started = SessionStarted.from_dict({"problem": {"name": "relu"}, "kind": "module"})
    assert started.title == "relu" and started.problem_path == ""
    with pytest.raises(PayloadError, match="'resumed'"):
        SessionStarted.from_dict({"resumed": "yes"})


def test_the_verdict_alone_decides_a_row() -> None:
    """The verdict's report carries the gates: a reader needs no gate event to show them."""
    report = report_of("c1", device="cpu")
    state = SessionState()
    state.apply(Event("candidate", CandidateProposed(id="c1", source="x").to_dict()))
    verdict = Verdict(candidate="c1", verdict=report.verdict, report=report.to_dict())
    state.apply(Event("verdict", verdict.to_dict()))
    row = state.candidates["c1"]
    assert [row.gates[name].status for name in GATE_NAMES] == [
        g.status for g in report.gates
    ] and row.verdict == report.verdict
    assert row.gates["correctness"].detail == report.gate("correctness").detail  # type: ignore[union-attr]


def test_a_search_writes_typed_events_whose_gates_repeat_the_verdict(tmp_path: Path) -> None:
    from test_search import make_search

    make_search(tmp_path, max_candidates=4).run()
    events = read_events(tmp_path / "events.jsonl")  # checked against the types on reading
    assert all(e.payload() is not None for e in events)
    gates: dict[str, list[GateDecided]] = {}
    verdicts = []
    for event in events:
        payload = event.payload()
        if isinstance(payload, GateDecided):
            gates.setdefault(payload.candidate, []).append(payload)
        elif isinstance(payload, Verdict):
            verdicts.append(payload)
    assert verdicts
    for verdict in verdicts:
        assert verdict.report is not None
        in_report = [(g["name"], g["status"], g["detail"]) for g in verdict.report["gates"]]
        assert in_report == [(g.name, g.status, g.detail) for g in gates[verdict.candidate]]
    # Every field of the typed verdict is on its line, as docs/events.md lists them.
    lines = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
    written = next(x["data"] for x in lines if x["type"] == "verdict")
    assert tuple(written) == EVENT_TYPES["verdict"]


def test_the_progress_lines_take_the_failed_gate_from_the_verdict() -> None:
    """The CLI's progress says which gate failed from the verdict's report, once, whether or
    not the gate events came before it."""
    import io

    from kernelopt_jupyter.session.progress import TextProgress

    report = report_of("c1", fail_at="correctness", detail="seed 1: max_abs_err 0.31")
    out = io.StringIO()
    progress = TextProgress(out)
    progress(Event("candidate", CandidateProposed(id="c1", source="x").to_dict(), t=1.0))
    for gate in report.gates:
        progress(Event("gate", GateDecided("c1", gate.name, gate.status, gate.detail).to_dict()))
    verdict = Verdict(candidate="c1", verdict=report.verdict, report=report.to_dict())
    progress(Event("verdict", verdict.to_dict(), t=2.0))
    lines = out.getvalue().splitlines()
    failed = [ln for ln in lines if "gate failed" in ln]
    assert failed == ["[    2.0s]   correctness gate failed: seed 1: max_abs_err 0.31"]
    assert lines[-1].startswith("[    2.0s] c1: fail (static pass, correctness fail")


def test_opening_a_session_whose_log_does_not_fit_says_which_line(tmp_path: Path) -> None:
    from kernelopt_jupyter.session import OptimizationSession, SessionError

    (tmp_path / "problem.py").write_text("import torch\n")
    lines = [
        Event("session_started", {"problem": "p.py", "kind": "module"}).to_json(),
        Event("budget", {"candidates": "three"}).to_json(),
    ]
    (tmp_path / "events.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(SessionError, match=r"events\.jsonl: line 2: .*'candidates'.* delete"):
        OptimizationSession.open(tmp_path)
