"""Worker side of the static gate's run-time checks, the correctness gate and the fp64 referee.

One worker process per candidate runs, in order:

1. ``reference`` (trusted): the problem's outputs for every seed, in fp32 and float64, computed
   *before* any candidate code is imported, so nothing the candidate does can change them.
2. ``static``: import the candidate, build ``ModelNew``, load the reference's weights, one
   ``forward`` with the launch recorder on (at least one Triton kernel, no side streams, no
   new threads, no replaced harness functions).
3. ``correctness``: every seed on fresh inputs, then the same input buffers refilled with new
   values (a result cached by address shows up there).
4. ``fp64``: the candidate's and the fp32 reference's errors against the float64 referee.

Each phase writes its result to the progress folder as it finishes, so when the candidate
crashes or hangs the caller still knows which gate it was in.
"""

from __future__ import annotations

import copy
import os
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from kernelopt_jupyter.problem import (
    LoadedProblem,
    Problem,
    ProblemError,
    candidate_model,
    load_source_module,
    materialize,
)
from kernelopt_jupyter.verify.compare import (
    Comparison,
    compare_outputs,
    compare_tensors,
    error_vs,
    flatten,
    float_dtypes,
    referee_floor,
    tensors_equal,
)
from kernelopt_jupyter.verify.launches import GlobalGuard, LaunchRecorder

PHASES = ("reference", "static", "correctness", "fp64")


class CandidateFailure(Exception):
    """The candidate failed the current gate; the message is the gate's detail."""


# --------------------------------------------------------------------------- progress files


class Progress:
    """Phase markers in a folder the caller reads after the worker ends (or dies)."""

    def __init__(self, folder: str) -> None:
        self.folder = Path(folder)

    def start(self, phase: str) -> None:
        """Mark ``phase`` as running."""
        (self.folder / f"{phase}.started").touch()

    def done(self, phase: str, data: dict[str, Any]) -> None:
        """Store ``phase``'s result (atomically, so a crash never leaves half a file)."""
        tmp = self.folder / f"{phase}.tmp"
        tmp.write_bytes(pickle.dumps(data))
        tmp.replace(self.folder / f"{phase}.pkl")


def read_progress(folder: str) -> tuple[dict[str, dict[str, Any]], str | None]:
    """The finished phases' results and the phase that was running when the worker stopped."""
    path = Path(folder)
    done: dict[str, dict[str, Any]] = {}
    running = None
    for phase in PHASES:
        result = path / f"{phase}.pkl"
        if result.exists():
            done[phase] = pickle.loads(result.read_bytes())
        elif (path / f"{phase}.started").exists() and running is None:
            running = phase
    return done, running


# --------------------------------------------------------------------------- helpers


def install_cpu_shims() -> None:
    """libdevice, bf16 and a stub driver for Triton's interpreter (no-op where a GPU is)."""
    from kernelopt_jupyter.cpu_triton import install_interpreter_shims

    install_interpreter_shims()


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()  # every stream: work a candidate left anywhere is finished


def _clone(values: list[Any]) -> list[Any]:
    return [v.clone() if isinstance(v, torch.Tensor) else copy.deepcopy(v) for v in values]


def _detach(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, list | tuple):
        return type(value)(_detach(v) for v in value)
    return copy.deepcopy(value)


def _to_fp64(values: list[Any]) -> list[Any]:
    return [
        v.to(torch.float64) if isinstance(v, torch.Tensor) and v.is_floating_point() else v
        for v in values
    ]


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300] if text else ''}".rstrip(": ")


def _storages(value: Any) -> set[int]:
    ptrs = set()
    for leaf in flatten(value):
        if isinstance(leaf, torch.Tensor) and leaf.numel() > 0:
            try:
                ptrs.add(leaf.untyped_storage().data_ptr())
            except (RuntimeError, NotImplementedError):
                continue
    return ptrs


@dataclass
class RefCase:
    """The reference's view of one seed: pristine inputs, outputs, what it mutated."""

    inputs: list[Any]
    out: Any
    inputs_after: list[Any]
    mutated: list[int]
    out64: Any = None


@dataclass
class State:
    """What the phases share inside the worker."""

    problem: Problem
    device: str
    seeds: list[int]
    extra_seed: int
    loaded: LoadedProblem | None = None
    ref_model: Any = None
    cases: dict[int, RefCase] = field(default_factory=dict)
    fp64_reason: str | None = None  # why the referee cannot run, or None when it can
    model: Any = None
    recorder: LaunchRecorder | None = None
    guard: GlobalGuard | None = None
    first_call: tuple[list[Any], Any] | None = None
    outputs: dict[int, Any] = field(default_factory=dict)
    strict: bool = True


# --------------------------------------------------------------------------- phase 1


