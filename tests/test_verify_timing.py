"""The performance worker end to end on the CPU (host clock instead of CUDA events).

The gate itself is skipped on the CPU (``no GPU``, per the contract); this runs its worker task
directly so the whole measurement path (baselines, warm-up, interleaved rounds, result checks,
statistics) is exercised without a GPU. No timing value is asserted.
"""

from __future__ import annotations

from _verify_corpus import DATA, problem

from kernelopt_jupyter.worker import run_task


def _time(candidate: str, **kwargs: object) -> dict[str, object]:
    source = (DATA / "candidates" / "scaled_residual" / f"{candidate}.py").read_text()
    result = run_task(
        "kernelopt_jupyter.verify.timing:time_candidate",
        {
            "problem": problem("scaled_residual"),
            "candidate_source": source,
            "device": "cpu",
            "baselines": ["eager", "no-such-baseline"],
            "budget_s": 0.05,
            "min_rounds": 4,
            "max_rounds": 4,
            **kwargs,
        },
        device="cpu",
        time_limit_s=120,
    )
    assert result.ok, result.describe() + result.traceback
    value: dict[str, object] = result.value
    return value


def test_timing_task_reports_interleaved_rounds_and_an_interval() -> None:
    data = _time("good_fused")
    assert data["status"] in ("pass", "fail") and data["rounds"] == 4
    speedup, low, high = data["speedup"], data["ci_low"], data["ci_high"]
    assert isinstance(speedup, float) and isinstance(low, float) and isinstance(high, float)
    assert 0 < low <= speedup <= high
    assert data["baseline"] == "eager" and data["implausible"] is False  # never on the CPU
    assert data["notes"] == ["unknown baseline 'no-such-baseline' ignored"]
    assert data["bytes_moved"] == 3 * 97 * 1023 * 4 + 1023 * 4  # x, y, out + the scale


def test_timed_calls_are_checked_against_the_reference() -> None:
    # Correct on the first call only: the timed rounds' outputs expose it.
    data = _time("bad_seed_specific")
    assert data["status"] == "fail" and "a timed call returned a wrong result" in str(
        data["detail"]
    )
