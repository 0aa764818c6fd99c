"""The beam search: Profiler -> Planner -> Executor (with retries) -> Tuner -> Summarizer.

Everything the search learns leaves it as events. Gate verdicts come from
``kernelopt_jupyter.verify`` (candidates run in a worker process); the search never runs
candidate code itself. Defaults follow the paper: 5 iterations, 4 plans, 4 executor retries,
beam 4.
"""

from __future__ import annotations

import functools
import hashlib
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kernelopt_jupyter import defaults
from kernelopt_jupyter.agents.base import (
    AgentContext,
    AgentIO,
    Edit,
    Plan,
    Policy,
    PolicyError,
    ProfileReport,
    StepRecord,
)
from kernelopt_jupyter.agents.memory import ExperienceMemory
from kernelopt_jupyter.agents.stepping import StepControl, refusal
from kernelopt_jupyter.analysis.baselines import emit_baseline
from kernelopt_jupyter.analysis.screen import ScreenResult
from kernelopt_jupyter.candidate import Candidate, is_dispatch_only, unified_diff
from kernelopt_jupyter.deadline import Deadline
from kernelopt_jupyter.event_payloads import GateDecided, Verdict
from kernelopt_jupyter.events import EventLog
from kernelopt_jupyter.problem import Problem
from kernelopt_jupyter.verify.report import (
    GATE_FAIL,
    GATE_PASS,
    GATE_SKIPPED,
    GateResult,
    VerifyReport,
)

T = TypeVar("T")

#: Step mode: how many times a rejected Planner step is asked again for the same parent.
_REPLANS = 2

#: With a screen (``screen_runner``), how many of a Tuner's variants go on to the gates, and
#: how many the Tuner is asked for (screening is one worker run, gating one verification each).
SCREEN_KEEP = 2
SCREEN_VARIANTS = 8

#: (problem, variant sources, time limit in s) -> the screen's times (``analysis.screen``).
ScreenRunner = Callable[[Problem, list[str], float], ScreenResult]


@dataclass
class SearchConfig:
    """Shape and budgets of one search."""

    device: str = "cpu"
    iterations: int = defaults.ITERATIONS
    plans: int = defaults.PLANS
    retries: int = defaults.RETRIES
    beam: int = defaults.BEAM
    max_candidates: int = defaults.CANDIDATE_BUDGET
    #: The whole run's deadline (``--time-limit``), made by the session when the run began:
    #: the budget's clock (``budget.seconds``) counts the analysis too, and the gate runner
    #: cancels work in flight at it. The default starts the clock with the config, no limit.
    deadline: Deadline = field(default_factory=Deadline.start)
    max_tokens: int | None = None
    max_usd: float | None = None
    seeds: int = defaults.SEEDS
    time_limit_s: float = defaults.SEARCH_HANG_LIMIT_S
    #: Stop after an iteration that improved nothing (GPU only: on CPU nothing is timed).
    early_stop: bool = True


@dataclass
class GatedCandidate:
    """A candidate with the verifier's report and its timing."""

    candidate: Candidate
    report: VerifyReport
    ms: float | None = None
    speedup_vs_eager: float | None = None
    speedup_vs_compile: float | None = None
    ci: tuple[float | None, float | None] = (None, None)

    @property
    def verdict(self) -> str:
        """``pass`` or ``fail``: the report's verdict."""
        return self.report.verdict

    @property
    def gates(self) -> list[GateResult]:
        """The report's gates, in contract order."""
        return self.report.gates

    @property
    def passed(self) -> bool:
        """All gates that ran passed."""
        return self.verdict == GATE_PASS

    @property
    def usable(self) -> bool:
        """Correct (gates 1-3 passed): a valid parent even when the performance gate failed.

        A slow stepping stone (say, Inductor's harvest where eager is faster) may lead to a
        fast child; only the final answer must pass all four gates.
        """
        status = {g.name: g.status for g in self.gates}
        return (
            status.get("static") == GATE_PASS
            and status.get("correctness") == GATE_PASS
            and status.get("fp64") in (GATE_PASS, GATE_SKIPPED)
        )

    def to_dict(self) -> dict[str, Any]:
        """The candidate's row of result.json."""
        c = self.candidate
        return {
            "id": c.id,
            "parent": c.parent,
            "agent": c.agent,
            "plan": c.plan_id,
            "note": c.note,
            "dispatch_only": c.dispatch_only,
            "verdict": self.verdict,
            "gates": [g.to_dict() for g in self.gates],
            "time_ms": self.ms,
            "speedup_vs_eager": self.speedup_vs_eager,
            "speedup_vs_compile": self.speedup_vs_compile,
            "ci": list(self.ci),
        }


@dataclass
class SearchResult:
    """What a search decided."""

    status: str  # finished | stopped | failed
    baselines: dict[str, float | None]
    candidates: list[GatedCandidate]
    best: GatedCandidate | None
    library_dominated: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def speedup_vs_eager(self) -> float | None:
        """Best candidate's speedup over eager (None when not timed)."""
        return self.best.speedup_vs_eager if self.best else None

    @property
    def speedup_vs_compile(self) -> float | None:
        """Best candidate's speedup over torch.compile (None when not timed)."""
        return self.best.speedup_vs_compile if self.best else None


