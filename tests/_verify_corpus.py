"""Shared helpers for the candidate-corpus tests (tests/data/candidates/<problem>/*.py)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from kernelopt_jupyter.problem import Problem, load_problem
from kernelopt_jupyter.verify import VerifyOptions, VerifyReport, verify_candidate

DATA = Path(__file__).parent / "data"


@cache
def problem(name: str) -> Problem:
    """A test problem by file stem (loaded once per test session)."""
    return load_problem(DATA / "problems" / f"{name}.py")


def verify(problem_name: str, candidate: str, **options: object) -> VerifyReport:
    """Verify ``tests/data/candidates/<problem_name>/<candidate>.py`` on the CPU."""
    return verify_on("cpu", problem_name, candidate, **options)


def verify_on(device: str, problem_name: str, candidate: str, **options: object) -> VerifyReport:
    """Verify a corpus candidate on ``device`` with extra ``VerifyOptions`` fields."""
    path = DATA / "candidates" / problem_name / f"{candidate}.py"
    opts = VerifyOptions(device=device, **options)  # type: ignore[arg-type]
    return verify_candidate(problem(problem_name), path.read_text(), opts, str(path))


def assert_caught_by(report: VerifyReport, gate: str, detail: str) -> None:
    """The candidate failed exactly ``gate`` (earlier gates passed, later ones skipped)."""
    statuses = {g.name: g.status for g in report.gates}
    order = [g.name for g in report.gates]
    assert order == ["static", "correctness", "fp64", "performance"]
    assert report.verdict == "fail" and report.failed_gate == gate, statuses
    failed = report.gate(gate)
    assert failed is not None and detail in failed.detail, failed.detail
    before = order[: order.index(gate)]
    after = order[order.index(gate) + 1 :]
    assert all(statuses[name] == "pass" for name in before), statuses
    assert all(statuses[name] == "skipped" for name in after), statuses
    for name in after:
        skipped = report.gate(name)
        assert skipped is not None and f"the {gate} gate failed" in skipped.detail
