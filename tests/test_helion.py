"""Helion problems: capture, gates on the CPU (generated Triton under the interpreter), tuning.

Helion is only ever imported in worker processes here: importing it patches Triton in the
importing process, which would leak into the interpreter tests that share pytest's process.
"""

from __future__ import annotations

from pathlib import Path

from kernelopt_jupyter.agents.transforms import helion_config_variants
from kernelopt_jupyter.problem import load_problem
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
