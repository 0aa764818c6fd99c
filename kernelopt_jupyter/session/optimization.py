"""An optimization session: analysis, the agents' search, and its files on disk.

The notebook magic, the panel and the CLI all drive this one class. A session owns an
``out_dir`` holding ``events.jsonl`` (written as things happen), ``problem.py`` (the captured
source), and at the end ``result.json`` and ``best.py`` (contract v1). The search runs in the
caller's thread (:meth:`run`) or a background thread (:meth:`start`) so a notebook stays live.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelopt_jupyter import defaults
from kernelopt_jupyter.agents.base import AgentContext, KernelUnit, Policy, PolicyError
from kernelopt_jupyter.agents.memory import ExperienceMemory, default_memory_path
from kernelopt_jupyter.agents.offline import OfflinePolicy
from kernelopt_jupyter.agents.replay import ReplayPolicy
from kernelopt_jupyter.agents.search import (
    BeamSearch,
    BudgetExhausted,
    DeadlineReached,
    GatedCandidate,
    SearchConfig,
    SearchResult,
    SearchStopped,
    source_key,
)
from kernelopt_jupyter.agents.stepping import StepControl
from kernelopt_jupyter.analysis.screen import ScreenResult
from kernelopt_jupyter.candidate import Candidate
from kernelopt_jupyter.deadline import Deadline
from kernelopt_jupyter.device import resolve_device
from kernelopt_jupyter.event_payloads import SessionStarted, Verdict
from kernelopt_jupyter.events import Event, EventError, EventLog, read_events
from kernelopt_jupyter.problem import Problem, ProblemError, problem_from_source, with_mode
from kernelopt_jupyter.session.files import write_atomic
from kernelopt_jupyter.session.gating import verify_before
from kernelopt_jupyter.sizes import SMALL_ENV, SizesError, SizesReport, resolve_sizes
from kernelopt_jupyter.verify.report import GATE_PASS, VerifyReport

RESULT_SCHEMA = 1
#: The least candidate budget a search spends one candidate of on its quick start.
QUICK_START_MIN_BUDGET = 4


class SessionError(Exception):
    """A user-level problem starting or opening a session (one line)."""


@dataclass
class SearchOptions:
    """Everything a person can choose about a search (the magic's and CLI's flags)."""

    agents: str = "offline"  # offline | claude | replay:FILE
    budget: int = defaults.CANDIDATE_BUDGET  # candidates
    seeds: int = defaults.SEEDS
    device: str = "auto"
    step: bool = False
    model: str | None = None
    max_seconds: float | None = None
    max_tokens: int | None = None
    max_usd: float | None = None  # API spend limit (Claude), at the model's list prices
    out_dir: Path | None = None
    time_limit_s: float = defaults.SEARCH_HANG_LIMIT_S
    iterations: int = defaults.ITERATIONS
    plans: int = defaults.PLANS
    retries: int = defaults.RETRIES
    beam: int = defaults.BEAM
    memory_path: Path | None = field(default_factory=default_memory_path)
    #: The reference's semantics: None keeps the problem's own ("as-constructed" unless its
    #: source declares KERNELOPT_MODE = "eval"); "eval" optimizes for inference.
    mode: str | None = None
    #: The problem's sizes (``kernelopt_jupyter.sizes``): "auto" (small on the CPU, published
    #: on the GPU), "small" (the CPU rule's shrunk size constants) or "published".
    sizes: str = "auto"
    #: Reuse a saved analysis of the same problem, shapes, torch, Triton and GPU, and save a
    #: complete one (off: ``--no-cache``, neither read nor written).
    analysis_cache: bool = True
    cache_dir: Path | None = None  # default $KERNELOPT_CACHE_DIR or ~/.cache/kernelopt
    #: Re-verify the winner against eager and torch.compile at the end (GPU), and profile its
    #: kernel timeline for the panel. The bench turns both off: its own side-by-side run
    #: times the winner against every peer.
    final_check: bool = True
    profile_best: bool = True

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the session_started event."""
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in self.__dict__.items()}


