"""The harvest's output on small problems, against golden files (tests/golden/harvest_*.py).

The harvest is deterministic for one torch/Triton pair (checked: two harvests of a problem are
byte-identical), so any change in what it writes shows up as a reviewable diff. The one
non-deterministic line, the versions it ran with, is normalised; the goldens are for the
pinned CI pair (torch 2.13, Triton 3.7) and another pair is refused with a clear message.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
import triton
from _golden import UPDATE_ENV, assert_golden

from kernelopt_jupyter.analysis import harvest_problem
from kernelopt_jupyter.problem import load_problem

DATA = Path(__file__).parent / "data" / "analysis"
#: The torch/Triton the goldens were written with (Inductor's code differs between releases).
PINNED = ("2.13", "3.7")
VERSIONS = re.compile(r"\(torch [^,]+, triton [^)]+\)")


def _normalised(source: str) -> str:
    return VERSIONS.sub("(torch <version>, triton <version>)", source)


@pytest.mark.parametrize("name", ["pointwise_chain", "linear_norm_chain"])
def test_harvest_matches_golden(name: str) -> None:
    running = (
        ".".join(torch.__version__.split(".")[:2]),
        ".".join(triton.__version__.split(".")[:2]),
    )
    if running != PINNED:
        pytest.fail(
            f"goldens are for torch {PINNED[0]} / triton {PINNED[1]}, this is {running}: "
            f"run the CI versions or refresh with {UPDATE_ENV}=1",
            pytrace=False,
        )
    harvest = harvest_problem(load_problem(DATA / f"{name}.py"), "cpu")
    assert harvest.ok, harvest.error
    # What the agents are told about the units, then the candidate itself.
    units = [*harvest.kernels, *harvest.vendor_calls]
    summary = [
        f"# {u.kind} {u.name}: ops={', '.join(u.ops)} launches={u.launches} bytes={u.bytes} "
        f"flops={u.flops}"
        for u in units
    ]
    text = "\n".join(summary) + "\n" + _normalised(harvest.source)
    assert "<version>" in text  # the one varying line was found and normalised
    assert_golden(f"harvest_{name}.py", text)
