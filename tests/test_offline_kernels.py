"""Kernel-body and launch-shape transformations on harvested Triton (agents/transforms.py):
2-D tile reshapes keep the tile's size, eviction hints change only cache behaviour, and the
Tuner offers both among its measured variants."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kernelopt_jupyter.agents.base import AgentContext, AgentIO
from kernelopt_jupyter.agents.offline import OfflinePolicy
from kernelopt_jupyter.agents.transforms import (
    TransformError,
    config_neighbours,
    eviction_hints,
    streamed_loads,
    tile_aspect_moves,
)
from kernelopt_jupyter.candidate import Candidate
from kernelopt_jupyter.events import EventLog
from kernelopt_jupyter.problem import load_problem
from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

TESTS = Path(__file__).parent
HARVESTED = (TESTS / "golden" / "codegen_cuda_style.py").read_text()
PROBLEM = TESTS / "data" / "analysis" / "conv_relu_bias_sum.py"
POINTWISE = "triton_poi_fused_add_convolution_relu_0"


def test_tile_aspect_keeps_the_tile_size() -> None:
    cfg = {"YBLOCK": 16, "XBLOCK": 64, "num_warps": 4, "num_stages": 1}
    moves = tile_aspect_moves(cfg)
    assert [(m["YBLOCK"], m["XBLOCK"]) for _, m in moves] == [(32, 32), (8, 128)]
    assert all(m["num_warps"] == 4 for _, m in moves)
    assert tile_aspect_moves({"XBLOCK": 1024, "num_warps": 4}) == []
    assert tile_aspect_moves({"YBLOCK": 1, "XBLOCK": 64})[0][1] == {"YBLOCK": 2, "XBLOCK": 32}
    # 2-D tiles get their shape moves first among the Tuner's neighbours.
    assert config_neighbours(cfg)[0][0].startswith("tile 16x64->32x32")


def test_eviction_hints_mark_only_unhinted_loads() -> None:
    assert streamed_loads(HARVESTED, POINTWISE) == 1
    hinted = eviction_hints(HARVESTED, POINTWISE)
    ast.parse(hinted)
    assert streamed_loads(hinted, POINTWISE) == 0
    assert "tl.load(in_out_ptr0 + x3, xmask, eviction_policy='evict_first')" in hinted
    # The loads Inductor marked evict_last keep their hint; other kernels are untouched.
    assert hinted.count("evict_last") == HARVESTED.count("evict_last")
    assert hinted.count("evict_first") == HARVESTED.count("evict_first") + 1
    with pytest.raises(TransformError, match="already has an eviction hint"):
        eviction_hints(hinted, POINTWISE)
    with pytest.raises(TransformError, match="no kernel named"):
        eviction_hints(HARVESTED, "missing_kernel")


def test_trailing_comma_loads_stay_valid() -> None:
    src = "@triton.jit\ndef k(p):\n    x = tl.load(\n        p,\n    )\n"
    out = eviction_hints(src, "k")
    ast.parse(out)
    assert "p,\n    eviction_policy='evict_first')" in out


def test_hinted_candidate_still_verifies() -> None:
    report = verify_candidate(
        load_problem(PROBLEM), eviction_hints(HARVESTED, POINTWISE), VerifyOptions(device="cpu")
    )
    assert report.verdict == "pass", [(g.name, g.detail) for g in report.gates]


def test_tuner_offers_the_kernel_body_move(tmp_path: Path) -> None:
    problem = load_problem(PROBLEM)
    ctx = AgentContext(problem=problem, device="cpu", baselines={}, kernels=[])
    cand = Candidate("c0", HARVESTED, None, "harvest", None, False, "Inductor harvest")
    io = AgentIO(EventLog(tmp_path / "events.jsonl"), "tuner", step=0)
    proposal = OfflinePolicy().tune(ctx, cand, io)
    labels = [label for label, _ in proposal.variants]
    assert labels[0].startswith("kernel ") and "evict_first" in labels[0]
    assert len(labels) == 4 and all(src != HARVESTED for _, src in proposal.variants)
