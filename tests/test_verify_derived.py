"""The derived-shape calls (``verify.derived``): a batch below the benchmark's and one above
it, drawn from the schedule's seed, the memory cap on the call above, and what the report says
of them (``derived_shapes``, ``shapes``). Unit tests on plain data; the corpus cases
(``tests/adversarial/labels/gelu_bf16_above_batch.py``, ``good/gelu_row_tiles_any_batch.py``)
run them end to end."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from kernelopt_jupyter.verify import derived, wire
from kernelopt_jupyter.verify.checker import derived_call, derived_need, free_memory
from kernelopt_jupyter.verify.judge import ValueJudge
from kernelopt_jupyter.verify.reference import transform_inputs
from kernelopt_jupyter.verify.schedule import Call, draw_schedule


def _derived(seed: int) -> list[Call]:
    return [c for c in draw_schedule(seed, 3, "cpu") if c.kind == "batch"]


def test_every_schedule_ends_with_a_batch_below_then_one_above() -> None:
    for seed in range(200):
        calls = draw_schedule(seed, 3, "cpu")
        below, above = calls[-2:]
        assert [c.kind for c in calls[-2:]] == ["batch", "batch"], seed
        assert below.transform["direction"] == "below", seed
        assert above.transform["direction"] == "above", seed
        # reported only: never checked, never refereed, never a gate's failure
        assert not below.checked and not above.checked
        assert not below.referee and not above.referee
        assert sum(c.kind == "batch" for c in calls) == 2


def test_the_derived_sizes_are_drawn_both_ways_and_cover_their_range() -> None:
    """Below the benchmark's batch: 1 .. B-1; above: B+1 .. 2B; a candidate cannot know which
    (over seeds, both ends and sizes between come)."""
    batch = 64
    below, above = set(), set()
    for seed in range(400):
        low, high = _derived(seed)
        below.add(derived.derived_batch(batch, low.transform))
        above.add(derived.derived_batch(batch, high.transform))
    assert min(below) >= 1 and max(below) <= batch - 1
    assert min(above) >= batch + 1 and max(above) <= 2 * batch
    assert len(below) > 40 and len(above) > 40  # drawn, not one fixed size
    assert any(s < batch // 2 for s in below) and any(s > batch // 2 for s in below)
    assert any(s < batch * 3 // 2 for s in above) and any(s > batch * 3 // 2 for s in above)
    # a batch of 1 has nothing below it; above it is 2
    assert derived.derived_batch(1, {"direction": "below", "pick": 5}) is None
    assert derived.derived_batch(1, {"direction": "above", "pick": 5}) == 2


def test_the_other_draws_of_a_seed_are_unchanged_by_the_derived_calls() -> None:
    """The derived calls draw from a stream of their own: the checked calls of a seed are the
    ones a reproduction with --seed expects."""
    for seed in range(50):
        calls = draw_schedule(seed, 3, "cpu")
        checked = [c for c in calls if c.checked]
        assert [c.describe() for c in checked] == [
            c.describe() for c in draw_schedule(seed, 3, "cpu") if c.checked
        ]
        assert all(c.kind != "batch" for c in checked)


def test_the_batch_above_takes_new_rows_not_copies_of_the_benchmarks() -> None:
    """Rows past the benchmark's batch are drawn (seeded): a candidate that computes the first
    B rows and tiles them would be right on repeated rows."""
    gen = torch.Generator().manual_seed(0)

    def draw(seed: int) -> list[Any]:
        g = torch.Generator().manual_seed(seed)
        return [torch.randn(8, 5, generator=g), torch.randn(3, generator=g)]

    inputs = [torch.randn(8, 5, generator=gen), torch.randn(3, generator=gen)]
    spec = {"kind": "batch", "direction": "above", "pick": 11}
    out, described = transform_inputs([t.clone() for t in inputs], spec, draw)
    size = derived.derived_batch(8, spec)
    assert size is not None and described == {
        "kind": "batch",
        "direction": "above",
        "from": 8,
        "to": size,
    }
    assert out[0].shape == (size, 5) and out[0].is_contiguous()
    assert torch.equal(out[0][:8], inputs[0])
    assert not torch.equal(out[0][8:size], inputs[0][: size - 8])  # new rows
    assert torch.equal(out[1], inputs[1])  # no batch dimension of its own: kept
    again, _ = transform_inputs([t.clone() for t in inputs], spec, draw)
    assert torch.equal(again[0], out[0])  # seeded: the same call reproduces
    below = {"kind": "batch", "direction": "below", "pick": 11}
    shrunk, described = transform_inputs([t.clone() for t in inputs], below, draw)
    assert shrunk[0].shape[0] == described["to"] < 8
    one = [torch.randn(1, 5)]
    assert transform_inputs(one, below, draw)[1] is None  # nothing below a batch of 1


def _tree(*tensors: torch.Tensor) -> Any:
    return wire.encode(list(tensors)).tree


def test_the_memory_estimate_grows_with_the_batch_only_where_inputs_do() -> None:
    x, table = torch.zeros(100, 256), torch.zeros(50, 8)  # 102400 and 1600 bytes
    tree = _tree(x, table)
    assert derived.batch_of(tree) == 100
    out_bytes, peak = 102400, 102400 + 40000
    at_own = derived.estimate_bytes(tree, out_bytes, peak, 100)
    twice = derived.estimate_bytes(tree, out_bytes, peak, 200)
    c = derived
    assert at_own == c.INPUT_COPIES * (102400 + 1600) + c.OUTPUT_COPIES * 102400 + (
        c.WORK_COPIES * 40000
    )
    # twice the batch: twice everything but the table, which has no batch dimension
    assert twice == 2 * at_own - c.INPUT_COPIES * 1600
    assert derived.estimate_bytes(_tree(), 0, 0, 10) == 0  # no input, nothing to scale


def test_the_call_above_is_skipped_with_a_reason_over_the_memory_budget() -> None:
    gib = 2**30
    assert derived.over_budget(gib, 4 * gib) is None  # a quarter of what is free: made
    assert derived.over_budget(gib, None) is None  # free memory unknown: made
    why = derived.over_budget(3 * gib, 4 * gib)
    assert why is not None
    assert "3.00 GiB" in why and "50% of the 4.00 GiB free" in why
    # the checker's decision from the first call's sizes: a multi-GB input's batch above is
    # estimated at several times its bytes, and skipped where that is not free
    big = {"t": "list", "items": [{"t": "tensor", "shape": [4096, 65536], "dtype": "float32"}]}
    call = _derived(3)[1]
    described, need = derived_need(call, big, 4096 * 65536 * 4, 4096 * 65536 * 4)
    assert described is not None and described["direction"] == "above"
    assert described["from"] == 4096 and 4096 < described["to"] <= 8192
    assert need > 7 * 4096 * 65536 * 4  # at least the inputs and outputs once more, 7 copies
    assert derived.over_budget(need, 16 * gib) is not None
    assert derived.over_budget(need, 1024 * gib) is None
    free = free_memory("cpu")
    assert free is None or free > 0


def test_no_input_with_a_batch_means_no_derived_shape() -> None:
    call = _derived(0)[1]
    described, need = derived_need(call, _tree(torch.zeros(())), 4, 4)
    assert described is None and need == 0


def _judge(calls: list[Call]) -> ValueJudge:
    return ValueJudge(calls=calls, seed=7, device="cpu", factor=10.0)


def _described(call: Call, size: int) -> dict[str, Any]:
    return {"kind": "batch", "direction": call.transform["direction"], "from": 64, "to": size}


def test_the_report_lists_each_derived_shape_and_its_outcome() -> None:
    below, above = _derived(5)
    judge = _judge([Call("fresh", 1), below, above])
    judge.last_strict = (True, "")
    judge.derived_passed(below, {"described": _described(below, 31)})
    judge.derived_skipped(above, "not run: estimated at 9 GiB", _described(above, 100))
    metrics = judge.correctness_metrics()
    # not called general both ways: the call above was not run
    assert metrics["shapes"] == "generalizes below the benchmark's batch only"
    assert metrics["reason"] == "batch 100 (above): not run: estimated at 9 GiB"
    assert metrics["derived_shapes"] == [
        {"direction": "below", "described": _described(below, 31), "outcome": "pass"},
        {
            "direction": "above",
            "described": _described(above, 100),
            "outcome": "skipped",
            "reason": "not run: estimated at 9 GiB",
        },
    ]
    rule = derived.shape_rule(metrics["derived_shapes"])
    assert rule.startswith("verified at the benchmark's batch, 64; derived batches")
    assert "batch 31 (below) matches" in rule
    assert "batch 100 (above) not run (not run: estimated at 9 GiB)" in rule


def test_precision_dropped_above_the_batch_is_not_called_general() -> None:
    """Exact below the benchmark's batch, a strict miss above it: specialised, and the reason
    names the batch above (the single call below used to call it general)."""
    below, above = _derived(9)
    judge = _judge([Call("fresh", 1), below, above])
    judge.last_strict = (True, "")
    judge.derived_passed(below, {"described": _described(below, 31)})
    judge.last_strict = (False, "output: max abs err 3e-3")
    judge.derived_passed(above, {"described": _described(above, 97)})
    metrics = judge.correctness_metrics()
    assert metrics["shapes"] == "specialized to the benchmark's shapes"
    assert metrics["derived"] == _described(above, 97)
    assert metrics["reason"].startswith("batch 97 (above): the output misses the strict")
    assert [r["outcome"] for r in metrics["derived_shapes"]] == ["pass", "fail"]


def test_derived_shapes_not_run_are_not_checked() -> None:
    below, above = _derived(2)
    judge = _judge([Call("fresh", 1), below, above])
    judge.skipped_case(
        below, {"skip": "no input has a batch dimension above 1 to shrink", "nothing_to_vary": True}
    )
    judge.derived_skipped(above, "the candidate ran out of device memory", _described(above, 70))
    metrics = judge.correctness_metrics()
    assert metrics["shapes"] == "not checked"
    assert metrics["reason"] == "batch 70 (above): the candidate ran out of device memory"
    assert metrics["derived_shapes"][0]["applies"] is False  # no batch below 1: no such shape
    assert judge.skipped == []  # the checked calls' skips stay the checked calls'


def test_a_problem_with_no_batch_below_is_general_on_the_batch_above_alone() -> None:
    below, above = _derived(2)
    judge = _judge([Call("fresh", 1), below, above])
    judge.skipped_case(
        below, {"skip": "no input has a batch dimension above 1 to shrink", "nothing_to_vary": True}
    )
    judge.last_strict = (True, "")
    judge.derived_passed(above, {"described": _described(above, 2)})
    assert judge.correctness_metrics()["shapes"] == "generalizes"
    # the reference's own out-of-memory there is a shape not checked, not one that is absent
    judge = _judge([Call("fresh", 1), below, above])
    judge.skipped_case(below, {"skip": "the reference's process ran out", "oom": True})
    judge.derived_passed(above, {"described": _described(above, 2)})
    assert judge.correctness_metrics()["shapes"] == "generalizes above the benchmark's batch only"


@pytest.mark.parametrize("direction", ["below", "above"])
def test_a_derived_failure_is_reported_never_failed(direction: str) -> None:
    calls = _derived(4)
    call = next(c for c in calls if c.transform["direction"] == direction)
    judge = _judge([Call("fresh", 1), *calls])
    judge.derived_failed(call, {"described": _described(call, 50)}, "forward raised IndexError")
    verdict = judge.correctness_verdict()
    assert verdict["status"] == "pass"
    assert verdict["shapes"] == "specialized to the benchmark's shapes"
    assert "does not match" in verdict["detail"]


def test_the_guard_states_its_shape_rule() -> None:
    """The guard an accepted candidate carries says which batch the gates verified (the one it
    admits) and what the derived batches below and above showed."""
    from pathlib import Path

    from kernelopt_jupyter.deploy.guard import guard_best_source, shape_rule_note
    from kernelopt_jupyter.problem import load_problem
    from kernelopt_jupyter.verify import GateResult

    below, above = _derived(9)
    rows = [
        derived.entry("below", _described(below, 31), "pass"),
        derived.entry("above", _described(above, 97), "fail", "the output misses"),
    ]
    gates = [
        GateResult("static", "pass", ""),
        GateResult("correctness", "pass", "", {"derived_shapes": rows}),
    ]
    note = shape_rule_note(gates)
    assert note.startswith("Shape rule: the kernels run only at the shape the gates checked")
    assert "batch, 64;" in note and "batch 31 (below) matches" in note
    assert "batch 97 (above) does not match" in note
    assert shape_rule_note([g.to_dict() for g in gates]) == note  # as saved in events
    assert shape_rule_note([GateResult("correctness", "pass", "")]) == ""
    root = Path(__file__).parent / "adversarial"
    problem = load_problem(root / "problems" / "gelu.py")
    source = (root / "good" / "gelu_row_tiles_any_batch.py").read_text()
    guarded = guard_best_source(problem, source, "cpu", note)
    assert "KernelOPT guard not added" not in guarded  # the static rules take it
    comments = " ".join(
        line.removeprefix("# ") for line in guarded.splitlines() if line.startswith("# ")
    )
    assert "batch 97 (above) does not match" in comments
    assert all(len(line) <= 100 for line in guarded.splitlines() if line.startswith("# "))


def _checker(calls: list[Call]) -> Any:
    """A checker with no children: its derived-call shell is driven directly, with the call
    itself (``_one``) replaced per test."""
    from kernelopt_jupyter.verify.checker import Checker

    kwargs: dict[str, Any] = {
        "device": "cpu",
        "dispatch_only": False,
        "cuda_graphs": False,
        "fp64_factor": 10.0,
        "seed": 7,
        "time_limit_s": 60.0,
        "problem": None,
        "candidate_source": "",
        "seeds": 3,
    }
    checker = Checker(kwargs, ref=None, cand=_Deadline())  # type: ignore[arg-type]
    checker.calls = calls
    checker.values = _judge(calls)
    return checker


class _Deadline:
    deadline = 1e18


_BIG = {"t": "list", "items": [{"t": "tensor", "shape": [4096, 65536], "dtype": "float32"}]}
_GIB = 2**30


def test_the_checker_skips_the_call_above_over_the_budget_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kernelopt_jupyter.verify import checker as shell

    below, above = _derived(3)
    checker = _checker([Call("fresh", 1), below, above])
    checker.first_call = (_BIG, _GIB, _GIB)  # 1 GiB of input, 1 GiB of output
    made: list[str] = []
    monkeypatch.setattr(
        checker, "_one", lambda index, call: made.append(call.transform["direction"])
    )
    monkeypatch.setattr(shell, "free_memory", lambda device: 8 * _GIB)
    derived_call(checker, 1, below)  # below the benchmark's batch: never over the budget
    derived_call(checker, 2, above)
    assert made == ["below"]
    row = checker.values.derived[-1]
    assert row["direction"] == "above" and row["outcome"] == "skipped"
    assert row["reason"].startswith("not run: estimated at") and "8.00 GiB free" in row["reason"]
    assert row["described"]["from"] == 4096 and row["described"]["to"] > 4096
    monkeypatch.setattr(shell, "free_memory", lambda device: 1024 * _GIB)
    derived_call(checker, 2, above)  # enough free: made
    assert made == ["below", "above"]


def test_an_out_of_memory_in_a_derived_call_is_reported_never_failed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kernelopt_jupyter.verify.checker import ReferenceFailure

    below, above = _derived(5)
    checker = _checker([Call("fresh", 1), below, above])

    def checker_oom(index: int, call: Call) -> None:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 GiB")

    monkeypatch.setattr(checker, "_one", checker_oom)
    derived_call(checker, 1, below)

    def reference_oom(index: int, call: Call) -> None:
        raise ReferenceFailure("the reference's process ran out of device memory", oom=True)

    monkeypatch.setattr(checker, "_one", reference_oom)
    derived_call(checker, 2, above)
    rows = checker.values.derived
    assert [r["outcome"] for r in rows] == ["skipped", "skipped"]
    assert "the checker ran out of device memory" in rows[0]["reason"]
    assert "ran out of device memory" in rows[1]["reason"]
    verdict = checker.values.correctness_verdict()
    assert verdict["status"] == "pass" and verdict["shapes"] == "not checked"

    def reference_died(index: int, call: Call) -> None:
        raise ReferenceFailure("the reference's process died with SIGKILL", died=True)

    monkeypatch.setattr(checker, "_one", reference_died)
    with pytest.raises(ReferenceFailure):  # a death that is no out-of-memory stays one
        derived_call(checker, 2, above)
    assert checker.cand.deadline == 1e18  # the candidate's deadline is put back


_HUNGRY_ABOVE = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = 0

    def forward(self, x):
        self.first = self.first or x.shape[0]
        if x.shape[0] > self.first:  # a workspace far larger than any device
            torch.empty(1 << 42, dtype=torch.uint8, device=x.device)
        out = torch.empty_like(x)
        _gelu[(triton.cdiv(x.numel(), 4096),)](x, out, x.numel(), BLOCK=4096)
        return out
"""


