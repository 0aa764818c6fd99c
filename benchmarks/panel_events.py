"""How fast the notebook panel takes in events, and how soon it shows something.

Runs the real panel (ipywidgets, no browser: widget messages go to a counting stand-in for the
comm) against a real in-memory EventLog, with the synthetic session of
``panel_sample`` scaled up, and measures:

* ``first_render_s``: from creating the panel to the first event being drawn (the panel shows
  its header immediately; this is when the session's first event appears);
* ``burst``: N events emitted as fast as one thread can: events per second handled (until the
  last one is drawn), refresh batches, comm messages and bytes sent per 1000 events (widget
  creation included: each candidate row is a few widgets; the charts and their plotly.js
  bundle, a few MB sent once, are built before timing starts and counted in ``first_render``);
* ``paced``: a steady stream at a fixed rate: the worst lag between emit and draw.

Results go to ``benchmarks/results/panel_events.json``. Timings are machine-dependent: they
are reported, never asserted. Usage: ``python benchmarks/panel_events.py [--events N]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import threading
import time
from pathlib import Path
from typing import Any

from comm.base_comm import BaseComm

from kernelopt_jupyter.events import EventLog
from kernelopt_jupyter.notebook.panel.view import SessionPanel

# The synthetic session lives with the tests (it is test data, not part of the package).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from panel_sample import sample_events

RESULTS = Path(__file__).parent / "results" / "panel_events.json"


class WireCounter:
    """Counts the comm messages (widget opens, updates, custom) and bytes sent to the browser."""

    def __init__(self) -> None:
        self.messages = 0
        self.bytes = 0
        self._lock = threading.Lock()
        self._open = BaseComm.open
        self._send = BaseComm.send

    def _count(self, data: Any) -> None:
        size = len(json.dumps(data, default=str))
        with self._lock:
            self.messages += 1
            self.bytes += size

    def __enter__(self) -> WireCounter:
        counter = self

        def open_(comm: Any, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
            counter._count(data)
            counter._open(comm, data, metadata, buffers)

        def send(comm: Any, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
            counter._count(data)
            counter._send(comm, data, metadata, buffers)

        BaseComm.open = open_  # type: ignore[method-assign,assignment]
        BaseComm.send = send  # type: ignore[method-assign,assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        BaseComm.open = self._open  # type: ignore[method-assign,assignment]
        BaseComm.send = self._send  # type: ignore[method-assign,assignment]


def events_for(total: int) -> list[tuple[str, dict[str, Any]]]:
    """About ``total`` events: mostly agent text deltas, as a streaming LLM session is."""
    candidates = max(4, total // 220)
    return list(sample_events(candidates=candidates, text_deltas=100))[:total]


def wait_until(predicate: Any, timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise TimeoutError("the panel did not catch up")
        time.sleep(0.002)


def first_render() -> dict[str, float]:
    """Seconds from creating the panel to the first event being drawn."""
    t0 = time.monotonic()
    with WireCounter() as wire:
        panel = SessionPanel()
        built = time.monotonic() - t0
        log = EventLog()
        panel.attach(log)
        kind, data = next(iter(sample_events()))
        log.emit(kind, **data)
        wait_until(lambda: panel.rendered >= 1)
        total = time.monotonic() - t0
        wait_until(lambda: bool(panel.charts.figs))  # charts are built after the first draw
        charts = time.monotonic() - t0
    panel.close()
    return {
        "panel_built_s": built,
        "first_event_drawn_s": total,
        "charts_ready_s": charts,
        "initial_kbytes_incl_plotly_js": wire.bytes / 1000,
    }


def _ready_panel(first: tuple[str, dict[str, Any]]) -> tuple[SessionPanel, EventLog]:
    """A panel attached to a log whose first event is drawn and whose charts exist."""
    panel = SessionPanel()
    log = EventLog()
    panel.attach(log)
    log.emit(first[0], **first[1])
    wait_until(lambda: panel.rendered >= 1 and bool(panel.charts.figs))
    return panel, log


def burst(total: int) -> dict[str, float]:
    """Emit ``total`` events as fast as possible; time until the panel has drawn them all.

    Measured after the panel and its charts exist (their one-off cost is ``first_render``).
    """
    evs = events_for(total)
    panel, log = _ready_panel(evs[0])
    evs = evs[1:]
    batches = {"n": 0}
    original = panel._render

    def counted(changes: Any) -> None:
        batches["n"] += 1
        original(changes)

    panel._render = counted  # type: ignore[method-assign]
    with WireCounter() as wire:
        t0 = time.monotonic()
        for kind, data in evs:
            log.emit(kind, **data)
        emitted = time.monotonic() - t0
        wait_until(lambda: panel.rendered >= len(evs) + 1)
        drawn = time.monotonic() - t0
    panel.close()
    n = len(evs)
    return {
        "events": n,
        "candidates": len(panel.state.candidates),
        "emit_s": emitted,
        "drawn_s": drawn,
        "events_per_s": n / drawn,
        "refresh_batches": batches["n"],
        "comm_messages_per_1000_events": 1000 * wire.messages / n,
        "comm_kbytes_per_1000_events": wire.bytes / n,
    }


def paced(rate: float, seconds: float) -> dict[str, float]:
    """A steady ``rate`` events/s for ``seconds``: the worst emit-to-draw lag."""
    total = int(rate * seconds)
    evs = events_for(total)
    panel, log = _ready_panel(evs[0])
    evs = evs[1:]
    emitted_at: list[float] = []
    lags: list[float] = []
    original = panel._render

    def timed(changes: Any) -> None:
        original(changes)
        # The oldest event of this batch waited longest (event 0 was drawn before timing).
        oldest = panel.rendered - 1
        if 0 <= oldest < len(emitted_at):
            lags.append(time.monotonic() - emitted_at[oldest])

    panel._render = timed  # type: ignore[method-assign,assignment]
    t0 = time.monotonic()
    for i, (kind, data) in enumerate(evs):
        target = t0 + i / rate
        delay = target - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        emitted_at.append(time.monotonic())
        log.emit(kind, **data)
    wait_until(lambda: panel.rendered >= len(evs) + 1)
    panel.close()
    return {
        "rate": rate,
        "events": len(evs),
        "max_lag_s": max(lags) if lags else 0.0,
        "mean_lag_s": sum(lags) / len(lags) if lags else 0.0,
    }


def main() -> None:
    """Run the three measurements and save them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--rate", type=float, default=500.0)
    parser.add_argument("--seconds", type=float, default=4.0)
    args = parser.parse_args()
    results = {
        "machine": {"python": platform.python_version(), "cpus": __import__("os").cpu_count()},
        "first_render": first_render(),
        "burst": burst(args.events),
        "paced": paced(args.rate, args.seconds),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
