"""The analysis phase of a session: baselines, dispatch map and the search's starting point.

These are facts the search cannot change. They are measured once, written to the event stream
(``baseline`` and ``profile`` events, the latter carrying everything the search needs as
``facts``), and read back from the log when a session resumes, so a resumed search neither
re-measures nor re-harvests.
"""

from __future__ import annotations

import ast
import math
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from kernelopt_jupyter.analysis.baselines import Baselines, emit_baseline
from kernelopt_jupyter.analysis.cache import AnalysisCache
from kernelopt_jupyter.candidate import eager_dispatch_source
from kernelopt_jupyter.deadline import Deadline
from kernelopt_jupyter.device import GPU_LOCK
from kernelopt_jupyter.event_payloads import Baseline, Degraded, Profile
from kernelopt_jupyter.events import Event, EventLog
from kernelopt_jupyter.problem import Problem


@dataclass
class AnalysisFacts:
    """What the search starts from."""

    baselines: dict[str, float | None]
    kernels: list[dict[str, Any]]
    library_dominated: bool
    dispatch_variants: list[tuple[str, str]]
    root_source: str
    root_dispatch_only: bool
    root_note: str
    notes: list[str] = field(default_factory=list)
    #: The phases that failed, each ``{"phase": ..., "error": ...}`` (``degraded`` events;
    #: result.json's ``degraded``): an analysis with any is never cached.
    degraded: list[dict[str, str]] = field(default_factory=list)
    #: The peers' timing still to do (``analyse(..., defer_baselines=True)``); not data.
    deferred: DeferredBaselines | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the ``profile`` event."""
        data = asdict(replace(self, deferred=None))
        data.pop("deferred", None)
        data["dispatch_variants"] = [list(v) for v in self.dispatch_variants]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AnalysisFacts:
        """Inverse of :meth:`to_dict`."""
        d = dict(data)
        d["dispatch_variants"] = [tuple(v) for v in d.get("dispatch_variants", [])]
        return cls(**d)


#: A dispatch variant whose whole forward the dispatch map timed this much slower than the
#: harvest is not offered to the search (VGG on the H200: 7.7 ms against 5.2 ms, and its gate
#: took one of the four first slots of a one-minute search).
SLOWER_VARIANT = 1.05


def _worth_trying(dmap: Any, variants: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The harvest's dispatch variants, less those the map measured clearly slower."""
    slower = {
        c.label
        for c in dmap.choices
        if c.variant_ms is not None
        and c.harvest_ms
        and c.variant_ms > SLOWER_VARIANT * c.harvest_ms
    }
    return [(label, source) for label, source in variants if label not in slower]