def make_policy(
    spec: str,
    model: str | None,
    memory: ExperienceMemory,
    *,
    max_tokens: int | None = None,
    max_usd: float | None = None,
) -> Policy:
    """The policy behind ``--agents``; raises SessionError for an unknown or unusable one.

    Claude is checked with one cheap authenticated call here, before any analysis, so a bad
    key or an unknown model fails in seconds rather than after minutes of profiling.
    """
    if spec == "offline":
        return OfflinePolicy(memory)
    if spec == "claude":
        from kernelopt_jupyter.agents.claude import ClaudePolicy

        try:
            policy = ClaudePolicy(
                model=model, memory=memory, budget_tokens=max_tokens, budget_usd=max_usd
            )
            policy.preflight()
            return policy
        except PolicyError as exc:
            raise SessionError(f"--agents claude: {exc}") from None
    if spec.startswith("replay:"):
        path = spec.split(":", 1)[1]
        try:
            return ReplayPolicy.from_file(path)
        except (OSError, ValueError) as exc:
            raise SessionError(f"--agents {spec}: {exc}") from None
    raise SessionError(f"unknown agents {spec!r}; use offline, claude or replay:FILE")


#: Inputs at least this large make the quick start's verification wait for the analysis to
#: end instead of running beside it (each holds its own copy of the inputs on the device).
ALONE_INPUT_BYTES = 2 << 30


def input_bytes(problem: Problem) -> int:
    """Bytes of a module problem's inputs, counted on the meta device (nothing allocated);
    0 where they cannot be counted there."""
    import torch

    from kernelopt_jupyter.problem import materialize

    if problem.kind != "module":
        return 0
    try:
        inputs = materialize(problem).make_inputs(seed=0, device="meta")
    except Exception:
        return 0
    return sum(v.numel() * v.element_size() for v in inputs if isinstance(v, torch.Tensor))


def _default_out_dir(problem: Problem) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{problem.name}-{stamp}"


