"""The benchmark and bundled problems load, run small on CPU, and the bench chart renders."""

from __future__ import annotations

import importlib.util
import json
import math
import re
import types
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import torch

from kernelopt_jupyter.problem import load_problem, materialize
from kernelopt_jupyter.worker import run_task

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "problems"
BUNDLED = ROOT / "kernelopt_jupyter" / "problems"
EXPECTED_COUNTS = {"level1": 14, "level2": 12, "level3": 12}
BENCH_FILES = sorted(BENCH.glob("level*/*.py"))
BUNDLED_FILES = sorted(p for p in BUNDLED.glob("*.py") if p.name != "__init__.py")
# Inputs made under KERNELOPT_SMALL=1 must suit the Triton interpreter (~1e5 elements).
SMALL_INPUT_LIMIT = 150_000


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(ROOT)) for p in paths]


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Problems read KERNELOPT_SMALL when executed, so set it before loading."""
    monkeypatch.setenv("KERNELOPT_SMALL", "1")


def test_level_folders_hold_expected_counts() -> None:
    found = {d.name: len(list(d.glob("*.py"))) for d in BENCH.iterdir() if d.is_dir()}
    assert found == EXPECTED_COUNTS
    assert {p.stem for p in BUNDLED_FILES} == {"fused_mlp", "row_softmax", "conv_relu_bias"}


def test_no_public_suite_file_naming() -> None:
    # Public suites number their files ("12_Some_Op.py"); ours are plain snake_case names.
    for path in [*BENCH_FILES, *BUNDLED_FILES]:
        assert not re.match(r"^\d+_", path.name), path
        assert re.fullmatch(r"[a-z][a-z0-9_]*\.py", path.name), path


@pytest.mark.parametrize("path", BENCH_FILES + BUNDLED_FILES, ids=_ids(BENCH_FILES + BUNDLED_FILES))
def test_problem_loads_and_runs_small_on_cpu(path: Path, small: None) -> None:
    problem = load_problem(path)
    first_line = problem.source.lstrip().splitlines()[0]
    assert first_line.startswith('"""') and first_line.endswith('"""'), "one-line docstring"
    if path.is_relative_to(BENCH):
        assert problem.level == int(path.parent.name.removeprefix("level"))
        assert problem.kind == "module"
    if problem.kind != "module":
        # Kernels run in a worker, where the interpreter is on before Triton is imported.
        result = run_task(
            "_worker_tasks:run_kernel_problem",
            {"path": str(path)},
            device="cpu",
            extra_env={"PYTHONPATH": str(Path(__file__).parent), "KERNELOPT_SMALL": "1"},
        )
        assert result.ok, result.describe()
        assert result.value["finite"] and result.value["max_abs_err"] < 1e-5
        return
    loaded = materialize(problem)
    inputs = loaded.make_inputs(seed=0)
    tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
    assert tensors and sum(t.numel() for t in tensors) <= SMALL_INPUT_LIMIT
    with torch.no_grad():
        out = loaded.make_model(seed=0)(*inputs)
    assert isinstance(out, torch.Tensor) and out.numel() > 0
    assert torch.isfinite(out).all()
    # Same seed, same inputs: the verifier relies on get_inputs() being seed-deterministic.
    again = loaded.make_inputs(seed=0)
    assert all(torch.equal(a, b) for a, b in zip(tensors, again, strict=False))


@pytest.mark.parametrize("path", BENCH_FILES, ids=_ids(BENCH_FILES))
def test_full_size_is_larger_than_small(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Full sizes are hundreds of MB: build them on the meta device, which allocates nothing.
    def input_elements(small_mode: bool) -> int:
        if small_mode:
            monkeypatch.setenv("KERNELOPT_SMALL", "1")
        else:
            monkeypatch.delenv("KERNELOPT_SMALL", raising=False)
        loaded = materialize(load_problem(path, validate=False))
        with torch.device("meta"):
            inputs = loaded.make_inputs(seed=0, device="meta")
        return sum(t.numel() for t in inputs if isinstance(t, torch.Tensor))

    assert input_elements(False) > input_elements(True)


# --------------------------------------------------------------------------- bench chart


def _plot_module() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("bench_plot", ROOT / "benchmarks" / "plot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TINY_BENCH = {
    "rows": [
        {"problem": "benchmarks/problems/level1/depthwise_conv3x3.py", "level": 1,
         "verdict": "improved", "eager_ms": 0.2, "compile_ms": 1.2, "best_ms": 0.1,
         "speedup_vs_eager": 2.0, "speedup_vs_compile": 12.0},
        {"problem": "benchmarks/problems/level1/cumsum_rows.py", "level": 1,
         "verdict": "kept-baseline", "eager_ms": 0.1, "compile_ms": 0.1, "best_ms": 0.1,
         "speedup_vs_eager": 1.0, "speedup_vs_compile": 0.8},
        {"problem": "benchmarks/problems/level2/conv_bn_silu.py", "level": 2,
         "verdict": "fail", "eager_ms": 1.0, "compile_ms": 0.7, "best_ms": None,
         "speedup_vs_eager": None, "speedup_vs_compile": None},
    ],
    "summary": {},
}  # fmt: skip


def test_plot_renders_parseable_svg_with_every_problem(tmp_path: Path) -> None:
    plot = _plot_module()
    src = tmp_path / "bench.json"
    src.write_text(json.dumps(TINY_BENCH))
    out = tmp_path / "chart.svg"
    assert plot.main([str(src), "-o", str(out)]) == 0
    text = out.read_text()
    root = ET.fromstring(text)
    assert root.tag.endswith("svg")
    texts = " ".join(el.text or "" for el in root.iter())
    for name in ("depthwise_conv3x3", "cumsum_rows", "conv_bn_silu"):
        assert name in texts
    # Bars: one per available speedup (2 + 2 + 0), each with a hover title.
    rects = [el for el in root.iter() if el.tag.endswith("rect") and len(el)]
    assert len(rects) == 4
    # L1 geomeans: sqrt(2 * 1) vs eager, sqrt(12 * 0.8) vs compile; the failed L2 row is 1.0.
    assert f"{math.sqrt(2.0):.2f}x vs eager" in texts
    assert f"{math.sqrt(12.0 * 0.8):.2f}x vs torch.compile" in texts
    assert "L2 (1): 1.00x vs eager" in texts


def test_plot_bars_hang_from_the_one_line() -> None:
    plot = _plot_module()
    root = ET.fromstring(plot.render_svg(TINY_BENCH))
    bars = {
        el.find("{http://www.w3.org/2000/svg}title").text.split(":")[0]  # type: ignore[union-attr]
        + el.get("fill", ""): el
        for el in root.iter()
        if el.tag.endswith("rect") and len(el)
    }
    fast = bars["depthwise_conv3x3#f58518"]  # 12x vs compile: rises above the 1.0 line
    slow = bars["cumsum_rows#f58518"]  # 0.8x vs compile: hangs below it
    fast_bottom = float(fast.get("y", 0)) + float(fast.get("height", 0))
    assert float(slow.get("y", 0)) == pytest.approx(fast_bottom, abs=0.2)


def test_plot_rejects_non_bench_json(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"no": "rows"}))
    assert _plot_module().main([str(bad)]) == 2
