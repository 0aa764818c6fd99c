"""Issue 10's adversarial suite: cheats written as an agent trying to pass writes them, each
caught by its intended gate, and good candidates a too-strict verifier would reject.

All candidates of one problem go through one fork server (``verify_candidates``): each still
runs in its own fresh process with its own schedule seed. The seed is fixed per candidate so
a failure here reproduces (``kernelopt verify --seed``).
"""

from __future__ import annotations

from functools import cache

import pytest
from _verify_adversarial import CHEATS, GOOD, HANGS, INLINE_PROBLEMS, SPECIALIZED, Case
from _verify_corpus import assert_caught_by
from _verify_corpus import problem as file_problem

from kernelopt_jupyter.problem import Problem, problem_from_source
from kernelopt_jupyter.verify import VerifyOptions, VerifyReport, verify_candidates

SEED = 20261201
pytestmark = pytest.mark.slow  # ~60 verifications in two fork-server batches


@cache
def _problem(name: str) -> Problem:
    if name in INLINE_PROBLEMS:
        return problem_from_source(INLINE_PROBLEMS[name], f"<{name}>")
    return file_problem(name)


@cache
def _reports(group: str) -> dict[str, VerifyReport]:
    cases = {"all": CHEATS + GOOD + [SPECIALIZED], "hangs": HANGS}[group]
    limit = 6.0 if group == "hangs" else 60.0
    out: dict[str, VerifyReport] = {}
    for name in sorted({c.problem for c in cases}):
        mine = [c for c in cases if c.problem == name]
        reports = verify_candidates(
            _problem(name),
            [c.source for c in mine],
            VerifyOptions(device="cpu", seed=SEED, time_limit_s=limit),
            [c.name for c in mine],
        )
        out.update({c.name: r for c, r in zip(mine, reports)})
    return out


def _explain(report: VerifyReport) -> list[tuple[str, str, str]]:
    return [(g.name, g.status, g.detail[:300]) for g in report.gates]


@pytest.mark.parametrize("case", CHEATS, ids=[c.name for c in CHEATS])
def test_cheat_is_caught_by_its_gate(case: Case) -> None:
    report = _reports("all")[case.name]
    assert case.gate is not None
    assert report.failed_gate == case.gate, _explain(report)
    assert_caught_by(report, case.gate, case.detail)


@pytest.mark.parametrize("case", GOOD, ids=[c.name for c in GOOD])
def test_good_candidate_passes(case: Case) -> None:
    report = _reports("all")[case.name]
    assert report.verdict == "pass", _explain(report)
    assert report.seed is not None


@pytest.mark.parametrize("case", HANGS, ids=[c.name for c in HANGS])
def test_hanging_cheat_times_out_in_its_gate(case: Case) -> None:
    report = _reports("hangs")[case.name]
    assert case.gate is not None
    assert_caught_by(report, case.gate, case.detail)


def test_every_class_of_the_issue_has_cases() -> None:
    classes = {c.klass for c in CHEATS + HANGS}
    assert {"1", "2", "3", "4", "5", "6", "7", "8", "9", "settings"} <= classes
    assert len(CHEATS) + len(HANGS) >= 40 and len(GOOD) >= 10


def test_shapes_specialized_candidate_passes_but_is_reported() -> None:
    report = _reports("all")[SPECIALIZED.name]
    assert report.verdict == "pass", _explain(report)
    correctness = report.gate("correctness")
    assert correctness is not None
    assert correctness.metrics["shapes"] == "specialized to the benchmark's shapes"
    assert "specialized to the benchmark's shapes" in correctness.detail
    good = _reports("all")["two_kernels"].gate("correctness")
    assert good is not None and good.metrics["shapes"] == "generalizes"
    # a call with nothing to vary (no integer input to permute) is not made, not "skipped"
    assert not any(s.startswith("permute") for s in good.metrics.get("skipped_calls", []))


def test_referee_rules_even_when_strict_passed() -> None:
    report = _reports("all")["truncated_mantissa_product"]
    correctness, fp64 = report.gate("correctness"), report.gate("fp64")
    assert correctness is not None and fp64 is not None
    assert correctness.metrics["strict"] is True  # inside 1e-4 everywhere ...
    assert fp64.metrics["err_ratio"] > 10.0  # ... yet far from float64


def test_schedule_is_in_the_verdict_and_reproducible() -> None:
    report = _reports("all")["autotuned"]
    correctness = report.gate("correctness")
    assert correctness is not None
    kinds = [c["kind"] for c in correctness.metrics["schedule"]]
    assert kinds[0] == "fresh" and kinds[-1] == "batch"
    for kind in ("repeat", "perturb", "stress", "reload", "reverse", "shuffle"):
        assert kind in kinds
    assert correctness.metrics["seed"] == report.seed
    again = verify_candidates(
        _problem(SPECIALIZED.problem),
        [next(c.source for c in GOOD if c.name == "autotuned")],
        VerifyOptions(device="cpu", seed=report.seed),
    )[0]
    again_gate = again.gate("correctness")
    assert (
        again_gate is not None
        and again_gate.metrics["schedule"] == (correctness.metrics["schedule"])
    )


def test_the_reordered_calls_get_inputs_no_other_call_has() -> None:
    """A workspace a candidate keeps between calls holds the last call's results; were the
    reordered calls' inputs an earlier call's, a program that reads another program's result
    before it is written would read the right one (``kept_scratch_chained_carry`` passed
    about one draw in 160 so). Their seeds are their own, for every draw."""
    from kernelopt_jupyter.verify.schedule import draw_schedule

    for seed in range(400):
        calls = draw_schedule(seed, 3, "cpu")
        reordered = [c for c in calls if c.poison]
        assert sorted(c.kind for c in reordered) == ["reverse", "shuffle"]
        others = {c.seed for c in calls if not c.poison}
        assert not others & {c.seed for c in reordered}, seed
        # every other call of the CPU draws each launch's order on a stream of its own
        assert all(c.order == "mixed" for c in calls if not c.poison), seed
        mixed = [c.order_seed for c in calls if c.order == "mixed"]
        assert len(set(mixed)) == len(mixed), seed
        assert draw_schedule(seed, 3, "cpu") == calls  # reproducible from the seed
    assert all(c.order == "grid" for c in draw_schedule(7, 3, "cuda"))
