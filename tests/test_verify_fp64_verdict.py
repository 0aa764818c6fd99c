"""The float64 gate's decision from the checker's per-call referee records
(``judge.fp64_verdict``): which records each of its checks reads."""

from __future__ import annotations

from typing import Any

import pytest

from kernelopt_jupyter.verify.judge import fp64_verdict

EPS = 2.0**-23


def _record(
    kind: str, call: int, *, mid: float = 1.0, small: float = 1.0, count: int = 2
) -> dict[str, Any]:
    """One output leaf's record, the candidate's relative figures ``mid`` and ``small`` times
    the fp32 reference's (over ``count`` small values), its absolute error the reference's."""
    return {
        "call": call,
        "kind": kind,
        "leaf": 0,
        "err_candidate": 3e-7,
        "err_reference": 3e-7,
        "floor": 1e-6,
        "small_rel_candidate": small * 6e-4,
        "small_rel_reference": 6e-4,
        "small_count": count,
        "small_count_reference": count,
        "rel_floor": 1e-3 / 4,  # below the reference's figure: the ratio is the one given
        "mid_rel_candidate": mid * 9e-6,
        "mid_rel_reference": 9e-6,
        "mid_floor": 8 * EPS,
        "bound_ok": False,
    }


def _verdict(records: list[dict[str, Any]]) -> dict[str, Any]:
    return fp64_verdict(records, [], factor=10.0)


CALLS = ["fresh", "reload", "perturb", "zeros", "stress", "late"]


@pytest.mark.parametrize("figure", ["mid", "small"])
def test_relative_checks_leave_the_shift_call_out(figure: str) -> None:
    """The shift call's near-zero values cancel operands 16 times the output's scale: an honest
    Inductor row normalisation was 19x the CPU reference there (which rounds a mean it summed
    in double, nearly exact in some draws). The relative checks do not read that call; the
    absolute check still does."""
    records = [_record(k, i + 1) for i, k in enumerate(CALLS)]
    shifted = _record("shift", len(CALLS) + 1, **{figure: 19.0})
    verdict = _verdict([*records, shifted])
    assert verdict["status"] == "pass", verdict
    assert verdict["mid_value_ratio"] < 10 and verdict["small_value_ratio"] < 10

    # the same on any other call fails (the small-value mean is pooled over the calls, so
    # there one call's figure is taken far enough up to fail the pool of seven)
    worse = 19.0 if figure == "mid" else 200.0
    for kind in CALLS:
        bad = _record(kind, len(CALLS) + 1, **{figure: worse})
        verdict = _verdict([*records, bad])
        assert verdict["status"] == "fail", (kind, verdict)

    # and the shift call's absolute error is still judged (a one-pass variance: 32x there)
    loud = {**shifted, "err_candidate": 32 * shifted["floor"]}
    verdict = _verdict([*records, loud])
    assert verdict["status"] == "fail" and verdict["err_ratio"] == pytest.approx(32)


def test_calls_with_few_small_values_are_pooled() -> None:
    """A small output has a handful of values far below its scale per call, and one value
    within 1e-5 of zero set that call's mean: an honest Inductor harvest of a 2x1500 row
    normalisation read 12x on the stress call over three values (seed 79), where the pool of
    its calls reads under 2x. Flushing or coarsening small values on every call still fails,
    and so does flushing them on one call of seven."""
    counts = [4, 3, 3, 5, 2, 1]
    calls = [_record(k, i + 1, count=n) for i, (k, n) in enumerate(zip(CALLS, counts))]
    stress = _record("stress", 7, small=12.0, count=3)
    verdict = _verdict([*calls, stress])
    assert verdict["status"] == "pass" and verdict["small_value_ratio"] < 3, verdict

    everywhere = [{**r, "small_rel_candidate": 12 * r["small_rel_candidate"]} for r in calls]
    verdict = _verdict([*everywhere, stress])
    assert verdict["status"] == "fail" and "far below" in verdict["detail"], verdict

    flushed = {**stress, "small_rel_candidate": 1.0}  # every small value of one call zeroed
    verdict = _verdict([*calls, flushed])
    assert verdict["status"] == "fail" and verdict["small_value_ratio"] > 100, verdict


def test_pooled_figures_are_kept_apart_per_output_leaf() -> None:
    """Two outputs' small values are never pooled together: a coarse second output fails
    although the first output's many exact values would dilute it."""
    first = [_record(k, i + 1, count=20) for i, k in enumerate(CALLS)]
    second = [{**_record(k, i + 1, small=12.0), "leaf": 1} for i, k in enumerate(CALLS)]
    verdict = _verdict([*first, *second])
    assert verdict["status"] == "fail" and verdict["small_value_ratio"] == pytest.approx(12)


def test_a_call_with_many_small_values_is_judged_on_its_own() -> None:
    """From ``SMALL_VALUES_ALONE`` values on, a call keeps its own figure: a tanh-form GELU
    used on the stress call only (hundreds of small values there, 11-14x) is not diluted by
    the other calls' exact ones, as it was by a pool of every call (2 of 8 seeds passed)."""
    from kernelopt_jupyter.verify.judge import SMALL_VALUES_ALONE

    calls = [_record(k, i + 1, count=100) for i, k in enumerate(CALLS)]
    stress = _record("stress", 7, small=12.0, count=SMALL_VALUES_ALONE)
    verdict = _verdict([*calls, stress])
    assert verdict["status"] == "fail" and verdict["small_value_ratio"] == pytest.approx(12)
    fewer = {**stress, "small_count": SMALL_VALUES_ALONE - 1}
    few = [_record(k, i + 1, count=5) for i, k in enumerate(CALLS)]
    verdict = _verdict([*few, fewer])  # pooled with the six calls' 30 exact values
    assert verdict["status"] == "pass", verdict
