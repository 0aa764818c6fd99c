"""What the panel knows: the event stream folded into plain data, plus what changed.

Pure Python (no widget import), so the panel, the static HTML report and the text progress
display share one reading of the events, and tests can check it without a front end. Every
event is applied in order by :meth:`SessionState.apply`; the view asks :meth:`SessionState.take_changes`
once per refresh tick and redraws only what the :class:`Changes` name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kernelopt_jupyter.event_payloads import (
    AgentFailed,
    AgentFinished,
    AgentStarted,
    AgentText,
    AgentThinking,
    Baseline,
    Budget,
    CandidateProposed,
    Decision,
    Degraded,
    ErrorRaised,
    Experience,
    Explanation,
    GateDecided,
    PlanProposed,
    Profile,
    Retry,
    SessionFinished,
    SessionStarted,
    StepPaused,
    StepResumed,
    ToolCall,
    Verdict,
)
from kernelopt_jupyter.events import Event, EventError
from kernelopt_jupyter.verify.report import (
    GATE_NAMES,
    GATE_PASS,
    GATE_PENDING,
    GATE_SKIPPED,
    VerifyReport,
)

#: The four gates in contract order (the badges are drawn in this order). Their one home is
#: verify/report.py; this name stays for the front ends that import it from here.
GATES = GATE_NAMES


@dataclass
class GateView:
    """One gate's latest result for one candidate."""

    name: str
    status: str = GATE_PENDING  # one of verify.report.VIEW_GATE_STATUSES
    detail: str = ""
    metrics: dict[str, Any] = field(default_factory=dict)


@dataclass
class CandidateView:
    """A row of the candidates table."""

    id: str
    parent: str | None
    agent: str
    plan_id: str | None
    source: str
    diff: str = ""
    dispatch_only: bool = False
    note: str = ""
    t: float = 0.0
    gates: dict[str, GateView] = field(default_factory=lambda: {g: GateView(g) for g in GATES})
    verdict: str | None = None
    ms: float | None = None
    speedup: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    decision: str | None = None
    explanation: str = ""
    #: The ``plan`` event that made it, bound when both have been seen: a later plan event
    #: reusing the id (logs written before plan ids were unique per session) leaves it be.
    plan: PlanProposed | None = None


@dataclass
class AgentView:
    """One agent's stream: its reasoning text so far, where it is and what it used."""

    agent: str
    step: int | None = None
    iteration: int | None = None
    running: bool = False
    text: list[str] = field(default_factory=list)
    tool_calls: int = 0
    summary: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    #: The model's summarized thinking (Claude), kept apart from its answer text.
    thinking: list[str] = field(default_factory=list)
    #: The latest ``retry`` event of the step in flight (None once the step goes on).
    retry: Retry | None = None

    @property
    def full_text(self) -> str:
        """Everything the agent has said, in order."""
        return "".join(self.text)


@dataclass
class Changes:
    """What the events applied since the last refresh touched."""

    header: bool = False
    text: dict[str, list[str]] = field(default_factory=dict)  # agent -> new text pieces
    thinking: dict[str, list[str]] = field(default_factory=dict)  # agent -> new thinking
    agents: set[str] = field(default_factory=set)  # agents whose status line changed
    new_candidates: list[str] = field(default_factory=list)
    candidates: set[str] = field(default_factory=set)  # rows to update (gates, verdict...)
    profile: bool = False
    progress: bool = False
    step: bool = False
    errors: list[str] = field(default_factory=list)
    finished: bool = False

    def any(self) -> bool:
        """True when something needs redrawing."""
        return bool(
            self.header
            or self.text
            or self.thinking
            or self.agents
            or self.new_candidates
            or self.candidates
            or self.profile
            or self.progress
            or self.step
            or self.errors
            or self.finished
        )


