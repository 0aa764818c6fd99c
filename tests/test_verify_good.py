"""Correct candidates at each gate boundary pass, and the report says how they passed."""

from __future__ import annotations

import json

import pytest
from _verify_corpus import verify

GOOD = [
    ("scaled_residual", "good_fused"),
    ("linear_gelu", "good_mm_epilogue"),
    ("linear_gelu", "good_f_linear_dispatch"),
    ("triton_axpy", "good_function"),
]


@pytest.mark.parametrize(("problem", "candidate"), GOOD)
def test_correct_candidate_passes_every_gate_that_runs(problem: str, candidate: str) -> None:
    report = verify(problem, candidate)
    assert report.verdict == "pass", [(g.name, g.status, g.detail) for g in report.gates]
    statuses = [(g.name, g.status) for g in report.gates]
    assert statuses == [
        ("static", "pass"),
        ("correctness", "pass"),
        ("fp64", "pass"),
        ("performance", "skipped"),
    ]
    static = report.gate("static")
    assert static is not None and static.metrics["launches"] >= 1
    assert "compile for sm_90" in static.detail
    assert all(c["status"] == "pass" for c in static.metrics["compile"])
    correctness = report.gate("correctness")
    assert correctness is not None and correctness.metrics["strict"] is True
    perf = report.gate("performance")
    assert perf is not None and perf.detail == "no GPU" and report.speedup is None
    assert not report.dispatch_only


def test_reordered_reduction_needs_and_gets_the_referee() -> None:
    report = verify("row_variance", "good_blocked_needs_referee")
    assert report.verdict == "pass"
    correctness = report.gate("correctness")
    fp64 = report.gate("fp64")
    assert correctness is not None and fp64 is not None
    # It really misses the strict tolerance on every seed ...
    assert correctness.metrics["strict"] is False
    assert not any(seed["strict"] for seed in correctness.metrics["per_seed"])
    assert "fp64 referee decides" in correctness.detail
    # ... and its error against float64 is of the reference's own size.
    assert fp64.status == "pass" and "accepted by the referee" in fp64.detail
    assert 0.0 < fp64.metrics["err_ratio"] <= 10.0


def test_dispatch_only_candidate_is_admitted_and_reported_as_such() -> None:
    declared = verify("scaled_residual", "good_dispatch_only")
    assert declared.verdict == "pass" and declared.dispatch_only
    static = declared.gate("static")
    assert static is not None and "dispatch-only" in static.detail
    assert declared.to_dict()["dispatch_only"] is True
    # The same torch-only code without the marker is rejected; with the option it is admitted.
    assert verify("scaled_residual", "bad_torch_only").failed_gate == "static"
    admitted = verify("scaled_residual", "bad_torch_only", dispatch_only=True)
    assert admitted.verdict == "pass" and admitted.dispatch_only


def test_no_referee_means_fp64_skipped_with_a_reason_and_one_seed_option() -> None:
    report = verify("triton_axpy_noref", "good_function", seeds=1)
    assert report.verdict == "pass"
    fp64 = report.gate("fp64")
    assert fp64 is not None and fp64.status == "skipped"
    assert "defines no reference()" in fp64.detail
    data = json.loads(json.dumps(report.to_dict()))
    # One input seed, drawn fresh for this verification and written in the verdict.
    assert len(data["gates"][1]["seeds"]) == 1 and isinstance(data["seed"], int)
    assert data["gates"][1]["metrics"]["seed"] == data["seed"]
    assert data["gates"][2]["err_ratio"] is None
