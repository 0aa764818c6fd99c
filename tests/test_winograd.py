"""KernelOPT's Winograd F(2x2, 3x3) convolution: the kernels under Triton's interpreter, the
harvest transform that routes convolutions through it, and how the offline policy plans it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from kernelopt_jupyter.agents.base import AgentContext, AgentIO, KernelUnit
from kernelopt_jupyter.agents.offline import OfflinePolicy
from kernelopt_jupyter.agents.rewrites import kernels
from kernelopt_jupyter.agents.rewrites.kernels import (
    WINOGRAD_MIN_FLOPS,
    kernelopt_winograd_convolution,
)
from kernelopt_jupyter.agents.rewrites.moves import CUDNN_SHARE, vendor_choices, winograd_share
from kernelopt_jupyter.agents.transforms import (
    WINOGRAD_MARKER,
    TransformError,
    winograd_calls,
    winograd_convolutions,
)
from kernelopt_jupyter.analysis.harvest import harvest_problem
from kernelopt_jupyter.candidate import Candidate
from kernelopt_jupyter.events import EventLog
from kernelopt_jupyter.problem import problem_from_source
from kernelopt_jupyter.verify import VerifyOptions, verify_candidate
from kernelopt_jupyter.verify.static import analyze_candidate

CONV = '''"""A 3x3 conv (stride 1), BatchNorm, ReLU, then a strided 3x3 conv."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 24, 3, padding=1)
        self.bn = nn.BatchNorm2d(24)
        self.down = nn.Conv2d(24, 24, 3, stride=2, padding=1)

    def forward(self, x):
        return self.down(torch.relu(self.bn(self.conv(x))))


def get_inputs():
    return [torch.randn(2, 16, 9, 10)]


def get_init_inputs():
    return []