@pytest.mark.gpu
def test_a_candidate_out_of_device_memory_above_the_batch_is_reported_not_failed() -> None:
    """On the GPU a candidate that runs out of device memory on the call above the benchmark's
    batch passes (the derived calls are reported), and the report says the call was not run
    for memory, not that the candidate is specialised."""
    from pathlib import Path

    from kernelopt_jupyter.problem import load_problem
    from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

    problem = load_problem(Path(__file__).parent / "adversarial" / "problems" / "gelu.py")
    options = VerifyOptions(device="cuda", seed=1, run_performance=False)
    report = verify_candidate(problem, _HUNGRY_ABOVE, options)
    gate = report.gate("correctness")
    assert report.verdict == "pass" and gate is not None, [g.detail for g in report.gates]
    rows = {r["direction"]: r for r in gate.metrics["derived_shapes"]}
    assert rows["below"]["outcome"] == "pass"
    assert rows["above"]["outcome"] == "skipped", rows
    assert "ran out of device memory" in rows["above"]["reason"]
    assert gate.metrics["shapes"] == "generalizes below the benchmark's batch only"


def test_a_candidate_out_of_memory_on_the_cpu_is_reported_and_hides_nothing() -> None:
    """The candidate's out-of-memory on the call above (raised as the GPU raises it) is
    reported as not run, never failed, and the candidate is called general below the
    benchmark's batch only: raising one cannot hide a shortcut taken above it."""
    from pathlib import Path

    from kernelopt_jupyter.problem import load_problem
    from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

    problem = load_problem(Path(__file__).parent / "adversarial" / "problems" / "gelu.py")
    raising = _HUNGRY_ABOVE.replace(
        "torch.empty(1 << 42, dtype=torch.uint8, device=x.device)",
        "raise torch.OutOfMemoryError('CUDA out of memory. Tried to allocate 4.00 TiB')",
    )
    report = verify_candidate(problem, raising, VerifyOptions(device="cpu", seed=1))
    gate = report.gate("correctness")
    assert report.verdict == "pass" and gate is not None, [g.detail for g in report.gates]
    rows = {r["direction"]: r for r in gate.metrics["derived_shapes"]}
    assert rows["below"]["outcome"] == "pass"
    assert rows["above"]["outcome"] == "skipped", rows
    assert rows["above"]["reason"].startswith("the candidate ran out of device memory")
    assert gate.metrics["shapes"] == "generalizes below the benchmark's batch only"


def test_the_signs_call_flips_about_half_of_each_input_reproducibly() -> None:
    """Both signs for inputs drawn non-negative, flags drawn where each input lives (a byte
    each: drawn on the host as int64 a 4 GiB input cost 8 GiB of host memory), the same flips
    for the same pick, other flips for another pick; integer inputs untouched."""
    x = torch.rand(64, 1001) + 0.5
    w = torch.rand(999) + 0.5
    labels = torch.arange(7)

    def signs(pick: int) -> tuple[list[Any], Any]:
        spec = {"kind": "signs", "pick": pick}
        return transform_inputs([x.clone(), w.clone(), labels.clone()], spec, lambda s: [])

    out, described = signs(5)
    assert described == {"kind": "signs", "inputs": [0, 1]}
    for got, was in ((out[0], x), (out[1], w)):
        assert torch.equal(got.abs(), was)
        share = float((got < 0).double().mean())
        assert 0.4 < share < 0.6, share
    assert torch.equal(out[2], labels)
    again, _ = signs(5)
    assert all(torch.equal(a, b) for a, b in zip(again, out))
    other, _ = signs(6)
    assert not torch.equal(other[0], out[0])