def degraded_text(entry: Degraded) -> str:
    """One line for a failed analysis phase (a ``degraded`` event), for the console and the
    panel's warnings."""
    return entry.text()


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass
class SessionState:
    """The events of one session so far, folded for display."""

    problem: str = ""
    kind: str = ""
    device: str = ""
    agents_option: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    status: str = "starting"  # starting | running | paused | finished
    baselines: dict[str, Baseline] = field(default_factory=dict)
    profiles: list[Profile] = field(default_factory=list)
    agents: dict[str, AgentView] = field(default_factory=dict)
    current_agent: str | None = None
    plans: dict[str, PlanProposed] = field(default_factory=dict)
    candidates: dict[str, CandidateView] = field(default_factory=dict)
    progress: list[tuple[float, float]] = field(default_factory=list)  # (t, best speedup)
    best: str | None = None
    best_speedup: float | None = None
    budget: Budget = field(default_factory=Budget)
    paused: StepPaused | None = None
    last_resume: StepResumed | None = None
    errors: list[str] = field(default_factory=list)
    #: The analysis's failed phases (``degraded`` events): phase and cause; also in ``errors``.
    degraded: list[Degraded] = field(default_factory=list)
    experience: list[dict[str, Any]] = field(default_factory=list)
    finished: SessionFinished | None = None
    resumed: bool = False
    last_t: float = 0.0
    started_t: float = 0.0  # session time of the latest session_started: the budget's clock
    events_seen: int = 0
    _changes: Changes = field(default_factory=Changes)

    # ------------------------------------------------------------------ applying events

    def apply(self, event: Event) -> None:
        """Fold one event in; unknown types are ignored (a newer engine may add some), and an
        event whose data does not fit its type is noted in ``errors`` and skipped."""
        self.events_seen += 1
        self.last_t = max(self.last_t, event.t)
        handler = getattr(self, f"_on_{event.type}", None)
        if handler is None:
            return
        try:
            payload = event.payload()
        except EventError as exc:
            message = f"event {event.seq} not shown: {exc}"
            self.errors.append(message)
            self._changes.errors.append(message)
            return
        handler(payload, event.t)

    def apply_all(self, events: list[Event]) -> None:
        """Fold several events in order."""
        for event in events:
            self.apply(event)

    def take_changes(self) -> Changes:
        """What changed since the previous call (and start collecting afresh)."""
        changes, self._changes = self._changes, Changes()
        return changes

    def _on_session_started(self, d: SessionStarted, t: float) -> None:
        self.problem = d.title
        self.resumed = d.resumed
        self.kind = d.kind
        self.device = d.device
        self.agents_option = d.agents
        self.options = dict(d.options)
        self.started_t = t
        self.status = "running"
        self._changes.header = True

    def _on_baseline(self, d: Baseline, t: float) -> None:
        self.baselines[d.name] = d
        self._changes.header = True

    def _on_profile(self, d: Profile, t: float) -> None:
        self.profiles.append(d)
        self._changes.profile = True

    def _agent(self, name: str) -> AgentView:
        view = self.agents.get(name)
        if view is None:
            view = self.agents[name] = AgentView(name)
        return view

    def _on_agent_started(self, d: AgentStarted, t: float) -> None:
        view = self._agent(d.agent)
        view.step = d.step
        view.iteration = d.iteration
        view.running = True
        self.current_agent = view.agent
        # A visible boundary between steps: an agent's stream runs across the whole search.
        where = f"step {view.step}" + (
            f", iteration {view.iteration}" if view.iteration is not None else ""
        )
        line = ("\n" if view.text else "") + f"── {where} ──\n"
        view.text.append(line)
        self._changes.text.setdefault(view.agent, []).append(line)
        self._changes.agents.add(view.agent)
        self._changes.header = True

    def _on_agent_text(self, d: AgentText, t: float) -> None:
        view = self._agent(d.agent)
        if not d.delta:
            return
        if view.step is None and d.step is not None:
            view.step = d.step
        view.text.append(d.delta)
        self._changes.text.setdefault(view.agent, []).append(d.delta)
        if view.retry is not None:  # the request got through
            view.retry = None
            self._changes.agents.add(view.agent)

    def _on_agent_thinking(self, d: AgentThinking, t: float) -> None:
        view = self._agent(d.agent)
        if d.delta:
            view.thinking.append(d.delta)
            self._changes.thinking.setdefault(view.agent, []).append(d.delta)

    def _on_retry(self, d: Retry, t: float) -> None:
        view = self._agent(d.agent)
        view.retry = d
        self._changes.agents.add(view.agent)

    def _on_tool_call(self, d: ToolCall, t: float) -> None:
        view = self._agent(d.agent)
        view.tool_calls += 1
        line = f"\n[tool] {d.tool}\n"
        view.text.append(line)
        self._changes.text.setdefault(view.agent, []).append(line)
        self._changes.agents.add(view.agent)

    def _on_agent_failed(self, d: AgentFailed, t: float) -> None:
        self._step_ended(d.agent, f"failed: {d.error or 'no answer'}", d.usage)

    def _on_agent_finished(self, d: AgentFinished, t: float) -> None:
        self._step_ended(d.agent, d.summary, d.usage)

    def _step_ended(self, agent: str, summary: str, usage: dict[str, float]) -> None:
        view = self._agent(agent)
        view.running = False
        view.retry = None
        view.summary = summary
        for key, value in usage.items():
            if isinstance(value, int | float):
                view.usage[key] = view.usage.get(key, 0) + value
        tail = "\n" if view.text and not view.text[-1].endswith("\n") else ""
        if tail:
            view.text.append(tail)
            self._changes.text.setdefault(view.agent, []).append(tail)
        self._changes.agents.add(view.agent)

    def _on_plan(self, d: PlanProposed, t: float) -> None:
        self.plans[d.plan_id] = d
        for cand in self.candidates.values():
            # Only a candidate seen before its plan takes it; one already bound keeps its own.
            if cand.plan_id == d.plan_id and cand.plan is None:
                cand.plan = d
                self._changes.candidates.add(cand.id)

    def _on_candidate(self, d: CandidateProposed, t: float) -> None:
        existing = self.candidates.get(d.id)
        view = CandidateView(
            id=d.id,
            parent=d.parent,
            agent=d.agent,
            plan_id=d.plan_id,
            source=d.source,
            diff=d.diff,
            dispatch_only=d.dispatch_only,
            note=d.note,
            t=t,
            plan=self._plan_of(d),
        )
        self.candidates[d.id] = view
        if existing is None:
            self._changes.new_candidates.append(d.id)
        else:
            self._changes.candidates.add(d.id)

    def _plan_of(self, d: CandidateProposed) -> PlanProposed | None:
        """The plan that made the candidate of event ``d``: the latest plan event with its id,
        or, for a Tuner's variant (which carries its parent's plan id), the parent's own."""
        if d.plan_id is None:
            return None
        parent = self.candidates.get(str(d.parent))
        if parent is not None and parent.plan_id == d.plan_id and parent.plan is not None:
            return parent.plan
        return self.plans.get(d.plan_id)

    def _on_gate(self, d: GateDecided, t: float) -> None:
        # The verdict that follows carries the same gates in its report (the one it decides
        # by); these give a live display the badges of a log written before reports did.
        cand = self.candidates.get(d.candidate)
        if cand is None:
            return
        cand.gates[d.name] = GateView(d.name, d.status or GATE_PENDING, d.detail, dict(d.metrics))
        self._changes.candidates.add(cand.id)

    def _on_verdict(self, d: Verdict, t: float) -> None:
        cand = self.candidates.get(d.candidate)
        if cand is None:
            return
        if d.report is not None:
            for gate in VerifyReport.from_dict(d.report).gates:
                cand.gates[gate.name] = GateView(gate.name, gate.status, gate.detail, gate.metrics)
        cand.verdict = d.verdict
        cand.ms, cand.speedup, cand.ci_low, cand.ci_high = d.ms, d.speedup, d.ci_low, d.ci_high
        if cand.verdict == GATE_PASS and cand.speedup is not None:
            if self.best_speedup is None or cand.speedup > self.best_speedup:
                self.best_speedup = cand.speedup
                self._set_best(cand.id)
            self.progress.append((t, self.best_speedup))
            self._changes.progress = True
        elif cand.verdict == GATE_PASS and self.best is None:
            # No timing (CPU): the first verified candidate is the best known so far.
            self._set_best(cand.id)
        self._changes.candidates.add(cand.id)

    def _on_decision(self, d: Decision, t: float) -> None:
        cand = self.candidates.get(str(d.candidate))
        if cand is None or d.kind in ("duplicate", "screened"):
            # A duplicate names the earlier candidate it repeats, a screen the parent whose
            # variants were timed together: that row does not change.
            return
        # "cancelled": the time limit cut this candidate's gates, or left too little for them
        # to begin; it stays undecided.
        cand.decision = d.kind
        if cand.decision == "best":
            self._set_best(cand.id)
        self._changes.candidates.add(cand.id)

    def _set_best(self, cid: str) -> None:
        if self.best == cid:
            return
        for old_or_new in (self.best, cid):
            if old_or_new in self.candidates:
                self._changes.candidates.add(old_or_new)  # the star moves
        self.best = cid
        self._changes.header = True

    def _on_step_paused(self, d: StepPaused, t: float) -> None:
        self.paused = d
        self.status = "paused"
        self._changes.step = True
        self._changes.header = True

    def _on_step_resumed(self, d: StepResumed, t: float) -> None:
        self.paused = None
        self.last_resume = d
        if self.status == "paused":
            self.status = "running"
        self._changes.step = True
        self._changes.header = True

    def _on_budget(self, d: Budget, t: float) -> None:
        self.budget = d
        self._changes.header = True

    def _on_experience(self, d: Experience, t: float) -> None:
        self.experience.append(d.item)

    def _on_explanation(self, d: Explanation, t: float) -> None:
        cand = self.candidates.get(d.candidate)
        if cand is None:
            return
        cand.explanation = d.text
        self._changes.candidates.add(cand.id)

    def _on_error(self, d: ErrorRaised, t: float) -> None:
        message = f"{d.where}: {d.message}"
        self.errors.append(message)
        self._changes.errors.append(message)

    def _on_degraded(self, d: Degraded, t: float) -> None:
        self.degraded.append(d)
        message = degraded_text(d)
        self.errors.append(message)
        self._changes.errors.append(message)

    def _on_session_finished(self, d: SessionFinished, t: float) -> None:
        self.finished = d
        self.status = "finished"
        self.paused = None
        if d.best:
            self._set_best(d.best)
        self._changes.finished = True
        self._changes.header = True
        self._changes.step = True

    # ------------------------------------------------------------------ derived views

    def plan_title(self, plan_id: str | None) -> str:
        """The plan's title, or its id when the plan event was not seen."""
        if plan_id is None:
            return ""
        plan = self.plans.get(plan_id)
        return (plan.title or plan_id) if plan else plan_id

    def candidate_plan_title(self, cand: CandidateView) -> str:
        """The title of the plan that made ``cand`` (not of a later plan given the same id)."""
        if cand.plan is not None:
            return cand.plan.title or cand.plan_id or ""
        return self.plan_title(cand.plan_id)

    def reference_profile(self) -> Profile | None:
        """The latest profile of the reference (a profile event naming no candidate)."""
        for prof in reversed(self.profiles):
            if not prof.candidate:
                return prof
        return None

    def candidate_profile(self, cid: str) -> Profile | None:
        """The latest profile taken of candidate ``cid``, if any."""
        for prof in reversed(self.profiles):
            if prof.candidate == cid:
                return prof
        return None

    def elapsed_s(self) -> float:
        """Seconds since this run began, analysis included (the budget's clock)."""
        return max(self.budget.seconds or 0.0, self.last_t - self.started_t)

    def _cap(self, name: str) -> float | None:
        """A budget cap: the latest budget event's, else the session's option (which the
        search's first budget event has not reported yet)."""
        value = getattr(self.budget, name)
        return _num(value if value is not None else self.options.get(_OPTION_OF_CAP[name]))

    def budget_line(self) -> str:
        """'candidates 5/16 · 12 s/300 s · 3400 tokens · $0.012/$0.50'.

        The clock counts from the session's start (the analysis is part of ``--time-limit``),
        so it runs before the search's first ``budget`` event; caps not yet in a budget event
        come from the session's options.
        """
        b = self.budget
        if b == Budget() and not self.started_t and not self.last_t:
            return ""
        parts = []
        done, cap = b.candidates, self._cap("max_candidates")
        if done is not None or cap is not None:
            parts.append(f"candidates {done or 0}" + (f"/{cap:.0f}" if cap is not None else ""))
        limit = self._cap("max_seconds")
        parts.append(f"{self.elapsed_s():.0f}" + (f"/{limit:.0f}" if limit else "") + " s")
        cost = self.cost()
        if cost["tokens"] or cost["max_tokens"]:
            cap_text = f"/{cost['max_tokens']}" if cost["max_tokens"] else ""
            parts.append(f"{cost['tokens']}{cap_text} tokens")
        if cost["cost_usd"] or cost["max_usd"]:
            cap_text = f"/${cost['max_usd']:.2f}" if cost["max_usd"] else ""
            parts.append(f"${cost['cost_usd']:.3f}{cap_text}")
        return " · ".join(parts)

    def cost(self) -> dict[str, Any]:
        """The API spend so far: tokens and USD (with their caps) and tokens per kind.

        From the latest ``budget`` event (``cost_usd``, ``max_usd``, ``tokens``, ``max_tokens``,
        ``usage``); where it carries no per-kind ``usage`` the agents' own usage is summed.
        """
        b = self.budget
        usage: dict[str, float] = {}
        if b.usage is not None:
            usage = dict(b.usage)
        else:
            for view in self.agents.values():
                for key, value in view.usage.items():
                    if key.endswith("tokens") and isinstance(value, int | float):
                        usage[key] = usage.get(key, 0) + value
        max_usd = self._cap("max_usd")
        max_tokens = self._cap("max_tokens")
        return {
            "tokens": int(b.tokens or sum(usage.values())),
            "max_tokens": int(max_tokens) if max_tokens else None,
            "cost_usd": b.cost_usd or 0.0,
            "max_usd": max_usd or None,
            "usage": {k: int(v) for k, v in usage.items() if v},
        }


