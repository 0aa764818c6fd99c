"""The float64 gate's decision from the checker's per-call referee records
(``Checker._fp64_verdict``): which records each of its checks reads."""

from __future__ import annotations

from typing import Any

import pytest

from kernelopt_jupyter.verify.checker import Checker

EPS = 2.0**-23


def _record(kind: str, call: int, *, mid: float = 1.0, small: float = 1.0) -> dict[str, Any]:
    """One output leaf's record, the candidate's relative figures ``mid`` and ``small`` times
    the fp32 reference's, its absolute error equal to the reference's."""
    return {
        "call": call,
        "kind": kind,
        "leaf": 0,
        "err_candidate": 3e-7,
        "err_reference": 3e-7,
        "floor": 1e-6,
        "small_rel_candidate": small * 6e-4,
        "small_rel_reference": 6e-4,
        "small_count": 2,
        "rel_floor": 1e-3 / 4,  # below the reference's figure: the ratio is the one given
        "mid_rel_candidate": mid * 9e-6,
        "mid_rel_reference": 9e-6,
        "mid_floor": 8 * EPS,
        "bound_ok": False,
    }


def _verdict(records: list[dict[str, Any]]) -> dict[str, Any]:
    checker = Checker.__new__(Checker)  # the verdict reads these fields alone
    checker.fp64_reason = None
    checker.fp64_note = ""
    checker.factor = 10.0
    checker.referee = records
    checker.per_call = []
    checker.strict = True
    return checker._fp64_verdict()


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

    # the same figure on any other call fails
    for kind in CALLS:
        bad = _record(kind, len(CALLS) + 1, **{figure: 19.0})
        verdict = _verdict([*records, bad])
        assert verdict["status"] == "fail", (kind, verdict)

    # and the shift call's absolute error is still judged (a one-pass variance: 32x there)
    loud = {**shifted, "err_candidate": 32 * shifted["floor"]}
    verdict = _verdict([*records, loud])
    assert verdict["status"] == "fail" and verdict["err_ratio"] == pytest.approx(32)
