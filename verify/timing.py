"""The performance gate's measurement (worker side): interleaved A/B timing with a confidence
interval, an L2 flush, fresh inputs per timed call and a memory-roofline plausibility bound.

Method. Every round times the candidate and each baseline once, in a shuffled order, so
drift (clocks, temperature, other tenants) hits all of them alike; the speedup against a
baseline is the median of the per-round ratios, with a bootstrap 95% interval. Before each
timed call the inputs are cloned (a fresh address: nothing cached by address survives) and a
256 MiB buffer is zeroed (the H200's 60 MB L2 holds nothing of the inputs). The call is timed
with CUDA events on the current stream, then the whole device is synchronised, so work left on
any stream finishes before the next measurement; launches on other streams are refused by the
launch recorder. Outputs of the last timed rounds are checked against the reference, so a
result cached between timed calls is caught.

The gate passes when the candidate is not slower than the fastest baseline beyond noise: the
interval's upper end is at least ``1 - NOISE_MARGIN``. A candidate faster than moving its
inputs and outputs once through HBM at peak bandwidth is *implausible* (it skipped work or the
timing missed it) and fails.
"""

from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Callable
from typing import Any

import torch

from kernelopt_jupyter.problem import candidate_model, load_source_module, materialize
from kernelopt_jupyter.verify.compare import compare_outputs, flatten
from kernelopt_jupyter.verify.launches import GlobalGuard, LaunchRecorder

#: Measured H200 copy bandwidth (bytes/s); override with KERNELOPT_PEAK_BANDWIDTH.
HBM_BANDWIDTH = 4.3e12
#: Flag only below this fraction of the roofline time (~4.8 TB/s: the HBM3e spec peak).
ROOFLINE_SLACK = 0.9
#: "Not slower beyond noise": the interval's upper end may sit this far below 1.
NOISE_MARGIN = 0.02
#: Speedups above this are reported as suspicious (KernelBench's threshold).
SUSPICIOUS_SPEEDUP = 10.0
L2_FLUSH_BYTES = 256 * 1024 * 1024
POOL = 4


def bootstrap_ratio(
    candidate: list[float], baseline: list[float], resamples: int = 2000
) -> tuple[float, float, float]:
    """Median of per-round ``baseline / candidate`` ratios and its bootstrap 95% interval."""
    logs = sorted(math.log(b / c) for b, c in zip(baseline, candidate) if b > 0 and c > 0)
    if not logs:
        return float("nan"), float("nan"), float("nan")
    rng = random.Random(0)  # a fixed seed: the same timings give the same interval
    n = len(logs)
    medians = sorted(_median([logs[rng.randrange(n)] for _ in range(n)]) for _ in range(resamples))
    low = medians[int(0.025 * (resamples - 1))]
    high = medians[math.ceil(0.975 * (resamples - 1))]
    return math.exp(_median(logs)), math.exp(low), math.exp(high)


def _median(values: list[float]) -> float:
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def roofline_ms(byte_count: int, bandwidth: float | None = None) -> float:
    """Time to move ``byte_count`` bytes once through HBM at ``bandwidth`` bytes/s."""
    bw = bandwidth or float(os.environ.get("KERNELOPT_PEAK_BANDWIDTH", HBM_BANDWIDTH))
    return byte_count / bw * 1e3


def _nbytes(value: Any) -> int:
    return sum(t.numel() * t.element_size() for t in flatten(value) if isinstance(t, torch.Tensor))