def _kernel_problem_units(problem: Problem) -> list[dict[str, Any]]:
    """A Triton or Helion problem's own kernels, as the agents see them."""
    tree = ast.parse(problem.source)
    units: list[dict[str, Any]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(
            ast.unparse(d.func if isinstance(d, ast.Call) else d).endswith(("jit", "kernel"))
            for d in node.decorator_list
        ):
            units.append(
                {
                    "name": node.name,
                    "kind": "triton",
                    "source": ast.get_source_segment(problem.source, node) or "",
                    "ops": [],
                    "share": None,
                    "ms": None,
                    "bound": None,
                    "roofline_fraction": None,
                }
            )
    return units


#: Seconds an analysis step is given at most (the worker is killed past it).
STEP_LIMIT_S = 900.0
#: Below this many seconds before the deadline a step is not started (it could not finish).
MIN_STEP_S = 3.0
#: The deferred peers are not timed when less than this is left before the deadline after the
#: first verdict: on the H200 they took 11-18 s, and with less left they would take the time of
#: the search's next candidates (``diag_scale_matmul``: 25 s left, 17.8 s of peers, and the
#: rewrite worth 107x cut by the deadline). Eager then comes from the first candidate's gate.
DEFER_SKIP_S = 30.0


def _limit(deadline: Deadline | None, default: float = STEP_LIMIT_S) -> float:
    """Seconds a step may take: the default, or what is left before ``deadline``."""
    return default if deadline is None else deadline.cap(default)


#: The analysis's phases as ``degraded`` events name them: the worker as a whole (it died,
#: timed out or did not answer), the peers' timing (GPU), the Inductor harvest with its dispatch
#: map (module problems: one step), the reference's kernel timeline.
PHASES = ("analysis", "baselines", "harvest", "timeline")


def failure(phase: str, error: str) -> dict[str, str]:
    """A failed phase as ``degraded`` lists it: its name and its cause on one line."""
    line = " ".join(str(error).split()) or "failed (no message)"
    return {"phase": phase, "error": line if len(line) <= 500 else line[:497] + "..."}


def emit_degraded(log: EventLog, degraded: list[dict[str, str]]) -> None:
    """One ``degraded`` event per failed phase (the console's and the panel's warning)."""
    for entry in degraded:
        log.emit("degraded", phase=entry["phase"], error=entry["error"])


def _emit_baselines(log: EventLog, base: dict[str, Any]) -> None:
    baselines = Baselines(**base)
    for name, ms in baselines.as_ms().items():
        emit_baseline(
            log,
            name,
            ms,
            measured=baselines.measured and ms is not None,
            detail=baselines.detail,
            compile_s=baselines.compile_s.get(name),
        )


@dataclass
class DeferredBaselines:
    """The peers' timing, left for after the first candidate's verdict (``analyse(...,
    defer_baselines=True)`` on the GPU): compiling and timing torch.compile's three modes takes
    most of the analysis (9-13 s of 14-22 s on the H200), and the first candidate needs none of
    it (its performance gate races eager itself). They run after that verdict, in a worker of
    their own and never beside another GPU job, so their timing is what it was; the search's
    planning reads them (:meth:`measure` fills the facts' ``baselines`` in place)."""

    problem: Problem
    device: str
    log: EventLog
    facts: AnalysisFacts
    profile: dict[str, Any]
    deadline: Deadline | None = None
    cache: AnalysisCache | None = None
    key: str | None = None
    complete: bool = True
    done: bool = False
    #: The worker that will time them, started ahead (``start_worker``): its process start
    #: and imports (5-20 s on the H200) run while the first candidate is verified.
    worker: Any = field(default=None, repr=False, compare=False)

    def start_worker(self) -> None:
        """Start the peers' worker now, its task sent only at ``measure`` (a worker started
        ahead: ``worker.prestart_service``); nothing runs on the device until then. Never
        raises: ``measure`` then starts one as before."""
        from kernelopt_jupyter.worker import prestart_service

        if self.worker is not None or self.done:
            return
        try:
            self.worker = prestart_service(
                device=self.device,  # type: ignore[arg-type]
                preload=BASELINES_PRELOAD,
            )
        except Exception:
            self.worker = None

    def close(self) -> None:
        """End the worker started ahead if ``measure`` never took it (the search ended
        first); idempotent."""
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.close()

    def measure(self) -> dict[str, float | None]:
        """Time the peers (once), emit their ``baseline`` events, store the complete analysis
        in the cache; returns the baselines (name -> ms, None where not measured)."""
        if self.done:
            return self.facts.baselines
        self.done = True
        worker, self.worker = self.worker, None
        left = _limit(self.deadline, default=math.inf)
        if left < DEFER_SKIP_S:
            if worker is not None:
                worker.close()
            base = Baselines(
                measured=False,
                device=self.device,
                detail=f"not measured: {max(left, 0.0):.0f} s were left after the first verdict,"
                " kept for candidates (eager comes from the first candidate's performance gate;"
                " the final side-by-side run times the winner against torch.compile)",
            )
        else:
            base, error = _measure_baselines(self.problem, self.device, self.deadline, worker)
            if error:
                self.facts.degraded.append(failure("baselines", error))
                emit_degraded(self.log, self.facts.degraded[-1:])
        _emit_baselines(self.log, base.to_dict())
        self.facts.baselines.clear()
        self.facts.baselines.update(base.as_ms())
        self.profile["facts"] = self.facts.to_dict()
        whole = self.complete and base.measured and not self.facts.degraded
        if self.cache is not None and self.key is not None and whole:
            self.cache.store(self.key, {"baselines": base.to_dict(), "profile": self.profile})
        return self.facts.baselines


def analyse(
    problem: Problem,
    device: str,
    log: EventLog,
    *,
    deadline: Deadline | None = None,
    cache: AnalysisCache | None = None,
    defer_baselines: bool = False,
    share: float | None = None,
) -> AnalysisFacts:
    """Measure baselines, profile and harvest ``problem``; emits ``baseline`` and ``profile``.

    ``deadline`` (the run's :class:`Deadline`) bounds every step: a step's worker is killed
    at it and a step that cannot start is skipped, with a note. A phase that fails is said
    (a ``degraded`` event each, after the ``profile`` event) and listed in the facts'
    ``degraded``; such an analysis is never stored. ``cache`` returns the facts of an earlier
    complete analysis of the same problem, shapes, torch, Triton and GPU.
    ``defer_baselines`` (GPU only, cache miss): the peers are not timed here; the returned
    facts carry ``deferred`` (:class:`DeferredBaselines`), to be measured after the first
    verdict, and their ``baselines`` are unmeasured (None) until then.
    ``share`` (a fraction of a limited run): the measurement's worker is killed at that share
    of the limit, counted from the run's start, and the search then starts from the
    reference's own ops (:func:`_fallback_facts`), so a run always keeps time to gate one.
    """
    key = cache.key(problem, device) if cache is not None else None
    saved = cache.load(key) if cache is not None and key is not None else None
    if saved is not None:
        _emit_baselines(log, saved["baselines"])
        profile = _named(dict(saved["profile"]), problem.name)
        log.emit("profile", **profile, cached=True)
        return AnalysisFacts.from_dict(profile["facts"])
    defer = defer_baselines and device == "cuda"
    bound = deadline.share(share) if deadline is not None and share is not None else deadline
    base, profile, complete = _measure(problem, device, bound, baselines=not defer)
    if bound is not deadline and bound is not None and bound.reached() and not complete:
        # Cut on purpose, not a failure of the problem's: said as such, never cached.
        note = _share_note(bound, deadline)
        profile["facts"]["notes"].insert(0, note)
        for entry in profile["facts"]["degraded"]:
            if entry["phase"] == "analysis":
                entry["error"] = note
    profile = _named(profile, problem.name)
    facts = AnalysisFacts.from_dict(profile["facts"])
    if defer:
        log.emit("profile", **profile, cached=False, baselines_deferred=True)
        emit_degraded(log, facts.degraded)
        facts.deferred = DeferredBaselines(
            problem, device, log, facts, profile, deadline, cache, key, complete
        )
        facts.deferred.start_worker()
        return facts
    _emit_baselines(log, base.to_dict())
    log.emit("profile", **profile, cached=False)
    emit_degraded(log, facts.degraded)
    if cache is not None and key is not None and complete and not facts.degraded:
        cache.store(key, {"baselines": base.to_dict(), "profile": profile})
    return facts


def _named(profile: dict[str, Any], name: str) -> dict[str, Any]:
    """``profile`` whose harvested sources (the root, the dispatch variants) name the session's
    problem ``name`` in their docstring (the worker and the cache know only the source)."""
    from kernelopt_jupyter.analysis.harvest import titled

    facts = dict(profile["facts"])
    facts["root_source"] = titled(facts["root_source"], name)
    facts["dispatch_variants"] = [
        [label, titled(source, name)] for label, source in facts.get("dispatch_variants", [])
    ]
    return {**profile, "facts": facts}


#: What the peers' worker started ahead imports while it waits (``analysis_task``'s own
#: imports: timing torch.compile's modes needs Inductor).
BASELINES_PRELOAD = (
    "torch",
    "torch._dynamo",
    "triton",
    "torch._inductor.compile_fx",
    "kernelopt_jupyter.analysis.baselines",
)
#: What the analysis worker started ahead imports (the dispatch map, harvest and timeline too).
ANALYSIS_PRELOAD = (
    *BASELINES_PRELOAD,
    "kernelopt_jupyter.analysis.dispatch",
    "kernelopt_jupyter.analysis.harvest",
    "kernelopt_jupyter.analysis.timeline",
)


def _measure_baselines(
    problem: Problem, device: str, deadline: Deadline | None, worker: Any = None
) -> tuple[Baselines, str]:
    """The peers alone, in a worker of their own (the deferred half of the analysis): the one
    started ahead (``DeferredBaselines.start_worker``) when it is still up, else a new one.
    Returns them and why their timing failed ("" when it did not fail, or did not run for
    want of time)."""
    if _limit(deadline) < MIN_STEP_S:
        if worker is not None:
            worker.close()
        base = Baselines(measured=False, device=device, detail="not measured: time limit reached")
        return base, ""
    result = _analysis_worker(problem, device, deadline, ["baselines"], ahead=worker)
    steps: dict[str, Any] = dict(result.value) if result.ok else {}
    why = "" if result.ok else f"analysis worker: {result.describe()}"
    return _baselines_of(steps, device, why), _step_failure(steps, "baselines", why)


def _step_failure(steps: dict[str, Any], name: str, why: str) -> str:
    """Why step ``name`` of an analysis worker's answer failed: the worker's failure
    (``why``), the step's error, or its absence; "" when it ran to its end."""
    if why:
        return why
    step = steps.get(name)
    if not isinstance(step, dict) or not step:
        return f"the {name} step did not run"
    return str(step.get("step_error") or "")


#: The task a worker started ahead is handed (``analysis_service``).
ANALYSIS_SERVICE = "kernelopt_jupyter.analysis.pipeline:analysis_service"


def prestart_analysis(device: str) -> None:
    """Start the analysis worker ahead (the CLI does so on the GPU before it imports torch
    and reads the problem): its process start and imports overlap that, and the session's
    analysis takes it (``_analysis_worker``). It holds no problem until then
    (``worker.keep_spare``: closed unused after a while or at exit)."""
    from kernelopt_jupyter.worker import keep_spare, prestart_service

    keep_spare(
        ("analysis", device),
        lambda: prestart_service(device=device, preload=ANALYSIS_PRELOAD),  # type: ignore[arg-type]
    )


def _run_ahead(
    worker: Any, problem: Problem, deadline: Deadline | None, steps: list[str] | None
) -> Any:
    """``analysis_task`` (``steps`` of it) in a worker started ahead: a ``WorkerResult`` as
    ``run_task`` gives one, or None when that worker had died or failed (the caller then
    starts one). Past the deadline the worker is killed with its tree (timed out)."""
    from kernelopt_jupyter.worker import ServiceError, ServiceTimeout, WorkerResult

    kwargs: dict[str, Any] = {"source": problem.source, "path": problem.path, "kind": problem.kind}
    if steps is not None:
        kwargs["steps"] = steps
    started = time.monotonic()
    try:
        worker.begin(ANALYSIS_SERVICE, {"task": kwargs})
        # The user's own reference ran there, nothing of a candidate: read as run_task does.
        reply = worker.request("run", _limit(deadline), trusted=True)
    except ServiceTimeout:
        return WorkerResult(False, timed_out=True, seconds=time.monotonic() - started)
    except ServiceError:
        return None
    finally:
        worker.close()
    if not isinstance(reply, dict) or "ok" not in reply:
        return None
    return WorkerResult(
        ok=bool(reply["ok"]),
        value=reply.get("value"),
        error=str(reply.get("error", "")),
        error_type=str(reply.get("error_type", "")),
        traceback=str(reply.get("traceback", "")),
        exitcode=0,
        seconds=time.monotonic() - started,
    )


def analysis_service(task: dict[str, Any], control: Any) -> None:
    """Service entry of a worker started ahead: on its one request, ``analysis_task(**task)``,
    answered (or its error); then the worker ends."""
    import pickle
    import traceback

    from kernelopt_jupyter.worker import recv_frame, send_frame

    if pickle.loads(recv_frame(control)) is None:
        return
    try:
        reply: dict[str, Any] = {"ok": True, "value": analysis_task(**task)}
    except Exception as exc:
        reply = {
            "ok": False,
            "error": str(exc)[:2000] or repr(exc),
            "error_type": type(exc).__name__,
            "traceback": traceback.format_exc()[-4000:],
        }
    send_frame(control, pickle.dumps(reply))


def _analysis_worker(
    problem: Problem,
    device: str,
    deadline: Deadline | None,
    steps: list[str] | None = None,
    *,
    ahead: Any = None,
) -> Any:
    """``analysis_task`` (all its steps, or ``steps``) in a worker, within the deadline: the
    worker ``ahead`` (or else one ``prestart_analysis`` left) when it is up, a new one else."""
    from kernelopt_jupyter.worker import run_task, take_kept

    if ahead is None:
        ahead = take_kept(("analysis", device))
    if ahead is not None:
        result = _run_ahead(ahead, problem, deadline, steps)
        if result is not None:
            return result

    kwargs: dict[str, Any] = {"source": problem.source, "path": problem.path, "kind": problem.kind}
    if steps is not None:
        kwargs["steps"] = steps
    return run_task(
        "kernelopt_jupyter.analysis.pipeline:analysis_task",
        kwargs,
        device=device,  # type: ignore[arg-type]
        time_limit_s=_limit(deadline),
    )


def _baselines_of(steps: dict[str, Any], device: str, why: str) -> Baselines:
    """The baselines an analysis worker's answer holds, or why there are none."""
    if "baselines" in steps and "step_error" not in steps["baselines"]:
        return Baselines(**steps["baselines"])
    detail = steps.get("baselines", {}).get("step_error") or why
    return Baselines(measured=False, device=device, detail=f"not measured: {detail}")


def analysis_task(
    source: str, path: str, kind: str, ncu: bool = False, steps: list[str] | None = None
) -> dict[str, Any]:
    """Worker entry: the whole analysis in one process (torch, Triton and Inductor are
    imported once): the baselines (GPU), the dispatch map with the harvest (module problems),
    the reference's kernel timeline; ``steps`` names a subset (``baselines``, ``dispatch``,
    ``timeline``). A step that raises leaves its error in its place and the next step still
    runs; device memory is released between steps."""
    import gc
    import time as clock

    import torch

    from kernelopt_jupyter.analysis.baselines import SEARCH_MODES, baselines_task
    from kernelopt_jupyter.analysis.dispatch import profile_task
    from kernelopt_jupyter.analysis.harvest import worker_device
    from kernelopt_jupyter.analysis.timeline import timeline_task

    device = worker_device()
    out: dict[str, Any] = {"seconds": {}}
    todo: list[tuple[str, Any]] = []
    if device == "cuda":
        todo.append(("baselines", lambda: baselines_task(source, path, list(SEARCH_MODES))))
    if kind == "module":
        todo.append(("dispatch", lambda: profile_task(source, path, ncu)))
    todo.append(("timeline", lambda: timeline_task(source, path, device)))
    for name, step in todo:
        if steps is not None and name not in steps:
            continue
        started = clock.monotonic()
        if device == "cuda" and name != "dispatch":
            GPU_LOCK.acquire()  # the dispatch step takes it once its harvest has compiled
        try:
            out[name] = step()
        except Exception as exc:
            out[name] = {"step_error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        finally:
            GPU_LOCK.release()
        out["seconds"][name] = round(clock.monotonic() - started, 2)
        torch._dynamo.reset()
        gc.collect()
        if device == "cuda":
            torch.cuda.empty_cache()
    return out


def _measure(
    problem: Problem, device: str, deadline: Deadline | None, *, baselines: bool = True
) -> tuple[Baselines, dict[str, Any], bool]:
    """The analysis itself, in one worker: baselines (unless ``baselines`` is false: they are
    deferred), the dispatch map with the harvest, the timeline.

    Returns the ``profile`` event's fields and whether every step ran to its end (only a
    complete analysis is worth caching). A step that failed is listed in the facts'
    ``degraded`` (the worker as a whole as ``analysis``); one cut by the deadline before it
    began is not a failure (it is incomplete).
    """
    from kernelopt_jupyter.analysis.dispatch import DispatchMap, dispatch_map_from_dict

    if _limit(deadline) < MIN_STEP_S:
        base = Baselines(measured=False, device=device, detail="not measured: time limit reached")
        facts = _fallback_facts(problem, base, "the time limit was reached before the harvest")
        profile = {
            "dispatch_map": {},
            "summary": facts.root_note,
            "facts": facts.to_dict(),
            "timeline": [],
            "timeline_detail": "not profiled: time limit reached",
        }
        return base, profile, False
    result = _analysis_worker(
        problem, device, deadline, None if baselines else ["dispatch", "timeline"]
    )
    complete = result.ok
    steps: dict[str, Any] = dict(result.value) if result.ok else {}
    why = "" if result.ok else f"analysis worker: {result.describe()}"
    degraded = [] if result.ok else [failure("analysis", result.describe())]
    notes = [f"analysis steps (s): {steps['seconds']}"] if steps.get("seconds") else []
    if device != "cuda":
        base = Baselines(
            measured=False,
            device=device,
            detail="not measured: no GPU (the Triton interpreter's CPU times mean nothing)",
        )
    elif not baselines:
        base = Baselines(
            measured=False, device=device, detail="not measured yet: after the first verdict"
        )
    else:
        base = _baselines_of(steps, device, why)
        complete = complete and "step_error" not in steps.get("baselines", {"step_error": ""})
        if result.ok and _step_failure(steps, "baselines", ""):
            degraded.append(failure("baselines", _step_failure(steps, "baselines", "")))
    dmap_dict: dict[str, Any] = {}
    if problem.kind != "module":
        facts = AnalysisFacts(
            baselines=base.as_ms(),
            kernels=_kernel_problem_units(problem),
            library_dominated=False,
            dispatch_variants=[],
            root_source=problem.source,
            root_dispatch_only=False,
            root_note=f"the user's {problem.kind} kernel",
        )
        summary = facts.root_note
    else:
        raw = steps.get("dispatch") or {"step_error": why or "the dispatch step did not run"}
        if "step_error" in raw:
            dmap = DispatchMap(problem.path, device, ok=False, error=str(raw["step_error"]))
        else:
            dmap = dispatch_map_from_dict(raw)
        harvest = dmap.harvest
        if harvest is not None and harvest.ok and harvest.source:
            root, dispatch_only, note = harvest.source, False, "Inductor harvest"
            if harvest.library_dominated:
                note = "Inductor harvest (library-dominated: every op is a vendor call)"
                dispatch_only = not harvest.kernels
            facts = AnalysisFacts(
                baselines=base.as_ms(),
                kernels=dmap.units(),
                library_dominated=dmap.library_dominated,
                dispatch_variants=_worth_trying(dmap, harvest.dispatch_variants),
                root_source=root,
                root_dispatch_only=dispatch_only,
                root_note=note,
                notes=list(dmap.notes),
            )
        else:
            why = (harvest.error if harvest is not None else "") or dmap.error or "harvest failed"
            # A worker killed at its limit is not the problem's answer: do not cache it.
            complete = complete and "timed out" not in why
            if result.ok:
                degraded.append(failure("harvest", why))
            facts = _fallback_facts(problem, base, why, kernels=dmap.units(), notes=dmap.notes)
            facts.library_dominated = dmap.library_dominated
        dmap_dict = dmap.to_dict()
        summary = _summary(dmap_dict, facts)
    facts.notes = notes + facts.notes
    timeline = steps.get("timeline") or {}
    if result.ok and _step_failure(steps, "timeline", ""):
        degraded.append(failure("timeline", _step_failure(steps, "timeline", "")))
    if "step_error" in timeline or not timeline:
        timeline = {"timeline": [], "detail": f"no timeline: {timeline.get('step_error') or why}"}
    facts.degraded = degraded
    profile = {
        "dispatch_map": dmap_dict,
        "summary": summary,
        "facts": facts.to_dict(),
        "timeline": timeline["timeline"],
        "timeline_detail": timeline["detail"],
        "step_seconds": dict(steps.get("seconds") or {}),
    }
    return base, profile, complete


#: The share of a limited run the analysis may take when no candidate has passed yet: past it
#: the search starts from the reference's own ops. KernelBench's level-3 networks took all of
#: a one-minute GPU run (and 156 s of a 150 s CPU run) in the harvest, and ended with nothing.
ANALYSIS_SHARE = 0.5


def _share_note(bound: Deadline, run: Deadline | None) -> str:
    """What the facts say when the analysis was stopped at its share of the run."""
    whole = run.limit_s if run is not None and run.limit_s is not None else 0.0
    return (
        f"{Degraded.CUT} {bound.limit_s or 0.0:.0f} s, its share of the "
        f"{whole:.0f} s limit: the search starts from the reference's own ops"
    )


def _fallback_facts(
    problem: Problem,
    base: Baselines,
    why: str,
    *,
    kernels: list[dict[str, Any]] | None = None,
    notes: list[str] | None = None,
) -> AnalysisFacts:
    """Facts that start the search from the reference's own ops (the harvest did not run)."""
    try:
        root, dispatch_only = eager_dispatch_source(problem), True
    except ValueError:
        root, dispatch_only = problem.source, True
    return AnalysisFacts(
        baselines=base.as_ms(),
        kernels=kernels or [],
        library_dominated=False,
        dispatch_variants=[],
        root_source=root,
        root_dispatch_only=dispatch_only,
        root_note="reference ops (the harvest failed)",
        notes=[f"harvest failed, starting from the reference's own ops: {why}", *(notes or [])],
    )


def profile_candidate(
    problem: Problem,
    device: str,
    candidate_id: str,
    source: str,
    log: EventLog,
    *,
    time_limit_s: float = 300.0,
) -> None:
    """The kernel timeline of one candidate (the winner), beside the reference's, for the
    panel; emitted as a ``profile`` event carrying ``candidate``."""
    from kernelopt_jupyter.analysis.timeline import profile_timeline

    timeline = profile_timeline(problem, device, source, time_limit_s=time_limit_s)
    log.emit(
        "profile",
        candidate=candidate_id,
        dispatch_map={},
        summary=f"kernel timeline of {candidate_id}",
        timeline=timeline["timeline"],
        timeline_detail=timeline["detail"],
    )


def _summary(dmap: dict[str, Any], facts: AnalysisFacts) -> str:
    records = dmap.get("records", [])
    triton = sum(1 for r in records if r.get("kind") == "triton")
    vendor = sum(1 for r in records if r.get("kind") == "vendor")
    text = f"{triton} generated Triton kernel(s), {vendor} vendor call(s)"
    if facts.library_dominated:
        text += "; library-dominated"
    if dmap.get("ranked_by"):
        text += f"; ranked by {dmap['ranked_by']}"
    return text


def analysis_from_events(events: list[Event] | None) -> AnalysisFacts | None:
    """The facts a saved session already measured, or None when its log has none. Baselines
    timed after the ``profile`` event (deferred to after the first verdict) are taken from
    their ``baseline`` events, the failed phases from the ``degraded`` events."""
    facts = None
    timed: dict[str, float] = {}
    degraded: list[dict[str, str]] = []
    for event in events or []:
        d = event.payload()
        if isinstance(d, Profile) and d.facts is not None and facts is None:
            facts = AnalysisFacts.from_dict(d.facts)
        elif isinstance(d, Baseline) and d.ms is not None:
            timed[d.name] = float(d.ms)
        elif isinstance(d, Degraded):
            degraded.append(failure(d.phase, d.error))
    if facts is not None:
        facts.baselines.update({k: v for k, v in timed.items() if facts.baselines.get(k) is None})
        if degraded:
            facts.degraded = degraded
    return facts