def _reference(state: State) -> dict[str, Any]:
    loaded = state.loaded = materialize(state.problem)
    state.ref_model = loaded.make_model(state.device, seed=0)
    for seed in [*state.seeds, state.extra_seed]:
        inputs = loaded.make_inputs(seed, state.device)
        work = _clone(inputs)
        try:
            with torch.no_grad():
                out = state.ref_model(*work)
            _sync(state.device)
        except Exception as exc:
            raise ProblemError(
                f"{state.problem.path}: the reference's forward raised {_one_line(exc)}"
            ) from None
        mutated = [i for i, (a, b) in enumerate(zip(inputs, work)) if not tensors_equal(a, b)]
        state.cases[seed] = RefCase(inputs, _detach(out), work, mutated)
    state.fp64_reason = _referee(state)
    dtypes = float_dtypes(state.cases[state.seeds[0]].out)
    return {"ok": True, "fp64_reason": state.fp64_reason, "dtypes": [str(d) for d in dtypes]}


def _referee(state: State) -> str | None:
    """Run the reference in float64 on every seed's inputs; the reason it cannot, or None."""
    assert state.loaded is not None
    dtypes = float_dtypes(state.cases[state.seeds[0]].out)
    if not dtypes:
        return "the reference's output has no floating-point tensor"
    if all(d == torch.float64 for d in dtypes):
        return "the reference already computes in float64"
    if state.problem.kind == "module":
        ref64: Any = copy.deepcopy(state.ref_model).to(torch.float64)
    else:
        fn = state.loaded.reference_fn()
        if fn is None:
            return f"the {state.problem.kind} problem defines no reference() function"
        ref64 = fn
    for seed in state.seeds:
        case = state.cases[seed]
        try:
            with torch.no_grad():
                case.out64 = _detach(ref64(*_to_fp64(_clone(case.inputs))))
            _sync(state.device)
        except Exception as exc:
            return f"the reference cannot run in float64 ({_one_line(exc)})"
        if not any(d == torch.float64 for d in float_dtypes(case.out64)):
            return "the reference does not compute in float64 when given float64 inputs"
    return None


# --------------------------------------------------------------------------- phase 2


def _call(state: State, inputs: list[Any], what: str) -> Any:
    try:
        with torch.no_grad():
            out = state.model(*inputs)
        _sync(state.device)
    except BaseException as exc:  # SystemExit from a candidate is its failure too
        raise CandidateFailure(f"forward raised {_one_line(exc)} ({what})") from None
    return out


def _static(state: State, source: str, dispatch_only: bool, cuda_graphs: bool) -> dict[str, Any]:
    assert state.loaded is not None
    recorder = state.recorder = LaunchRecorder(state.device)
    recorder.install()
    state.guard = GlobalGuard()
    with recorder.recording():
        try:
            module = load_source_module(source, "candidate")
        except BaseException as exc:  # SystemExit from a candidate is its failure too
            raise CandidateFailure(f"importing the candidate raised {_one_line(exc)}") from None
        try:
            model = candidate_model(state.problem, module, state.loaded.init_inputs())
        except BaseException as exc:  # SystemExit from a candidate is its failure too
            raise CandidateFailure(f"building the candidate raised {_one_line(exc)}") from None
    if not isinstance(model, torch.nn.Module):
        raise CandidateFailure("ModelNew must be a torch.nn.Module")
    construction_launches = recorder.total
    try:
        # nn.Module's own methods: a candidate cannot override its way out of the weights.
        model = torch.nn.Module.to(model, state.device)
        torch.nn.Module.eval(model)
        result = torch.nn.Module.load_state_dict(model, state.ref_model.state_dict(), strict=False)
    except BaseException as exc:  # SystemExit from a candidate is its failure too
        raise CandidateFailure(
            f"the reference's weights do not load into ModelNew ({_one_line(exc)})"
        ) from None
    if result.missing_keys or result.unexpected_keys:
        parts = []
        # Loading the reference's state into ModelNew: "missing" keys are ModelNew's own
        # tensors the reference does not have; "unexpected" ones the reference's it lacks.
        if result.missing_keys:
            parts.append(f"it has its own {', '.join(result.missing_keys[:6])}")
        if result.unexpected_keys:
            parts.append(f"it lacks the reference's {', '.join(result.unexpected_keys[:6])}")
        raise CandidateFailure(
            "ModelNew's parameters and buffers differ from the reference's ("
            + "; ".join(parts)
            + "): declare the same ones so the reference's weights load into it"
        )
    state.model = model
    inputs = _clone(state.cases[state.seeds[0]].inputs)
    with recorder.recording():
        out = _call(state, inputs, f"seed {state.seeds[0]}")
    state.first_call = (inputs, out)
    forward_launches = recorder.total - construction_launches
    changes = state.guard.changes()
    if changes:
        raise CandidateFailure(
            "the candidate changed the harness's environment: " + "; ".join(changes[:4])
        )
    if recorder.stream_violations:
        raise CandidateFailure(recorder.stream_violations[0])
    kernels = dict(recorder.kernels)
    # A CUDA-graph candidate may launch its kernels while capturing in __init__ and only
    # replay in forward (a replay goes through no Triton entry point).
    graph_replay = cuda_graphs and construction_launches > 0
    if forward_launches == 0 and not dispatch_only and not graph_replay:
        raise CandidateFailure(
            "forward launched no Triton kernel, so the work ran in PyTorch ops: launch at "
            "least one @triton.jit kernel in forward, or mark a candidate that only "
            "re-routes ops between libraries with KERNELOPT_DISPATCH_ONLY = True"
        )
    if forward_launches:
        names = ", ".join(f"{k} x{v}" for k, v in sorted(kernels.items()))
        detail = f"forward launched {forward_launches} Triton kernel(s): {names}"
    elif dispatch_only:
        detail = "dispatch-only candidate: launches no Triton kernel (counted as dispatch-only)"
    else:
        detail = "Triton kernels launched while building a CUDA graph that forward replays"
    return {
        "ok": True,
        "detail": detail,
        "launches": forward_launches,
        "construction_launches": construction_launches,
        "kernels": kernels,
        "specs": recorder.specs,
        "spec_errors": dict(recorder.spec_errors),
        "dispatch_only": dispatch_only and forward_launches == 0,
    }


