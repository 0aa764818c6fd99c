"""The Tuner's pre-screen: launch-configuration variants compiled together and timed
interleaved in one worker run, so that only the fastest go through the four gates.

A Tuner proposes several variants of one verified parent that differ only in launch
configurations, eviction hints or Helion configs. Gating each costs a full verification (about
2.5 s for a small problem on the H200, 40 s for a 6 GB one). The screen loads every variant in
one fresh worker, runs each once (Triton compiles its kernels there), then times them in rounds
that interleave them in a shuffled order with the performance gate's timer and salted inputs
(``analysis.baselines.time_interleaved``). The search then gates only the fastest few.

The screen decides nothing. Its times only order the variants; every variant the search keeps
still passes all four gates, in its own isolated process, before it counts. So the screen's
worker holds what ranking needs and nothing a verdict depends on: the problem, the reference's
weights (a candidate loads them as in the gates) and inputs, no reference output, no tolerance.
It runs the variants' code, so it is an untrusted worker (scrubbed environment, a time limit,
its whole process tree killed, its answer read as plain data). A variant that breaks the
others' timings can only change which variants are gated; a variant that raises is reported
with its error and not gated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kernelopt_jupyter.problem import Problem

#: Seconds of timed rounds in the screen (as many rounds, 10 to 50, as fit).
SCREEN_BUDGET_S = 1.5


@dataclass
class ScreenResult:
    """Median ms per variant (None where it raised), in the order given."""

    ok: bool
    ms: list[float | None] = field(default_factory=list)
    errors: list[str | None] = field(default_factory=list)
    rounds: int = 0
    seconds: float = 0.0
    detail: str = ""

    def fastest(self, keep: int) -> list[int]:
        """Indices of the ``keep`` fastest variants that ran, fastest first."""
        ran = [(ms, i) for i, ms in enumerate(self.ms) if ms is not None]
        return [i for _, i in sorted(ran)[:keep]]


def screen_task(
    source: str,
    path: str,
    variants: list[str],
    device: str = "cuda",
    budget_s: float = SCREEN_BUDGET_S,
) -> dict[str, Any]:
    """Worker entry: build every variant, run each once, time them interleaved."""
    import torch

    from kernelopt_jupyter.analysis.baselines import (
        _median,
        time_interleaved,
        with_reference_weights,
    )
    from kernelopt_jupyter.problem import materialize, problem_from_source

    problem = problem_from_source(source, path, validate=False)
    loaded = materialize(problem)
    reference = loaded.make_model(device, seed=0)
    state = reference.state_dict()
    pool = [loaded.make_inputs(2000 + i, device) for i in range(2)]
    fns: dict[str, Any] = {}
    errors: list[str | None] = []
    for i, text in enumerate(variants):
        try:
            model = with_reference_weights(
                problem, loaded, text, f"screen_variant_{i}", device, state
            )
            with torch.no_grad():
                model(*[x.clone() if isinstance(x, torch.Tensor) else x for x in pool[0]])
            if device == "cuda":
                torch.cuda.synchronize()
            fns[str(i)] = model
            errors.append(None)
        except Exception as exc:  # a variant that does not run is reported, not gated
            errors.append(f"{type(exc).__name__}: {exc}"[:300])
    times: dict[str, list[float]] = {}
    if fns:
        with torch.no_grad():
            times, _ = time_interleaved(fns, pool, budget_s=budget_s)
    return {
        "ms": [_median(times.get(str(i), [])) for i in range(len(variants))],
        "errors": errors,
        "rounds": len(next(iter(times.values()), [])),
    }


def screen_variants(
    problem: Problem, variants: list[str], device: str, *, time_limit_s: float = 60.0
) -> ScreenResult:
    """Run ``screen_task`` in a fresh untrusted worker; never raises for the worker's failures
    (``ok`` False with the reason, and the search then gates the variants as before)."""
    from kernelopt_jupyter.worker import run_task

    result = run_task(
        "kernelopt_jupyter.analysis.screen:screen_task",
        {
            "source": problem.source,
            "path": problem.path,
            "variants": list(variants),
            "device": device,
        },
        device="cuda" if device == "cuda" else "cpu",
        time_limit_s=time_limit_s,
        untrusted=True,
    )
    if not result.ok:
        return ScreenResult(False, seconds=result.seconds, detail=f"worker: {result.describe()}")
    value = result.value
    ms = value.get("ms") if isinstance(value, dict) else None
    errors = value.get("errors") if isinstance(value, dict) else None
    if not (isinstance(ms, list) and isinstance(errors, list) and len(ms) == len(variants)):
        return ScreenResult(False, seconds=result.seconds, detail="malformed screen answer")
    clean_ms: list[float | None] = [
        float(m) if isinstance(m, (int, float)) and m > 0 else None for m in ms
    ]
    clean_errors: list[str | None] = [str(e)[:300] if e is not None else None for e in errors]
    return ScreenResult(
        True,
        ms=clean_ms,
        errors=clean_errors,
        rounds=int(value.get("rounds") or 0),
        seconds=result.seconds,
        detail="median of interleaved rounds (performance-gate timer, salted inputs)",
    )