class _Timer:
    """CUDA events on the GPU (bound before any candidate code runs); a host clock on CPU."""

    def __init__(self, device: str) -> None:
        self.device = device
        self.perf_counter = time.perf_counter
        if device == "cuda":
            self.event = torch.cuda.Event
            self.synchronize = torch.cuda.synchronize
            self.flush_buffer = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")

    def flush(self) -> None:
        if self.device == "cuda":
            self.flush_buffer.zero_()

    def time(self, fn: Callable[..., Any], inputs: list[Any]) -> tuple[float, Any]:
        """Milliseconds of one call and its output."""
        with torch.no_grad():
            if self.device == "cuda":
                start, end = self.event(enable_timing=True), self.event(enable_timing=True)
                start.record()
                out = fn(*inputs)
                end.record()
                self.synchronize()  # all streams: nothing spills into the next measurement
                return float(start.elapsed_time(end)), out
            t0 = self.perf_counter()
            out = fn(*inputs)
            return (self.perf_counter() - t0) * 1e3, out


#: Every this many rounds an extra, untimed candidate call runs with the launch recorder on.
RECORD_EVERY = 10


def _clone(values: list[Any]) -> list[Any]:
    return [v.clone() if isinstance(v, torch.Tensor) else v for v in values]


def _baselines(names: list[str], ref_model: Any) -> tuple[dict[str, Any], list[str]]:
    fns: dict[str, Any] = {}
    notes: list[str] = []
    for name in names:
        if name == "eager":
            fns["eager"] = ref_model
        elif name == "compile":
            try:
                fns["compile"] = torch.compile(ref_model)
            except Exception as exc:
                notes.append(f"torch.compile baseline unavailable ({type(exc).__name__})")
        else:
            notes.append(f"unknown baseline {name!r} ignored")
    return fns, notes


def time_candidate(
    *,
    problem: Any,
    candidate_source: str,
    device: str,
    baselines: list[str],
    budget_s: float = 4.0,
    min_rounds: int = 10,
    max_rounds: int = 100,
) -> dict[str, Any]:
    """Worker task: time the candidate against each baseline; the performance gate's result."""
    if device == "cpu" and os.environ.get("TRITON_INTERPRET") == "1":
        from kernelopt_jupyter.cpu_triton import install_interpreter_shims

        install_interpreter_shims()
    timer = _Timer(device)
    loaded = materialize(problem)
    ref_model = loaded.make_model(device, seed=0)
    pool = [loaded.make_inputs(1000 + i, device) for i in range(POOL)]
    with torch.no_grad():
        expected = [ref_model(*_clone(inputs)) for inputs in pool]
    fns, notes = _baselines(baselines, ref_model)
    for name in list(fns):
        try:
            for _ in range(3):
                timer.time(fns[name], _clone(pool[0]))
        except Exception as exc:
            notes.append(f"{name} baseline failed to run ({type(exc).__name__}: {exc})"[:200])
            del fns[name]
    if not fns:
        return {"status": "skipped", "detail": "no baseline could be measured: " + "; ".join(notes)}

    recorder = LaunchRecorder(device)
    recorder.install()
    guard = GlobalGuard()
    module = load_source_module(candidate_source, "candidate")
    model = torch.nn.Module.to(candidate_model(problem, module, loaded.init_inputs()), device)
    torch.nn.Module.eval(model)
    torch.nn.Module.load_state_dict(model, ref_model.state_dict(), strict=True)
    fns["candidate"] = model
    try:
        with recorder.recording():
            for _ in range(3):
                timer.time(model, _clone(pool[0]))
    except Exception as exc:
        return {"status": "fail", "detail": f"forward raised during warm-up: {exc}"[:300]}

    estimate = {name: timer.time(fn, _clone(pool[0]))[0] for name, fn in fns.items()}
    per_round = max(sum(estimate.values()) / 1e3, 1e-6)
    rounds = int(min(max_rounds, max(min_rounds, budget_s / per_round)))
    times: dict[str, list[float]] = {name: [] for name in fns}
    checks: list[tuple[int, Any]] = []
    order = list(fns)
    rng = random.Random(0)
    for r in range(rounds):
        rng.shuffle(order)
        for name in order:
            inputs = _clone(pool[r % POOL])
            timer.flush()
            if name == "candidate":
                # Timed calls run without the launch recorder: its per-launch bookkeeping would
                # be charged to the candidate alone. Recorded calls are interleaved, untimed.
                try:
                    ms, out = timer.time(fns[name], inputs)
                    if r % RECORD_EVERY == 0:
                        with recorder.recording():
                            timer.time(fns[name], _clone(pool[r % POOL]))
                except Exception as exc:
                    return {"status": "fail", "detail": f"forward raised while timed: {exc}"[:300]}
                if r >= rounds - POOL:
                    checks.append((r % POOL, out))
            else:
                ms, _ = timer.time(fns[name], inputs)
            times[name].append(ms)
    return _summarise(times, checks, expected, pool, ref_model, recorder, guard, notes, device)