class OptimizationSession:
    """One search over one problem, with its event log and result files."""

    def __init__(
        self,
        problem: Problem,
        options: SearchOptions | None = None,
        *,
        _resume_events: list[Event] | None = None,
    ) -> None:
        self.options = options or SearchOptions()
        try:
            problem = with_mode(problem, self.options.mode) if self.options.mode else problem
        except ProblemError as exc:
            raise SessionError(str(exc)) from None
        self.device = resolve_device(self.options.device)
        #: The sizes the problem runs at (the CPU rule's shrink, said in the opening notice
        #: and in result.json): the session's problem is the shrunk text, so the analysis,
        #: every gate and best.py use it.
        self.sizes: SizesReport
        try:
            self.problem, self.sizes = resolve_sizes(problem, self.options.sizes, self.device)
        except (SizesError, ProblemError) as exc:
            raise SessionError(str(exc)) from None
        self.out_dir = Path(self.options.out_dir or _default_out_dir(problem))
        self.out_dir.mkdir(parents=True, exist_ok=True)
        (self.out_dir / "problem.py").write_text(self.problem.source)
        self.log = EventLog(self.out_dir / "events.jsonl")
        self.control = StepControl(enabled=self.options.step)
        self.memory = ExperienceMemory(self.options.memory_path)
        self.result: SearchResult | None = None
        self.error: str | None = None
        self._resume = _resume_events
        self._search: BeamSearch | None = None
        self._service: Any = None  # verify.service.VerifyService, made at the first gate
        self._deadline: Deadline | None = None
        self._verify_s: list[float] = []  # wall seconds of this search's verifications
        self._deferred: Any = None  # analysis.pipeline.DeferredBaselines, timed after c0
        self._cache: Any = None  # analysis.cache.AnalysisCache, made at first use
        #: The analysis's failed phases (its facts' list: the deferred peers add theirs).
        self._degraded: list[dict[str, str]] = []
        # Checkpoints come from the search thread and from a person's submit threads.
        self._files_lock = threading.Lock()
        self._policy: Policy | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ control
    @property
    def degraded(self) -> list[dict[str, str]]:
        """The analysis phases that failed, each ``{"phase", "error"}`` (result.json's
        ``degraded``); empty when every phase ran to its end (or none has run yet)."""
        return [dict(entry) for entry in self._degraded]

    @property
    def step(self) -> StepControl:
        """Step-mode decisions (approve, reject, edit_plan, edit_candidate, stop)."""
        return self.control

    @property
    def running(self) -> bool:
        """Whether the background search thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Run the search in a background thread and return at once."""
        if self.running:
            raise SessionError("this session is already running")
        self._thread = threading.Thread(
            target=self._run_guarded, name="kernelopt-search", daemon=True
        )
        self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the background search; returns whether it has finished."""
        if self._thread is None:
            return self.result is not None
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def stop(self) -> None:
        """Ask the search to stop; results so far are kept. A Claude request in flight is
        closed at once (its stream cancelled) rather than paid for to the end."""
        self.control.stop()
        cancel = getattr(self._policy, "cancel", None)  # only policies that stream have one
        if callable(cancel):
            cancel()

    def _run_guarded(self) -> None:
        try:
            self.run()
        except Exception as exc:  # the thread must leave a trace, never die silently
            self.error = f"{type(exc).__name__}: {exc}"

    # ------------------------------------------------------------------ the run
    def _time_left(self) -> float | None:
        """Seconds before the whole-search deadline, or None without ``--time-limit``."""
        return None if self._deadline is None else self._deadline.left()

    def opening_notice(self) -> str:
        """What this run can and cannot do, said once at the start (the CPU tier's limits;
        on any device, a missing bytecode cache that makes every worker start slow)."""
        from kernelopt_jupyter.worker import uncached_bytecode_note

        slow = uncached_bytecode_note()
        if self.device == "cuda":
            shrunk = self.sizes.describe() if self.sizes.mode == "small" else ""
            return (shrunk + " " + slow).strip()
        return (self._cpu_notice() + " " + slow).strip()

    def _cpu_notice(self) -> str:
        small = os.environ.get(SMALL_ENV) == "1" and SMALL_ENV in self.problem.source
        if small:
            sizes = "This problem runs at its small sizes (KERNELOPT_SMALL=1)."
        elif self.sizes.changed:
            sizes = self.sizes.describe()
        else:
            sizes = (
                self.sizes.describe()
                + " Bundled benchmark problems shrink to interpreter sizes (KERNELOPT_SMALL=1)."
            )
        return (
            "CPU run: gates 1-3 (static, correctness, fp64) run through Triton's interpreter; "
            "nothing is timed, so the performance gate is skipped and the Tuner's "
            "launch-configuration variants are not tried (they could not be told apart). " + sizes
        )

    def run(self) -> SearchResult:
        """Analyse the problem, run the agents' search, write the result files.

        ``max_seconds`` (``--time-limit``) is a deadline for all of it, analysis included:
        work in flight is cancelled at it and the search ends with what it has. result.json
        and best.py are rewritten (atomically) after every verdict, so a kill at any moment
        leaves every decided candidate on disk with status ``interrupted``.
        """
        # The budget's clock starts here: the analysis counts.
        self._deadline = Deadline.start(self.options.max_seconds)
        self._verify_s = []
        policy = make_policy(
            self.options.agents,
            self.options.model,
            self.memory,
            max_tokens=self.options.max_tokens,
            max_usd=self.options.max_usd,
        )
        self._policy = policy
        known: dict[str, VerifyReport] = {}
        if self._resume is not None:
            policy = ReplayPolicy(self._resume, fallback=policy)
            known = _decided_reports(self._resume)
        self.log.emit(
            "session_started",
            problem=self.problem.path,
            kind=self.problem.kind,
            device=self.device,
            agents=self.options.agents,
            options=self.options.to_dict(),
            resumed=self._resume is not None,
            name=self.problem.name,
            entry=self.problem.entry,
            notice=self.opening_notice(),
            mode=self.problem.mode,
            sizes=self.sizes.to_dict(),
        )
        status = "failed"
        try:
            self._prepare_in_background()
            config = SearchConfig(
                device=self.device,
                iterations=self.options.iterations,
                plans=self.options.plans,
                retries=self.options.retries,
                beam=self.options.beam,
                max_candidates=self.options.budget,
                max_tokens=self.options.max_tokens,
                max_usd=self.options.max_usd,
                seeds=self.options.seeds,
                time_limit_s=self.options.time_limit_s,
                deadline=self._deadline,
            )
            self._search = BeamSearch(
                self.problem,
                policy,
                self.log,
                config,
                gate_runner=self._gate,
                context=self._empty_context(),
                root=None,
                control=self.control,
                memory=self.memory,
                known_verdicts=known,
                on_verdict=self._checkpoint,
                screen_runner=self._screen if self.device == "cuda" else None,
            )
            context, root = self._analyse_beside_quick_start(self._search)
            left = self._time_left()
            if left is not None and left <= 0 and not self._search.gated:
                self.result = SearchResult(
                    status="finished",
                    baselines=context.baselines,
                    candidates=[],
                    best=None,
                    library_dominated=context.library_dominated,
                    notes=["time limit reached during the analysis; no candidate was gated"],
                )
                status = self.result.status
                return self.result
            self._search.start_from(
                context,
                root,
                after_root=self._deferred.measure if self._deferred is not None else None,
            )
            self.result = self._search.run()
            if self.result.best is not None and self.device == "cuda" and self.options.final_check:
                self._final_check(self.result)
            if self.result.best is not None and self.options.profile_best:
                self._profile_best(self.result)
            status = self.result.status
            return self.result
        except KeyboardInterrupt:
            # Ctrl-C: what was decided stays decided; the files say the run was cut short.
            status = "interrupted"
            raise
        except Exception as exc:
            self.log.emit("error", where="session", message=f"{type(exc).__name__}: {exc}")
            raise
        finally:
            self._finish(status)

    def _empty_context(self) -> AgentContext:
        """The agents' context before the analysis has answered (the quick start's gate)."""
        return AgentContext(
            problem=self.problem,
            device=self.device,
            baselines={},
            kernels=[],
            library_dominated=False,
            dispatch_variants=[],
            memory=[],
        )

    def _analysis_cache(self) -> Any:
        """The session's one ``AnalysisCache`` (its key, computed once, serves the quick
        start's check and the analysis), or None when the cache is off."""
        if not self.options.analysis_cache:
            return None
        if self._cache is None:
            from kernelopt_jupyter.analysis.cache import AnalysisCache

            self._cache = AnalysisCache(self.options.cache_dir)
        return self._cache

    def _quick_start(self) -> Candidate | None:
        """The candidate gated while the analysis runs, or None where there is none to gate.

        On the GPU the analysis of a problem not seen before spends most of its time in
        Inductor compiling the harvest (7.7 s of 12.3 s on the squeeze-excite block), and
        without this candidate the first verdict waits for it. This candidate needs no
        compile: the reference's own ops (the vendor libraries) replayed as one CUDA graph,
        the move the Planner offers a launch-bound problem anyway (its plan then finds this
        verdict: the same source is never gated twice). Not on the CPU (no graphs), not when
        resuming, not with the analysis cached (no wait to fill), and not under a budget too
        small to spend a candidate on it."""
        if self.device != "cuda" or self._resume is not None or self.problem.kind != "module":
            return None
        if self.options.budget < QUICK_START_MIN_BUDGET:
            return None
        cache = self._analysis_cache()
        if cache is not None:
            key = cache.key(self.problem, self.device)
            if key is not None and cache.load(key) is not None:
                return None
        from kernelopt_jupyter.agents.transforms import TransformError, wrap_cuda_graph
        from kernelopt_jupyter.candidate import eager_dispatch_source

        try:
            source = wrap_cuda_graph(eager_dispatch_source(self.problem))
        except (ValueError, TransformError, SyntaxError):
            return None
        assert self._search is not None
        return Candidate(
            self._search.new_id(),
            source,
            None,
            "quickstart",
            None,
            True,
            "dispatch: vendor libraries (eager) in a CUDA graph",
        )

    def _analyse_beside_quick_start(self, search: BeamSearch) -> tuple[AgentContext, Candidate]:
        """The analysis, with the quick-start candidate (``_quick_start``) gated meanwhile in
        this thread. The two share the GPU: the verification holds the device's timing lock
        for its whole run and the analysis for its profiling (``device.GpuLock``), so only
        the harvest's compile (host work) overlaps the gate."""
        early = self._quick_start()
        if early is None:
            return self._analyse()
        size = input_bytes(self.problem)
        if size >= ALONE_INPUT_BYTES:
            # Large inputs: the analysis's worker holds them (and Inductor's compile) while a
            # verification holds them in two processes more; one after the other they fit an
            # 80 GB card. The quick start goes first: it needs no compile.
            self.log.emit(
                "decision",
                kind="quick_start",
                candidate=early.id,
                reason=f"{early.id} ({early.note}) is gated before the analysis, not beside "
                f"it: the inputs take {size / 2**30:.1f} GiB",
            )
            with contextlib.suppress(DeadlineReached, BudgetExhausted, SearchStopped):
                search.gate(early)
            return self._analyse()
        box: dict[str, Any] = {}

        def analysis() -> None:
            try:
                box["facts"] = self._analyse()
            except BaseException as exc:  # re-raised in the search's thread below
                box["error"] = exc

        thread = threading.Thread(target=analysis, name="kernelopt-analysis", daemon=True)
        thread.start()
        self.log.emit(
            "decision",
            kind="quick_start",
            candidate=early.id,
            reason=f"{early.id} ({early.note}) needs no compile: gated while the analysis "
            "compiles the harvest",
        )
        try:
            search.gate(early)
        except (DeadlineReached, BudgetExhausted, SearchStopped):
            # Nothing decided; the analysis still gives the search what it has (a stop is
            # seen again at the search's first gate). Ctrl-C is not waited out here.
            pass
        thread.join()
        if "error" in box:
            raise box["error"]
        return box["facts"]

    def _analyse(self) -> tuple[AgentContext, Candidate]:
        """Baselines, dispatch map and harvest: from the log when resuming, else from the
        on-disk analysis cache, else measured (within the deadline)."""
        from kernelopt_jupyter.analysis.pipeline import (
            ANALYSIS_SHARE,
            analyse,
            analysis_from_events,
        )

        facts = analysis_from_events(self._resume) if self._resume else None
        if facts is None:
            cache = self._analysis_cache()
            # Until a candidate has passed, the analysis keeps half the run for the search:
            # cut there, the search gates the reference's own ops and ends with a verdict.
            passed = self._search is not None and any(g.passed for g in self._search.gated)
            # On the GPU the peers are timed after the first verdict (DeferredBaselines): the
            # first candidate needs none of them, and they are most of the analysis.
            facts = analyse(
                self.problem,
                self.device,
                self.log,
                deadline=self._deadline,
                cache=cache,
                defer_baselines=True,
                share=None if passed else ANALYSIS_SHARE,
            )
        self._deferred = facts.deferred
        self._degraded = facts.degraded
        context = AgentContext(
            problem=self.problem,
            device=self.device,
            baselines=facts.baselines,
            kernels=[KernelUnit(**k) for k in facts.kernels],
            library_dominated=facts.library_dominated,
            dispatch_variants=facts.dispatch_variants,
            memory=[],
        )
        root = Candidate(
            id="c0",
            source=facts.root_source,
            parent=None,
            agent="harvest",
            plan_id=None,
            dispatch_only=facts.root_dispatch_only,
            note=facts.root_note,
        )
        return context, root

    def _final_check(self, result: SearchResult) -> None:
        """Re-verify the winner against eager *and* torch.compile, interleaved in one run.

        Search-time timings race eager only (compiling the reference in every gate would cost
        more than the search); the reported speedups come from this one side-by-side run.
        """
        best = result.best
        assert best is not None
        try:
            report = self._gate(self.problem, best.candidate, baselines=("eager", "compile"))
        except DeadlineReached:
            result.notes.append(
                f"the final side-by-side run of {best.candidate.id} did not fit in the time "
                "limit: its speedups are from the search's own run (against eager)"
            )
            return
        perf = report.gate("performance")
        metrics = dict(perf.metrics) if perf is not None else {}
        self.log.emit(
            "decision",
            kind="final",
            candidate=best.candidate.id,
            reason=f"final side-by-side run: {perf.detail if perf else report.verdict}",
            report=report.to_dict(),
        )
        if report.verdict != GATE_PASS:
            result.notes.append(
                f"{best.candidate.id} did not hold up against the faster baseline in the final "
                "run; the baseline is kept"
            )
            result.best = None
            return
        best.report = report
        best.ms = metrics.get("candidate_ms", best.ms)
        best.speedup_vs_eager = metrics.get("speedup_vs_eager", best.speedup_vs_eager)
        best.speedup_vs_compile = metrics.get("speedup_vs_compile", best.speedup_vs_compile)

    def _profile_best(self, result: SearchResult) -> None:
        """The winner's kernel timeline for the panel, when the time limit leaves room."""
        from kernelopt_jupyter.analysis.pipeline import MIN_STEP_S, profile_candidate

        assert result.best is not None
        best = result.best.candidate
        left = self._time_left()
        if left is not None and left < MIN_STEP_S:
            result.notes.append(f"{best.id}'s kernel timeline was not profiled: time limit")
            return
        limit = 300.0 if left is None else min(300.0, left)
        profile_candidate(
            self.problem, self.device, best.id, best.source, self.log, time_limit_s=limit
        )

    def _gate(
        self,
        problem: Problem,
        candidate: Candidate,
        baselines: tuple[str, ...] = ("eager",),
    ) -> VerifyReport:

        options = self._verify_options(dispatch_only=candidate.dispatch_only, baselines=baselines)
        # Written first: the verdict names the file the candidate is kept in.
        (self.out_dir / "candidates").mkdir(exist_ok=True)
        saved = self.out_dir / "candidates" / f"{candidate.id}.py"
        saved.write_text(candidate.source)
        path = str(saved)
        service = self._verify_service(problem, options)
        # Not begun where even the quickest verification of this search so far (less a
        # fifth) would not end before the deadline: it would be cut, its work lost, and the
        # search would end later for nothing (most of the H200 bench's searches ended on a
        # verification begun a few seconds before the limit and cut).
        quickest = 0.8 * min(self._verify_s) if self._verify_s else 0.0
        started = time.monotonic()
        report = verify_before(
            problem,
            candidate.source,
            options,
            path,
            device=self.device,
            deadline=self._deadline or Deadline.start(),
            service=service,
            min_s=quickest,
        )
        self._verify_s.append(time.monotonic() - started)
        return report

    def _screen(self, problem: Problem, variants: list[str], time_limit_s: float) -> ScreenResult:
        """The Tuner's variants timed together in one untrusted worker (``analysis.screen``)."""
        from kernelopt_jupyter.analysis.screen import screen_variants

        return screen_variants(problem, variants, self.device, time_limit_s=time_limit_s)

    def submit(self, source: str, parent: str | None = None, agent: str = "person") -> str:
        """Gate a person's candidate (from the panel) like any other; returns its id."""
        if self._search is None:
            raise SessionError("the search has not started yet; submit after it begins")
        search = self._search
        refusal = search.budget_refusal()
        if refusal is not None:
            # Said now, not after "submitted": the gates would refuse it at once.
            raise SessionError(f"{refusal}; no more candidates are gated in this session")
        earlier = search.decided(source)
        if earlier is not None:
            # Already decided: the person's edit is that candidate (never gated twice).
            search.gate(Candidate("", source, parent, agent))
            return earlier.candidate.id
        cid = search.new_id()
        from kernelopt_jupyter.candidate import is_dispatch_only

        candidate = Candidate(
            cid, source, parent, agent, None, is_dispatch_only(source), "edited by a person"
        )

        def gate() -> None:
            try:
                search.gate(candidate)
            except BudgetExhausted as exc:  # the deadline or a budget came first: say so
                self.log.emit("error", where="submit", message=f"{cid} not gated: {exc}")

        threading.Thread(target=gate, name=f"kernelopt-submit-{cid}", daemon=True).start()
        return cid

    # ------------------------------------------------------------------ files
    def _checkpoint(self, search: BeamSearch) -> None:
        """After every verdict: result.json and best.py as they stand, status ``interrupted``
        (what a reader finds if the process dies now; the last write says how it ended)."""
        self._write_files(search.snapshot("interrupted"), "interrupted")

    def _verify_options(self, **extra: Any) -> Any:
        """The search's verification settings (one place, so the service made before the
        analysis accepts every gate's candidates)."""
        from kernelopt_jupyter.verify import VerifyOptions

        return VerifyOptions(
            device=self.device,
            seeds=self.options.seeds,
            time_limit_s=self.options.time_limit_s,
            **extra,
        )

    def _prepare_in_background(self) -> None:
        """On the GPU, while the analysis runs: the verification worker starts (its process
        and imports) and the rewrite scan traces the reference, so neither waits for the
        other or delays the first candidate. (On the CPU they would only share its cores.)"""
        if self.device != "cuda" or self._resume is not None:
            return
        from kernelopt_jupyter.agents.rewrites.task import prefetch

        if self.options.agents == "offline" and self.problem.kind == "module":
            prefetch(self.problem)
        service = self._verify_service(self.problem, self._verify_options())
        if service is not None:
            service.prewarm()

    def _verify_service(self, problem: Problem, options: Any) -> Any:
        """The search's verification worker (``verify.service``), made at the first gate: one
        process start and one set of imports for many candidates, each still in a process of
        its own. ``KERNELOPT_VERIFY_SERVICE=0`` verifies each candidate in a worker of its own."""
        from kernelopt_jupyter.verify.service import VerifyService, pool_for_budget

        if os.environ.get("KERNELOPT_VERIFY_SERVICE") == "0" or problem is not self.problem:
            return None
        if self._service is None:
            pool = pool_for_budget(self.options.budget)
            self._service = VerifyService(problem, self.device, options, pool=pool)
        return self._service

    def _finish(self, status: str) -> None:
        if self._service is not None:
            self._service.close()
            self._service = None
        if self._deferred is not None:
            self._deferred.close()  # its worker, if the search ended before it was used
        result = self.result
        if result is None and self._search is not None:
            # The search did not return (Ctrl-C, a crash): keep everything it decided.
            result = self._search.snapshot(status)
            if self.error:
                result.notes.append(self.error)
        payload = self._write_files(result, status)
        self.log.emit(
            "session_finished",
            status=status,
            best=payload["best"],
            speedup_vs_eager=payload["speedup_vs_eager"],
            speedup_vs_compile=payload["speedup_vs_compile"],
        )

    def _write_files(self, result: SearchResult | None, status: str) -> dict[str, Any]:
        """Rewrite result.json (and best.py when there is a best) atomically; the payload."""
        with self._files_lock:
            return self._write_files_locked(result, status)

    def _write_files_locked(self, result: SearchResult | None, status: str) -> dict[str, Any]:
        best = result.best if result else None
        payload = {
            "schema": RESULT_SCHEMA,
            "problem": self.problem.path,
            "device": self.device,
            "agents": self.options.agents,
            "status": status,
            "baselines": result.baselines if result else {},
            "library_dominated": result.library_dominated if result else False,
            "candidates": [g.to_dict() for g in result.candidates] if result else [],
            "best": best.candidate.id if best else None,
            "best_dispatch_only": best.candidate.dispatch_only if best else None,
            "speedup_vs_eager": best.speedup_vs_eager if best else None,
            "speedup_vs_compile": best.speedup_vs_compile if best else None,
            "notes": result.notes if result else ([self.error] if self.error else []),
            "mode": self.problem.mode,
            # The sizes the problem ran at: {"mode": "small", "changed": {name: [published,
            # shrunk]}, ...} (kernelopt_jupyter.sizes; docs/problems.md, "Sizes on the CPU").
            "sizes": self.sizes.to_dict(),
            # The analysis phases that failed (phase, one-line cause); empty when none did.
            "degraded": self.degraded,
        }
        write_atomic(self.out_dir / "result.json", json.dumps(payload, indent=1, default=str))
        if best is not None:
            from kernelopt_jupyter.deploy.guard import guard_best_source, shape_rule_note

            # The guard admits the kernels only at the shape the search verified them at, and
            # says what the derived batches showed; `kernelopt export` verifies more
            # (docs/deploy.md).
            guarded = guard_best_source(
                self.problem,
                _standalone(best, self.problem.mode),
                self.device,
                shape_rule_note(best.gates),
            )
            write_atomic(self.out_dir / "best.py", guarded)
        return payload

    # ------------------------------------------------------------------ saved sessions
    @classmethod
    def open(
        cls, out_dir: str | Path, *, resume: bool = False, options: SearchOptions | None = None
    ) -> OptimizationSession:
        """A saved session from its folder: read-only (``log`` holds its events) or resumed."""
        folder = Path(out_dir)
        events_file = folder / "events.jsonl"
        problem_file = folder / "problem.py"
        if not events_file.is_file() or not problem_file.is_file():
            raise SessionError(f"{folder}: not a KernelOPT session (no events.jsonl/problem.py)")
        try:
            events = read_events(events_file)
        except EventError as exc:
            raise SessionError(f"{exc} (repair or delete that line to open it)") from None
        started = next((p for e in events if isinstance(p := e.payload(), SessionStarted)), None)
        try:
            problem = problem_from_source(
                problem_file.read_text(),
                started.problem_path if started else str(problem_file),
                validate=False,
            )
        except ProblemError as exc:
            raise SessionError(str(exc)) from None
        if options is None:
            saved = dict(started.options) if started else {}
            options = SearchOptions(
                **{k: v for k, v in saved.items() if k in SearchOptions.__dataclass_fields__}
            )
            if options.memory_path is not None:
                options.memory_path = Path(options.memory_path)
            if options.cache_dir is not None:
                options.cache_dir = Path(options.cache_dir)
        options.out_dir = folder
        session = cls(problem, options, _resume_events=events if resume else None)
        return session


