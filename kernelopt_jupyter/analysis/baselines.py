"""Baseline times: eager and three torch.compile modes (the bench's peers), plus compile time.

The peers: eager, ``default``, ``max-autotune-no-cudagraphs`` and ``reduce-overhead`` (CUDA
graphs: the honest peer of a candidate that captures its forward in a graph).

Measured in a worker with the performance gate's own timer (``verify.timing``: CUDA events on
the current stream, a 256 MiB L2 flush and fresh input clones before each call, the median of
rounds that interleave the baselines in a shuffled order). On the CPU the Triton interpreter's
times mean nothing, so baselines are reported as not measured.
"""

from __future__ import annotations

import random
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


def measure_baselines(problem: Problem, device: str, *, time_limit_s: float = 900.0) -> Baselines:
    """Time the reference eager and under each torch.compile mode; never raises for failures."""
    from kernelopt_jupyter.worker import run_task

    if device != "cuda":
        return Baselines(
            measured=False,
            device=device,
            detail="not measured: no GPU (the Triton interpreter's CPU times mean nothing)",
        )
    result = run_task(
        "kernelopt_jupyter.analysis.baselines:baselines_task",
        {"source": problem.source, "path": problem.path},
        device="cuda",
        time_limit_s=time_limit_s,
    )
    if not result.ok:
        return Baselines(measured=False, device=device, detail=f"worker: {result.describe()}")
    return Baselines(**result.value)


def baselines_task(source: str, path: str, rounds: int = 50) -> dict[str, Any]:
    """Worker entry (GPU): compile each mode, then time all of them interleaved."""
    import time

    import torch

    from kernelopt_jupyter.problem import materialize, problem_from_source
    from kernelopt_jupyter.verify.timing import _Timer

    problem = problem_from_source(source, path, validate=False)
    loaded = materialize(problem)
    model = loaded.make_model("cuda", seed=0)
    pool = [loaded.make_inputs(1000 + i, "cuda") for i in range(4)]
    fns: dict[str, Any] = {}
    compile_s: dict[str, float] = {}
    notes: list[str] = []
    for name, mode in MODES.items():
        if mode is None:
            fns[name] = model
            continue
        torch._dynamo.reset()
        try:
            fn = torch.compile(model, mode=mode)
            start = time.perf_counter()
            with torch.no_grad():
                fn(*pool[0])
            torch.cuda.synchronize()
            compile_s[name] = time.perf_counter() - start
            fns[name] = fn
        except Exception as exc:
            notes.append(f"{name} failed to compile: {type(exc).__name__}: {exc}"[:200])
    timer = _Timer("cuda")
    for fn in fns.values():
        for _ in range(3):
            timer.time(fn, [x.clone() if isinstance(x, torch.Tensor) else x for x in pool[0]])
    times: dict[str, list[float]] = {name: [] for name in fns}
    order = list(fns)
    rng = random.Random(0)
    for r in range(rounds):
        rng.shuffle(order)
        for name in order:
            inputs = [x.clone() if isinstance(x, torch.Tensor) else x for x in pool[r % len(pool)]]
            timer.flush()
            times[name].append(timer.time(fns[name], inputs)[0])

    def median(values: list[float]) -> float | None:
        if not values:
            return None
        s = sorted(values)
        return s[len(s) // 2]

    return {
        "measured": True,
        "device": "cuda",
        "eager_ms": median(times.get("eager", [])),
        "compile_ms": median(times.get("compile", [])),
        "max_autotune_ms": median(times.get("max_autotune", [])),
        "reduce_overhead_ms": median(times.get("reduce_overhead", [])),
        "compile_s": compile_s,
        "rounds": rounds,
        "detail": "; ".join(notes) or "median of interleaved rounds (performance-gate timer)",
    }