def _summarise(
    times: dict[str, list[float]],
    checks: list[tuple[int, Any]],
    expected: list[Any],
    pool: list[list[Any]],
    ref_model: Any,
    recorder: LaunchRecorder,
    guard: GlobalGuard,
    notes: list[str],
    device: str,
) -> dict[str, Any]:
    if recorder.stream_violations:
        return {"status": "fail", "detail": recorder.stream_violations[0]}
    changes = guard.changes()
    if changes:
        return {"status": "fail", "detail": "the candidate changed the harness: " + changes[0]}
    for index, out in checks:
        cmp = compare_outputs(out, expected[index])
        if cmp.error or not cmp.loose_ok:
            return {
                "status": "fail",
                "detail": "a timed call returned a wrong result (results reused between calls?): "
                + (cmp.error or cmp.worst),
            }
    params = sum(t.numel() * t.element_size() for t in ref_model.state_dict().values())
    moved = _nbytes(pool[0]) + _nbytes(expected[0]) + params
    return judge(times, moved, device, notes)


def judge(
    times: dict[str, list[float]], moved_bytes: int, device: str, notes: list[str] | None = None
) -> dict[str, Any]:
    """The performance verdict from per-round times (ms) of ``candidate`` and each baseline."""
    notes = list(notes or [])
    times = dict(times)
    cand = times.pop("candidate")
    medians = {name: _median(ts) for name, ts in times.items()}
    cand_ms = _median(cand)
    metrics: dict[str, Any] = {"candidate_ms": cand_ms, "rounds": len(cand)}
    for name, ts in times.items():
        s, lo, hi = bootstrap_ratio(cand, ts)
        metrics[f"{name}_ms"] = medians[name]
        metrics[f"speedup_vs_{name}"] = s
        metrics[f"ci_vs_{name}"] = [lo, hi]
    primary = min(medians, key=lambda k: medians[k])
    speedup, low, high = bootstrap_ratio(cand, times[primary])
    floor = roofline_ms(moved_bytes)
    implausible = device == "cuda" and cand_ms < ROOFLINE_SLACK * floor
    metrics.update(
        speedup=speedup,
        ci_low=low,
        ci_high=high,
        baseline=primary,
        baseline_ms=medians[primary],
        bytes_moved=moved_bytes,
        roofline_ms=floor,
        implausible=implausible,
        notes=notes,
    )
    summary = (
        f"{speedup:.3g}x vs {primary} (95% CI {low:.3g}-{high:.3g}; candidate {cand_ms:.4g} ms, "
        f"{primary} {medians[primary]:.4g} ms, {len(cand)} interleaved rounds)"
    )
    if notes:
        summary += "; " + "; ".join(notes)
    if implausible:
        detail = (
            f"implausible: {cand_ms:.4g} ms is faster than moving {moved_bytes} bytes once at "
            f"peak HBM bandwidth ({floor:.4g} ms); the candidate skips work or escapes the timer "
            f"({summary})"
        )
        return {"status": "fail", "detail": detail, **metrics}
    if speedup > SUSPICIOUS_SPEEDUP:
        summary += f"; suspicious: more than {SUSPICIOUS_SPEEDUP:g}x, review it"
    if high < 1.0 - NOISE_MARGIN:
        return {"status": "fail", "detail": f"slower than the baseline: {summary}", **metrics}
    return {"status": "pass", "detail": summary, **metrics}
