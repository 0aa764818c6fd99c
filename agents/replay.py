"""Replay: a recorded session's agent outputs played back through the same interfaces.

Each ``agent_finished`` event of a recording carries the agent's structured output. Replay
hands them back in order, role by role, so a lesson or a test runs without a key; the search
still sends every replayed candidate through the gates afresh. With a ``fallback`` policy the
recording is a prefix: once it is used up, the live policy continues (this is how an interrupted
search resumes).
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

from kernelopt_jupyter.agents.base import (
    AgentContext,
    AgentIO,
    Edit,
    Plan,
    Policy,
    PolicyError,
    ProfileReport,
    StepRecord,
    Summary,
    TuneProposal,
)
from kernelopt_jupyter.candidate import Candidate
from kernelopt_jupyter.events import Event, EventError, read_events


class RecordingExhausted(PolicyError):
    """The recording has no more outputs for this agent (and there is no fallback)."""


class ReplayPolicy:
    """Plays back recorded agent outputs; optionally continues with a live policy."""

    name = "replay"

    def __init__(self, events: list[Event], fallback: Policy | None = None) -> None:
        self.queues: dict[str, deque[dict[str, Any]]] = {}
        self.texts: dict[int, list[str]] = {}
        for event in _longest_run(events):
            if event.type == "agent_text":
                self.texts.setdefault(int(event.data.get("step", -1)), []).append(
                    str(event.data.get("delta", ""))
                )
            if event.type == "agent_finished" and "output" in event.data:
                step = int(event.data.get("step", -1))
                output = dict(event.data["output"] or {})
                output["_texts"] = self.texts.get(step, [])
                self.queues.setdefault(str(event.data["agent"]), deque()).append(output)
        self.fallback = fallback

    @classmethod
    def from_file(cls, path: str | Path, fallback: Policy | None = None) -> ReplayPolicy:
        """Load a recording (``events.jsonl``); raises EventError for a missing or bad file."""
        events = read_events(path)
        if not any(e.type == "agent_finished" for e in events):
            raise EventError(f"{path}: the recording holds no agent steps to replay")
        return cls(events, fallback)

    def _next(self, agent: str, io: AgentIO) -> dict[str, Any] | None:
        queue = self.queues.get(agent)
        if not queue:
            if self.fallback is None:
                raise RecordingExhausted(f"the recording has no more {agent} steps")
            return None
        output = queue.popleft()
        for text in output.get("_texts", []):
            io.text(text)
        return output

    def profile(self, ctx: AgentContext, io: AgentIO) -> ProfileReport:
        """Recorded Profiler report."""
        out = self._next("profiler", io)
        if out is None:
            assert self.fallback is not None
            return self.fallback.profile(ctx, io)
        return ProfileReport.from_dict(out)

    def plan(
        self, ctx: AgentContext, report: ProfileReport, parent: Candidate, n: int, io: AgentIO
    ) -> list[Plan]:
        """Recorded plans."""
        out = self._next("planner", io)
        if out is None:
            assert self.fallback is not None
            return self.fallback.plan(ctx, report, parent, n, io)
        return [Plan.from_dict(p) for p in out.get("plans", [])]

    def execute(
        self, ctx: AgentContext, plan: Plan, parent: Candidate, feedback: str | None, io: AgentIO
    ) -> Edit:
        """Recorded edit (its source is gated afresh by the search)."""
        out = self._next("executor", io)
        if out is None:
            assert self.fallback is not None
            return self.fallback.execute(ctx, plan, parent, feedback, io)
        return Edit.from_dict(out)

    def tune(self, ctx: AgentContext, candidate: Candidate, io: AgentIO) -> TuneProposal:
        """Recorded tune variants."""
        out = self._next("tuner", io)
        if out is None:
            assert self.fallback is not None
            return self.fallback.tune(ctx, candidate, io)
        return TuneProposal.from_dict(out)

    def summarize(self, ctx: AgentContext, steps: list[StepRecord], io: AgentIO) -> Summary:
        """Recorded explanations and experience."""
        out = self._next("summarizer", io)
        if out is None:
            assert self.fallback is not None
            return self.fallback.summarize(ctx, steps, io)
        return Summary.from_dict(out)


def _longest_run(events: list[Event]) -> list[Event]:
    """The events of the run with the most agent steps.

    A resumed session appends a new run (from its own ``session_started``) that re-plays the
    earlier steps before adding its own, so the longest run holds the whole sequence once.
    """
    runs: list[list[Event]] = [[]]
    for event in events:
        if event.type == "session_started" and runs[-1]:
            runs.append([])
        runs[-1].append(event)

    def steps(run: list[Event]) -> int:
        return sum(1 for e in run if e.type == "agent_finished")

    best = max(range(len(runs)), key=lambda i: (steps(runs[i]), i))
    return runs[best]
