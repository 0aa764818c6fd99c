"""The rewrites to KernelOPT's own kernels (depthwise convolution, average pool, GroupNorm): what they
match, the kernels' values under Triton's interpreter (a fresh process: the interpreter is
chosen when kernels are decorated), and the candidate they render (an ordinary Triton
candidate, not dispatch-only)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from kernelopt_jupyter.agents.rewrites.canonical import canonicalize
from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes, trace
from kernelopt_jupyter.agents.rewrites.render import rewritten_source
from kernelopt_jupyter.agents.rewrites.rules import BY_NAME
from kernelopt_jupyter.agents.transforms import lift_launch_configs
from kernelopt_jupyter.candidate import is_dispatch_only
from kernelopt_jupyter.launch_configs import read_launch_configs
from kernelopt_jupyter.verify.static import analyze_candidate


class Depthwise(nn.Module):
    def __init__(self, c: int = 4, m: int = 2, k: Any = 3, **kw: Any) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c, c * m, k, groups=kw.pop("groups", c), **kw)

    def forward(self, x):
        return self.conv(x)


def _sites(model: nn.Module, x: torch.Tensor, rules: tuple[str, ...] = ("depthwise_conv_kernel",)):
    model.eval()
    gm = trace(model)
    total = 0
    for rule in rules:
        assert propagate_shapes(gm, [x])  # real values: no kernel is in the graph yet
        canonicalize(gm)
        total = BY_NAME[rule].apply(gm)
    return gm, total


@pytest.mark.parametrize(
    ("kw", "sites"),
    [
        ({}, 1),
        ({"stride": 2, "padding": 1, "bias": False}, 1),
        ({"m": 1, "k": (3, 5), "dilation": 2, "padding": (2, 4)}, 1),
        ({"groups": 2}, 0),  # grouped, not depthwise
        ({"m": 1, "groups": 1}, 0),  # an ordinary convolution
        ({"padding": "same"}, 0),  # a padding string: left to the vendor call
        ({"padding": 1, "padding_mode": "reflect"}, 0),
        ({"k": 9, "padding": 4}, 0),  # more taps than the kernel unrolls
    ],
)
def test_the_rule_matches_depthwise_convolutions_only(kw: dict[str, Any], sites: int) -> None:
    kw = dict(kw)
    model = Depthwise(kw.pop("c", 4), kw.pop("m", 2), kw.pop("k", 3), **kw)
    _, n = _sites(model, torch.randn(2, 4, 12, 12))
    assert n == sites


def test_a_double_precision_input_is_left_to_the_vendor_call() -> None:
    _, n = _sites(Depthwise().double(), torch.randn(2, 4, 12, 12, dtype=torch.float64))
    assert n == 0


class DwBn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.dw = nn.Conv2d(4, 4, 3, padding=1, groups=4, bias=False)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        return torch.relu(self.bn(self.dw(x)))


def test_after_a_batchnorm_fold_the_folded_conv_takes_the_kernel() -> None:
    _, n = _sites(DwBn(), torch.randn(2, 4, 12, 12), ("fold_batchnorm", "depthwise_conv_kernel"))
    assert n == 1


_SOURCE = "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    pass\n"


def test_the_candidate_carries_the_kernel_and_is_not_dispatch_only() -> None:
    gm, n = _sites(Depthwise(), torch.randn(2, 4, 12, 12))
    assert n == 1
    source = rewritten_source(_SOURCE, gm, "none", ["depthwise"], candidate=True)
    assert "@triton.jit" in source and "def kernelopt_depthwise_conv2d" in source
    assert not is_dispatch_only(source)
    assert analyze_candidate(source).violations == []
    problem = rewritten_source(_SOURCE, gm, "none", ["depthwise"], candidate=False)
    assert "class Model(" in problem


_CHECK = textwrap.dedent(
    """
    import json, sys
    import torch, torch.nn.functional as F
    from kernelopt_jupyter.agents.rewrites.canonical import canonicalize
    from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes, trace
    from kernelopt_jupyter.agents.rewrites.kernels import kernelopt_depthwise_conv2d
    from kernelopt_jupyter.agents.rewrites.rules import BY_NAME

    torch.manual_seed(0)
    errors = []
    for n, c, h, w, m, (kh, kw), s, p, d, bias in json.loads(sys.argv[1]):
        x = torch.randn(n, c, h, w)
        weight = torch.randn(c * m, 1, kh, kw)
        b = torch.randn(c * m) if bias else None
        want = F.conv2d(x, weight, b, s, p, d, c)
        got = kernelopt_depthwise_conv2d(x, weight, b, s, p, d)
        errors.append([list(got.shape) == list(want.shape), float((got - want).abs().max())])
    from kernelopt_jupyter.agents.rewrites.kernels import kernelopt_avg_pool2d

    for n, c, h, w, k, s, p, div in json.loads(sys.argv[2]):
        x = torch.randn(n, c, h, w)
        want = F.avg_pool2d(x, k, s, p, False, True, div)
        got = kernelopt_avg_pool2d(x, k, s, p, div or k[0] * k[1])
        errors.append([list(got.shape) == list(want.shape), float((got - want).abs().max())])
    from kernelopt_jupyter.agents.rewrites.kernels import kernelopt_group_norm

    for shape, groups, affine in json.loads(sys.argv[3]):
        x = torch.randn(*shape) * 3.0 + 1.0
        c = shape[1]
        w, b = (torch.randn(c), torch.randn(c)) if affine else (None, None)
        # Against float64: with one element per group torch's float32 variance is not zero.
        w64, b64 = (w.double(), b.double()) if affine else (None, None)
        want = F.group_norm(x.double(), groups, w64, b64, 1e-5).float()
        got = kernelopt_group_norm(x, groups, w, b, 1e-5)
        errors.append([list(got.shape) == list(want.shape), float((got - want).abs().max())])
    # The rule end to end: a traced module whose conv became the kernel, on real values.
    model = torch.nn.Conv2d(3, 6, 3, stride=2, padding=1, groups=3).eval()
    x = torch.randn(2, 3, 11, 9)
    gm = trace(model)
    propagate_shapes(gm, [x.to("meta")])
    canonicalize(gm)
    assert BY_NAME["depthwise_conv_kernel"].apply(gm) == 1
    with torch.no_grad():
        errors.append([True, float((gm(x) - model(x)).abs().max())])
    print(json.dumps(errors))
    """
)


def test_the_kernels_equal_the_vendor_ops_under_the_interpreter() -> None:
    cases = [
        (2, 3, 9, 11, 2, (3, 3), (1, 1), (1, 1), (1, 1), True),
        (1, 4, 10, 7, 1, (5, 5), (2, 2), (2, 2), (1, 1), False),
        (2, 2, 8, 8, 3, (3, 3), (1, 1), (2, 2), (2, 2), True),  # M=3: a padded channel block
        (1, 3, 7, 9, 1, (3, 1), (2, 1), (1, 0), (1, 1), True),
        (1, 2, 40, 40, 2, (3, 3), (1, 1), (1, 1), (1, 1), True),  # several pixel blocks
        (1, 2, 5, 5, 1, (3, 3), (1, 1), (0, 0), (1, 1), False),  # no padding
    ]
    pools = [
        (2, 3, 20, 20, (7, 7), (3, 3), (0, 0), None),  # overlapping windows
        (1, 2, 9, 11, (3, 3), (2, 2), (1, 1), None),  # zero padding counted
        (1, 2, 8, 8, (2, 3), (1, 2), (1, 1), 5),  # a divisor override
        (1, 1, 5, 5, (5, 5), (1, 1), (0, 0), None),  # one window
    ]
    norms = [
        ((2, 8, 5, 5), 4, True),
        ((3, 6, 7), 3, False),  # 1-D spatial, no affine
        ((2, 4, 33, 17), 2, True),  # groups larger than one block: several blocks combined
        ((1, 64, 28, 28), 32, True),
        ((2, 6), 3, True),  # no spatial dimension
        # Small groups, many to a program (own_group_norm_rows_kernel):
        ((3, 256), 256, True),  # one element per group: the output is the bias
        ((5, 48, 3, 3), 8, False),  # 54 elements, the last program's rows partly masked
        ((4, 64, 2, 2), 32, True),  # channels of a group map to their own weights
    ]
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    out = subprocess.run(
        [sys.executable, "-c", _CHECK, json.dumps(cases), json.dumps(pools), json.dumps(norms)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    results = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(results) == len(cases) + len(pools) + len(norms) + 1
    for same_shape, err in results:
        assert same_shape and err < 1e-4, results


def test_pytorch_compute_left_beside_a_kernel_is_found() -> None:
    """The verifier refuses PyTorch compute beside a Triton candidate's kernels (its static
    gate): on the H200 every kernel candidate of a conv + BatchNorm + activation block failed
    there, and took the search's first slots. Such a graph is found (``foreign_compute``) and
    its candidate is offered as a mixed one, marked dispatch-only."""
    from kernelopt_jupyter.agents.rewrites.rules import foreign_compute

    x = torch.randn(2, 4, 12, 12)
    pure, n = _sites(Depthwise(), x)
    assert n == 1 and foreign_compute(pure) is None
    mixed, n = _sites(DwBn(), x, ("fold_batchnorm", "depthwise_conv_kernel"))
    assert n == 1 and foreign_compute(mixed) is not None


_PROBLEM = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.dw = nn.Conv2d(4, 8, 3, padding=1, groups=4)
        self.pw = nn.Conv2d(8, 6, 1)
{extra_init}
    def forward(self, x):
        return {body}


def get_inputs():
    return [torch.randn(2, 4, 10, 10)]


def get_init_inputs():
    return []
"""


