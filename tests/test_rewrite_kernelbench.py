"""Every graph rewrite the scan finds on the KernelBench development sample keeps the
reference's result (other people's code, read from ``../shared/kernelbench-dev``; see
tests/_kernelbench.py).

Per problem: the size rule (``kernelopt_jupyter.sizes``) shrinks it for the CPU, the rewrite
scan runs on the shrunk source, and each eager candidate it renders (those that launch one of
KernelOPT's own Triton kernels are tested in test_rewrites_kernels.py, those that call a kept
library's Triton kernels in test_kept_libraries.py) takes the reference's
weights and is run against the reference in float64, in eval mode (no dropout draw). A problem
whose scan finds nothing passes with nothing to compare: the before/after record of which
problems get which rewrite is the scan's own output, not an assertion here.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
import torch
from _kernelbench import dev_problems, problem_ids, shrunk_problem

from kernelopt_jupyter.agents.rewrites.rules import REWRITES
from kernelopt_jupyter.agents.rewrites.task import scan
from kernelopt_jupyter.problem import (
    load_source_module,
    materialize,
)

pytestmark = pytest.mark.kernelbench

try:  # collected everywhere, selected only with -m kernelbench: fail then, not at collection
    PROBLEMS: list[Path | None] = list(dev_problems())
    IDS = problem_ids([p for p in PROBLEMS if p is not None])
    ABSENT = ""
except pytest.fail.Exception as exc:
    PROBLEMS, IDS, ABSENT = [None], ["absent"], str(exc)

_names = itertools.count()


def _double(value: Any) -> Any:
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.double()
    return value


def _assert_same(got: Any, want: Any) -> None:
    if isinstance(want, torch.Tensor):
        torch.testing.assert_close(got, want, rtol=1e-7, atol=1e-9, equal_nan=True)
    elif isinstance(want, list | tuple):
        assert isinstance(got, list | tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _assert_same(g, w)
    else:
        assert got == want


@pytest.mark.parametrize("path", PROBLEMS, ids=IDS)
def test_every_rewrite_found_keeps_the_reference_result(path: Path | None) -> None:
    if path is None:
        pytest.fail(ABSENT, pytrace=False)
    small = shrunk_problem(path)
    found = scan(small.source, small.path)
    kept = {r.name for r in REWRITES if r.kept_library}  # Triton kernels: not float64
    matches = [m for m in found.matches if not m.kernels and not kept & set(m.names)]
    if not matches:
        return
    loaded = materialize(small)
    ref = loaded.make_model("cpu", seed=0).eval().double()
    inputs = [_double(x) for x in loaded.make_inputs(seed=0, device="cpu")]
    with torch.no_grad():
        want = ref(*inputs)
    for match in matches:
        module = load_source_module(match.eager_source, f"kb_rewrite_{next(_names)}")
        torch.manual_seed(0)
        cand = module.ModelNew(*loaded.init_inputs()).eval().double()
        cand.load_state_dict(ref.state_dict(), strict=True)
        with torch.no_grad():
            got = cand(*inputs)
        try:
            _assert_same(got, want)
        except AssertionError as exc:
            raise AssertionError(f"{match.title}: {exc}") from None