# --------------------------------------------------------------------------- phase 3


def _check_inputs(state: State, case: RefCase, used: list[Any], seed: int) -> None:
    for i, (pristine, now) in enumerate(zip(case.inputs, used)):
        if i in case.mutated:
            cmp = (
                compare_tensors(now, case.inputs_after[i], f"input {i}")
                if isinstance(now, torch.Tensor)
                else Comparison()
            )
            if cmp.error or not cmp.loose_ok:
                raise CandidateFailure(
                    f"seed {seed}: the reference updates input {i} in place and the candidate "
                    "does not do the same"
                )
        elif not tensors_equal(pristine, now):
            raise CandidateFailure(
                f"seed {seed}: the candidate modified input {i} in place (the reference leaves "
                "it unchanged)"
            )


def _correctness(state: State) -> dict[str, Any]:
    assert state.first_call is not None and state.guard is not None
    total = Comparison()
    kept: list[tuple[int, Any, Any]] = []  # (seed, output, snapshot of it)
    per_seed = []
    weights = _storages(list(state.model.parameters()) + list(state.model.buffers()))
    for index, seed in enumerate(state.seeds):
        case = state.cases[seed]
        if index == 0:
            used, out = state.first_call
        else:
            used = _clone(case.inputs)
            out = _call(state, used, f"seed {seed}")
        cmp = compare_outputs(out, case.out)
        if cmp.error:
            raise CandidateFailure(f"seed {seed}: {cmp.error}")
        _check_inputs(state, case, used, seed)
        shared = _storages(out) & set().union(*(_storages(o) for _, o, _ in kept))
        shared -= weights  # a view of a weight (as the reference may return) is not reuse
        if shared:
            raise CandidateFailure(
                f"seed {seed}: the output shares memory with an earlier call's output (a result "
                "buffer reused between calls; a later call would overwrite earlier results)"
            )
        for old_seed, old_out, snapshot in kept:
            if not all(tensors_equal(a, b) for a, b in zip(flatten(old_out), flatten(snapshot))):
                raise CandidateFailure(
                    f"the output returned for seed {old_seed} changed when the candidate was "
                    "called again (results must not be reused between calls)"
                )
        kept.append((seed, out, _detach(out)))
        state.outputs[seed] = out
        per_seed.append({"seed": seed, "max_abs_err": cmp.max_abs_err, "strict": cmp.strict_ok})
        if not cmp.loose_ok:
            raise CandidateFailure(f"seed {seed}: {cmp.worst}")
        total.merge(cmp)
    _same_buffers_check(state)
    changes = state.guard.changes()
    if changes:
        raise CandidateFailure("the candidate changed the harness's environment: " + changes[0])
    state.strict = total.strict_ok
    seeds = ", ".join(str(s) for s in state.seeds)
    metrics: dict[str, Any] = {
        "seeds": list(state.seeds),
        "max_abs_err": total.max_abs_err,
        "strict": total.strict_ok,
        "per_seed": per_seed,
        "tolerances": total.tolerances,
    }
    if total.strict_ok:
        detail = (
            f"seeds {seeds} match the reference within the strict tolerance "
            f"(max abs err {total.max_abs_err:.3g})"
        )
        return {"status": "pass", "detail": detail, **metrics}
    if state.fp64_reason is None:
        detail = (
            f"seeds {seeds} match only within the loose tolerance ({total.worst}); the fp64 "
            "referee decides whether that is honest rounding"
        )
        return {"status": "pass", "detail": detail, **metrics}
    detail = (
        f"misses the strict tolerance ({total.worst}) and no fp64 referee can run "
        f"({state.fp64_reason}), so the strict tolerance applies"
    )
    return {"status": "fail", "detail": detail, **metrics}


