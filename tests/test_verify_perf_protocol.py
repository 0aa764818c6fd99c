"""The performance gate's protocol (``verify.perf``) run on the CPU: the checker drives timed
calls in the candidate's and the reference's processes, the wall clock bounds what the
candidate reports, and the output of its last timed call is checked as data.

On the CPU the times mean nothing (the Triton interpreter), so a passing run is reported as
``skipped``; what is tested is the protocol and the checks that need no GPU. The GPU suite
(tests/test_verify_gpu.py) checks the timed verdicts themselves.
"""

from __future__ import annotations

import random
import statistics

import pytest
from _verify_corpus import verify_on

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("warm", [False, True], ids=["plain", "warm-requests"])
def test_good_candidate_runs_the_timing_protocol_in_the_verification_worker(
    warm: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every timed call after an untimed warm request, or none (the default: calls under 1 ms).
    monkeypatch.setenv("KERNELOPT_PERF_WARM_MS", "1e9" if warm else "0")
    report = verify_on("cpu", "scaled_residual", "good_fused", seeds=1, time_on_cpu=True)
    perf = report.gate("performance")
    assert perf is not None and perf.status == "skipped", perf.detail
    assert "CPU protocol run" in perf.detail
    m = perf.metrics
    assert m["warm_calls"] is warm
    assert m["rounds"] >= 10 and m["candidate_ms"] > 0 and m["eager_ms"] > 0
    assert m["overhead_ms"] >= 0 and m["pool"] >= 1
    # The other gates passed as usual.
    assert [g.status for g in report.gates[:3]] == ["pass", "pass", "pass"]


@pytest.mark.parametrize("warm", [False, True], ids=["plain", "warm-requests"])
@pytest.mark.parametrize("cheat", ["bad_lazy_after_many_calls", "bad_memo_when_timed"])
def test_a_candidate_that_stops_computing_when_timed_fails_the_performance_gate(
    cheat: str, warm: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each computes for 60 calls (more than the correctness schedule makes), then writes
    # zeros, or copies an output it kept under a fingerprint that survives small changes of
    # the values: only the output of a timed call, checked as data, gives it away (the timed
    # inputs are scaled element by element per call, so a kept output is wrong by then).
    # With warm requests (each timed call after an untimed one, as on the GPU for calls under
    # 1 ms; forced here), the extra calls only bring the switch to zeros sooner.
    monkeypatch.setenv("KERNELOPT_PERF_WARM_MS", "1e9" if warm else "0")
    report = verify_on("cpu", "scaled_residual", cheat, seeds=1, time_on_cpu=True)
    statuses = [(g.name, g.status, g.detail) for g in report.gates]
    assert report.failed_gate == "performance", statuses
    perf = report.gate("performance")
    assert perf is not None and "a timed call returned a wrong result" in perf.detail


def test_the_wall_clock_bounds_a_candidate_whose_own_clock_lies() -> None:
    """The candidate's own timer is its process's: one reporting a tenth of its time is raised
    to what the checker's wall clock allows; an honest one with the reference's protocol
    overhead is left as it is (noise in the wall clock does not charge it)."""
    from kernelopt_jupyter.verify.perf import bounded_by_wall

    rng = random.Random(7)
    ref_own = [1.0 + rng.uniform(-0.02, 0.02) for _ in range(60)]
    ref_wall = [o + 0.45 + rng.uniform(-0.1, 0.1) for o in ref_own]
    true = [0.8 + rng.uniform(-0.02, 0.02) for _ in range(60)]
    wall = [t + 0.45 + rng.uniform(-0.1, 0.1) for t in true]
    honest, overhead, gap = bounded_by_wall(true, wall, ref_own, ref_wall)
    assert overhead == pytest.approx(0.45, abs=0.03)
    assert gap < 0.03 and statistics.median(honest) == pytest.approx(0.8, abs=0.03)
    lying, _, gap = bounded_by_wall([t / 10 for t in true], wall, ref_own, ref_wall)
    assert gap > 0.6 and statistics.median(lying) == pytest.approx(0.8, abs=0.05)


def test_the_derived_shape_call_comes_after_the_performance_gate() -> None:
    """A kernel specialised to the benchmark's shapes that breaks its process at another shape
    (on the GPU: an out-of-bounds read poisons the CUDA context) is still timed: the derived
    shape's call comes after every gate, and is reported. Before, the performance gate came
    after it and every such harvested candidate failed there on the H200."""
    report = verify_on(
        "cpu", "scaled_residual", "good_specialized_breaks_elsewhere", seeds=1, time_on_cpu=True
    )
    statuses = [(g.name, g.status, g.detail[:200]) for g in report.gates]
    assert [s for _, s, _ in statuses] == ["pass", "pass", "pass", "skipped"], statuses
    perf = report.gate("performance")
    assert perf is not None and "CPU protocol run" in perf.detail, perf.detail
    correctness = report.gate("correctness")
    assert correctness is not None
    assert correctness.metrics["shapes"] == "specialized to the benchmark's shapes", (
        correctness.metrics
    )
    assert "illegal memory access" in correctness.metrics["reason"]


@pytest.mark.parametrize(
    ("set_mb", "sets"),
    [(0.0, 8), (1.6, 8), (7.0, 8), (30.0, 2), (100.0, 1), (6400.0, 1)],
)
def test_the_timing_pool_is_bounded_in_all(set_mb: float, sets: int) -> None:
    """Every process of the performance gate holds the pool: it is bounded in all (64 MiB, at
    least one input set), not per set (two 200 MB sets were 400 MB in each process)."""
    from kernelopt_jupyter.verify.perf import POOL_BYTES, pool_sets

    set_bytes = int(set_mb * 1024 * 1024)
    assert pool_sets(set_bytes, 8) == sets
    assert pool_sets(set_bytes, 8) * set_bytes <= max(POOL_BYTES, set_bytes)
    assert pool_sets(set_bytes, 3) == min(sets, 3)
