"""Text progress for front ends without widgets (a terminal IPython, ``--text``).

One line per event worth a line: agent steps, plans, candidates with their gate results and
verdict, pauses, errors and the end. Agent text deltas are not printed (too fine-grained); the
agent's summary is, when it finishes.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, TextIO

from kernelopt_jupyter.events import Event
from kernelopt_jupyter.session.state import SessionState, speedup_text
from kernelopt_jupyter.verify.report import GATE_FAIL
from kernelopt_jupyter.verify.report import GATE_NAMES as GATES


class TextProgress:
    """An event subscriber that prints short progress lines to ``stream``."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        self.state = SessionState()
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        """Subscriber entry point (runs on the search's thread)."""
        with self._lock:
            self.state.apply(event)
            self.state.take_changes()
            line = self.line(event)
            if line:
                print(line, file=self.stream, flush=True)

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
            return f"{t} KernelOPT: {s.problem} ({s.kind}) on {s.device}, agents {s.agents_option}"
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
        if event.type == "session_finished":
            best = d.get("best")
            return f"{t} finished ({d.get('status')}); best: {best or 'none'}"
        return None