'''


def _conv(x, w, b, stride=(1, 1), padding=(1, 1), groups=1):
    ones, zeros = (1,) * len(stride), (0,) * len(stride)
    return torch.convolution(x, w, b, stride, padding, ones, False, zeros, groups)


#: Runs in a fresh interpreter with TRITON_INTERPRET=1 (set before Triton decorates anything).
_CHECK = textwrap.dedent(
    """
    import json, sys
    import torch
    import kernelopt_jupyter.agents.rewrites.kernels as kernels

    kernels.WINOGRAD_MIN_FLOPS = 0  # the test's sizes would otherwise go to the vendor
    kernels.WINOGRAD_3D = True  # off by default (its workspace); the kernels are still checked
    out = []
    for n, c, k, h, w, bias, last, pad in json.loads(sys.argv[1]):
        gen = torch.Generator().manual_seed(3)
        x = torch.randn(n, c, h, w, generator=gen)
        weight = torch.randn(k, c, 3, 3, generator=gen) / (9 * c) ** 0.5
        b = torch.randn(k, generator=gen) if bias else None
        if last:
            x = x.to(memory_format=torch.channels_last)
            weight = weight.to(memory_format=torch.channels_last)
        args = ((1, 1), tuple(pad), (1, 1), False, (0, 0), 1)
        got = kernels.kernelopt_winograd_convolution(x, weight, b, *args)
        want = torch.convolution(x, weight, b, *args)
        exact = torch.convolution(
            x.double(), weight.double(), None if b is None else b.double(), *args
        )
        out.append(
            [
                got.stride() == want.stride(),
                float((got.double() - exact).abs().max()),
                float((want.double() - exact).abs().max()),
            ]
        )
    for n, c, k, dhw, bias, pad in json.loads(sys.argv[2]):  # 3-D, F(2x2x2, 3x3x3)
        gen = torch.Generator().manual_seed(5)
        x = torch.randn(n, c, *dhw, generator=gen)
        weight = torch.randn(k, c, 3, 3, 3, generator=gen) / (27 * c) ** 0.5
        b = torch.randn(k, generator=gen) if bias else None
        args = ((1, 1, 1), tuple(pad), (1, 1, 1), False, (0, 0, 0), 1)
        got = kernels.kernelopt_winograd_convolution(x, weight, b, *args)
        want = torch.convolution(x, weight, b, *args)
        exact = torch.convolution(
            x.double(), weight.double(), None if b is None else b.double(), *args
        )
        out.append(
            [
                got.stride() == want.stride(),
                float((got.double() - exact).abs().max()),
                float((want.double() - exact).abs().max()),
            ]
        )
    print(json.dumps(out))
    """
)


def test_the_kernels_equal_the_vendor_convolution_under_the_interpreter() -> None:
    cases = [
        (2, 16, 24, 7, 9, True, False, (1, 1)),  # odd sizes: partial tiles on both edges
        (2, 16, 24, 7, 9, True, True, (1, 1)),
        (1, 32, 16, 8, 8, False, True, (1, 1)),
        (1, 64, 16, 5, 6, False, False, (1, 1)),
        (2, 16, 16, 7, 8, True, False, (0, 0)),  # "valid": a smaller output
        (1, 16, 24, 6, 9, False, True, (2, 1)),  # a larger one, padding differing by side
        (1, 16, 16, 3, 3, True, False, (0, 0)),  # one output pixel
    ]
    cases_3d = [
        (1, 16, 16, (5, 6, 7), True, (1, 1, 1)),  # odd sizes on every axis
        (2, 16, 24, (4, 5, 5), False, (0, 0, 0)),
        (1, 16, 16, (3, 4, 5), True, (2, 1, 0)),
    ]
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    run = subprocess.run(
        [sys.executable, "-c", _CHECK, json.dumps(cases), json.dumps(cases_3d)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    results = json.loads(run.stdout)
    assert len(results) == len(cases) + len(cases_3d)
    for case, (same_strides, err, vendor_err) in zip(cases + cases_3d, results):
        # the vendor's layout (a harvest's later kernels hard-code its strides), and an error
        # against float64 within the referee's factor of the vendor's own
        assert same_strides, case
        assert err < 1e-5 and err < 10 * max(vendor_err, 1e-7), (case, err, vendor_err)


@pytest.mark.parametrize(
    ("shape", "weight", "stride", "padding", "groups"),
    [
        ((1, 16, 8, 8), (16, 16, 3, 3), (2, 2), (1, 1), 1),  # strided
        ((1, 16, 8, 8), (16, 16, 5, 5), (1, 1), (1, 1), 1),  # not 3x3
        ((1, 16, 8, 8), (16, 8, 3, 3), (1, 1), (1, 1), 2),  # grouped
        ((1, 3, 8, 8), (16, 3, 3, 3), (1, 1), (1, 1), 1),  # too few channels
        ((1, 16, 8, 8), (16, 16, 3, 3), (1, 1), (1, 1), 1),  # too little work
        ((1, 16, 8, 8), (16, 16, 3, 3), (1, 1), (3, 3), 1),  # padding past the tile's reach
        ((1, 16, 6, 6, 6), (16, 16, 3, 3, 3), (2, 2, 2), (1, 1, 1), 1),  # a strided 3-D conv
        ((1, 16, 6, 6, 6), (16, 16, 3, 3, 3), (1, 1, 1), (1, 1, 1), 1),  # 3-D, too little work
    ],
)
def test_other_convolutions_go_to_the_vendor_call(
    shape: tuple[int, ...],
    weight: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    groups: int,
) -> None:
    x, w = torch.randn(shape), torch.randn(weight)
    ones, zeros = (1,) * len(stride), (0,) * len(stride)
    got = kernelopt_winograd_convolution(x, w, None, stride, padding, ones, False, zeros, groups)
    assert torch.equal(
        got, _conv(x, w, None, stride, padding, groups)
    )  # the same call, bit for bit


@pytest.fixture(scope="module")
def conv_harvest() -> str:
    harvest = harvest_problem(problem_from_source(CONV, "<conv>"), "cpu", variants=False)
    assert harvest.ok, harvest.error
    return harvest.source


@pytest.mark.slow
def test_the_transform_routes_stride_one_convolutions_and_passes_the_gates(
    conv_harvest: str,
) -> None:
    assert len(winograd_calls(conv_harvest)) == 1  # the strided conv is not a candidate
    source = winograd_convolutions(conv_harvest)
    assert WINOGRAD_MARKER in source and source.count("kernelopt_winograd_convolution(") == 2
    assert "stride=(2, 2)" in source and analyze_candidate(source).violations == []
    with pytest.raises(TransformError, match="already"):
        winograd_convolutions(source)
    with pytest.raises(TransformError, match="no stride-1"):
        winograd_convolutions(CONV)
    # At the test's size the call would go to the vendor: lower the copied threshold so the
    # gates run the Triton kernels themselves (under the interpreter).
    line = f"WINOGRAD_MIN_FLOPS = {WINOGRAD_MIN_FLOPS!r}"
    assert line in source
    source = source.replace(line, "WINOGRAD_MIN_FLOPS = 0")
    report = verify_candidate(
        problem_from_source(CONV, "<conv>"), source, VerifyOptions(device="cpu", seed=11)
    )
    assert report.verdict == "pass", [(g.name, g.status, g.detail[:200]) for g in report.gates]
    assert "own_winograd_output_kernel" in report.gates[0].detail  # the kernels ran


def _unit(
    shapes: list[list[int]], share: float, stride: str = "(1, 1)", padding: str = "(1, 1)"
) -> KernelUnit:
    ones = stride.replace("2", "1")  # dilation 1, of the call's rank
    call = (
        f"torch.convolution(buf0, buf1, stride={stride}, padding={padding}, dilation={ones}, "
        "transposed=False, output_padding=(0, 0), groups=1, bias=None)"
    )
    return KernelUnit(
        "vendor_0_convolution", "vendor", source=call, share=share, library="cuDNN", shapes=shapes
    )


BIG = [[64, 256, 56, 56], [256, 256, 3, 3]]  # 237 GFLOP of direct convolution


def test_the_share_counts_only_the_convolutions_it_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    assert winograd_share([_unit(BIG, 0.9)]) == pytest.approx(0.9)
    assert winograd_share([_unit(BIG, 0.9, stride="(2, 2)")]) == 0.0
    assert winograd_share([_unit([[32, 128, 28, 28], [128, 128, 3, 3]], 0.9)]) == 0.0  # 7.4 GFLOP
    assert winograd_share([_unit([[64, 256, 56, 56], [256, 256, 1, 1]], 0.9)]) == 0.0
    assert winograd_share([_unit([[64, 3, 224, 224], [64, 3, 3, 3]], 0.9)]) == 0.0
    assert winograd_share([_unit(BIG, 0.5, padding="(0, 0)")]) == pytest.approx(0.5)  # "valid"
    assert winograd_share([_unit(BIG, 0.5, padding="(3, 3)")]) == 0.0
    volume = [[16, 32, 32, 64, 64], [64, 32, 3, 3, 3]]  # 3-D: 118 GFLOP of direct convolution
    assert winograd_share([_unit(volume, 0.8, "(1, 1, 1)", "(1, 1, 1)")]) == 0.0  # 3-D is off
    monkeypatch.setattr(kernels, "WINOGRAD_3D", True)
    assert winograd_share([_unit(volume, 0.8, "(1, 1, 1)", "(1, 1, 1)")]) == pytest.approx(0.8)
    assert winograd_share([_unit(volume, 0.8, "(1, 1, 1)", "(1, 1)")]) == 0.0  # not its rank


def _ctx(kernels: list[KernelUnit]) -> AgentContext:
    return AgentContext(
        problem=problem_from_source(CONV, "<conv>"),
        device="cuda",
        baselines={"eager": 1.0, "compile": 1.0},
        kernels=kernels,
    )


def test_the_planner_offers_it_by_share_and_the_executor_builds_it(
    tmp_path: Path, conv_harvest: str
) -> None:
    choices = {c: p for p, c in vendor_choices(_ctx([_unit(BIG, 0.9)]), conv_harvest)}
    assert choices["winograd_conv"] == pytest.approx(2.0 + 4 * 0.9)
    assert "winograd_conv" not in dict(
        (c, p) for p, c in vendor_choices(_ctx([_unit(BIG, CUDNN_SHARE / 2)]), conv_harvest)
    )
    done = winograd_convolutions(conv_harvest)
    assert "winograd_conv" not in [c for _, c in vendor_choices(_ctx([_unit(BIG, 0.9)]), done)]
    policy = OfflinePolicy()
    io = AgentIO(EventLog(tmp_path / "events.jsonl"), "planner", step=0)
    root = Candidate("c0", conv_harvest, None, "harvest", None, False, "Inductor harvest")
    plans = [
        p
        for p in policy.plan(_ctx([_unit(BIG, 0.9)]), None, root, 16, io)
        if p.params.get("choice") == "winograd_conv"
    ]  # type: ignore[arg-type]
    assert len(plans) == 1 and plans[0].title.startswith("rewrite: ")  # the bench's move kind
    edit = policy.execute(_ctx([_unit(BIG, 0.9)]), plans[0], root, None, io)
    assert edit.source is not None and WINOGRAD_MARKER in edit.source and not edit.dispatch_only