def _decided_reports(events: list[Event]) -> dict[str, VerifyReport]:
    """Source key -> verifier report of every verdict a saved log holds (for ``--resume``)."""
    known: dict[str, VerifyReport] = {}
    for e in events:
        verdict = e.payload()
        if not isinstance(verdict, Verdict) or verdict.report is None or not verdict.source_key:
            continue
        try:
            known[verdict.source_key] = VerifyReport.from_dict(verdict.report)
        except ValueError:
            continue  # a verdict written by an older schema is gated again, not trusted
    return known


#: How best.py and the progress lines name a problem's mode.
MODE_TEXT = {
    "as-constructed": "as constructed (the reference's own mode, as KernelBench runs it)",
    "eval": "eval (inference: optimized and verified with the reference in .eval())",
}


def _standalone(best: GatedCandidate, mode: str) -> str:
    c = best.candidate
    timing = (
        f"{best.ms:.4f} ms; {best.speedup_vs_eager or 0:.2f}x eager; "
        f"{best.speedup_vs_compile or 0:.2f}x torch.compile"
        if best.ms is not None
        else "not timed (no GPU)"
    )
    gates = ", ".join(f"{g.name}={g.status}" for g in best.gates)
    kind = "dispatch-only" if c.dispatch_only else "kernel"
    header = (
        f"# KernelOPT candidate {c.id} (agent: {c.agent}; plan: {c.plan_id}; {kind})\n"
        f"# Mode: {MODE_TEXT[mode]}\n"
        f"# Gates: {gates}\n"
        f"# Timing: {timing}\n# source key {source_key(c.source)}\n"
    )
    return header + c.source
