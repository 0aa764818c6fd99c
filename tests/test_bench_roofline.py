"""``benchmarks/roofline.py``: each bench problem's FLOPs and compulsory bytes, counted on the
meta device at full size (nothing allocated), and its place against the H200 roofline."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _roofline() -> Any:
    spec = importlib.util.spec_from_file_location("bench_roofline", ROOT / "benchmarks/roofline.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_PROBLEM = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.proj = nn.Linear(k, n)

    def forward(self, x):
        return torch.relu(self.proj(x))


def get_inputs():
    return [torch.randn(65536, 4096)]  # 1 GiB: never allocated (meta device)


def get_init_inputs():
    return [4096, 2048]
"""


def test_flops_and_bytes_of_a_linear_layer(tmp_path: Path) -> None:
    roofline = _roofline()
    path = tmp_path / "linear_relu.py"
    path.write_text(_PROBLEM)
    got = roofline.measure(path)
    m, k, n = 65536, 4096, 2048
    assert got["flops"] == 2 * m * k * n
    assert got["bytes"] == 4 * (m * k + k * n + n + m * n)
    assert got["bound"] == "compute"
    assert got["roofline_ms"] == pytest.approx(2 * m * k * n / 67e12 * 1e3)


def test_a_record_row_gets_the_peers_and_the_winner_against_the_roofline(tmp_path: Path) -> None:
    roofline = _roofline()
    path = tmp_path / "linear_relu.py"
    path.write_text(_PROBLEM)
    row = {
        "problem": str(path),
        "level": 2,
        "eager_ms": 40.0,
        "compile_ms": 30.0,
        "reduce_overhead_ms": None,
        "max_autotune_ms": 25.0,
        "speedup_vs_peer": {"best_target_peer": 1.5},
    }
    (out,) = roofline.table({"rows": [row]})
    assert out["best_target_peer_ms"] == 30.0  # max-autotune is not a target peer
    assert out["winner_ms"] == pytest.approx(20.0)
    assert out["winner_at_roofline"] == pytest.approx(out["roofline_ms"] / 20.0)
    text = roofline.markdown([out, {**out, "problem": "x.py", "error": "ValueError: no"}])
    assert "| 2 | `linear_relu` | compute |" in text and "ValueError: no" in text
