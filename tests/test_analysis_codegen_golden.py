"""The harvest's candidate text, section by section, against golden files (tests/golden/codegen_*).

``build_candidate`` renders a docstring, imports, the LAUNCH_CONFIGS dict, helpers, one section
per kernel, the rewritten ``call()`` and the ``ModelNew`` class; each case below changes what one
or more of those sections must say. Refresh with ``KERNELOPT_UPDATE_GOLDEN=1`` after an intended
change, and review the diff.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from _golden import assert_golden

from kernelopt_jupyter.analysis.codegen import LaunchInfo, ModelFacts, build_candidate

DATA = Path(__file__).parent / "data" / "analysis" / "generated"
CUDA_STYLE = (DATA / "cuda_style_2_11.py.txt").read_text()


def _launches(reduction: str = "reduction") -> dict[str, LaunchInfo]:
    return {
        "triton_poi_fused_add_convolution_relu_0": LaunchInfo(
            "triton_poi_fused_add_convolution_relu_0", {"XBLOCK": 512}, 4, 1, "Grid1D", "pointwise"
        ),
        "triton_red_fused_sum_1": LaunchInfo(
            "triton_red_fused_sum_1",
            {"XBLOCK": 2, "RBLOCK": 256 if reduction == "persistent_reduction" else 64},
            2,
            1,
            "Grid1D",
            reduction,
        ),
    }


FACTS = ModelFacts(
    state=[
        ("bias", [8, 1, 1], "float32", True),
        ("conv.weight", [8, 3, 3, 3], "float32", True),
        ("conv.bias", [8], "float32", True),
    ],
    arg_sources=[("param", "conv.weight"), ("param", "conv.bias"), ("input", 0), ("param", "bias")],
    forward_params=["x"],
    n_inputs=1,
    outputs=("tuple", 2),
)
# State keys that are not attribute paths, a buffer, *inputs and a list output.
ODD_FACTS = dataclasses.replace(
    FACTS,
    state=[
        ("bias", [8, 1, 1], "float32", False),
        ("blocks.0.weight", [8, 3, 3, 3], "float32", True),
        ("blocks.0.bias", [8], "float32", True),
    ],
    arg_sources=[
        ("param", "blocks.0.weight"),
        ("param", "blocks.0.bias"),
        ("input", 0),
        ("buffer", "bias"),
    ],
    forward_params=None,
    outputs=("list", 2),
)

CASES = {
    "codegen_cuda_style.py": (_launches(), FACTS, {}),
    "codegen_odd_state_and_header.py": (
        _launches(),
        ODD_FACTS,
        {"title": "Harvested for problem 'odd'", "device_note": "Harvested on cuda (test)."},
    ),
    "codegen_persistent_reduction.py": (_launches("persistent_reduction"), FACTS, {}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_candidate_matches_golden(name: str) -> None:
    launches, facts, kwargs = CASES[name]
    code = build_candidate(CUDA_STYLE, launches, facts, **kwargs)
    assert_golden(name, code.source)