#: A budget event's cap -> the session option it comes from before the first budget event.
_OPTION_OF_CAP = {
    "max_candidates": "budget",
    "max_seconds": "max_seconds",
    "max_tokens": "max_tokens",
    "max_usd": "max_usd",
}


def speedup_text(cand: CandidateView) -> str:
    """'1.23x [1.20, 1.26]', 'not timed' or '' for a row's speedup cell."""
    if cand.speedup is None:
        perf = cand.gates.get("performance")
        if cand.verdict == GATE_PASS and perf is not None and perf.status == GATE_SKIPPED:
            return "not timed"
        return ""
    text = f"{cand.speedup:.2f}x"
    if cand.ci_low is not None and cand.ci_high is not None:
        text += f" [{cand.ci_low:.2f}, {cand.ci_high:.2f}]"
    return text


def kernel_records(profile: Profile | None) -> list[dict[str, Any]]:
    """The per-kernel records of a profile's dispatch map, whatever its exact shape.

    Accepted shapes: a list of records, or a dict holding one under ``records``/``kernels``.
    Each record is a dict with at least ``name``; ``kind`` (triton/vendor/other), ``share``,
    ``ms``, ``flops``, ``bytes``, ``bound`` and ``roofline_fraction`` are used where present.
    """
    if profile is None:
        return []
    dmap: Any = profile.dispatch_map
    if isinstance(dmap, dict):
        dmap = dmap.get("records", dmap.get("kernels"))
    if not isinstance(dmap, list):
        return []
    return [r for r in dmap if isinstance(r, dict) and "name" in r]


def timeline_records(profile: Profile | None) -> list[dict[str, Any]]:
    """Kernel launches (name, start, duration in ms, kind) of a profile, if it has a timeline.

    Looked up under ``timeline`` in the event, then in its dispatch map; each entry needs
    ``name`` and ``start_ms``/``start`` and ``dur_ms``/``duration_ms``/``ms``.
    """
    if profile is None:
        return []
    raw: Any = profile.timeline
    dmap = profile.dispatch_map
    if raw is None and isinstance(dmap, dict):
        raw = dmap.get("timeline")
    if not isinstance(raw, list):
        return []
    out = []
    for r in raw:
        if not isinstance(r, dict) or "name" not in r:
            continue
        start = _num(r.get("start_ms", r.get("start")))
        dur = _num(r.get("dur_ms", r.get("duration_ms", r.get("ms"))))
        if start is None or dur is None:
            continue
        out.append({"name": str(r["name"]), "start": start, "dur": dur, "kind": r.get("kind", "")})
    return out