@pytest.mark.parametrize(
    ("extra_init", "body", "offered"),
    [
        ("", "self.pw(self.dw(x))", True),  # vendor conv after the kernel
        ("", "torch.softmax(self.pw(self.dw(x)), 1)", False),
        # The ReLU after the vendor conv becomes KernelOPT's own pointwise kernel.
        ("", "torch.relu(self.pw(self.dw(x)))", True),
        # A BatchNorm in training between them becomes KernelOPT's own kernel as well.
        ("        self.bn = nn.BatchNorm2d(8)\n", "self.pw(self.bn(self.dw(x)))", True),
    ],
)
def test_the_scan_offers_the_kernel_by_what_the_forward_keeps(
    tmp_path: Any, extra_init: str, body: str, offered: bool
) -> None:
    from kernelopt_jupyter.agents.rewrites.task import scan

    source = _PROBLEM.format(extra_init=extra_init, body=body)
    path = tmp_path / "dw_problem.py"
    path.write_text(source)
    found = scan(source, str(path))
    kernel = [m for m in found.matches if "depthwise_conv_kernel" in m.names and not m.beside]
    assert bool(kernel) == offered, (found.error, [m.names for m in found.matches])
    if not offered:  # the rest is PyTorch compute: a mixed candidate, marked dispatch-only
        mixed = [m for m in found.matches if "depthwise_conv_kernel" in m.names]
        assert mixed and all(m.beside == "softmax" for m in mixed), [m.title for m in mixed]
    if "bn" in body:  # only together: the depthwise kernel alone leaves the norm in PyTorch
        assert all("batch_norm_kernel" in m.names for m in kernel)
    if "relu" in body:
        assert all("pointwise_kernel" in m.names for m in kernel)
        # The kernel alone leaves the ReLU in PyTorch: offered too, as a mixed candidate.
        assert found.mixed.get("depthwise_conv_kernel") == "relu", found.mixed


