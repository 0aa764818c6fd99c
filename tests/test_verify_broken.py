"""Broken candidates caught by the static gate's run-time half (worker) or its sm_90 compile check.

Each row runs the real cascade: the source analysis here, the candidate in a worker process
under Triton's interpreter, the sm_90 compile check in a second worker. Candidates that the
source analysis rejects never start a worker (see test_verify_static.py for those).
"""

from __future__ import annotations

import pytest
from _verify_corpus import assert_caught_by, verify

# (candidate in tests/data/candidates/scaled_residual/, gate that must catch it, detail text)
STATIC_CASES = [
    ("bad_unused_kernel", "static", "forward launched no Triton kernel"),
    ("bad_own_weights", "static", "its own weight"),
    ("bad_import_error", "static", "ModuleNotFoundError"),
    # The hardened source rules (issue 10) now see these two from their text; the run-time
    # crash and the run-time guard are exercised by tests/test_verify_adversarial.py.
    ("bad_crash", "static", "uses os.abort"),
    # The interpreter's bounds check turns the lanes off and names the store (without the
    # check, the store would crash the worker with SIGSEGV).
    ("bad_illegal_address", "static", "stores memory outside the tensors it was given"),
    ("bad_sys_exit", "static", "forward raised SystemExit"),
    ("bad_monkeypatch_hidden", "static", "uses .__dict__"),
    ("bad_not_pow2_block", "static", "power of 2"),
    ("bad_plain_helper_in_kernel", "static", "does not compile for sm_90"),
]


@pytest.mark.parametrize(("candidate", "gate", "detail"), STATIC_CASES)
def test_broken_candidate_is_caught_by_the_static_gate(
    candidate: str, gate: str, detail: str
) -> None:
    assert_caught_by(verify("scaled_residual", candidate), gate, detail)


def test_hanging_candidate_is_stopped_within_the_time_limit() -> None:
    report = verify("scaled_residual", "bad_hang", time_limit_s=15.0)
    assert_caught_by(report, "static", "timed out after")
    assert report.seconds < 15.0 + 10.0
