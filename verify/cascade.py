"""The four gates in order: ``verify_candidate`` (the Verification API of docs/engine.md).

Where each part runs (docs/verification.md has the threat model):

* the static gate's source analysis runs here (it only parses);
* one verification worker, a fork server, imports torch and the project once and forks the
  reference's process and the candidate's process before it reads its task; it then checks
  (``checker.verify_task``): the static gate's run-time checks, correctness over a schedule
  drawn from a fresh seed, and the fp64 referee. The candidate's process holds nothing of the
  reference and answers with data. On the GPU the same worker then runs the performance gate
  (``verify.perf``): the candidate's process times the candidate it already loaded, the
  reference's process times the baselines, interleaved and driven by the checker's clock;
* on the CPU a second worker without the interpreter compiles each launched kernel for sm_90
  (on the GPU the kernels were really compiled and run for the device); a kernel the check
  cannot build or cannot find fails the gate.

``VerifyOptions.deadline`` bounds every worker: the one in flight at the deadline is killed
and ``VerificationCancelled`` raised.

Every worker runs with a scrubbed environment, in its own process group, and takes everything
it started with it when it ends or its caller dies (``kernelopt_jupyter.worker``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from kernelopt_jupyter.device import Device, resolve_device
from kernelopt_jupyter.problem import Problem, ProblemError
from kernelopt_jupyter.verify.compile_check import check_compiles_many
from kernelopt_jupyter.verify.report import (
    GATE_NAMES,
    GateResult,
    VerificationCancelled,
    VerifyOptions,
    VerifyReport,
    skipped_after,
)
from kernelopt_jupyter.verify.schedule import fresh_seed
from kernelopt_jupyter.verify.service import PRELOAD, REFERENCE_ROLE, SANDBOX_ROLE, VerifyService
from kernelopt_jupyter.verify.static import StaticAnalysis, analyze_candidate
from kernelopt_jupyter.worker import WorkerResult, run_task

#: Extra seconds the verification worker gets on top of the time limit when its reference
#: process must first torch.compile the reference for the "compile" baseline.
COMPILE_BASELINE_ALLOWANCE_S = 240.0
COMPILE_CHECK_LIMIT_S = 120.0
#: Seconds the verification worker gets beyond the reference's and the candidate's limits
#: (its own start, comparisons); the checker enforces the candidate's limit itself.
CHECKER_ALLOWANCE_S = 60.0

GateCallback = Callable[[GateResult], None]


def _source_failure(analysis: StaticAnalysis, problem: Problem, dispatch_only: bool) -> str | None:
    if analysis.syntax_error:
        return analysis.syntax_error
    if analysis.violations:
        more = len(analysis.violations) - 3
        text = "; ".join(analysis.violations[:3])
        return text + (f" (and {more} more)" if more > 0 else "")
    if problem.kind == "module" and not analysis.defines_model_new:
        return "defines no class ModelNew (a candidate for a module problem must)"
    if problem.kind != "module" and not (analysis.defines_model_new or analysis.defines_entry):
        return f"defines neither ModelNew nor a function {problem.entry}() (the problem's entry)"
    if not analysis.jit_kernels and not dispatch_only:
        return (
            "defines no @triton.jit kernel: a candidate must launch at least one Triton kernel "
            "(or be marked dispatch-only with KERNELOPT_DISPATCH_ONLY = True)"
        )
    return None


def _crash(result: WorkerResult, phase: str) -> str:
    if result.timed_out:
        return f"timed out after {result.seconds:.0f} s in the {phase} phase (hang or too slow)"
    where = f" in the {phase} phase"
    if result.error_type:
        return f"checking the candidate raised {result.error_type}: {result.error}{where}"
    return result.describe() + where


class _Cascade:
    def __init__(self, options: VerifyOptions, device: Device, on_gate: GateCallback | None):
        self.options = options
        self.device = device
        self.on_gate = on_gate
        self.gates: list[GateResult] = []

    def add(self, gate: GateResult) -> None:
        self.gates.append(gate)
        if self.on_gate is not None:
            self.on_gate(gate)

    def fail_rest(self, failed: str) -> None:
        for name in GATE_NAMES[len(self.gates) :]:
            self.add(skipped_after(name, failed))


def verify_candidate(
    problem: Problem,
    candidate_source: str,
    options: VerifyOptions | None = None,
    candidate_path: str = "<candidate>",
    *,
    on_gate: GateCallback | None = None,
    service: VerifyService | None = None,
) -> VerifyReport:
    """Run the four gates on one candidate; ``on_gate`` sees each result as it is decided.

    Raises ``ProblemError`` when the *reference* cannot run (a user error in the problem) and
    ``DeviceError`` for an unusable device; every candidate failure is a failed gate.
    """
    callback = None if on_gate is None else (lambda _index, gate: on_gate(gate))
    return verify_candidates(
        problem, [candidate_source], options, [candidate_path], callback, service=service
    )[0]


def verify_candidates(
    problem: Problem,
    sources: list[str],
    options: VerifyOptions | None = None,
    paths: list[str] | None = None,
    on_gate: Callable[[int, GateResult], None] | None = None,
    *,
    service: VerifyService | None = None,
) -> list[VerifyReport]:
    """The four gates on several candidates of one problem, with one fork server: each
    candidate still runs in its own fresh process (forked for it alone, gone before the next
    starts) and gets its own schedule seed; the reference's process serves them all.

    ``options.seed``, when set, is the first candidate's seed (the next get seed + 1, ...).
    ``service`` (a :class:`VerifyService` of this problem) runs the checks in its long-lived
    worker instead of a worker started for this call, when its settings match.
    Raises like ``verify_candidate``.
    """
    options = options or VerifyOptions()
    device = resolve_device(options.device)
    paths = paths or [f"<candidate {i}>" for i in range(len(sources))]
    start = time.monotonic()
    runs: list[_Cascade] = []
    reports: list[VerifyReport] = []
    todo: list[tuple[int, dict[str, Any]]] = []
    for index, (source, path) in enumerate(zip(sources, paths)):
        callback = None if on_gate is None else (lambda gate, i=index: on_gate(i, gate))
        run = _Cascade(options, device, callback)
        analysis = analyze_candidate(source, kind=problem.kind, entry=problem.entry)
        dispatch_only = options.dispatch_only or analysis.dispatch_only_declared
        report = VerifyReport(problem.path, path, device, run.gates, dispatch_only)
        runs.append(run)
        reports.append(report)
        failure = _source_failure(analysis, problem, dispatch_only)
        if failure is not None:
            run.add(GateResult("static", "fail", failure, {"phase": "source"}))
            run.fail_rest("static")
            report.seconds = time.monotonic() - start
            continue
        seed = options.seed + index if options.seed is not None else fresh_seed()
        report.seed = seed
        todo.append(
            (
                index,
                {
                    "source": source,
                    "seed": seed,
                    "dispatch_only": dispatch_only,
                    "cuda_graphs": analysis.uses_cuda_graphs,
                },
            )
        )
    if not todo:
        return reports
    specs = [spec for _, spec in todo]
    if service is not None and service.accepts(options, device):
        wanted = list(options.baselines) if _times(options, device) else None
        all_phases = []
        for spec in specs:
            phases = service.check({**spec, "performance": wanted}, options)
            if phases is None:  # the service's worker failed: this candidate the per-call way
                phases = _run_checks(problem, [spec], options, device)[0]
            all_phases.append(phases)
        _raise_problem_errors(all_phases)
    else:
        all_phases = _run_checks(problem, specs, options, device)
    compiled = _compile_checks(device, [spec["source"] for _, spec in todo], all_phases, options)
    for (index, _spec), phases, built in zip(todo, all_phases, compiled):
        started = time.monotonic()
        run, report = runs[index], reports[index]
        _static_gate(run, phases, built)
        if run.gates[-1].status == "fail":
            run.fail_rest("static")
        else:
            report.dispatch_only = bool(phases["static"].get("dispatch_only", False))
            _value_gates(run, phases)
        if len(run.gates) == 3:
            run.add(_performance(phases, options, device))
        # A batch's checks ran together: each report gets its share plus its own gates.
        report.seconds = (started - start) / len(todo) + time.monotonic() - started
    return reports


def _run_checks(
    problem: Problem, specs: list[dict[str, Any]], options: VerifyOptions, device: Device
) -> list[dict[str, dict[str, Any]]]:
    """The verification worker's phases per candidate; a crash of the worker itself fails
    the static gate of every candidate it had not finished."""
    limit = options.time_limit_s
    result = run_task(
        "kernelopt_jupyter.verify.checker:verify_task",
        {
            "problem": problem,
            "candidates": specs,
            "device": device,
            "seeds": max(1, options.seeds),
            "fp64_factor": options.fp64_factor,
            "time_limit_s": limit,
            "performance": list(options.baselines) if _times(options, device) else None,
        },
        device=device,
        time_limit_s=options.bounded(
            (len(specs) + 1) * limit
            + CHECKER_ALLOWANCE_S
            + (COMPILE_BASELINE_ALLOWANCE_S if "compile" in options.baselines else 0.0),
        ),
        untrusted=True,
        preload=PRELOAD,
        children=(REFERENCE_ROLE,) + (SANDBOX_ROLE,) * len(specs),
    )
    if not result.ok:
        _cancelled(options, result)
        if result.timed_out:
            raise ProblemError(
                f"{problem.path}: the verification did not finish ({_crash(result, 'reference')})"
                "; a longer time limit (--time-limit) may help"
            )
        crashed: dict[str, dict[str, Any]] = {
            "reference": {"ok": True},
            "static": {"ok": False, "status": "fail", "detail": _crash(result, "static")},
        }
        return [crashed for _ in specs]
    done: list[dict[str, dict[str, Any]]] = list(result.value)
    _raise_problem_errors(done)
    return done


def _raise_problem_errors(done: list[dict[str, dict[str, Any]]]) -> None:
    """``ProblemError`` when the reference (the user's problem) could not run."""
    for phases in done:
        reference = phases.get("reference")
        if reference is None or "problem_error" in reference:
            message = reference["problem_error"] if reference else "the reference could not run"
            raise ProblemError(message)


def _cancelled(options: VerifyOptions, result: WorkerResult) -> None:
    """Raise :class:`VerificationCancelled` when the deadline is what ended ``result``."""
    if options.late() and result.timed_out:
        raise VerificationCancelled("the deadline passed during the verification")


def _compile_checks(
    device: Device,
    sources: list[str],
    all_phases: list[dict[str, dict[str, Any]]],
    options: VerifyOptions,
) -> list[list[dict[str, Any]]]:
    """The sm_90 compile check of every candidate that passed the run-time checks (CPU)."""
    wanted = [
        i
        for i, phases in enumerate(all_phases)
        if device == "cpu" and phases.get("static", {}).get("ok")
    ]
    jobs = [(sources[i], list(all_phases[i].get("specs", {}).get("specs", []))) for i in wanted]
    limit = options.bounded(COMPILE_CHECK_LIMIT_S) if jobs else 0.0
    done = check_compiles_many(jobs, time_limit_s=limit) if jobs else []
    if jobs and options.late():
        raise VerificationCancelled("the deadline passed during the compile check")
    out: list[list[dict[str, Any]]] = [[] for _ in sources]
    for i, result in zip(wanted, done):
        out[i] = result
    return out


def _static_gate(
    run: _Cascade, phases: dict[str, dict[str, Any]], compiled: list[dict[str, Any]]
) -> None:
    static = phases["static"]
    if not static.get("ok"):
        run.add(GateResult("static", "fail", static["detail"], {"phase": "runtime"}))
        return
    metrics: dict[str, Any] = {
        k: static[k]
        for k in ("launches", "construction_launches", "kernels", "dispatch_only", "accounting")
        if k in static
    }
    detail = static["detail"]
    if run.device == "cuda":
        detail += "; compiled and ran on the GPU"
        run.add(GateResult("static", "pass", detail, metrics))
        return
    recorded = phases.get("specs", {})
    metrics["compile"] = compiled
    failed = [c for c in compiled if c["status"] == "fail"]
    if failed:
        first = failed[0]
        message = f"kernel {first['kernel']} does not compile for sm_90: {first['error']}"
        run.add(GateResult("static", "fail", message, metrics))
        return
    # The compile check decides: a kernel it cannot build or find is not known to compile.
    unknown = [c for c in compiled if c["status"] == "unknown"]
    unknown += [
        {"kernel": k, "error": f"its launch arguments cannot be recorded ({e})"}
        for k, e in recorded.get("errors", {}).items()
    ]
    if unknown:
        first = unknown[0]
        message = (
            f"the sm_90 compile check cannot build kernel {first['kernel']}: {first['error']} "
            "(define kernels at module level with plain tensor and scalar arguments)"
        )
        run.add(GateResult("static", "fail", message, metrics))
        return
    built = {c["kernel"] for c in compiled if c["status"] == "pass"}
    # Every kernel forward launched must have been built: a check that covered none (or some)
    # of them is not a pass.
    missed = sorted(set(static.get("kernels") or {}) - built)
    if missed:
        message = (
            f"the sm_90 compile check did not build kernel {missed[0]} (launched in forward, "
            "but no record of its launch reached the check)"
        )
        run.add(GateResult("static", "fail", message, metrics))
        return
    if built:
        # Said on the CPU only: the kernels were compiled for the GPU target, not run there.
        detail += (
            f"; {len(built)} kernel(s) compile for sm_90, the H100/H200 target (built here "
            "without a GPU; not run on one)"
        )
    run.add(GateResult("static", "pass", detail, metrics))


def _value_gates(run: _Cascade, phases: dict[str, dict[str, Any]]) -> None:
    for name in ("correctness", "fp64"):
        data = phases.get(name)
        if data is None:  # the worker stopped after the previous phase without a verdict
            data = {"status": "fail", "detail": "the worker ended before this gate finished"}
        metrics = {k: v for k, v in data.items() if k not in ("status", "detail", "ok")}
        if name == "correctness" and "memory" in phases:
            metrics["memory"] = phases["memory"]
        if name == "correctness" and "timings" in phases:
            metrics["timings"] = phases["timings"]
        run.add(GateResult(name, data["status"], data["detail"], metrics))
        if data["status"] == "fail":
            run.fail_rest(name)
            return


def _performance(
    phases: dict[str, dict[str, Any]], options: VerifyOptions, device: Device
) -> GateResult:
    """The performance gate's verdict, from the verification worker's timing phase."""
    if not options.run_performance:
        return GateResult("performance", "skipped", "performance not requested")
    if not _times(options, device):
        return GateResult("performance", "skipped", "no GPU")
    data = phases.get("performance")
    if data is None:
        return GateResult("performance", "fail", "the worker ended before this gate finished")
    metrics = {k: v for k, v in data.items() if k not in ("status", "detail")}
    if device != "cuda" and "candidate_ms" in data:
        # The protocol ran (a test asked for it); interpreter times are no verdict on speed.
        detail = f"not timed on the GPU (CPU protocol run: {data['detail']})"
        return GateResult("performance", "skipped", detail, metrics)
    return GateResult("performance", data["status"], data["detail"], metrics)


def _times(options: VerifyOptions, device: Device) -> bool:
    """Whether the verification worker runs the performance gate's timing phase."""
    return options.run_performance and (device == "cuda" or options.time_on_cpu)
