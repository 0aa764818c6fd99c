"""Text progress for front ends without widgets (a terminal IPython, ``--text``).

One line per event worth a line: agent steps, plans, candidates with their gate results and
verdict, pauses, errors and the end. Agent text deltas are not printed (too fine-grained); the
agent's summary is, when it finishes.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

from kernelopt_jupyter.events import Event
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
            self._track_phase(event)
            line = self.line(event)
            if line:
                print(line, file=self.stream, flush=True)
                self._last_line = time.monotonic()
        if self.heartbeat_s and self._beat is None and not self._done.is_set():
            self._beat = threading.Thread(
                target=self._heartbeat, name="kernelopt-beat", daemon=True
            )
            self._beat.start()

    def _track_phase(self, event: Event) -> None:
        d = event.data
        now = time.monotonic()
        self._t_offset = event.t - now
        phase = {
            "session_started": "analysing (dispatch map, harvest)",
            "candidate": f"gating {d.get('id')}",
            "agent_started": f"{d.get('agent')} step {d.get('step')}",
        }.get(event.type)
        if event.type == "profile":
            self._analysed = True
            self._peers_pending = bool(d.get("baselines_deferred"))
        elif event.type == "baseline":
            self._peers_pending = False
        elif event.type == "verdict" and self._peers_pending:
            # the peers are timed after the first verdict (analysis.pipeline.DeferredBaselines)
            phase = "timing the baselines (eager, torch.compile default, max-autotune, CUDA graphs)"
        elif event.type == "verdict" and not self._analysed:
            # the quick start's verdict came while the analysis still runs
            phase = "analysing (dispatch map, harvest)"
        if event.type == "session_finished":
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

    def _gist(self, d: dict[str, Any]) -> str:
        """One short phrase for a finished agent step: its own last words, else its summary."""
        agent = self.state.agents.get(str(d.get("agent")))
        said = agent.full_text.strip().splitlines() if agent is not None else []
        said = [line for line in said if line.strip() and not line.startswith(("──", "[tool]"))]
        text = said[-1] if said else str(d.get("summary") or "done").splitlines()[0]
        return text if len(text) <= 110 else text[:107] + "..."

    def line(self, event: Event) -> str | None:
        """The progress line for ``event`` (None when it gets no line)."""
        d: dict[str, Any] = event.data
        s = self.state
        t = f"[{event.t:7.1f}s]"
        if event.type == "session_started":
            mode = f", mode {d['mode']}" if d.get("mode") else ""
            head = f"{t} KernelOPT: {s.problem} ({s.kind}) on {s.device}, agents {s.agents_option}"
            notice = f"\n{t} {d['notice']}" if d.get("notice") else ""
            return head + mode + notice
        if event.type == "baseline":
            if d.get("measured") and d.get("ms"):
                return f"{t} baseline {d.get('name')}: {d.get('ms'):.4f} ms"
            return f"{t} baseline {d.get('name')}: not measured ({d.get('detail', '')})"
        if event.type == "gate" and d.get("status") == GATE_FAIL:
            return f"{t}   {d.get('name')} gate failed: {str(d.get('detail'))[:160]}"
        if event.type == "decision":
            return f"{t} decision: " + ", ".join(f"{k}={v}" for k, v in d.items())[:200]
        if event.type == "agent_finished":
            return f"{t} {d.get('agent')} step {d.get('step')}: {self._gist(d)}"
        if event.type == "plan":
            return f"{t} plan {d.get('plan_id')}: {d.get('title')}"
        if event.type == "candidate":
            return f"{t} candidate {d.get('id')} from {d.get('agent')} (parent {d.get('parent') or 'ref'})"
        if event.type == "verdict":
            cand = s.candidates.get(str(d.get("candidate")))
            if cand is None:
                return None
            gates = ", ".join(f"{g} {cand.gates[g].status}" for g in GATES)
            speed = speedup_text(cand)
            return f"{t} {cand.id}: {cand.verdict} ({gates}){' ' + speed if speed else ''}"
        if event.type == "step_paused":
            return (
                f"{t} paused after {d.get('agent')} step {d.get('step')}: "
                "use the session's step controls (approve / reject / edit)"
            )
        if event.type == "retry":
            return (
                f"{t} {d.get('agent')}: {d.get('reason')}; retry {d.get('attempt')}/"
                f"{d.get('max_attempts')} in {d.get('wait_s')} s"
            )
        if event.type == "agent_failed":
            return f"{t} {d.get('agent')} step {d.get('step')} failed: {d.get('error')}"
        if event.type == "error":
            return f"{t} error in {d.get('where')}: {d.get('message')}"
        if event.type == "degraded":
            return f"{t} WARNING: {degraded_text(d)}"
        if event.type == "session_finished":
            best = d.get("best")
            return f"{t} finished ({d.get('status')}); best: {best or 'none'}"
        return None
