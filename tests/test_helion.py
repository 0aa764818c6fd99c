"""Helion problems: capture, gates on the CPU (generated Triton under the interpreter), tuning.

Helion is only ever imported in worker processes here: importing it patches Triton in the
importing process, which would leak into the interpreter tests that share pytest's process.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt_jupyter.agents.transforms import helion_config_variants
from kernelopt_jupyter.problem import load_problem, problem_from_source
from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

PROBLEM = Path(__file__).parent / "data" / "helion" / "scaled_add.py"


def test_helion_problem_is_captured() -> None:
    problem = load_problem(PROBLEM, validate=False)
    assert (problem.kind, problem.entry) == ("helion", "scaled_add")


def test_helion_config_variants_change_only_the_config() -> None:
    source = PROBLEM.read_text()
    variants = helion_config_variants(source)
    labels = [label for label, _ in variants]
    assert "block_sizes[0] 128->256" in labels and "num_warps 4->8" in labels
    for _, text in variants:
        assert text.replace(" ", "").count("helion.Config(") == 1
        assert text.split("helion.Config(")[0] == source.split("helion.Config(")[0]


@pytest.mark.slow
def test_helion_candidates_go_through_the_gates() -> None:
    problem = load_problem(PROBLEM, validate=False)
    options = VerifyOptions(device="cpu", seeds=2)
    _, tuned = helion_config_variants(problem.source)[0]
    good = verify_candidate(problem, tuned, options)
    assert good.verdict == "pass", good.to_dict()
    assert "launched 1 Triton kernel" in good.gates[0].detail
    broken = tuned.replace("x[tile] * 2.0", "x[tile] * 2.5")
    bad = verify_candidate(problem, broken, options)
    assert [g.status for g in bad.gates][:2] == ["pass", "fail"]
    assert bad.gates[1].name == "correctness"


@pytest.mark.gpu
def test_helion_candidate_runs_the_four_gates_on_the_gpu() -> None:
    """On the H200, at 64M elements (256 MB per input): the Helion kernel is compiled for the GPU,
    checked against the reference, refereed, and timed; a wrong constant fails correctness.
    Needs Helion installed (scripts/gpu_checks.sh installs the carried wheel)."""
    problem = load_problem(PROBLEM, validate=False)
    big = problem_from_source(problem.source.replace("10007", str(1 << 26)), "<scaled_add_big>")
    _, tuned = helion_config_variants(big.source)[0]
    tuned = tuned.replace("block_sizes=[256]", "block_sizes=[1024]")
    report = verify_candidate(big, tuned, VerifyOptions(device="cuda"))
    by_name = {g.name: g for g in report.gates}
    statuses = [
        by_name[n].status if n in by_name else "absent" for n in ("static", "correctness", "fp64")
    ]
    assert statuses == ["pass"] * 3, report.to_dict()
    perf = by_name["performance"]
    assert perf.status in ("pass", "fail") and perf.metrics["candidate_ms"] > 0, perf.detail
    # eager runs a multiply and an add (five passes over memory), the kernel one fused pass (three)
    assert perf.metrics["speedup"] > 1.2, perf.metrics
    broken = tuned.replace("x[tile] * 2.0", "x[tile] * 2.5")
    bad = verify_candidate(big, broken, VerifyOptions(device="cuda", seeds=2))
    assert [g.status for g in bad.gates][:2] == ["pass", "fail"]
