"""The run's one ``Deadline``: seconds left, reached and capped, all on one monotonic clock."""

from __future__ import annotations

import time

import pytest

from kernelopt_jupyter.deadline import Deadline


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    return now


def test_a_limit_counts_down_from_the_start_and_is_reached_at_its_end(clock: list[float]) -> None:
    deadline = Deadline.start(60.0)
    assert (deadline.started, deadline.at, deadline.left()) == (1000.0, 1060.0, 60.0)
    clock[0] += 45.0
    assert (deadline.elapsed(), deadline.left(), deadline.reached()) == (45.0, 15.0, False)
    assert deadline.cap(300.0) == 15.0 and deadline.cap(10.0) == 10.0
    clock[0] += 20.0
    assert (deadline.left(), deadline.reached(), deadline.cap(300.0)) == (0.0, True, 0.0)


@pytest.mark.parametrize("limit", [None, 0, 0.0])
def test_no_limit_never_ends_but_its_clock_still_counts(
    clock: list[float], limit: float | None
) -> None:
    deadline = Deadline.start(limit)
    clock[0] += 1e6
    assert not deadline.limited and deadline.at is None and deadline.left() is None
    assert not deadline.reached() and deadline.cap(30.0) == 30.0
    assert deadline.elapsed() == 1e6


def test_a_run_that_began_earlier_has_less_left(clock: list[float]) -> None:
    """The session starts the clock before the analysis; the search reads the same value."""
    deadline = Deadline(clock[0] - 50.0, 60.0)
    assert deadline.left() == 10.0 and deadline.elapsed() == 50.0
