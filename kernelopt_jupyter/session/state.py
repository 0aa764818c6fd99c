"""What the panel knows: the event stream folded into plain data, plus what changed.

Pure Python (no widget import), so the panel, the static HTML report and the text progress
display share one reading of the events, and tests can check it without a front end. Every
event is applied in order by :meth:`SessionState.apply`; the view asks :meth:`SessionState.take_changes`
once per refresh tick and redraws only what the :class:`Changes` name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kernelopt_jupyter.events import Event
from kernelopt_jupyter.verify.report import GATE_NAMES, GATE_PASS, GATE_PENDING, GATE_SKIPPED

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
    plan: dict[str, Any] | None = None


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
    retry: dict[str, Any] | None = None

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


def degraded_text(entry: dict[str, Any]) -> str:
    """One line for a failed analysis phase (a ``degraded`` event), for the console and the
    panel's warnings."""
    return (
        f"the analysis's {entry.get('phase')} phase failed: {entry.get('error')} "
        "(the search goes on without it; this analysis is not cached)"
    )


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
    baselines: dict[str, dict[str, Any]] = field(default_factory=dict)
    profiles: list[dict[str, Any]] = field(default_factory=list)
    agents: dict[str, AgentView] = field(default_factory=dict)
    current_agent: str | None = None
    plans: dict[str, dict[str, Any]] = field(default_factory=dict)
    candidates: dict[str, CandidateView] = field(default_factory=dict)
    progress: list[tuple[float, float]] = field(default_factory=list)  # (t, best speedup)
    best: str | None = None
    best_speedup: float | None = None
    budget: dict[str, Any] = field(default_factory=dict)
    paused: dict[str, Any] | None = None
    last_resume: dict[str, Any] | None = None
    errors: list[str] = field(default_factory=list)
    #: The analysis's failed phases (``degraded`` events): phase and cause; also in ``errors``.
    degraded: list[dict[str, str]] = field(default_factory=list)
    experience: list[dict[str, Any]] = field(default_factory=list)
    finished: dict[str, Any] | None = None
    resumed: bool = False
    last_t: float = 0.0
    started_t: float = 0.0  # session time of the latest session_started: the budget's clock
    events_seen: int = 0
    _changes: Changes = field(default_factory=Changes)

    # ------------------------------------------------------------------ applying events

    def apply(self, event: Event) -> None:
        """Fold one event in; unknown types are ignored (a newer engine may add some)."""
        self.events_seen += 1
        self.last_t = max(self.last_t, event.t)
        handler = getattr(self, f"_on_{event.type}", None)
        if handler is not None:
            handler(event.data, event.t)

    def apply_all(self, events: list[Event]) -> None:
        """Fold several events in order."""
        for event in events:
            self.apply(event)

    def take_changes(self) -> Changes:
        """What changed since the previous call (and start collecting afresh)."""
        changes, self._changes = self._changes, Changes()
        return changes

    def _on_session_started(self, d: dict[str, Any], t: float) -> None:
        problem = d.get("name") or d.get("problem")
        self.problem = str(problem.get("name", "")) if isinstance(problem, dict) else str(problem)
        self.resumed = bool(d.get("resumed"))
        self.kind = str(d.get("kind") or "")
        self.device = str(d.get("device") or "")
        self.agents_option = str(d.get("agents") or "")
        self.options = dict(d.get("options") or {})
        self.started_t = t
        self.status = "running"
        self._changes.header = True

    def _on_baseline(self, d: dict[str, Any], t: float) -> None:
        self.baselines[str(d.get("name"))] = dict(d)
        self._changes.header = True

    def _on_profile(self, d: dict[str, Any], t: float) -> None:
        self.profiles.append(dict(d))
        self._changes.profile = True

    def _agent(self, d: dict[str, Any]) -> AgentView:
        name = str(d.get("agent") or "agent")
        view = self.agents.get(name)
        if view is None:
            view = self.agents[name] = AgentView(name)
        return view

    def _on_agent_started(self, d: dict[str, Any], t: float) -> None:
        view = self._agent(d)
        view.step = d.get("step")
        view.iteration = d.get("iteration")
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

    def _on_agent_text(self, d: dict[str, Any], t: float) -> None:
        view = self._agent(d)
        delta = str(d.get("delta") or "")
        if not delta:
            return
        if view.step is None and d.get("step") is not None:
            view.step = d.get("step")
        view.text.append(delta)
        self._changes.text.setdefault(view.agent, []).append(delta)
        if view.retry is not None:  # the request got through
            view.retry = None
            self._changes.agents.add(view.agent)

    def _on_agent_thinking(self, d: dict[str, Any], t: float) -> None:
        view = self._agent(d)
        delta = str(d.get("delta") or "")
        if delta:
            view.thinking.append(delta)
            self._changes.thinking.setdefault(view.agent, []).append(delta)

    def _on_retry(self, d: dict[str, Any], t: float) -> None:
        view = self._agent(d)
        view.retry = dict(d)
        self._changes.agents.add(view.agent)

    def _on_tool_call(self, d: dict[str, Any], t: float) -> None:
        view = self._agent(d)
        view.tool_calls += 1
        line = f"\n[tool] {d.get('tool')}\n"
        view.text.append(line)
        self._changes.text.setdefault(view.agent, []).append(line)
        self._changes.agents.add(view.agent)

    def _on_agent_failed(self, d: dict[str, Any], t: float) -> None:
        self._on_agent_finished({**d, "summary": f"failed: {d.get('error') or 'no answer'}"}, t)

    def _on_agent_finished(self, d: dict[str, Any], t: float) -> None:
        view = self._agent(d)
        view.running = False
        view.retry = None
        view.summary = str(d.get("summary") or "")
        for key, value in (d.get("usage") or {}).items():
            if isinstance(value, int | float):
                view.usage[key] = view.usage.get(key, 0) + value
        tail = "\n" if view.text and not view.text[-1].endswith("\n") else ""
        if tail:
            view.text.append(tail)
            self._changes.text.setdefault(view.agent, []).append(tail)
        self._changes.agents.add(view.agent)

    def _on_plan(self, d: dict[str, Any], t: float) -> None:
        plan = self.plans[str(d.get("plan_id"))] = dict(d)
        for cand in self.candidates.values():
            # Only a candidate seen before its plan takes it; one already bound keeps its own.
            if cand.plan_id == d.get("plan_id") and cand.plan is None:
                cand.plan = plan
                self._changes.candidates.add(cand.id)

    def _on_candidate(self, d: dict[str, Any], t: float) -> None:
        cid = str(d.get("id"))
        existing = self.candidates.get(cid)
        view = CandidateView(
            id=cid,
            parent=d.get("parent"),
            agent=str(d.get("agent") or ""),
            plan_id=d.get("plan_id"),
            source=str(d.get("source") or ""),
            diff=str(d.get("diff") or ""),
            dispatch_only=bool(d.get("dispatch_only")),
            note=str(d.get("note") or ""),
            t=t,
            plan=self._plan_of(d),
        )
        self.candidates[cid] = view
        if existing is None:
            self._changes.new_candidates.append(cid)
        else:
            self._changes.candidates.add(cid)

    def _plan_of(self, d: dict[str, Any]) -> dict[str, Any] | None:
        """The plan that made the candidate of event ``d``: the latest plan event with its id,
        or, for a Tuner's variant (which carries its parent's plan id), the parent's own."""
        plan_id = d.get("plan_id")
        if plan_id is None:
            return None
        parent = self.candidates.get(str(d.get("parent")))
        if parent is not None and parent.plan_id == plan_id and parent.plan is not None:
            return parent.plan
        return self.plans.get(str(plan_id))

    def _candidate(self, cid: Any) -> CandidateView | None:
        return self.candidates.get(str(cid))

    def _on_gate(self, d: dict[str, Any], t: float) -> None:
        cand = self._candidate(d.get("candidate"))
        if cand is None:
            return
        name = str(d.get("name"))
        cand.gates[name] = GateView(
            name=name,
            status=str(d.get("status") or GATE_PENDING),
            detail=str(d.get("detail") or ""),
            metrics=dict(d.get("metrics") or {}),
        )
        if name == "performance" and cand.speedup is None:
            metrics = cand.gates[name].metrics
            cand.speedup = _num(metrics.get("speedup"))
            cand.ci_low = _num(metrics.get("ci_low"))
            cand.ci_high = _num(metrics.get("ci_high"))
        self._changes.candidates.add(cand.id)

    def _on_verdict(self, d: dict[str, Any], t: float) -> None:
        cand = self._candidate(d.get("candidate"))
        if cand is None:
            return
        cand.verdict = str(d.get("verdict") or "")
        cand.ms = _num(d.get("ms"))
        cand.speedup = _num(d.get("speedup"))
        cand.ci_low = _num(d.get("ci_low"))
        cand.ci_high = _num(d.get("ci_high"))
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

    def _on_decision(self, d: dict[str, Any], t: float) -> None:
        cand = self._candidate(d.get("candidate"))
        if cand is None or d.get("kind") in ("duplicate", "screened"):
            # A duplicate names the earlier candidate it repeats, a screen the parent whose
            # variants were timed together: that row does not change.
            return
        # "cancelled": the time limit cut this candidate's gates, or left too little for them
        # to begin; it stays undecided.
        cand.decision = str(d.get("kind") or "")
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

    def _on_step_paused(self, d: dict[str, Any], t: float) -> None:
        self.paused = dict(d)
        self.status = "paused"
        self._changes.step = True
        self._changes.header = True

    def _on_step_resumed(self, d: dict[str, Any], t: float) -> None:
        self.paused = None
        self.last_resume = dict(d)
        if self.status == "paused":
            self.status = "running"
        self._changes.step = True
        self._changes.header = True

    def _on_budget(self, d: dict[str, Any], t: float) -> None:
        self.budget = dict(d)
        self._changes.header = True

    def _on_experience(self, d: dict[str, Any], t: float) -> None:
        item = d.get("item")
        if isinstance(item, dict):
            self.experience.append(item)

    def _on_explanation(self, d: dict[str, Any], t: float) -> None:
        cand = self._candidate(d.get("candidate"))
        if cand is None:
            return
        cand.explanation = str(d.get("text") or "")
        self._changes.candidates.add(cand.id)

    def _on_error(self, d: dict[str, Any], t: float) -> None:
        message = f"{d.get('where')}: {d.get('message')}"
        self.errors.append(message)
        self._changes.errors.append(message)

    def _on_degraded(self, d: dict[str, Any], t: float) -> None:
        entry = {"phase": str(d.get("phase")), "error": str(d.get("error"))}
        self.degraded.append(entry)
        message = degraded_text(entry)
        self.errors.append(message)
        self._changes.errors.append(message)

    def _on_session_finished(self, d: dict[str, Any], t: float) -> None:
        self.finished = dict(d)
        self.status = "finished"
        self.paused = None
        if d.get("best"):
            self._set_best(str(d["best"]))
        self._changes.finished = True
        self._changes.header = True
        self._changes.step = True

    # ------------------------------------------------------------------ derived views

    def plan_title(self, plan_id: str | None) -> str:
        """The plan's title, or its id when the plan event was not seen."""
        if plan_id is None:
            return ""
        plan = self.plans.get(plan_id)
        return str(plan.get("title") or plan_id) if plan else plan_id

    def candidate_plan_title(self, cand: CandidateView) -> str:
        """The title of the plan that made ``cand`` (not of a later plan given the same id)."""
        if cand.plan is not None:
            return str(cand.plan.get("title") or cand.plan_id or "")
        return self.plan_title(cand.plan_id)

    def reference_profile(self) -> dict[str, Any] | None:
        """The latest profile of the reference (a profile event naming no candidate)."""
        for prof in reversed(self.profiles):
            if not prof.get("candidate"):
                return prof
        return None

    def candidate_profile(self, cid: str) -> dict[str, Any] | None:
        """The latest profile taken of candidate ``cid``, if any."""
        for prof in reversed(self.profiles):
            if prof.get("candidate") == cid:
                return prof
        return None

    def elapsed_s(self) -> float:
        """Seconds since this run began, analysis included (the budget's clock)."""
        seconds = _num(self.budget.get("seconds")) or 0.0
        return max(seconds, self.last_t - self.started_t)

    def budget_line(self) -> str:
        """'candidates 5/16 · 12 s/300 s · 3400 tokens · $0.012/$0.50'.

        The clock counts from the session's start (the analysis is part of ``--time-limit``),
        so it runs before the search's first ``budget`` event; caps not yet in a budget event
        come from the session's options.
        """
        b, o = self.budget, self.options
        if not b and not self.started_t and not self.last_t:
            return ""
        parts = []
        done, cap = b.get("candidates"), b.get("max_candidates", o.get("budget"))
        if done is not None or cap is not None:
            parts.append(f"candidates {done or 0}" + (f"/{cap}" if cap is not None else ""))
        limit = _num(b.get("max_seconds", o.get("max_seconds")))
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
        b, o = self.budget, self.options
        usage = b.get("usage")
        if not isinstance(usage, dict):
            usage = {}
            for view in self.agents.values():
                for key, value in view.usage.items():
                    if key.endswith("tokens") and isinstance(value, int | float):
                        usage[key] = usage.get(key, 0) + value
        max_usd = _num(b.get("max_usd", o.get("max_usd")))
        max_tokens = _num(b.get("max_tokens", o.get("max_tokens")))
        return {
            "tokens": int(_num(b.get("tokens")) or sum(usage.values())),
            "max_tokens": int(max_tokens) if max_tokens else None,
            "cost_usd": _num(b.get("cost_usd")) or 0.0,
            "max_usd": max_usd or None,
            "usage": {k: int(v) for k, v in usage.items() if _num(v)},
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


def kernel_records(profile: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The per-kernel records of a profile event's dispatch map, whatever its exact shape.

    Accepted shapes: a list of records, or a dict holding one under ``records``/``kernels``.
    Each record is a dict with at least ``name``; ``kind`` (triton/vendor/other), ``share``,
    ``ms``, ``flops``, ``bytes``, ``bound`` and ``roofline_fraction`` are used where present.
    """
    if not profile:
        return []
    dmap = profile.get("dispatch_map")
    if isinstance(dmap, dict):
        dmap = dmap.get("records", dmap.get("kernels"))
    if not isinstance(dmap, list):
        return []
    return [r for r in dmap if isinstance(r, dict) and "name" in r]


def timeline_records(profile: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Kernel launches (name, start, duration in ms, kind) of a profile, if it has a timeline.

    Looked up under ``timeline`` in the event, then in its dispatch map; each entry needs
    ``name`` and ``start_ms``/``start`` and ``dur_ms``/``duration_ms``/``ms``.
    """
    if not profile:
        return []
    raw = profile.get("timeline")
    dmap = profile.get("dispatch_map")
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