class BudgetExhausted(Exception):
    """Raised inside the loop when a budget runs out; the search ends cleanly."""


class DeadlineReached(BudgetExhausted):
    """The whole-search deadline passed; a gate runner raises it for a verification it cut off
    (that candidate is not decided, so it is not listed), or did not begin (``begun`` False:
    too little time was left for it to end)."""

    def __init__(self, message: str, *, begun: bool = True) -> None:
        super().__init__(message)
        self.begun = begun


class SearchStopped(Exception):
    """Raised inside the loop when the person (or Ctrl-C) stops the search."""


class NothingLeft(Exception):
    """An iteration planned nothing for any parent and gated nothing: the next would repeat
    it, so the search ends (or the person ended it where no plan was left)."""


#: Gate runner: (problem, candidate) -> the verifier's report (the object, never its JSON).
GateRunner = Callable[[Problem, Candidate], VerifyReport]


def _speedups(
    vs_eager: float | None,
    vs_compile: float | None,
    ms: float | None,
    baselines: dict[str, float | None],
) -> tuple[float | None, float | None]:
    """A candidate's speedups over eager and torch.compile: the performance gate's own where
    it measured them, else derived from the baselines. Absolute times differ between
    processes; the ratio compile/eager measured together in the baselines run carries over, so
    vs-compile is scaled from the same-run vs-eager."""
    eager, compiled = baselines.get("eager"), baselines.get("compile")
    vs_eager = vs_eager or (eager / ms if eager and ms else None)
    vs_compile = vs_compile or (
        vs_eager * compiled / eager if vs_eager and eager and compiled else None
    )
    return vs_eager, vs_compile


def source_key(source: str) -> str:
    """Identity of a candidate's code, for memoizing verdicts on resume."""
    return hashlib.sha256(source.encode()).hexdigest()[:16]


