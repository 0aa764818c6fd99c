"""GPU: the bench's four peers are measured, CUDA graphs (reduce-overhead) included."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt_jupyter.analysis.baselines import measure_baselines
from kernelopt_jupyter.problem import load_problem

DATA = Path(__file__).parent / "data" / "analysis"


@pytest.mark.gpu
def test_every_peer_is_measured_on_the_gpu() -> None:
    base = measure_baselines(load_problem(DATA / "pointwise_chain.py"), "cuda")
    assert base.measured, base.detail
    times = base.as_ms()
    assert set(times) == {"eager", "compile", "max_autotune", "reduce_overhead"}
    assert all(ms is not None and ms > 0 for ms in times.values()), (times, base.detail)
    assert set(base.compile_s) == {"compile", "max_autotune", "reduce_overhead"}
