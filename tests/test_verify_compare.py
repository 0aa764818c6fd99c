"""Output comparison, the referee's arithmetic, the timing statistics and the report's JSON."""

from __future__ import annotations

import json
import math

import pytest
import torch

from kernelopt_jupyter.verify import GateResult, VerifyReport
from kernelopt_jupyter.verify.compare import (
    compare_outputs,
    error_vs,
    referee_floor,
    tensors_equal,
)
from kernelopt_jupyter.verify.timing import bootstrap_ratio, judge, roofline_ms


def _ref(*shape: int) -> torch.Tensor:
    torch.manual_seed(0)
    return torch.randn(*shape)


def test_identical_and_rounding_level_outputs_pass_strict() -> None:
    ref = _ref(127, 33)
    assert compare_outputs(ref.clone(), ref).strict_ok
    nudged = ref * (1 + 2e-7)
    cmp = compare_outputs(nudged, ref)
    assert cmp.strict_ok and cmp.error is None and 0 < cmp.max_abs_err < 1e-5


def test_reordering_level_error_is_loose_only_and_real_errors_fail_both() -> None:
    ref = _ref(1023)
    loose = compare_outputs(ref + 1e-3, ref)
    assert not loose.strict_ok and loose.loose_ok and "outside rtol" in loose.worst
    wrong = compare_outputs(ref + 0.5, ref)
    assert not wrong.strict_ok and not wrong.loose_ok


def test_zeros_cannot_pass_a_problem_whose_outputs_are_tiny() -> None:
    tiny = _ref(4096) * 1e-5  # every value is below the fixed atol of 1e-4
    cmp = compare_outputs(torch.zeros_like(tiny), tiny)
    assert not cmp.loose_ok
    const = compare_outputs(torch.full_like(tiny, float(tiny.mean())), tiny)
    assert not const.loose_ok
    # ... while a genuinely all-zero reference accepts zeros.
    assert compare_outputs(torch.zeros(8), torch.zeros(8)).strict_ok


@pytest.mark.parametrize(
    ("out", "ref", "message"),
    [
        (torch.zeros(3, 4), torch.zeros(4, 3), "has shape (3, 4)"),
        (torch.zeros(4, dtype=torch.float16), torch.zeros(4), "dtype torch.float16"),
        (torch.tensor([1.0, float("nan")]), torch.tensor([1.0, 2.0]), "NaN pattern differs"),
        (torch.tensor([float("inf"), 1.0]), torch.tensor([float("-inf"), 1.0]), "Inf pattern"),
        (torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4]), "exact match needed"),
        ((torch.zeros(2),), (torch.zeros(2), torch.zeros(2)), "returned 1 value(s)"),
        ([1.0, torch.zeros(2)], [torch.zeros(1), torch.zeros(2)], "is a float"),
    ],
)
def test_hard_mismatches_are_named(out: object, ref: object, message: str) -> None:
    cmp = compare_outputs(out, ref)
    assert cmp.error is not None and message in cmp.error and not cmp.loose_ok


def test_matching_nan_and_inf_places_agree_and_tuples_compare_leafwise() -> None:
    ref = torch.tensor([float("nan"), float("inf"), 1.0, -2.0])
    assert compare_outputs(ref.clone(), ref).strict_ok
    pair = (torch.ones(3), torch.arange(3))
    assert compare_outputs([torch.ones(3), torch.arange(3)], pair).strict_ok
    cmp = compare_outputs((torch.ones(3), torch.arange(3) + 1), pair)
    assert cmp.error is not None and "output[1]" in cmp.error


def test_tensors_equal_treats_nan_as_equal_for_the_mutation_check() -> None:
    a = torch.tensor([1.0, float("nan")])
    assert tensors_equal(a, a.clone())
    assert not tensors_equal(a, torch.tensor([1.0, 2.0]))
    assert not tensors_equal(torch.zeros(2), torch.zeros(2, dtype=torch.float64))


def test_referee_errors_and_floor() -> None:
    ref64 = _ref(1000).double()
    ref32 = ref64.float()
    cand = (ref64 + 1e-3).float()
    assert error_vs(ref32, ref64) < 1e-6
    assert math.isclose(error_vs(cand, ref64), 1e-3, rel_tol=1e-3)
    floor = referee_floor(ref64, [torch.float32])
    assert floor == pytest.approx(2 * torch.finfo(torch.float32).eps * float(ref64.abs().max()))


def test_bootstrap_interval_brackets_the_true_ratio() -> None:
    base = [2.0 + 0.01 * math.sin(i) for i in range(60)]
    cand = [1.0 + 0.01 * math.cos(i) for i in range(60)]
    speedup, low, high = bootstrap_ratio(cand, base)
    assert low <= speedup <= high and low > 1.9 and high < 2.1
    assert bootstrap_ratio(cand, base) == (speedup, low, high)  # deterministic


def test_performance_verdicts() -> None:
    same = [1.0 + 0.02 * ((i * 7) % 5 - 2) for i in range(40)]
    tied = judge({"candidate": same, "eager": list(reversed(same))}, 0, "cuda")
    assert tied["status"] == "pass" and tied["ci_low"] <= 1.0 <= tied["ci_high"]
    slower = judge({"candidate": [2.0] * 30, "eager": [1.0] * 30}, 0, "cuda")
    assert slower["status"] == "fail" and "slower than the baseline" in slower["detail"]
    two = judge({"candidate": [1.0] * 30, "eager": [2.0] * 30, "compile": [1.5] * 30}, 0, "cuda")
    assert two["baseline"] == "compile" and two["speedup"] == pytest.approx(1.5)
    assert two["speedup_vs_eager"] == pytest.approx(2.0)
    # 1 GB moved in 0.01 ms would be 100 TB/s: implausible on the GPU.
    fast = judge({"candidate": [0.01] * 30, "eager": [1.0] * 30}, 10**9, "cuda")
    assert fast["status"] == "fail" and fast["implausible"] and "implausible" in fast["detail"]
    assert roofline_ms(4_300_000_000, 4.3e12) == pytest.approx(1.0)


def test_report_json_has_the_contract_shape() -> None:
    gates = [
        GateResult("static", "pass", "ok", {"launches": 1}),
        GateResult("correctness", "pass", "ok", {"seeds": [0, 1, 2], "max_abs_err": 0.0}),
        GateResult("fp64", "fail", "worse", {"err_ratio": float("inf")}),
        GateResult("performance", "skipped", "not run: the fp64 gate failed"),
    ]
    report = VerifyReport("p.py", "c.py", "cpu", gates)
    data = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert data["schema"] == 1 and data["verdict"] == "fail" and data["device"] == "cpu"
    assert [g["name"] for g in data["gates"]] == ["static", "correctness", "fp64", "performance"]
    assert data["gates"][1]["seeds"] == [0, 1, 2] and data["gates"][1]["max_abs_err"] == 0.0
    assert data["gates"][2]["err_ratio"] is None  # JSON has no Infinity
    assert data["gates"][3]["speedup"] is None
    assert all({"name", "status", "detail"} <= set(g) for g in data["gates"])
    assert report.failed_gate == "fp64" and report.speedup is None