class BeamSearch:
    """One search over one problem with one policy."""

    def __init__(
        self,
        problem: Problem,
        policy: Policy,
        log: EventLog,
        config: SearchConfig,
        *,
        gate_runner: GateRunner,
        context: AgentContext,
        root: Candidate | None,
        control: StepControl | None = None,
        memory: ExperienceMemory | None = None,
        known_verdicts: dict[str, VerifyReport] | None = None,
        on_verdict: Callable[[BeamSearch], None] | None = None,
        screen_runner: ScreenRunner | None = None,
        after_root: Callable[[], object] | None = None,
    ) -> None:
        self.problem = problem
        #: Called once the starting point has its verdict, before any planning: the session
        #: times the peers then (``analysis.pipeline.DeferredBaselines``), updating the
        #: context's baselines in place.
        self.after_root = after_root
        self.policy = policy
        self.log = log
        self.config = config
        self.gate_runner = gate_runner
        #: Times a Tuner's variants together in one worker so only the fastest are gated
        #: (GPU only: nothing is timed elsewhere); None gates every variant.
        self.screen_runner = screen_runner if config.device == "cuda" else None
        self.ctx = context
        if self.screen_runner is not None:
            context.tune_variants = SCREEN_VARIANTS
        #: The starting point (the harvest); None until the analysis has answered
        #: (``start_from``): a candidate may be gated before that (the session's quick start).
        self.root = root
        self.control = control or StepControl(enabled=False)
        self.memory = memory or ExperienceMemory(None)
        self.known = known_verdicts or {}
        #: Called after every recorded verdict (the session rewrites result.json and best.py).
        self.on_verdict = on_verdict
        #: Source key -> the candidate that decided it in this run: never gated twice.
        self._decided: dict[str, GatedCandidate] = {}
        self.gated: list[GatedCandidate] = []
        self._by_id: dict[str, GatedCandidate] = {}
        self._next_id = 1  # the root is c0
        self._id_lock = threading.Lock()
        self._step = 0
        #: Set when a person rejected an Executor's edit or a Tuner's variants: re-plan.
        self._replan = False
        self._tokens = 0.0
        self._cost_usd = 0.0

    def start_from(
        self,
        context: AgentContext,
        root: Candidate,
        *,
        after_root: Callable[[], object] | None = None,
    ) -> None:
        """The analysis's context and starting point, for a search made before they existed
        (candidates gated before this keep their verdicts; ``run`` starts from ``root``)."""
        if self.screen_runner is not None:
            context.tune_variants = SCREEN_VARIANTS
        self.ctx, self.root = context, root
        if after_root is not None:
            self.after_root = after_root

    # ------------------------------------------------------------------ helpers
    def new_id(self) -> str:
        """The next candidate id; thread-safe (the panel submits from another thread)."""
        with self._id_lock:
            cid = f"c{self._next_id}"
            self._next_id += 1
            return cid

    def _budget_event(self) -> None:
        self.log.emit(
            "budget",
            candidates=len(self.gated),
            max_candidates=self.config.max_candidates,
            seconds=round(self.config.deadline.elapsed(), 1),
            max_seconds=self.config.deadline.limit_s,
            tokens=int(self._tokens),
            max_tokens=self.config.max_tokens,
            cost_usd=round(self._cost_usd, 6),
            max_usd=self.config.max_usd,
        )

    def budget_refusal(self) -> str | None:
        """Why no more candidates can be gated now (a budget used, the deadline passed, a
        stop asked for), or None while one can."""
        try:
            self._check_budget()
        except BudgetExhausted as exc:
            return str(exc)
        except SearchStopped:
            return "the search was stopped"
        return None

    def _check_budget(self) -> None:
        if self.control.stop_requested:
            raise SearchStopped()
        if len(self.gated) >= self.config.max_candidates:
            raise BudgetExhausted("candidate budget used")
        if self.config.deadline.reached():
            raise DeadlineReached("time limit reached")
        if self.config.max_tokens and self._tokens >= self.config.max_tokens:
            raise BudgetExhausted("token budget used")
        if self.config.max_usd and self._cost_usd >= self.config.max_usd:
            raise BudgetExhausted("dollar budget used")

    def _agent(
        self, agent: str, call: Callable[[AgentIO], T], describe: Callable[[T], dict[str, Any]]
    ) -> T:
        """Run one agent step with its events; returns the policy's answer."""
        self._check_budget()
        self.ctx.budget_left = self.config.deadline.left()
        step = self._step
        self._step += 1
        self.log.emit("agent_started", agent=agent, step=step, iteration=self.ctx.iteration)
        io = AgentIO(self.log, agent, step)
        try:
            answer = call(io)
        except Exception as exc:
            # A failed step still cost tokens: its usage and its error stay on record.
            self.log.emit(
                "agent_failed",
                agent=agent,
                step=step,
                error=f"{type(exc).__name__}: {exc}",
                usage=io.usage,
            )
            raise
        finally:
            # Every billed kind: cache reads and writes are most of an agent's prompt.
            self._tokens += sum(
                io.usage.get(k, 0)
                for k in (
                    "input_tokens",
                    "output_tokens",
                    "cache_read_input_tokens",
                    "cache_creation_input_tokens",
                )
            )
            self._cost_usd += io.usage.get("cost_usd", 0)
            if io.usage:
                self._budget_event()  # a live cost meter: what this step spent, at once
        output = describe(answer)
        self.log.emit(
            "agent_finished",
            agent=agent,
            step=step,
            summary=_headline(agent, output),
            usage=io.usage,
            output=output,
        )
        return answer

    def decided(self, source: str) -> GatedCandidate | None:
        """The candidate of this run whose source is ``source`` (same source key), if any."""
        return self._decided.get(source_key(source))

    def _duplicate(self, candidate: Candidate, earlier: GatedCandidate) -> GatedCandidate:
        self.log.emit(
            "decision",
            kind="duplicate",
            candidate=earlier.candidate.id,
            reason=(
                f"{candidate.agent}'s candidate repeats {earlier.candidate.id} "
                f"(same source key); not gated or listed again"
            ),
        )
        return earlier

    def gate(self, candidate: Candidate) -> GatedCandidate:
        """Send a candidate through the four gates (or reuse a verdict already decided).

        A source this run already decided is not gated or listed again: the earlier candidate
        is returned (its id differs from ``candidate.id``). A verification the deadline cut
        off raises :class:`DeadlineReached` and leaves nothing recorded for the candidate.
        """
        self._check_budget()
        earlier = self.decided(candidate.source)
        if earlier is not None:
            return self._duplicate(candidate, earlier)
        parent_source = (
            self._by_id[candidate.parent].candidate.source
            if candidate.parent in self._by_id
            else self.problem.source
        )
        self.log.emit(
            "candidate",
            id=candidate.id,
            parent=candidate.parent,
            agent=candidate.agent,
            plan_id=candidate.plan_id,
            source=candidate.source,
            diff=unified_diff(
                parent_source, candidate.source, candidate.parent or "reference", candidate.id
            ),
            dispatch_only=candidate.dispatch_only,
            note=candidate.note,
        )
        key = source_key(candidate.source)
        report = self.known.get(key)
        reused = report is not None
        if report is None:
            try:
                report = self.gate_runner(self.problem, candidate)
            except DeadlineReached as exc:
                self.log.emit(
                    "decision",
                    kind="cancelled",
                    candidate=candidate.id,
                    reason=(
                        "the time limit was reached during its gates; not decided"
                        if exc.begun
                        else f"not gated: {exc}"
                    ),
                )
                raise
        gated = self._record(candidate, report, reused=reused)
        self._budget_event()
        if self.on_verdict is not None:
            self.on_verdict(self)
        return gated

    def _record(
        self, candidate: Candidate, report: VerifyReport, *, reused: bool = False
    ) -> GatedCandidate:
        # The gate events repeat the report's gates (docs/events.md): the verdict below is
        # the message that decides the candidate.
        for g in report.gates:
            plain = g.to_dict()
            self.log.publish(
                GateDecided(
                    candidate=candidate.id,
                    name=g.name,
                    status=g.status,
                    detail=g.detail,
                    metrics={
                        k: v for k, v in plain.items() if k not in ("name", "status", "detail")
                    },
                )
            )
        gate4 = report.gate("performance")
        perf: dict[str, Any] = dict(gate4.metrics) if gate4 is not None else {}
        ms = perf.get("candidate_ms")
        vs_eager, vs_compile = _speedups(
            perf.get("speedup_vs_eager"), perf.get("speedup_vs_compile"), ms, self.ctx.baselines
        )
        gated = GatedCandidate(
            candidate=candidate,
            report=report,
            ms=ms,
            speedup_vs_eager=vs_eager,
            speedup_vs_compile=vs_compile,
            ci=(perf.get("ci_low"), perf.get("ci_high")),
        )
        self.log.publish(
            Verdict(
                candidate=candidate.id,
                verdict=gated.verdict,
                ms=ms,
                speedup=perf.get("speedup"),
                ci_low=perf.get("ci_low"),
                ci_high=perf.get("ci_high"),
                speedup_vs_eager=vs_eager,
                speedup_vs_compile=vs_compile,
                source_key=source_key(candidate.source),
                report=report.to_dict(),
                reused=reused,  # a verdict already decided before a resume, not gated again
                mode=self.problem.mode,  # the semantics the verdict holds for
            )
        )
        self.gated.append(gated)
        self._by_id[candidate.id] = gated
        self._decided[source_key(candidate.source)] = gated
        return gated

    def _pause(
        self, agent: str, payload: dict[str, Any], *, kind: str | None = None
    ) -> tuple[str, Any]:
        """Step mode: hand control to the person after an agent step.

        ``kind`` names the pause's decisions when they are not the agent's own (``no_plan``:
        the Planner's pause with no plan left). Decisions the pause does not offer are
        answered by the step control at once, with the reasons of :meth:`_why_not`."""
        if not self.control.enabled:
            return "approve", None
        offered, why_not = self._offered(kind or agent)
        self.log.emit(
            "step_paused",
            agent=agent,
            step=self._step - 1,
            actions=offered,
            payload=payload,
            # The number this pause will have: a decision naming it answers it and no other.
            pause=self.control.pause_count + 1,
        )
        action, value = self.control.wait(agent=kind or agent, offered=offered, why_not=why_not)
        self.log.emit("step_resumed", action=action, by="person")
        if action == "stop":
            raise SearchStopped()
        return action, value

    def _offered(self, kind: str) -> tuple[list[str], dict[str, str]]:
        """The decisions a pause of ``kind`` offers with this policy, and why it does not
        offer the others it could."""
        offered = self.control.actions_for(kind)
        why_not: dict[str, str] = {}
        if "edit_plan" in offered and not getattr(self.policy, "reads_plan_text", True):
            offered = [a for a in offered if a != "edit_plan"]
            why_not["edit_plan"] = (
                f"the {self.policy.name} Executor applies a plan by its kind of change, so "
                "edited text would not change the code it writes; give a direction or submit "
                "your own code instead"
            )
        return offered, why_not

    def _converse(
        self,
        agent: str,
        payload: dict[str, Any],
        parent: GatedCandidate,
        *,
        kind: str | None = None,
    ) -> tuple[str, Any]:
        """One pause, answered until the person decides how the search goes on.

        Code submitted at a pause other than the Executor's is gated at once as the person's
        child of ``parent``, and the pause is offered again with its verdict; a decision the
        pause does not offer (sent before it, without naming it) is answered the same way."""
        while True:
            action, value = self._pause(agent, payload, kind=kind)
            offered, why_not = self._offered(kind or agent)
            if action not in offered:
                answer = refusal(kind or agent, action, offered, why_not.get(action, ""))
            elif action == "edit_candidate" and agent != "executor":
                answer = self._gate_person_code(str(value or ""), parent)
            else:
                return action, value
            payload = {**payload, "answer": answer}

    def _gate_person_code(self, source: str, parent: GatedCandidate) -> str:
        """Gate a person's code, submitted at a pause, as a child of ``parent``; returns what
        became of it, in one sentence."""
        if not source.strip():
            return "Nothing was gated: the code was empty."
        earlier = self.decided(source)
        if earlier is not None:
            self._duplicate(Candidate("", source, agent="person"), earlier)
            return (
                f"Your code is {earlier.candidate.id}'s, already decided ({earlier.verdict}); "
                "nothing new was gated."
            )
        candidate = Candidate(
            id=self.new_id(),
            source=source,
            parent=parent.candidate.id,
            agent="person",
            plan_id=None,
            dispatch_only=is_dispatch_only(source),
            note="submitted in step mode",
        )
        gated = self.gate(candidate)
        self._summarize([gated], parent, None)
        verdict = (
            "it passed the gates"
            if gated.passed
            else "it failed the performance gate but is correct, so it can be built on"
            if gated.usable
            else f"it failed ({_first_failure(gated)})"
        )
        return (
            f"Your code was gated as {candidate.id}, a child of {parent.candidate.id}: {verdict}."
        )

    def _note_direction(self, text: Any) -> None:
        """A person's direction in words: the Planner reads it on its next step."""
        said = str(text or "").strip()
        if said:
            self.ctx.directions.append(said)

    def _planner_said(self, step: int) -> str:
        """The last line the Planner streamed on ``step`` (its conclusion; the lines before
        repeat the rejections the person made), as one line."""
        text = "".join(
            str(e.data.get("delta", ""))
            for e in self.log.of_type("agent_text")
            if e.data.get("agent") == "planner" and e.data.get("step") == step
        )
        lines = [line for line in text.splitlines() if line.strip()]
        return " ".join(lines[-1].split()) if lines else ""

    @staticmethod
    def _rank_key(g: GatedCandidate) -> float:
        return g.ms if g.ms is not None else math.inf

    # ------------------------------------------------------------------ the loop
    def snapshot(self, status: str, notes: list[str] | None = None) -> SearchResult:
        """What the search has decided so far, as a result (the session's checkpoints)."""
        return SearchResult(
            status=status,
            baselines=self.ctx.baselines,
            candidates=list(self.gated),
            best=self.choose_best(),
            library_dominated=self.ctx.library_dominated,
            notes=list(notes or []),
        )

    def run(self) -> SearchResult:
        """Run to completion, a budget, or a stop; never raises for candidate failures."""
        status = "finished"
        notes: list[str] = []
        try:
            if self.root is None:
                raise ValueError("the search has no starting point (start_from was not called)")
            if self.ctx.device == "cuda" and not self.ctx.gpu:
                # The card's name, for whose roofs the agents place kernels under (read from
                # nvidia-smi: this process never initialises CUDA).
                from kernelopt_jupyter.analysis.cache import gpu_name

                self.ctx.gpu = gpu_name("cuda")
            # The first iteration plans from the root alone; a candidate gated before the
            # analysis answered (the quick start) joins the beam by rank from the next.
            root = self.gate(self.root)
            beam = [root] if root.usable else []
            if not root.usable:
                notes.append(f"the harvested starting point failed: {_first_failure(root)}")
                fallback = self._fallback_root()
                if fallback is not None:
                    beam = [fallback]
            if self.after_root is not None:
                self.after_root()
                self._eager_from_the_root(root)
                self._rescale_vs_compile()
            best_ms = min((g.ms for g in beam if g.ms is not None), default=math.inf)
            for iteration in range(self.config.iterations):
                if not beam:
                    notes.append("no passing candidate to build on")
                    break
                self.ctx.iteration = iteration
                try:
                    improved = self._iteration(beam)
                except NothingLeft as exc:
                    notes.append(str(exc))
                    break
                usable = [g for g in self.gated if g.usable]
                beam = sorted(usable, key=self._rank_key)[: self.config.beam]
                new_best = min((g.ms for g in beam if g.ms is not None), default=math.inf)
                self.log.emit(
                    "decision",
                    kind="iteration",
                    candidate=beam[0].candidate.id if beam else None,
                    reason=f"iteration {iteration}: beam {[g.candidate.id for g in beam]}",
                )
                timed = new_best < math.inf
                if (
                    self.config.early_stop
                    and timed
                    and new_best >= best_ms * 0.995
                    and not improved
                ):
                    notes.append(f"stopped early after iteration {iteration}: nothing improved")
                    break
                best_ms = min(best_ms, new_best)
        except BudgetExhausted as exc:
            notes.append(str(exc))
        except SearchStopped:
            status = "stopped"
        except PolicyError as exc:
            # Not "finished": the agents could not go on, so whatever is best was not searched.
            status = "failed"
            notes.append(f"the {self.policy.name} policy stopped: {exc}")
            self.log.emit("error", where=self.policy.name, message=str(exc))
        best = self.choose_best()
        if best is not None:
            self.log.emit(
                "decision", kind="best", candidate=best.candidate.id, reason=_best_reason(best)
            )
        return SearchResult(
            status=status,
            baselines=self.ctx.baselines,
            candidates=self.gated,
            best=best,
            library_dominated=self.ctx.library_dominated,
            notes=notes,
        )

    def _eager_from_the_root(self, root: GatedCandidate) -> None:
        """Where the peers were not timed (too little time was left after the first
        verdict), eager's time from the first candidate's performance gate, which raced eager
        interleaved with it; said in a ``baseline`` event."""
        if self.ctx.baselines.get("eager") is not None:
            return
        gate4 = root.report.gate("performance")
        eager = gate4.metrics.get("eager_ms") if gate4 is not None else None
        if not isinstance(eager, int | float) or eager <= 0:
            return
        self.ctx.baselines["eager"] = float(eager)
        emit_baseline(
            self.log,
            "eager",
            float(eager),
            measured=True,
            detail=f"from {root.candidate.id}'s performance gate (eager raced interleaved with it)",
        )

    def _rescale_vs_compile(self) -> None:
        """Speedups of the candidates gated before the baselines were timed, derived from
        them now as :meth:`gate` derives them."""
        for g in self.gated:
            g.speedup_vs_eager, g.speedup_vs_compile = _speedups(
                g.speedup_vs_eager, g.speedup_vs_compile, g.ms, self.ctx.baselines
            )

    def _fallback_root(self) -> GatedCandidate | None:
        """When the harvest fails, start from the problem's own code as a dispatch-only root."""
        from kernelopt_jupyter.candidate import eager_dispatch_source

        try:
            source = eager_dispatch_source(self.problem)
        except ValueError:
            return None
        cand = Candidate(
            self.new_id(), source, None, "harvest", None, True, "reference ops (fallback root)"
        )
        gated = self.gate(cand)
        return gated if gated.usable else None

    def _iteration(self, beam: list[GatedCandidate]) -> bool:
        """One round over the beam; raises :class:`NothingLeft` when it planned and gated
        nothing (the next round would only repeat it)."""
        gated_before = len(self.gated)
        report = self._agent(
            "profiler",
            lambda io: self.policy.profile(self.ctx, io),
            lambda r: r.to_dict(),
        )
        action, value = self._converse("profiler", {"summary": report.summary}, beam[0])
        if action == "direction":
            self._note_direction(value)
        improved, planned = False, False
        for parent in list(beam):
            queue, replans = self._plans_for(report, parent), 0
            planned |= bool(queue)
            while queue:
                plan = queue.pop(0)
                child = self._execute(plan, parent)
                if child is not None and child.usable:
                    improved |= self._better(child, parent)
                    improved |= self._tune(child)
                if self._replan and replans < _REPLANS:
                    # A rejected edit or tuning step re-plans like a rejected Planner step:
                    # the Planner sees the reason first, the plans not yet tried go on after.
                    replans += 1
                    fresh = self._plans_for(report, parent)
                    titles = {p.title for p in fresh}
                    queue = fresh + [p for p in queue if p.title not in titles]
                self._replan = False
        if not planned and len(self.gated) == gated_before:
            ids = ", ".join(g.candidate.id for g in beam)
            raise NothingLeft(f"no untried plan left for {ids}")
        return improved

    def _ask_planner(self, report: ProfileReport, parent: GatedCandidate) -> list[Plan]:
        """One Planner step for ``parent``, its plans each said in a ``plan`` event."""
        plans = self._agent(
            "planner",
            functools.partial(self._plan, report, parent.candidate),
            lambda ps: {"plans": [p.to_dict() for p in ps]},
        )
        for plan in plans:
            self.log.emit(
                "plan",
                plan_id=plan.id,
                agent="planner",
                title=plan.title,
                rationale=plan.rationale,
                targets=plan.targets,
                parent=parent.candidate.id,
                action=plan.action,
            )
        return plans

    def _plans_for(self, report: ProfileReport, parent: GatedCandidate) -> list[Plan]:
        """The Planner's plans for ``parent`` that the person lets through (step mode).

        A rejected plan is dropped and the others go on; a rejected step asks the Planner
        again (at most ``_REPLANS`` times), which sees every reason so far in
        ``ctx.rejections``; a direction asks it again too, with the standing plans after its
        new ones. Where no plan is left, the person is asked how to go on (:meth:`_no_plan`):
        the conversation never ends in silence.
        """
        pid = parent.candidate.id
        rejected = 0
        held: list[Plan] = []  # plans standing when a direction asked the Planner again
        ask, said = True, ""
        while True:
            plans = self._ask_planner(report, parent) if ask else []
            if ask:
                said = self._planner_said(self._step - 1)
            titles = {p.title for p in plans}
            plans += [p for p in held if p.title not in titles]
            held = []
            if not plans:
                if not self.control.enabled or not self._no_plan(parent, said):
                    return []
                ask = True
                continue
            payload = {"plans": [p.to_dict() for p in plans], "parent": pid}
            action, value = self._converse("planner", payload, parent)
            if action == "edit_plan" and value:
                plans[0].rationale = str(value)
                return plans
            if action == "direction":
                self._note_direction(value)
                held, ask = plans, True
                continue
            if action == "reject_plan" and isinstance(value, dict):
                dropped = [p for p in plans if p.id == value.get("plan_id")]
                self._note_rejection(dropped, str(value.get("reason") or ""))
                rest = [p for p in plans if p not in dropped]
                if rest:
                    return rest
                # It was the only plan: as a rejected step.
            elif action == "reject":
                self._note_rejection(plans, str(value or ""))
            else:
                return plans
            rejected += 1
            ask = rejected <= _REPLANS
            if not ask:
                said = (
                    f"The Planner was asked {rejected} times for {pid} and each answer was "
                    "rejected; it is asked again only with a direction."
                )

    def _no_plan(self, parent: GatedCandidate, said: str) -> bool:
        """Step mode, no plan left for ``parent``: the person ends the search, submits code
        (gated at once, see :meth:`_converse`), gives a direction (True: ask the Planner
        again) or goes on without a plan for this parent (False)."""
        pid = parent.candidate.id
        payload = {
            "plans": [],
            "parent": pid,
            "no_plan": (
                f"{said or f'No untried plan applies to {pid}.'} End the search, submit your "
                f"own code as a child of {pid}, give the Planner a direction in words, or "
                "approve to go on without a plan for it (the search ends when no candidate "
                "has one)."
            ),
        }
        action, value = self._converse("planner", payload, parent, kind="no_plan")
        if action == "end":
            raise NothingLeft(f"ended by the person: no plan left for {pid}")
        if action == "direction":
            self._note_direction(value)
            return True
        return False

    def _plan(self, report: ProfileReport, parent: Candidate, io: AgentIO) -> list[Plan]:
        """One Planner step whose plans carry ids no earlier plan of this run has.

        The planners number their plans apart already (``base.plan_id_prefix``; Claude's by
        agent step); a reused id that still comes back (a recording made before ids were
        unique, a resumed run whose replay went another way, some other policy) becomes
        ``{id}.2``, ``{id}.3``, ... Renamed before the step's ``agent_finished`` event, so a
        recording of this run replays with the same ids.
        """
        plans = self.policy.plan(self.ctx, report, parent, self.config.plans, io)
        taken = self.ctx.plan_ids
        for plan in plans:
            base = plan.id or f"{parent.id}.plan"
            plan.id, k = base, 2
            while plan.id in taken:
                plan.id, k = f"{base}.{k}", k + 1
            taken.add(plan.id)
        return plans

    def _note_rejection(self, plans: list[Plan], reason: str) -> None:
        what = ", ".join(f"{p.id} ({p.title})" for p in plans) or "the Planner's step"
        self.ctx.rejections.append(f"{what}: {reason or 'no reason given'}")

    def _note_step_rejection(self, what: str, reason: Any) -> None:
        """A person rejected an Executor's edit or a Tuner's step: the Planner is asked again
        for the same parent and sees ``what`` was rejected and why."""
        self.ctx.rejections.append(f"{what}: {str(reason or '') or 'no reason given'}")
        self._replan = True

    def _better(self, child: GatedCandidate, parent: GatedCandidate) -> bool:
        return child.ms is not None and (parent.ms is None or child.ms < parent.ms * 0.995)

    def _execute(self, plan: Plan, parent: GatedCandidate) -> GatedCandidate | None:
        feedback: str | None = None
        last: GatedCandidate | None = None
        for attempt in range(self.config.retries):
            edit = self._agent(
                "executor",
                functools.partial(self.policy.execute, self.ctx, plan, parent.candidate, feedback),
                functools.partial(_describe_edit, plan_id=plan.id, attempt=attempt),
            )
            action, value = self._converse(
                "executor",
                {"plan_id": plan.id, "source": edit.source, "explanation": edit.explanation},
                parent,
            )
            if action == "reject":
                self._note_step_rejection(
                    f"the Executor's edit for {plan.id} ({plan.title})", value
                )
                return None
            source = str(value) if action == "edit_candidate" and value else edit.source
            if source is None:
                return last
            earlier = self.decided(source)
            if earlier is not None:
                # Nothing new to gate: say so to the Executor, which may try another edit.
                self._duplicate(Candidate("", source, agent="executor"), earlier)
                feedback = (
                    f"this source is identical to {earlier.candidate.id}, already decided "
                    f"({earlier.verdict}); make a different change"
                )
                continue
            candidate = Candidate(
                id=self.new_id(),
                source=source,
                parent=parent.candidate.id,
                agent="person" if action == "edit_candidate" else "executor",
                plan_id=plan.id,
                dispatch_only=edit.dispatch_only,
                note=plan.title if attempt == 0 else f"{plan.title} (retry {attempt})",
            )
            last = self.gate(candidate)
            self._summarize([last], parent, plan)
            if last.usable:
                return last
            feedback = _first_failure(last)
        return last

    def _tune(self, candidate: GatedCandidate) -> bool:
        if self.config.device != "cuda":
            # Nothing is timed off the GPU, so launch-configuration variants cannot be told
            # apart: gating them would only spend the budget (the opening message says so).
            return False
        proposal = self._agent(
            "tuner",
            lambda io: self.policy.tune(self.ctx, candidate.candidate, io),
            lambda t: t.to_dict(),
        )
        if not proposal.variants:
            return False
        action, value = self._converse(
            "tuner", {"variants": [label for label, _ in proposal.variants]}, candidate
        )
        if action == "reject":
            self._note_step_rejection(f"the Tuner's variants of {candidate.candidate.id}", value)
            return False
        improved = False
        pending: list[tuple[str, str]] = []
        for label, source in proposal.variants:
            earlier = self.decided(source)
            if earlier is not None:
                self._duplicate(Candidate("", source, agent="tuner"), earlier)
                continue
            if all(source != s for _, s in pending):
                pending.append((label, source))
        for label, source in self._screen(candidate, pending):
            child = self.gate(
                Candidate(
                    id=self.new_id(),
                    source=source,
                    parent=candidate.candidate.id,
                    agent="tuner",
                    plan_id=candidate.candidate.plan_id,
                    dispatch_only=candidate.candidate.dispatch_only,
                    note=f"tune {label}",
                )
            )
            tune_plan = Plan(
                id=f"{candidate.candidate.id}.tune",
                title=f"tune {label}",
                rationale="",
                action="retile",
            )
            self._summarize([child], candidate, tune_plan)
            if child.usable and self._better(child, candidate):
                improved = True
        return improved

    def _screen(
        self, parent: GatedCandidate, variants: list[tuple[str, str]]
    ) -> list[tuple[str, str]]:
        """The variants worth gating: all of them without a screen (or with too few to choose
        from), else the ``SCREEN_KEEP`` fastest in one interleaved run. The screen orders, it
        never passes anything: each kept variant still goes through every gate."""
        if self.screen_runner is None or len(variants) <= SCREEN_KEEP:
            return variants
        left = self.config.deadline.left()
        limit = 60.0 if left is None else min(60.0, left - 5.0)
        if limit < 5.0:
            return variants  # the gates meet the deadline and say so
        result = self.screen_runner(self.problem, [source for _, source in variants], limit)
        pid = parent.candidate.id
        if not result.ok:
            self.log.emit(
                "decision",
                kind="screened",
                candidate=pid,
                reason=f"the screen of {pid}'s variants failed ({result.detail}); each is gated",
                screen=[],
            )
            return variants
        keep = result.fastest(SCREEN_KEEP)
        rows = [
            {"label": label, "ms": result.ms[i], "error": result.errors[i], "gated": i in keep}
            for i, (label, _) in enumerate(variants)
        ]
        chosen = ", ".join(f"{variants[i][0]} ({result.ms[i]:.4f} ms)" for i in keep)
        self.log.emit(
            "decision",
            kind="screened",
            candidate=pid,
            reason=(
                f"{len(variants)} variants of {pid} compiled together and timed interleaved "
                f"({result.rounds} rounds, {result.seconds:.1f} s); gating the fastest "
                f"{len(keep)}: {chosen or 'none ran'}"
            ),
            screen=rows,
        )
        return [variants[i] for i in keep]

    def _summarize(
        self, children: list[GatedCandidate], parent: GatedCandidate, plan: Plan | None
    ) -> None:
        steps = [
            StepRecord(
                candidate=c.candidate,
                parent_source=parent.candidate.source,
                plan=plan,
                verdict=c.verdict,
                speedup=c.speedup_vs_eager,
                parent_speedup=parent.speedup_vs_eager,
                gate_details=[g.to_dict() for g in c.gates],
            )
            for c in children
        ]
        summary = self._agent(
            "summarizer",
            lambda io: self.policy.summarize(self.ctx, steps, io),
            lambda s: s.to_dict(),
        )
        for cid, text in summary.explanations.items():
            self.log.emit("explanation", candidate=cid, text=text)
        for item in summary.experience:
            if self.memory.add(item):
                self.log.emit("experience", item=item.to_dict())

    def choose_best(self) -> GatedCandidate | None:
        """The fastest candidate that passed all gates; untimed (CPU), the first that passed."""
        passing = [g for g in self.gated if g.passed]
        if not passing:
            return None
        timed = [g for g in passing if g.ms is not None]
        if timed:
            return min(timed, key=lambda g: g.ms or math.inf)
        return passing[0]


