"""The rewrites added for issue 12's list: per-channel bias folds, pooling moves, and weights
derived once per load in the eager candidate (re-derived after a reload, and in place so a
captured CUDA graph stays valid)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from kernelopt_jupyter.agents.rewrites.canonical import canonicalize
from kernelopt_jupyter.agents.rewrites.derive import REFRESH, hoist_derived
from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes, trace
from kernelopt_jupyter.agents.rewrites.render import rewritten_source
from kernelopt_jupyter.agents.rewrites.rules import BY_NAME
from kernelopt_jupyter.agents.transforms import wrap_cuda_graph
from kernelopt_jupyter.problem import load_source_module
from kernelopt_jupyter.verify.static import analyze_candidate


def _rewrite(model: nn.Module, inputs: list[Any], rule: str) -> tuple[Any, int]:
    model.eval()
    gm = trace(model)
    assert propagate_shapes(gm, inputs)
    canonicalize(gm)
    return gm, BY_NAME[rule].apply(gm)


def _check(model: nn.Module, inputs: list[Any], rule: str, *, exact: bool, sites: int = 1) -> Any:
    gm, n = _rewrite(model, inputs, rule)
    assert n == sites
    with torch.no_grad():
        want, got = model(*inputs), gm(*inputs)
    if exact:
        assert torch.equal(want, got)
    else:
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    return gm


class LayerPlusBias(nn.Module):
    def __init__(self, kind: str, subtract: bool, layer_bias: bool) -> None:
        super().__init__()
        self.kind, self.subtract = kind, subtract
        if kind == "convT":
            self.layer: nn.Module = nn.ConvTranspose2d(
                4, 6, 4, stride=2, padding=1, bias=layer_bias
            )
            self.extra = nn.Parameter(torch.randn(6, 1, 1))
        elif kind == "conv":
            self.layer = nn.Conv2d(4, 6, 3, padding=1, bias=layer_bias)
            self.extra = nn.Parameter(torch.randn(1, 6, 1, 1))
        else:
            self.layer = nn.Linear(4, 6, bias=layer_bias)
            self.extra = nn.Parameter(torch.randn(6))

    def forward(self, x):
        y = self.layer(x)
        y = y - self.extra if self.subtract else self.extra + y
        return F.gelu(y) * 0.5


@pytest.mark.parametrize(
    ("kind", "subtract", "layer_bias"),
    [
        ("convT", False, True),
        ("convT", True, False),
        ("conv", False, False),
        ("linear", True, True),
    ],
)
def test_a_per_channel_bias_folds_into_the_layer(
    kind: str, subtract: bool, layer_bias: bool
) -> None:
    model = LayerPlusBias(kind, subtract, layer_bias)
    x = torch.randn(2, 4, 5, 5) if kind != "linear" else torch.randn(3, 4)
    gm = _check(model, [x], "fold_channel_bias", exact=False)
    assert "extra" in gm.code and " + extra" not in gm.code and " - extra" not in gm.code


def test_a_bias_that_varies_along_space_is_not_folded() -> None:
    class Spatial(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(4, 6, 3, padding=1)
            self.extra = nn.Parameter(torch.randn(6, 5, 5))

        def forward(self, x):
            return self.conv(x) + self.extra

    _, n = _rewrite(Spatial(), [torch.randn(2, 4, 5, 5)], "fold_channel_bias")
    assert n == 0


@pytest.mark.parametrize("act", ["relu", "relu6", "leaky", "hardtanh"])
def test_max_pool_moves_before_a_monotone_activation_bit_exactly(act: str) -> None:
    acts = {
        "relu": nn.ReLU(),
        "relu6": nn.ReLU6(),
        "leaky": nn.LeakyReLU(0.2),
        "hardtanh": nn.Hardtanh(-0.5, 0.7),
    }
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), acts[act], nn.MaxPool2d(2))
    gm = _check(model, [torch.randn(2, 3, 8, 8)], "pool_before_activation", exact=True)
    pool = next(n for n in gm.graph.nodes if n.target is F.max_pool2d)
    assert pool.args[0].op == "call_module"  # the pool reads the conv: it runs first now


def test_a_non_monotone_activation_or_a_shared_one_stays() -> None:
    gelu = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.GELU(), nn.MaxPool2d(2))
    assert _rewrite(gelu, [torch.randn(2, 3, 8, 8)], "pool_before_activation")[1] == 0

    class Shared(nn.Module):
        def forward(self, x):
            y = torch.relu(x)
            return F.max_pool2d(y, 2).sum() + y.sum()

    assert _rewrite(Shared(), [torch.randn(2, 3, 8, 8)], "pool_before_activation")[1] == 0


@pytest.mark.parametrize(
    ("kernel", "stride", "padding"), [(7, 3, 0), ((3, 5), (2, 1), 0), (3, 2, 1)]
)
def test_average_pool_is_two_one_dimensional_passes(kernel: Any, stride: Any, padding: int) -> None:
    model = nn.Sequential(nn.AvgPool2d(kernel, stride=stride, padding=padding))
    x = torch.randn(2, 3, 23, 19)
    gm = _check(model, [x], "separable_avg_pool", exact=False)
    assert sum(1 for n in gm.graph.nodes if n.target is F.avg_pool2d) == 2


def test_average_pool_with_a_varying_divisor_is_left_alone() -> None:
    for pool in (
        nn.AvgPool2d(3, 2, padding=1, count_include_pad=False),
        nn.AvgPool2d(3, 2, ceil_mode=True),
        nn.AvgPool2d(3, 2, divisor_override=4),
    ):
        assert (
            _rewrite(nn.Sequential(pool), [torch.randn(1, 2, 9, 9)], "separable_avg_pool")[1] == 0
        )


# --------------------------------------------------------------------------- derived weights

_SOURCE = "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    pass\n"


class ConvBNReLU(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        with torch.no_grad():
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.running_mean.normal_()

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x))) * 2.0


def _eager_candidate(model: nn.Module, x: torch.Tensor, name: str) -> tuple[str, Any]:
    gm, n = _rewrite(model, [x], "fold_batchnorm")
    assert n == 1
    source = rewritten_source(_SOURCE, gm, "none", ["fold"], candidate=True)
    cls = load_source_module(source, name).ModelNew
    # The candidate's base class is the stand-in above: give it the reference's modules.
    cand = cls()
    cand.conv, cand.bn = model.conv, model.bn  # the same parameters as the reference
    return source, cand


def test_folded_weights_are_derived_once_and_follow_reloads() -> None:
    model = ConvBNReLU().eval()
    x = torch.randn(2, 3, 6, 6)
    source, cand = _eager_candidate(model, x, "derive_once")
    assert f"def {REFRESH}(self)" in source and "self._kernelopt_derive()" in source
    assert analyze_candidate(source).violations == []
    calls = 0
    original = cand._kernelopt_derive

    def counting() -> Any:
        nonlocal calls
        calls += 1
        return original()

    cand._kernelopt_derive = counting
    with torch.no_grad():
        for _ in range(3):
            torch.testing.assert_close(cand(x), model(x), rtol=1e-5, atol=1e-5)
    assert calls == 1  # derived at the first call only
    derived = cand._kernelopt_derived_0
    # A reload in place (what load_state_dict does) bumps the versions: re-derived, in place.
    fresh = {
        k: torch.randn_like(v) if v.is_floating_point() else v
        for k, v in model.state_dict().items()
    }
    fresh["bn.running_var"] = fresh["bn.running_var"].abs() + 0.5
    model.load_state_dict(fresh)
    with torch.no_grad():
        torch.testing.assert_close(cand(x), model(x), rtol=1e-5, atol=1e-5)
    assert calls == 2 and cand._kernelopt_derived_0 is derived  # same storage (CUDA graphs)


def test_views_of_weights_are_not_hoisted_and_inputs_never_are() -> None:
    class Lin(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 5)

        def forward(self, x):
            return torch.relu(x @ self.fc.weight.t() + self.fc.bias * 2.0)

    gm = trace(Lin())
    hoisted = hoist_derived(gm)
    assert hoisted is not None and hoisted.count == 1  # bias * 2.0 only; t() stays a view
    assert "t()" in hoisted.main.python_code(root_module="self").src
    assert hoist_derived(trace(nn.Sequential(nn.ReLU()))) is None


def test_the_cuda_graph_wrapper_refreshes_derived_weights_before_a_replay() -> None:
    model = ConvBNReLU().eval()
    source, _ = _eager_candidate(model, torch.randn(1, 3, 4, 4), "derive_graph")
    wrapped = wrap_cuda_graph(source)
    assert "_refresh_before_replay()" in wrapped and f'"{REFRESH}"' in wrapped
    assert analyze_candidate(wrapped).violations == []
    mod = load_source_module(wrapped, "derive_graph_wrapped")
    assert mod.ModelNew._refresh_before_replay is mod._ModelNewEager._refresh_derived_weights
