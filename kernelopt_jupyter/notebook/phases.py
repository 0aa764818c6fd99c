"""What the session is doing now, phase by phase, with elapsed time and a progress bar.

The analysis before the search (baselines, then Inductor's profile and harvest) takes minutes on
the CPU and emits nothing until each part ends. The phases are read from events that already
exist: ``session_started`` opens the baselines, the first ``baseline`` closes them and opens the
analysis, the reference's ``profile`` closes it and opens the search, whose progress is the
budget's candidate count; ``decision kind=best`` opens the winner's profiling.

Without a GPU nothing is timed and the baselines are said "not measured" after the analysis has
run: there the first phase is the analysis, named as such, and no baselines phase is shown (it
was labelled "Measuring the baselines" for the analysis's whole time, then showed 0 s for it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from kernelopt_jupyter.event_payloads import (
    Baseline,
    Budget,
    Decision,
    Profile,
    SessionFinished,
    SessionStarted,
)
from kernelopt_jupyter.events import Event, EventError

LABELS = {
    "baselines": "Measuring the baselines (eager, torch.compile)",
    "analysis": "Profiling the reference and harvesting Inductor's kernels",
    "search": "Agents' search: candidates through the four gates",
    "winner": "Profiling the winner",
}
#: A Triton or Helion problem is profiled as it is: nothing is harvested.
KERNEL_ANALYSIS = "Profiling the reference kernel"
#: Said of the analysis where nothing is timed.
UNTIMED = " (no GPU: nothing is timed)"


@dataclass
class Phase:
    """One phase: when it started and ended (session seconds) and how far it is."""

    name: str
    label: str
    start: float
    end: float | None = None
    progress: float | None = None  # 0..1 where known (the search's candidate budget)
    detail: str = ""


class PhaseTracker:
    """Folds events into the list of phases; :meth:`apply` says whether anything changed."""

    def __init__(self) -> None:
        self.phases: list[Phase] = []
        self.finished: str | None = None  # how the session ended, once it has
        self.kind = "module"
        #: Whether the session times anything (a GPU): only then are baselines measured.
        self.timed = True
        #: The budget's clock: session time of the start, of the end, and ``--time-limit``.
        self.started = 0.0
        self.ended: float | None = None
        self.limit: float | None = None

    def _open(self, name: str, t: float) -> None:
        if self.phases and self.phases[-1].end is None:
            self.phases[-1].end = t
            if self.phases[-1].name == "search":
                self.phases[-1].progress = 1.0
        label = KERNEL_ANALYSIS if name == "analysis" and self.kind != "module" else LABELS[name]
        if name == "analysis" and not self.timed:
            label += UNTIMED
        self.phases.append(Phase(name, label, t))

    def current(self) -> Phase | None:
        """The running phase, if any."""
        return self.phases[-1] if self.phases and self.phases[-1].end is None else None

    def apply(self, event: Event) -> bool:
        """Fold one event in; True when the phases changed."""
        names = [p.name for p in self.phases]
        try:
            d, t = event.payload(), event.t
        except EventError:
            return False  # data that does not fit its type moves no phase
        if isinstance(d, SessionStarted):
            self.phases, self.finished = [], None
            self.kind = d.kind or "module"
            self.timed = (d.device or "cuda") == "cuda"
            self.started, self.ended = t, None
            limit = d.options.get("max_seconds")
            self.limit = float(limit) if isinstance(limit, int | float) and limit > 0 else None
            self._open("baselines" if self.timed else "analysis", t)
        elif isinstance(d, Baseline) and names[-1:] == ["baselines"]:
            self._open("analysis", t)
        elif isinstance(d, Profile) and not d.candidate and "search" not in names:
            if names[-1:] == ["baselines"]:  # no baseline event (a resumed log): skip ahead
                self._open("analysis", t)
            self._open("search", t)
        elif isinstance(d, Budget) and names[-1:] == ["search"]:
            done, cap = d.candidates, d.max_candidates
            phase = self.phases[-1]
            if done is not None and cap:
                phase.progress = min(1.0, done / cap)
                phase.detail = f"{done}/{cap} candidates"
        elif isinstance(d, Decision) and d.kind == "best" and names[-1:] == ["search"]:
            self._open("winner", t)
        elif isinstance(d, SessionFinished):
            current = self.current()
            if current is not None:
                current.end = t
            self.finished = d.status or "finished"
            self.ended = t
        else:
            return False
        return True

    def clock_text(self, now: float | None = None) -> str:
        """'Time 1 min 05 s of 3 min 00 s (--time-limit; the analysis counts)' at session time
        ``now`` (the end, once finished); the browser draws the same line as it ticks."""
        end = self.ended if self.ended is not None else now
        took = duration_text((end or self.started) - self.started)
        if self.limit:
            return f"Time {took} of {duration_text(self.limit)} (--time-limit; the analysis counts)"
        return f"Time {took} (no --time-limit)"

    def to_data(self) -> list[dict[str, Any]]:
        """Plain data for the browser view."""
        return [asdict(p) for p in self.phases]


def duration_text(seconds: float) -> str:
    """'42 s', '3 min 05 s'; 'under 1 s' where '0 s' would read as a phase that never ran."""
    seconds = max(0.0, seconds)
    if seconds < 0.5:
        return "under 1 s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
