"""The judge (``verify.judge``) on plain data: no worker, no child process, no IPC. The
reference's case and the candidate's reply are built here as the processes would send them."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from kernelopt_jupyter.verify import wire
from kernelopt_jupyter.verify.judge import (
    CandidateFailure,
    DispatchJudge,
    ValueJudge,
    fp64_verdict,
)
from kernelopt_jupyter.verify.schedule import Call


def _outputs() -> tuple[torch.Tensor, torch.Tensor]:
    """A reference's fp32 output and its float64 referee's."""
    x = torch.randn(64, 256, generator=torch.Generator().manual_seed(3))
    return torch.tanh(x), torch.tanh(x.double())


def _judge() -> tuple[ValueJudge, Call]:
    call = Call(kind="fresh", seed=11)
    return ValueJudge(calls=[call], seed=7, device="cpu", factor=10.0), call


def _refereed_case(ref64: torch.Tensor) -> tuple[dict[str, Any], list[Any]]:
    fields, blobs = wire.pack([("out64", ref64)])
    return {"out64": fields["out64"]}, list(blobs)


def _judge_call(
    judge: ValueJudge, call: Call, case: dict[str, Any], blobs: list[Any], out: Any, ref: Any
) -> None:
    """One call through the judge, as the checker's shell hands it over."""
    compared = judge.compare(call, case, blobs, out, ref)
    judge.check(0, call, "call 1", case, blobs, {}, [], compared, state_asked=False)
    judge.referee_call(0, call, case, compared, out, ref)


def test_an_exact_output_passes_correctness() -> None:
    judge, call = _judge()
    ref, _ = _outputs()
    _judge_call(judge, call, {}, [], ref.clone(), ref)
    verdict = judge.correctness_verdict()
    assert verdict["status"] == "pass" and verdict["strict"] is True
    assert "within the strict tolerance" in verdict["detail"]
    assert verdict["calls"] == 1 and verdict["per_seed"][0]["call"] == 1
    # No referee ran: the float64 gate is skipped, and says why.
    assert judge.fp64_verdict() == {
        "status": "skipped",
        "detail": "no fp64 referee: no refereed call",
    }


def test_an_output_off_by_more_than_the_loose_tolerance_fails_the_call() -> None:
    judge, call = _judge()
    ref, _ = _outputs()
    with pytest.raises(CandidateFailure, match=r"^call 1: ") as failed:
        _judge_call(judge, call, {}, [], ref + 0.1, ref)
    assert failed.value.gate == "correctness"
    assert judge.per_call == []  # a failed call adds no figures


def test_a_strict_miss_without_a_referee_fails_correctness_with_the_reason() -> None:
    judge, call = _judge()
    ref, _ = _outputs()
    off = ref + 1e-3  # within the loose tolerance, outside the strict one
    _judge_call(
        judge, call, {"fp64_reason": "the reference already computes in float64"}, [], off, ref
    )
    verdict = judge.correctness_verdict()
    assert verdict["status"] == "fail"
    assert (
        "no fp64 referee can run (the reference already computes in float64)" in (verdict["detail"])
    )


def test_the_referee_accepts_fp32_rounding_and_refuses_a_precision_loss() -> None:
    ref, ref64 = _outputs()
    honest, call = _judge()
    case, blobs = _refereed_case(ref64)
    _judge_call(honest, call, case, blobs, ref.clone(), ref)
    assert honest.correctness_verdict()["status"] == "pass"
    accepted = honest.fp64_verdict()
    assert accepted["status"] == "pass", accepted["detail"]
    assert accepted["refereed_calls"] == 1 and accepted["err_ratio"] <= 1.0

    lossy, call = _judge()
    case, blobs = _refereed_case(ref64)
    rounded = ref.to(torch.bfloat16).to(torch.float32)  # loose tolerance met, strict missed
    _judge_call(lossy, call, case, blobs, rounded, ref)
    correctness = lossy.correctness_verdict()
    assert correctness["status"] == "pass" and correctness["strict"] is False
    refused = lossy.fp64_verdict()
    assert refused["status"] == "fail" and refused["err_ratio"] > 10.0
    assert refused["detail"].startswith("far less accurate than the reference")


def test_an_unrefereed_call_far_worse_than_the_refereed_ones_fails_the_referee() -> None:
    """The verdict from records alone: one refereed call at fp32 rounding, one call the
    referee did not see that missed the strict tolerance by far more."""
    record = {
        "call": 1,
        "kind": "fresh",
        "leaf": 0,
        "err_candidate": 1e-7,
        "err_reference": 1e-7,
        "floor": 1e-7,
        "small_rel_candidate": 0.0,
        "small_rel_reference": 0.0,
        "small_count": 0,
        "rel_floor": 1e-6,
        "bound_ok": False,
    }
    per_call = [
        {"call": 1, "kind": "fresh", "refereed": True, "strict": True, "scaled_err": 1e-7},
        {"call": 2, "kind": "stress", "refereed": False, "strict": False, "scaled_err": 1e-2},
    ]
    assert fp64_verdict([record], per_call[:1], factor=10.0)["status"] == "pass"
    verdict = fp64_verdict([record], per_call, factor=10.0)
    assert verdict["status"] == "fail"
    assert verdict["detail"].startswith("call 2 (stress, not refereed) misses the strict")


def test_the_dispatch_judge_names_the_first_calls_kernels_and_refuses_torch_work() -> None:
    judge = DispatchJudge(dispatch_only=False, cuda_graphs=False)
    judge.loaded({"ok": True, "construction_launches": 2})
    reply = {
        "ok": True,
        "launches": 3,
        "kernels": {"row_kernel": 3},
        "provenance": [{"state": "kernel"}],
    }
    judge.ran(0, "call 1", "static", reply)
    passed = judge.static_pass()
    assert passed["detail"] == "forward launched 3 Triton kernel(s): row_kernel x3"
    assert passed["construction_launches"] == 2
    with pytest.raises(CandidateFailure, match="written by PyTorch compute ops") as failed:
        judge.ran(1, "call 2", "correctness", {**reply, "provenance": [{"state": "torch"}]})
    assert failed.value.gate == "correctness"
    with pytest.raises(CandidateFailure, match=r"^boom \(call 3\)$"):
        judge.ran(2, "call 3", "correctness", {"ok": False, "detail": "boom"})


def test_an_access_outside_the_launch_storages_fails_the_call_at_its_gate() -> None:
    judge = DispatchJudge(dispatch_only=False, cuda_graphs=False)
    judge.loaded({"ok": True, "construction_launches": 0})
    reply = {"ok": True, "launches": 1, "kernels": {"k": 1}, "provenance": [{"state": "kernel"}]}
    judge.ran(0, "call 1", "static", reply)
    outside = "kernel k loads memory outside the tensors it was given: 4 masked-in lane(s)"
    with pytest.raises(CandidateFailure, match=r"^kernel k loads memory outside") as failed:
        judge.ran(1, "call 2", "correctness", {**reply, "memory_violations": [outside]})
    assert failed.value.gate == "correctness"
