"""Baseline times: eager and three torch.compile modes (the bench's peers), plus compile time.

The peers: eager, ``default``, ``max-autotune-no-cudagraphs`` and ``reduce-overhead`` (CUDA
graphs: the honest peer of a candidate that captures its forward in a graph).

Measured in a worker with the performance gate's own timer (``verify.timing``: CUDA events on
the current stream, a 256 MiB L2 flush and fresh input clones before each call, the median of
rounds that interleave the baselines in a shuffled order). On the CPU the Triton interpreter's
times mean nothing, so baselines are reported as not measured.
"""

from __future__ import annotations

import contextlib
import random
import signal
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from kernelopt_jupyter.problem import Problem

#: Baseline names and the torch.compile mode behind each (None: the eager reference).
MODES: dict[str, str | None] = {
    "eager": None,
    "compile": "default",
    "max_autotune": "max-autotune-no-cudagraphs",
    "reduce_overhead": "reduce-overhead",
}


@dataclass
class Baselines:
    """Baseline times in ms per forward (None where not measured) and compile seconds."""

    measured: bool
    device: str
    eager_ms: float | None = None
    compile_ms: float | None = None
    max_autotune_ms: float | None = None
    reduce_overhead_ms: float | None = None
    compile_s: dict[str, float] = field(default_factory=dict)
    rounds: int = 0
    detail: str = ""

    def as_ms(self) -> dict[str, float | None]:
        """``{"eager": ms, "compile": ms, "max_autotune": ms, "reduce_overhead": ms}`` (the
        agents' baselines dict)."""
        return {
            "eager": self.eager_ms,
            "compile": self.compile_ms,
            "max_autotune": self.max_autotune_ms,
            "reduce_overhead": self.reduce_overhead_ms,
        }

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-able)."""
        return asdict(self)


def emit_baseline(
    log: Any,
    name: str,
    ms: float | None,
    *,
    measured: bool,
    detail: str,
    compile_s: float | None = None,
) -> None:
    """One ``baseline`` event on ``log`` (an ``EventLog``), with every field its readers expect
    (baselines carry no confidence interval: the performance gate's races have theirs)."""
    log.emit(
        "baseline",
        name=name,
        ms=ms,
        ci_low=None,
        ci_high=None,
        measured=measured,
        detail=detail,
        compile_s=compile_s,
    )


#: The baselines a search's analysis measures: the reference and Inductor's default. The
#: other peers cost a compile each (max-autotune: seconds to minutes of template tuning) and
#: are measured by the bench's side-by-side run after the search (``peers_task``).
SEARCH_MODES: tuple[str, ...] = ("eager", "compile")
#: Seconds of timed rounds a baseline measurement aims at (rounds are 10 to 50).
TIMING_BUDGET_S = 3.0


def measure_baselines(
    problem: Problem,
    device: str,
    *,
    time_limit_s: float = 900.0,
    modes: tuple[str, ...] = tuple(MODES),
) -> Baselines:
    """Time the reference eager and under each torch.compile mode in ``modes``; never raises
    for failures."""
    from kernelopt_jupyter.worker import run_task

    if device != "cuda":
        return Baselines(
            measured=False,
            device=device,
            detail="not measured: no GPU (the Triton interpreter's CPU times mean nothing)",
        )
    result = run_task(
        "kernelopt_jupyter.analysis.baselines:baselines_task",
        {"source": problem.source, "path": problem.path, "modes": list(modes)},
        device="cuda",
        time_limit_s=time_limit_s,
    )
    if not result.ok:
        return Baselines(measured=False, device=device, detail=f"worker: {result.describe()}")
    return Baselines(**result.value)


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return s[len(s) // 2]


def time_interleaved(
    fns: dict[str, Any], pool: list[list[Any]], *, budget_s: float = TIMING_BUDGET_S
) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """Per-call times (ms) of each of ``fns`` in rounds that interleave them in a shuffled
    order, with the performance gate's timer (L2 flush) and its salted inputs (fresh copies,
    scaled element by element, new for every call: a winner that keeps a memo of recent
    inputs, which the gates let through since its values are right, never hits one here);
    as many rounds (10 to 50) as fit in about ``budget_s``. Also the last output of each.

    Where any of them takes under ``WARM_MS`` (the performance gate's rule, on every function
    alike), each timed call follows an untimed call of the same function on differently
    salted inputs: in shuffled rounds the call before a timed one is another function's, and
    a sub-millisecond forward would otherwise be timed with its host path cold. Timed cold,
    the side-by-side run disagrees with the gates on sub-millisecond problems (torch.compile
    on ``avg_pool7_stride3``: 0.189 ms side by side, 0.104 ms in the search's own baseline
    run)."""
    import torch

    from kernelopt_jupyter.verify.timing import _Timer, salted, warm_ms

    tensors = [x for x in pool[0] if isinstance(x, torch.Tensor)]
    device = tensors[0].device.type if tensors else "cuda"
    salts = random.Random(0x5A17)

    def fresh(values: list[Any]) -> list[Any]:
        return salted(values, salts.randrange(1 << 30), device)

    timer = _Timer(device)
    estimate: dict[str, float] = {}
    outs: dict[str, Any] = {}
    for name, fn in fns.items():
        for _ in range(2):
            ms, outs[name] = timer.time(fn, fresh(pool[0]))
        estimate[name] = ms
    warm = bool(estimate) and min(estimate.values()) < warm_ms()
    per_round = max(sum(estimate.values()) / 1e3, 1e-6) * (2 if warm else 1)
    rounds = int(min(50, max(10, budget_s / per_round)))
    times: dict[str, list[float]] = {name: [] for name in fns}
    order = list(fns)
    rng = random.Random(0)
    for r in range(rounds):
        rng.shuffle(order)
        for name in order:
            if warm:
                with torch.no_grad():
                    fns[name](*fresh(pool[r % len(pool)]))
                if device == "cuda":
                    torch.cuda.synchronize()
            inputs = fresh(pool[r % len(pool)])
            timer.flush()
            ms, _ = timer.time(fns[name], inputs)
            times[name].append(ms)
    return times, outs


#: Seconds one peer's compile (its first call) may take in the bench's side-by-side run.
#: max-autotune on a network of convolutions can take many minutes (past the worker's own
#: limit, which then lost every peer's time): such a peer is reported as not timed instead.
PEER_COMPILE_S = 150.0


class CompileTimeUp(BaseException):
    """A peer's compile ran past its time box (a BaseException, so that Inductor's own
    ``except Exception`` around an autotuning choice does not swallow it)."""


@contextlib.contextmanager
def time_box(seconds: float | None) -> Iterator[None]:
    """Raise :class:`CompileTimeUp` in this (main) thread once ``seconds`` have passed, and
    every second after that until the block ends (should one raise be swallowed somewhere).
    Outside the main thread, or with ``seconds`` None, the block runs unbounded."""
    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise CompileTimeUp(f"ran past {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous)


def _compile_modes(
    model: Any, modes: list[str], first: list[Any], compile_limit_s: float | None = None
) -> tuple[dict, dict, list]:
    """Each torch.compile peer in ``modes`` compiled (and run once) on ``first``; a peer whose
    compile runs past ``compile_limit_s`` is left out, with a note saying so."""
    import time

    import torch

    fns: dict[str, Any] = {}
    compile_s: dict[str, float] = {}
    notes: list[str] = []
    for name in modes:
        mode = MODES.get(name, "?")
        if mode is None:
            fns[name] = model
            continue
        if mode == "?":
            notes.append(f"unknown baseline {name!r} ignored")
            continue
        torch._dynamo.reset()
        start = time.perf_counter()
        try:
            fn = torch.compile(model, mode=mode)
            with time_box(compile_limit_s), torch.no_grad():
                fn(*first)
            torch.cuda.synchronize()
            compile_s[name] = time.perf_counter() - start
            fns[name] = fn
        except CompileTimeUp:
            torch._dynamo.reset()
            notes.append(
                f"{name} not timed: its compile ran past {compile_limit_s:g} s "
                f"(stopped after {time.perf_counter() - start:.0f} s)"
            )
        except Exception as exc:
            notes.append(f"{name} failed to compile: {type(exc).__name__}: {exc}"[:200])
    return fns, compile_s, notes


def baselines_task(
    source: str, path: str, modes: list[str] | None = None, budget_s: float = TIMING_BUDGET_S
) -> dict[str, Any]:
    """Worker entry (GPU): compile each mode, then time all of them interleaved."""
    import torch

    from kernelopt_jupyter.problem import materialize, problem_from_source

    problem = problem_from_source(source, path, validate=False)
    loaded = materialize(problem)
    model = loaded.make_model("cuda", seed=0)
    pool = [loaded.make_inputs(1000 + i, "cuda") for i in range(2)]
    fns, compile_s, notes = _compile_modes(model, list(modes or MODES), pool[0])
    with torch.no_grad():
        times, _ = time_interleaved(fns, pool, budget_s=budget_s)
    rounds = len(next(iter(times.values()), []))
    skipped = [n for n in MODES if n not in (modes or MODES)]
    detail = "; ".join(notes) or "median of interleaved rounds (performance-gate timer)"
    if skipped:
        detail += f"; not measured here: {', '.join(skipped)} (the bench's side-by-side run)"
    return {
        "measured": True,
        "device": "cuda",
        "eager_ms": _median(times.get("eager", [])),
        "compile_ms": _median(times.get("compile", [])),
        "max_autotune_ms": _median(times.get("max_autotune", [])),
        "reduce_overhead_ms": _median(times.get("reduce_overhead", [])),
        "compile_s": compile_s,
        "rounds": rounds,
        "detail": detail,
    }


def with_reference_weights(
    problem: Problem, loaded: Any, source: str, name: str, device: str, state: dict[str, Any]
) -> Any:
    """A candidate's model built from ``source`` on ``device`` with the reference's weights
    (``state``) loaded strictly, as the gates load them."""
    import torch

    from kernelopt_jupyter.problem import candidate_model, load_source_module

    module = load_source_module(source, name)
    model = candidate_model(problem, module, loaded.init_inputs())
    if isinstance(model, torch.nn.Module):
        model = torch.nn.Module.to(model, device)
        torch.nn.Module.load_state_dict(model, state, strict=True)
    return model


def peers_task(
    source: str,
    path: str,
    candidate_source: str | None,
    budget_s: float = 2 * TIMING_BUDGET_S,
    compile_limit_s: float | None = PEER_COMPILE_S,
) -> dict[str, Any]:
    """Worker entry (GPU), the bench's side-by-side run: the verified winner and every peer
    (eager and the three torch.compile modes) timed interleaved in one process.

    The winner has passed the four gates already; here its timed outputs are compared with
    eager's once more (loosely), so a winner that only holds up under the gates' schedule is
    not reported. Its weights are the reference's.
    """
    import torch

    from kernelopt_jupyter.problem import materialize, problem_from_source
    from kernelopt_jupyter.verify.compare import compare_outputs

    problem = problem_from_source(source, path, validate=False)
    loaded = materialize(problem)
    model = loaded.make_model("cuda", seed=0)
    pool = [loaded.make_inputs(1000 + i, "cuda") for i in range(2)]
    fns, compile_s, notes = _compile_modes(model, list(MODES), pool[0], compile_limit_s)
    winner = None
    if candidate_source is not None:
        winner = with_reference_weights(
            problem, loaded, candidate_source, "winner", "cuda", model.state_dict()
        )
        fns["candidate"] = winner
    with torch.no_grad():
        times, _ = time_interleaved(fns, pool, budget_s=budget_s)
    result: dict[str, Any] = {name + "_ms": _median(ts) for name, ts in times.items()}
    result.update(compile_s=compile_s, rounds=len(times["eager"]), notes=notes)
    if winner is not None:
        with torch.no_grad():
            expected = model(*[x.clone() if isinstance(x, torch.Tensor) else x for x in pool[1]])
            got = winner(*[x.clone() if isinstance(x, torch.Tensor) else x for x in pool[1]])
        cmp = compare_outputs(got, expected)
        result.update(
            agrees=bool(cmp.error is None and cmp.loose_ok),
            disagreement=cmp.error or ("" if cmp.loose_ok else cmp.worst),
        )
    return result


def measure_peers(
    problem: Problem, candidate_source: str | None, *, time_limit_s: float = 300.0
) -> dict[str, Any]:
    """The side-by-side run of ``peers_task`` in a worker; ``{"error": ...}`` on failure."""
    from kernelopt_jupyter.worker import run_task

    result = run_task(
        "kernelopt_jupyter.analysis.baselines:peers_task",
        {"source": problem.source, "path": problem.path, "candidate_source": candidate_source},
        device="cuda",
        time_limit_s=time_limit_s,
        untrusted=True,
    )
    if not result.ok:
        return {"error": result.describe()}
    value: dict[str, Any] = result.value
    return value
