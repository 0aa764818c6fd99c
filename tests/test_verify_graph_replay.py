"""A CUDA graph of vendor calls (a dispatch-only candidate captured once and replayed) is
recognised as a replay by the checker's dispatch accounting, as one of Triton kernels is;
without captured work, a replayed-looking call with a kept output still fails.

The replies are the candidate harness's (``verify.sandbox``) as plain data: CUDA graphs cannot
run on the CPU, and the rule under test is the checker's reading of them. Found on the H200:
``rewrite: fold BatchNorm ... (eager vendor path) in a CUDA graph`` failed every second call
with "the memory of the output was not written during this call"."""

from __future__ import annotations

from typing import Any

import pytest

from kernelopt_jupyter.verify.checker import Checker
from kernelopt_jupyter.verify.judge import CandidateFailure, DispatchJudge


def _judge(*, dispatch_only: bool, cuda_graphs: bool) -> DispatchJudge:
    return DispatchJudge(dispatch_only=dispatch_only, cuda_graphs=cuda_graphs)


def _checker(*, dispatch_only: bool, cuda_graphs: bool) -> Checker:
    kwargs: dict[str, Any] = {
        "device": "cuda",
        "dispatch_only": dispatch_only,
        "cuda_graphs": cuda_graphs,
        "fp64_factor": 10.0,
        "seed": 7,
        "time_limit_s": 60.0,
        "problem": None,
        "candidate_source": "",
        "seeds": 3,
    }
    return Checker(kwargs, ref=None, cand=None)  # type: ignore[arg-type]


def _reply(
    state: str, *, replays: int = 0, vendor: int = 0, launches: int = 0, compute: int = 0
) -> dict[str, Any]:
    return {
        "launches": launches,
        "graph_replays": replays,
        "vendor_ops": {"aten.convolution": vendor} if vendor else {},
        "compute_ops": {"aten.avg_pool2d": compute} if compute else {},
        "provenance": [{"state": state}],
    }


def test_a_replayed_vendor_graph_passes_the_accounting() -> None:
    judge = _judge(dispatch_only=True, cuda_graphs=True)
    # call 1: two eager warm-ups, the capture and a replay: vendor ops seen, output written
    judge.account(0, "call 1", "static", _reply("vendor", replays=1, vendor=3))
    # call 2 on: the replay alone; its output memory is not written by any visible op
    judge.account(1, "call 2", "correctness", _reply("stale", replays=1))
    judge.account(2, "call 3", "correctness", _reply("stale", replays=1))


def test_a_replayed_graph_of_aten_kernels_passes_when_dispatch_only() -> None:
    """A dispatch-only candidate's graph replay writes its outputs even where the graph holds
    only ATen's own kernels (an average pool is ATen's own CUDA kernel, neither Triton nor a
    vendor library): on the H200 ``avg_pool7_stride3``'s graphed candidates would otherwise
    fail every second call as "not written during this call"."""
    judge = _judge(dispatch_only=True, cuda_graphs=True)
    judge.account(0, "call 1", "static", _reply("torch", replays=1, compute=6))
    judge.account(1, "call 2", "correctness", _reply("stale", replays=1))
    # A candidate with kernels of its own may not run ATen compute at all, graphed or not.
    kernels = _judge(dispatch_only=False, cuda_graphs=True)
    with pytest.raises(CandidateFailure, match="PyTorch compute ops"):
        kernels.account(0, "call 1", "static", _reply("torch", replays=1, compute=6, launches=1))


def test_a_kept_output_without_captured_work_still_fails() -> None:
    judge = _judge(dispatch_only=True, cuda_graphs=True)
    judge.account(0, "call 1", "static", _reply("torch"))  # nothing captured
    with pytest.raises(CandidateFailure, match="not written during this call"):
        judge.account(1, "call 2", "correctness", _reply("stale", replays=1))


def test_no_replay_no_allowance() -> None:
    judge = _judge(dispatch_only=True, cuda_graphs=True)
    judge.account(0, "call 1", "static", _reply("vendor", vendor=2))
    # vendor work seen before, but this call replayed no graph: a kept output is stale
    with pytest.raises(CandidateFailure, match="not written during this call"):
        judge.account(1, "call 2", "correctness", _reply("stale"))


def test_a_candidate_not_using_cuda_graphs_gets_no_allowance() -> None:
    judge = _judge(dispatch_only=True, cuda_graphs=False)
    judge.account(0, "call 1", "static", _reply("vendor", replays=1, vendor=3))
    with pytest.raises(CandidateFailure, match="not written during this call"):
        judge.account(1, "call 2", "correctness", _reply("stale", replays=1))


def test_the_plausibility_floor_owes_inputs_and_outputs_not_weights(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The performance gate's floor (bytes moved once at peak bandwidth) counts what every
    evaluation must touch. Weights are not owed each call: a fold derives what it needs at
    load (found on the H200: a folded row sum after a 256 MiB Linear was refused as
    "implausible" for not reading the weight). The footprint still counts them."""
    import torch

    from kernelopt_jupyter.verify import wire

    checker = _checker(dispatch_only=False, cuda_graphs=False)
    fields, blobs = wire.pack(
        [("init", []), ("state", {"weight": torch.zeros(64, 64), "bias": torch.zeros(64)})]
    )
    monkeypatch.setattr(checker, "_cand_ask", lambda *a, **k: ({"ok": True}, []))
    checker._load({**fields, "kind": "module", "entry": "ModelNew"}, blobs)
    assert checker.footprint == (64 * 64 + 64) * 4
    assert checker.moved == 0