def test_a_plane_too_large_for_the_grid_takes_larger_blocks_then_the_vendor_call(
    monkeypatch: Any,
) -> None:
    """CUDA's grid allows 65535 programs in its second dimension: a larger plane gets larger
    blocks, and past 4096 pixels a program the vendor convolution (checked on meta shapes and
    by where the call goes, with the limit lowered)."""
    from kernelopt_jupyter.agents.rewrites import kernels

    calls: list[str] = []
    monkeypatch.setattr(kernels, "MAX_GRID_Y", 2)
    monkeypatch.setattr(torch, "conv2d", lambda *a, **k: calls.append("vendor") or a[0])
    x = torch.randn(1, 2, 100, 100)  # 10000 pixels: 3 blocks of 4096, over the lowered limit
    w = torch.randn(2, 1, 3, 3)
    assert kernels.kernelopt_depthwise_conv2d(x, w, None, (1, 1), (1, 1), (1, 1)) is x
    assert calls == ["vendor"]


def test_the_rendered_kernel_carries_the_constants_it_reads() -> None:
    gm, _ = _sites(Depthwise(), torch.randn(2, 4, 12, 12))
    source = rewritten_source(_SOURCE, gm, "none", ["depthwise"], candidate=True)
    assert "MAX_GRID_Y = 65535" in source
    compile(source, "candidate", "exec")


