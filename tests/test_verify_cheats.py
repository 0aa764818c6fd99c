"""Cheating and wrong candidates (as an LLM writes them) caught by correctness or the fp64
referee: each row runs the real cascade with the candidate in a worker process."""

from __future__ import annotations

import pytest
from _verify_corpus import assert_caught_by, verify

# (candidate in tests/data/candidates/scaled_residual/, gate that must catch it, detail text).
# Since issue 10 the dispatch-level accounting runs on every call and sees several of these
# first: a result handed back without any launch, a zero tensor no kernel wrote.
VALUE_CASES = [
    ("bad_zeros", "static", "only allocated or filled with a constant"),
    ("bad_cached_output", "correctness", "forward launched no Triton kernel"),
    ("bad_seed_specific", "correctness", "forward launched no Triton kernel"),
    ("bad_off_by_one_mask", "correctness", "1 of 99231 elements outside"),
    ("bad_input_mutation", "correctness", "modified input 0 in place"),
    ("bad_wrong_shape", "correctness", "has shape (99231,)"),
    ("bad_wrong_dtype", "correctness", "dtype torch.float16"),
    ("bad_reused_buffer", "correctness", "shares memory with the previous call"),
    # Reading an address is no longer host data by itself (an alignment check is honest):
    # the address-keyed cache is caught where it serves a stale result without a launch.
    ("bad_address_cache", "correctness", "forward launched no Triton kernel"),
]


@pytest.mark.parametrize(("candidate", "gate", "detail"), VALUE_CASES)
def test_cheating_candidate_is_caught_by_the_intended_gate(
    candidate: str, gate: str, detail: str
) -> None:
    assert_caught_by(verify("scaled_residual", candidate), gate, detail)


def test_silent_fp16_matmul_passes_loose_correctness_but_fails_the_referee() -> None:
    report = verify("linear_gelu", "bad_silent_fp16")
    assert_caught_by(report, "fp64", "far less accurate than the reference")
    correctness = report.gate("correctness")
    assert correctness is not None and correctness.metrics["strict"] is False
    fp64 = report.gate("fp64")
    assert fp64 is not None and fp64.metrics["err_ratio"] > 10.0


def test_inaccurate_candidate_without_a_referee_must_meet_the_strict_tolerance() -> None:
    report = verify("triton_axpy_noref", "bad_fp16_math")
    assert_caught_by(report, "correctness", "no fp64 referee can run")