def _describe_edit(edit: Edit, *, plan_id: str, attempt: int) -> dict[str, Any]:
    return {**edit.to_dict(), "plan_id": plan_id, "attempt": attempt}


def _first_failure(g: GatedCandidate) -> str:
    failing = next((x for x in g.gates if x.status == GATE_FAIL), None)
    if failing is None:
        return "failed"
    return f"{failing.name} gate failed: {failing.detail}"


def _best_reason(best: GatedCandidate) -> str:
    if best.ms is None:
        return "passes gates 1-3; not timed (no GPU)"
    parts = [f"{best.ms:.4f} ms"]
    if best.speedup_vs_eager:
        parts.append(f"{best.speedup_vs_eager:.2f}x eager")
    if best.speedup_vs_compile:
        parts.append(f"{best.speedup_vs_compile:.2f}x torch.compile")
    return ", ".join(parts)


def _headline(agent: str, output: dict[str, Any]) -> str:
    """One readable line about an agent's answer (the full answer is in ``output``)."""
    if agent == "profiler":
        text = str(output.get("summary", ""))
    elif agent == "planner":
        plans = output.get("plans", [])
        text = f"{len(plans)} plan(s)" + (
            ": " + "; ".join(str(p.get("title")) for p in plans) if plans else ""
        )
    elif agent == "executor":
        made = "new candidate" if output.get("source") else "no candidate"
        text = f"{made}: {output.get('explanation', '')}"
    elif agent == "tuner":
        text = f"{len(output.get('variants', []))} variant(s): {output.get('explanation', '')}"
    else:
        text = (
            f"{len(output.get('explanations', {}))} explanation(s), "
            f"{len(output.get('experience', []))} lesson(s)"
        )
    return text if len(text) <= 200 else text[:197] + "..."