class Pool(nn.Module):
    def __init__(self, functional: bool = False, **kw: Any) -> None:
        super().__init__()
        self.functional, self.kw = functional, kw
        self.pool = nn.AvgPool2d(**kw)

    def forward(self, x):
        return F.avg_pool2d(x, **self.kw) if self.functional else self.pool(x)


@pytest.mark.parametrize(
    ("kw", "sites"),
    [
        ({"kernel_size": 7, "stride": 3}, 1),
        ({"kernel_size": 3, "stride": 2, "padding": 1}, 1),
        ({"kernel_size": (2, 3), "divisor_override": 5}, 1),
        ({"kernel_size": 3, "ceil_mode": True}, 0),  # the divisor varies at the border
        ({"kernel_size": 3, "padding": 1, "count_include_pad": False}, 0),
        ({"kernel_size": 9}, 0),  # more taps than the kernel unrolls
    ],
)
@pytest.mark.parametrize("functional", [False, True], ids=["module", "function"])
def test_the_pool_rule_matches_constant_divisor_pools(
    kw: dict[str, Any], sites: int, functional: bool
) -> None:
    _, n = _sites(Pool(functional, **kw), torch.randn(2, 3, 24, 24), ("avg_pool_kernel",))
    assert n == sites


class DwThenPool(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.dw = nn.Conv2d(3, 3, 3, padding=1, groups=3)
        self.pool = nn.AvgPool2d(2)

    def forward(self, x):
        return self.pool(self.dw(x))


def test_two_kernel_helpers_share_one_copy_of_the_kernel() -> None:
    gm, _ = _sites(DwThenPool(), torch.randn(2, 3, 8, 8), ("depthwise_conv_kernel",))
    propagate_shapes(gm, [torch.randn(2, 3, 8, 8).to("meta")])
    canonicalize(gm)
    # shapes after the kernel call: from the meta path of the wrapper
    assert BY_NAME["avg_pool_kernel"].apply(gm) == 1
    source = rewritten_source(_SOURCE, gm, "none", ["both"], candidate=True)
    assert source.count("def own_depthwise_conv2d_kernel(") == 1
    assert source.count("def kernelopt_depthwise_conv2d(") == 1
    assert source.count("def kernelopt_avg_pool2d(") == 1
    assert not is_dispatch_only(source) and analyze_candidate(source).violations == []
    compile(source, "candidate", "exec")


def test_the_tuners_launch_configs_of_the_own_kernels_pass_the_static_gate() -> None:
    """The Tuner writes each kernel's name as a key of ``LAUNCH_CONFIGS``: a name that
    mentions the project would read as harness detection (on the GPU, every variant of the
    own kernels would then fail the static gate)."""
    gm, _ = _sites(DwThenPool(), torch.randn(2, 3, 8, 8), ("depthwise_conv_kernel",))
    propagate_shapes(gm, [torch.randn(2, 3, 8, 8).to("meta")])
    canonicalize(gm)
    assert BY_NAME["avg_pool_kernel"].apply(gm) == 1
    source = lift_launch_configs(rewritten_source(_SOURCE, gm, "none", ["both"], candidate=True))
    assert "LAUNCH_CONFIGS = {" in source
    assert "own_depthwise_conv2d_kernel" in read_launch_configs(source)
    assert analyze_candidate(source).violations == []


class Norm(nn.Module):
    def __init__(self, how: str) -> None:
        super().__init__()
        self.how = how
        self.norm = nn.GroupNorm(4, 8, affine=how != "module-plain")
        self.w, self.b = nn.Parameter(torch.randn(8)), nn.Parameter(torch.randn(8))

    def forward(self, x):
        if self.how == "function":
            return F.group_norm(x, 4, self.w, self.b, 1e-3)
        if self.how == "function-weight-only":
            return F.group_norm(x, 4, self.w)
        return self.norm(x)


@pytest.mark.parametrize(
    ("how", "sites"),
    [("module", 1), ("module-plain", 1), ("function", 1), ("function-weight-only", 0)],
)
def test_the_group_norm_rule(how: str, sites: int) -> None:
    _, n = _sites(Norm(how), torch.randn(2, 8, 6, 6), ("group_norm_kernel",))
    assert n == sites
