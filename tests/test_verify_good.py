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
    assert "compile for sm_90, the H100/H200 target (built here without a GPU" in static.detail
    assert all(c["status"] == "pass" for c in static.metrics["compile"])
    correctness = report.gate("correctness")
    assert correctness is not None and correctness.metrics["strict"] is True
    # Where the checked calls' time went, per process (the candidate's and the reference's
    # own reports, and the checker's), summed over the calls.
    parts = correctness.metrics["timings"]["call_parts_s"]
    for part in (
        "candidate forward",
        "candidate fingerprints",
        "candidate output",
        "reference forward",
        "reference float64 referee",
        "checker compare",
        "checker referee",
    ):
        assert parts.get(part, -1.0) >= 0.0, (part, parts)
    assert sum(parts.values()) < correctness.metrics["timings"]["seconds"]
    perf = report.gate("performance")
    assert perf is not None and perf.detail == "no GPU" and report.speedup is None
    assert not report.dispatch_only


def test_reordered_reduction_needs_and_gets_the_referee() -> None:
    report = verify("row_variance", "good_blocked_needs_referee")
    assert report.verdict == "pass"
    correctness = report.gate("correctness")
    fp64 = report.gate("fp64")
    assert correctness is not None and fp64 is not None
    # It really misses the strict tolerance on every fresh call (a call with random signs,
    # whose variance is the same, may meet it) ...
    assert correctness.metrics["strict"] is False
    fresh = [c for c in correctness.metrics["per_seed"] if c["kind"] == "fresh"]
    assert fresh and not any(c["strict"] for c in fresh)
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


def test_call_parts_from_a_process_are_taken_as_figures_only() -> None:
    """A candidate's process reports its call's parts (``phases_s``): whatever it sends, the
    checker keeps only named, finite, non-negative seconds, a bounded number of them."""
    from kernelopt_jupyter.verify.checker import PARTS_MAX, _Clock

    clock = _Clock()
    clock.add("candidate", {"forward": 0.5, "x" * 99: 1.0, "neg": -1.0, "nan": float("nan")})
    clock.add("candidate", {"forward": 0.25, 3: 1.0, "s": "1", "big": 1e9})
    clock.add("candidate", ["forward", 1.0])
    clock.add("candidate", {f"p{i}": 1.0 for i in range(100)})
    parts = clock.report()["call_parts_s"]
    assert parts["candidate forward"] == 0.75
    assert parts["candidate " + "x" * 40] == 1.0
    assert not any(k.endswith(("neg", "nan", " s", "big")) for k in parts)
    assert sum(k.startswith("candidate p") for k in parts) == PARTS_MAX
