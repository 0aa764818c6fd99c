"""Text progress for front ends without widgets (a terminal IPython, ``--text``).

One line per event worth a line: agent steps, plans, candidates with their gate results and
verdict, pauses, errors and the end. Agent text deltas are not printed (too fine-grained); the
agent's summary is, when it finishes.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

from kernelopt_jupyter.event_payloads import (
    AgentFailed,
    AgentFinished,
    AgentStarted,
    Baseline,
    CandidateProposed,
    Decision,
    Degraded,
    ErrorRaised,
    Payload,
    PlanProposed,
    Profile,
    Retry,
    SessionFinished,
    SessionStarted,
    StepPaused,
    Verdict,
)
from kernelopt_jupyter.events import Event, EventError
from kernelopt_jupyter.session.state import SessionState, degraded_text, speedup_text
from kernelopt_jupyter.verify.report import GATE_FAIL
from kernelopt_jupyter.verify.report import GATE_NAMES as GATES


class TextProgress:
    """An event subscriber that prints short progress lines to ``stream``."""

    def __init__(self, stream: TextIO | None = None, *, heartbeat_s: float | None = None) -> None:
        self.stream = stream or sys.stdout
        self.state = SessionState()
        self._lock = threading.Lock()
        # A long step (an analysis, a gate) otherwise leaves the terminal silent for minutes:
        # with ``heartbeat_s`` a line names the phase and how long it has taken so far.
        self.heartbeat_s = heartbeat_s
        self._phase = ""
        self._phase_since = time.monotonic()
        self._peers_pending = False  # a GPU search times its baselines after the first verdict
        self._analysed = False  # the analysis's profile event seen (a quick start comes before)
        self._last_line = time.monotonic()
        self._t_offset = 0.0  # session time of the last event, minus the local clock then
        self._done = threading.Event()
        self._beat: threading.Thread | None = None

    def __call__(self, event: Event) -> None:
        """Subscriber entry point (runs on the search's thread)."""
        with self._lock:
            self.state.apply(event)
            self.state.take_changes()
            payload = _payload(event)
            self._track_phase(event, payload)
            line = self._line(event, payload)
            if line:
                print(line, file=self.stream, flush=True)
                self._last_line = time.monotonic()
        if self.heartbeat_s and self._beat is None and not self._done.is_set():
            self._beat = threading.Thread(
                target=self._heartbeat, name="kernelopt-beat", daemon=True
            )
            self._beat.start()

    def _track_phase(self, event: Event, d: Payload | None) -> None:
        now = time.monotonic()
        self._t_offset = event.t - now
        phase = None
        if isinstance(d, SessionStarted):
            phase = "analysing (dispatch map, harvest)"
        elif isinstance(d, CandidateProposed):
            phase = f"gating {d.id}"
        elif isinstance(d, AgentStarted):
            phase = f"{d.agent} step {d.step}"
        elif isinstance(d, Profile):
            self._analysed = True
            self._peers_pending = d.baselines_deferred
        elif isinstance(d, Baseline):
            self._peers_pending = False
        elif isinstance(d, Verdict) and self._peers_pending:
            # the peers are timed after the first verdict (analysis.pipeline.DeferredBaselines)
            phase = "timing the baselines (eager, torch.compile default, max-autotune, CUDA graphs)"
        elif isinstance(d, Verdict) and not self._analysed:
            # the quick start's verdict came while the analysis still runs
            phase = "analysing (dispatch map, harvest)"
        if isinstance(d, SessionFinished):
            self._done.set()
        elif phase is not None and phase != self._phase:
            self._phase, self._phase_since = phase, now

    def _heartbeat(self) -> None:
        assert self.heartbeat_s is not None
        while not self._done.wait(self.heartbeat_s / 4):
            with self._lock:
                now = time.monotonic()
                if not self._phase or now - self._last_line < self.heartbeat_s:
                    continue
                t = f"[{now + self._t_offset:7.1f}s]"
                print(
                    f"{t} ... still {self._phase} ({now - self._phase_since:.0f} s so far)",
                    file=self.stream,
                    flush=True,
                )
                self._last_line = now

    def close(self) -> None:
        """Stop the heartbeat (a finished session stops it by itself)."""
        self._done.set()

    def _gist(self, d: AgentFinished) -> str:
        """One short phrase for a finished agent step: its own last words, else its summary."""
        agent = self.state.agents.get(d.agent)
        said = agent.full_text.strip().splitlines() if agent is not None else []
        said = [line for line in said if line.strip() and not line.startswith(("──", "[tool]"))]
        text = said[-1] if said else (d.summary or "done").splitlines()[0]
        return text if len(text) <= 110 else text[:107] + "..."

    def line(self, event: Event) -> str | None:
        """The progress line for ``event`` (None when it gets no line)."""
        return self._line(event, _payload(event))

    def _line(self, event: Event, d: Payload | None) -> str | None:
        s = self.state
        t = f"[{event.t:7.1f}s]"
        if isinstance(d, SessionStarted):
            mode = f", mode {d.mode}" if d.mode else ""
            head = f"{t} KernelOPT: {s.problem} ({s.kind}) on {s.device}, agents {s.agents_option}"
            notice = f"\n{t} {d.notice}" if d.notice else ""
            return head + mode + notice
        if isinstance(d, Baseline):
            if d.measured and d.ms:
                return f"{t} baseline {d.name}: {d.ms:.4f} ms"
            return f"{t} baseline {d.name}: not measured ({d.detail})"
        if isinstance(d, Decision):
            return f"{t} decision: " + ", ".join(f"{k}={v}" for k, v in event.data.items())[:200]
        if isinstance(d, AgentFinished):
            return f"{t} {d.agent} step {d.step}: {self._gist(d)}"
        if isinstance(d, PlanProposed):
            return f"{t} plan {d.plan_id}: {d.title}"
        if isinstance(d, CandidateProposed):
            return f"{t} candidate {d.id} from {d.agent} (parent {d.parent or 'ref'})"
        if isinstance(d, Verdict):
            return self._verdict_lines(t, d)
        if isinstance(d, StepPaused):
            return (
                f"{t} paused after {d.agent} step {d.step}: "
                "use the session's step controls (approve / reject / edit)"
            )
        if isinstance(d, Retry):
            return f"{t} {d.agent}: {d.reason}; retry {d.attempt}/{d.max_attempts} in {d.wait_s} s"
        if isinstance(d, AgentFailed):
            return f"{t} {d.agent} step {d.step} failed: {d.error}"
        if isinstance(d, ErrorRaised):
            return f"{t} error in {d.where}: {d.message}"
        if isinstance(d, Degraded):
            return f"{t} WARNING: {degraded_text(d)}"
        if isinstance(d, SessionFinished):
            return f"{t} finished ({d.status}); best: {d.best or 'none'}"
        return None

    def _verdict_lines(self, t: str, d: Verdict) -> str | None:
        """The failed gate (from the verdict's report) and the candidate's verdict line."""
        cand = self.state.candidates.get(d.candidate)
        if cand is None:
            return None
        failed = [
            f"{t}   {g.name} gate failed: {g.detail[:160]}"
            for g in cand.gates.values()
            if g.status == GATE_FAIL
        ]
        gates = ", ".join(f"{g} {cand.gates[g].status}" for g in GATES)
        speed = speedup_text(cand)
        verdict = f"{t} {cand.id}: {cand.verdict} ({gates}){' ' + speed if speed else ''}"
        return "\n".join([*failed, verdict])


def _payload(event: Event) -> Payload | None:
    """The event's typed data; None for an unknown type or data that does not fit it (the
    state notes that in its errors)."""
    try:
        return event.payload()
    except EventError:
        return None