def _same_buffers_check(state: State) -> None:
    """Call again on the first call's input tensors refilled with other values: a candidate
    that caches results by tensor address (or identity) returns the stale answer here."""
    assert state.first_call is not None
    buffers = state.first_call[0]
    case = state.cases[state.extra_seed]
    for buf, new in zip(buffers, case.inputs):
        if isinstance(buf, torch.Tensor) and isinstance(new, torch.Tensor):
            buf.copy_(new)
    out = _call(state, buffers, "same input buffers refilled with new values")
    cmp = compare_outputs(out, case.out)
    if cmp.error or not cmp.loose_ok:
        why = cmp.error or cmp.worst
        raise CandidateFailure(
            "called again on the same input tensors refilled with new values, the candidate "
            f"returned a wrong result ({why}): results must not be cached between calls"
        )


# --------------------------------------------------------------------------- phase 4


def _fp64(state: State, factor: float) -> dict[str, Any]:
    if state.fp64_reason is not None:
        return {"status": "skipped", "detail": f"no fp64 referee: {state.fp64_reason}"}
    ratio = 0.0
    err_c = err_r = 0.0
    floor = 0.0
    for seed in state.seeds:
        case = state.cases[seed]
        c = error_vs(state.outputs[seed], case.out64)
        r = error_vs(case.out, case.out64)
        fl = referee_floor(case.out64, float_dtypes(case.out))
        seed_ratio = c / max(r, fl)
        if seed_ratio >= ratio:
            ratio, err_c, err_r, floor = seed_ratio, c, r, fl
    metrics = {"err_ratio": ratio, "err_candidate": err_c, "err_reference": err_r, "floor": floor}
    own = f"{err_r:.3g}" if err_r >= floor else f"{err_r:.3g}, floored at {floor:.3g}"
    summary = (
        f"error vs float64 {err_c:.3g} is {ratio:.3g}x the fp32 reference's own ({own}; "
        f"limit {factor:g}x)"
    )
    if state.strict:
        return {"status": "pass", "detail": f"strict tolerance met; {summary}", **metrics}
    if ratio <= factor:
        return {"status": "pass", "detail": f"accepted by the referee: {summary}", **metrics}
    return {
        "status": "fail",
        "detail": f"far less accurate than the reference: {summary} (a silent precision loss?)",
        **metrics,
    }


# --------------------------------------------------------------------------- the task


def check_candidate(
    *,
    problem: Problem,
    candidate_source: str,
    device: str,
    seeds: list[int],
    dispatch_only: bool,
    cuda_graphs: bool,
    fp64_factor: float,
    progress_dir: str,
) -> dict[str, Any]:
    """Worker task: the reference, then the candidate's static, correctness and fp64 phases.

    Returns (and writes to ``progress_dir`` as it goes) one dict per phase reached. A phase
    the candidate fails has ``ok``/``status`` false/``fail`` and ends the run.
    """
    progress = Progress(progress_dir)
    if device == "cpu":
        # One intra-op thread: with CPUs shared (CI, several workers) torch's spinning thread
        # pool makes small element-wise checks ~100x slower; the results are the same.
        torch.set_num_threads(1)
        if os.environ.get("TRITON_INTERPRET") == "1":
            install_cpu_shims()
    state = State(problem, device, list(seeds), max(seeds) + 1)
    results: dict[str, dict[str, Any]] = {}

    def phase(name: str, fn: Any, *args: Any) -> bool:
        progress.start(name)
        try:
            data = fn(*args)
        except CandidateFailure as exc:
            data = {"ok": False, "status": "fail", "detail": str(exc)}
        except ProblemError as exc:
            data = {"ok": False, "status": "fail", "problem_error": str(exc), "detail": str(exc)}
        results[name] = data
        progress.done(name, data)
        return bool(data.get("ok", data.get("status") != "fail"))

    if not phase("reference", _reference, state):
        return results
    if not phase("static", _static, state, candidate_source, dispatch_only, cuda_graphs):
        return results
    if not phase("correctness", _correctness, state):
        return results
    phase("fp64", _fp64, state, fp64_factor)
    return results
