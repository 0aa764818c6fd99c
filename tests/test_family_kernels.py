"""KernelOPT's op-family kernels (``family_kernels.py``) and their rules (``family_rules.py``):
what each rule matches however the op is spelled, the kernels' values under Triton's
interpreter against torch in float64 (a fresh process: the interpreter is chosen when kernels
are decorated), and the candidate they render (its launch settings lifted for the Tuner)."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from _family import SOURCE, check_tunable_candidate, interpret, rewrite
from _kernelbench import dev_problems, problem_ids

from kernelopt_jupyter.agents.rewrites.family_kernels import (
    kernelopt_arg_reduce,
    kernelopt_max_pool,
    kernelopt_norm,
    kernelopt_scan,
)
from kernelopt_jupyter.agents.rewrites.render import rewritten_source
from kernelopt_jupyter.agents.rewrites.rules import BY_NAME, foreign_compute
from kernelopt_jupyter.agents.transforms import lift_launch_configs
from kernelopt_jupyter.candidate import is_dispatch_only
from kernelopt_jupyter.launch_configs import read_launch_configs
from kernelopt_jupyter.verify.static import analyze_candidate


class Forward(nn.Module):
    """A module whose forward is ``fn`` (one input), traced like a problem's reference."""

    def __init__(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class Masked(nn.Module):
    def __init__(self, order: str = "x*m", dim: int = 1) -> None:
        super().__init__()
        self.order, self.dim = order, dim

    def forward(self, x, mask):
        product = x * mask if self.order == "x*m" else mask * x
        return torch.cumsum(product, dim=self.dim)


_SCANS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "torch.cumsum": lambda x: torch.cumsum(x, dim=1),
    "method, negative dim": lambda x: x.cumsum(-1),
    "cumprod": lambda x: torch.cumprod(x, 1),
    "cumprod method": lambda x: x.cumprod(dim=0),
    "reverse": lambda x: torch.cumsum(x.flip(1), dim=1).flip(1),
    "reverse, torch.flip": lambda x: torch.flip(torch.cumsum(torch.flip(x, dims=[-1]), 1), (1,)),
    "reverse cumprod": lambda x: x.flip(0).cumprod(0).flip(0),
    "exclusive, narrow": lambda x: torch.cat(
        (
            torch.zeros_like(x.select(1, 0).unsqueeze(1)),
            torch.cumsum(x.narrow(dim=1, start=0, length=x.size(1) - 1), dim=1),
        ),
        dim=1,
    ),
    "exclusive, slice": lambda x: torch.cat([torch.zeros_like(x[:, :1]), x[:, :-1].cumsum(1)], 1),
    "exclusive cumprod": lambda x: torch.cat([torch.ones_like(x[:1]), x[:-1].cumprod(0)]),
    # The scan of the input shifted one step (KernelBench's later spelling), and the shift
    # spelled with a slice after the concatenation, a pad, or another identity filler.
    "exclusive, shifted input": lambda x: torch.cumsum(
        torch.cat((torch.zeros_like(x.select(1, 0).unsqueeze(1)), x), dim=1).narrow(1, 0, 9),
        dim=1,
    ),
    "exclusive, slice after the scan": lambda x: torch.cat(
        [x.new_zeros(4, 1), x.cumsum(1)], dim=-1
    )[:, :-1],
    "exclusive, scan sliced": lambda x: torch.cat(
        [torch.zeros_like(x[:, -1:]), x.cumsum(1)[:, :-1]], 1
    ),
    "exclusive, pad": lambda x: F.pad(x, (1, 0))[:, :-1].cumsum(1),
    "exclusive, pad of the first dim": lambda x: F.pad(x, (0, 0, 1, 0))[:-1].cumsum(0),
    "exclusive cumprod, pad": lambda x: F.pad(x, (1, 0), value=1.0)[..., :-1].cumprod(-1),
    "reverse exclusive": lambda x: torch.cat(
        [torch.zeros_like(x[:, :1]), x.flip(1)[:, :-1].cumsum(1)], 1
    ).flip(1),
}

#: Each spelling's expected (reverse, exclusive) flags in the kernel call.
_SCAN_FLAGS = {
    "reverse": (True, False),
    "reverse, torch.flip": (True, False),
    "reverse cumprod": (True, False),
    "reverse exclusive": (True, True),
    **{name: (False, True) for name in _SCANS if name.startswith("exclusive")},
}


def _scan_reference(x, dim, product, reverse, exclusive, mask):
    """What ``kernelopt_scan`` computes, in float64 torch."""
    x = x.double() * (mask.double() if mask is not None else 1.0)
    if reverse:
        x = x.flip(dim)
    y = x.cumprod(dim) if product else x.cumsum(dim)
    if exclusive:
        first = x.narrow(dim, 0, 1)
        fill = torch.ones_like(first) if product else torch.zeros_like(first)
        y = torch.cat([fill, y.narrow(dim, 0, x.shape[dim] - 1)], dim)
    return y.flip(dim) if reverse else y


@pytest.mark.parametrize("spelling", list(_SCANS))
def test_the_scan_rule_takes_every_spelling_and_leaves_no_other_compute(spelling: str) -> None:
    gm, n = rewrite(Forward(_SCANS[spelling]), [torch.randn(4, 9)], "scan_kernel")
    assert n == 1
    assert foreign_compute(gm) is None  # the flips, slices and concatenation went with it
    calls = [node for node in gm.graph.nodes if node.target is kernelopt_scan]
    assert len(calls) == 1
    assert tuple(calls[0].args[3:5]) == _SCAN_FLAGS.get(spelling, (False, False))
    x = torch.randn(4, 9) + 2.0  # a product of values near 1 stays in range
    with torch.no_grad():  # the kernel's flags are the spelling's meaning (here in float64)
        want = _SCANS[spelling](x.double())
        got = _scan_reference(x, *calls[0].args[1:5], None)
    torch.testing.assert_close(got, want)


@pytest.mark.parametrize("order", ["x*m", "m*x"])
def test_a_masked_scan_takes_the_mask_into_the_kernel(order: str) -> None:
    x, mask = torch.randn(4, 9), torch.rand(4, 9) > 0.5
    gm, n = rewrite(Masked(order), [x, mask], "scan_kernel")
    assert n == 1 and foreign_compute(gm) is None
    (call,) = [node for node in gm.graph.nodes if node.target is kernelopt_scan]
    assert [a.name if hasattr(a, "name") else a for a in call.args] == [
        "x",
        1,
        False,
        False,
        False,
        "mask",
    ]


_LEFT: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    # The scan is taken, the rest stays (the scan finder then offers no kernel candidate).
    "a flip on one side only": lambda x: torch.cumsum(x.flip(1), 1),
    "a prefix of another length": lambda x: torch.cat(
        [torch.zeros_like(x[:, :2]), x[:, :-2].cumsum(1)], 1
    ),
    "a filler that is not the identity": lambda x: torch.cat(
        [torch.ones_like(x[:, :1]), x[:, :-1].cumsum(1)], 1
    ),
    "a shift of two steps": lambda x: torch.cumsum(
        torch.cat((torch.zeros_like(x[:, :2]), x), dim=1)[:, :-2], dim=1
    ),
    "a pad after the last step": lambda x: F.pad(x, (0, 1))[:, 1:].cumsum(1),
}


@pytest.mark.parametrize("spelling", list(_LEFT))
def test_what_is_not_the_scan_form_stays_as_written(spelling: str) -> None:
    gm, n = rewrite(Forward(_LEFT[spelling]), [torch.randn(4, 9)], "scan_kernel")
    assert n == 1
    assert foreign_compute(gm) is not None


def test_a_scan_with_a_dtype_or_of_doubles_is_left_to_the_vendor() -> None:
    _, n = rewrite(
        Forward(lambda x: x.cumsum(1, dtype=torch.float64)), [torch.randn(3, 5)], "scan_kernel"
    )
    assert n == 0
    _, n = rewrite(Forward(lambda x: x.cumsum(1)), [torch.randn(3, 5).double()], "scan_kernel")
    assert n == 0


def test_the_scan_wrapper_gives_the_shape_on_the_meta_device() -> None:
    x = torch.empty(3, 5, 7, device="meta", dtype=torch.float16)
    out = kernelopt_scan(x, 1, False, True, True, None)
    assert out.device.type == "meta" and out.shape == x.shape and out.dtype == x.dtype


def test_the_scan_candidate_carries_the_kernel_and_its_tunable_launch() -> None:
    gm, _ = rewrite(Forward(_SCANS["reverse"]), [torch.randn(4, 9)], "scan_kernel")
    source = rewritten_source(SOURCE, gm, "none", ["scan"], candidate=True)
    assert "def own_scan_kernel(" in source and "def kernelopt_scan(" in source
    assert not is_dispatch_only(source)
    lifted = lift_launch_configs(source)
    assert read_launch_configs(lifted)["own_scan_kernel"] == {
        "BLOCK": 1024,
        "num_warps": 4,
        "num_stages": 3,
    }
    assert analyze_candidate(lifted).violations == []
    compile(lifted, "candidate", "exec")


_CHECK = textwrap.dedent(
    """
    import itertools, json, sys
    import torch
    from kernelopt_jupyter.agents.rewrites.family_kernels import kernelopt_scan

    def reference(x, dim, product, reverse, exclusive, mask):
        x = x.double() * (mask.double() if mask is not None else 1.0)
        if reverse:
            x = x.flip(dim)
        y = x.cumprod(dim) if product else x.cumsum(dim)
        if exclusive:
            first = x.narrow(dim, 0, 1)
            fill = torch.ones_like(first) if product else torch.zeros_like(first)
            y = torch.cat([fill, y.narrow(dim, 0, x.shape[dim] - 1)], dim)
        return y.flip(dim) if reverse else y

    torch.manual_seed(0)
    errors = []
    for shape, dim in json.loads(sys.argv[1]):
        for product, reverse, exclusive, masked in itertools.product([False, True], repeat=4):
            x = 1 + 0.01 * torch.randn(shape) if product else torch.randn(shape)
            mask = torch.rand(shape) > 0.5 if masked else None
            got = kernelopt_scan(x, dim, product, reverse, exclusive, mask)
            want = reference(x, dim, product, reverse, exclusive, mask)
            same = list(got.shape) == list(want.shape) and got.dtype == x.dtype
            scale = max(1.0, float(want.abs().max()))
            errors.append([shape, dim, same, float((got.double() - want).abs().max()) / scale])
    x = torch.randn(3, 40).half()
    got = kernelopt_scan(x, 1, False, False, False, None)
    want = x.double().cumsum(1)
    scale = float(want.abs().max())
    err = float((got.double() - want).abs().max()) / scale / 100  # half's rounding of the output
    errors.append(["half", 1, got.dtype == torch.half, err])
    print(json.dumps(errors))
    """
)


def test_the_scan_equals_torch_under_the_interpreter() -> None:
    cases = [
        ((3, 2500), 1),  # three tiles along the row: the prefix carried between them
        ((1,), 0),  # one element
        ((4, 1), 1),  # rows of length one
        ((5, 300, 5), 1),  # a middle dimension: columns side by side, several tiles
        ((7, 3), 0),  # the first dimension
        ((2, 3, 4, 5), 2),
        ((2, 17), -1),
    ]
    results = interpret(_CHECK, cases)
    assert len(results) == 16 * len(cases) + 1
    for shape, dim, same, err in results:
        assert same and err < 1e-5, (shape, dim, err)


# --------------------------------------------------------------------------- max pooling


class Pool(nn.Module):
    def __init__(self, dims: int, functional: bool, **kw: Any) -> None:
        super().__init__()
        self.dims, self.functional, self.kw = dims, functional, kw
        self.pool = (nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d)[dims - 1](**kw)

    def forward(self, x):
        if self.functional:
            return (F.max_pool1d, F.max_pool2d, F.max_pool3d)[self.dims - 1](x, **self.kw)
        return self.pool(x)


_POOLS = [
    (1, {"kernel_size": 8, "stride": 1, "padding": 4, "dilation": 3}, 1),
    (2, {"kernel_size": 4, "stride": 1, "padding": 1}, 1),
    (2, {"kernel_size": (3, 2), "stride": (2, 1), "ceil_mode": True}, 1),
    (3, {"kernel_size": 3, "stride": 2, "padding": 1, "dilation": 3}, 1),
    (2, {"kernel_size": 2, "return_indices": True}, 0),  # indices: the vendor's
    (2, {"kernel_size": 9}, 0),  # more taps than the kernel unrolls
]


@pytest.mark.parametrize(("dims", "kw", "sites"), _POOLS)
@pytest.mark.parametrize("functional", [False, True], ids=["module", "function"])
def test_the_max_pool_rule_takes_modules_and_functions(
    dims: int, kw: dict[str, Any], sites: int, functional: bool
) -> None:
    x = torch.randn(2, 3, *([40 if dims == 1 else 12] * dims))
    gm, n = rewrite(Pool(dims, functional, **kw), [x], "max_pool_kernel")
    assert n == sites
    if sites:
        assert foreign_compute(gm) is None


def test_the_max_pool_wrapper_gives_the_shape_on_the_meta_device() -> None:
    for ceil in (False, True):
        x = torch.empty(2, 3, 9, 10, 11, device="meta")
        out = kernelopt_max_pool(x, (3, 2, 3), (2, 2, 3), (1, 0, 1), (1, 2, 1), ceil)
        want = F.max_pool3d(x, (3, 2, 3), (2, 2, 3), (1, 0, 1), (1, 2, 1), ceil)
        assert out.device.type == "meta" and out.shape == want.shape


_POOL_CHECK = textwrap.dedent(
    """
    import json, sys
    import torch
    import torch.nn.functional as F
    from kernelopt_jupyter.agents.rewrites.family_kernels import kernelopt_max_pool

    torch.manual_seed(0)
    pools = (F.max_pool1d, F.max_pool2d, F.max_pool3d)
    errors = []
    for shape, k, s, p, d, ceil in json.loads(sys.argv[1]):
        x = torch.randn(shape)
        want = pools[len(k) - 1](x.double(), k, s, p, d, ceil)
        got = kernelopt_max_pool(x, tuple(k), tuple(s), tuple(p), tuple(d), ceil)
        same = list(got.shape) == list(want.shape)
        errors.append([shape, same, float((got.double() - want).abs().max()) if same else -1])
    x = torch.randn(1, 2, 9)
    x[0, 1, 4] = float("nan")
    got = kernelopt_max_pool(x, (3,), (1,), (1,), (1,), False)
    want = F.max_pool1d(x, 3, 1, 1)
    errors.append(["nan", bool(torch.equal(got.isnan(), want.isnan())), 0.0])
    x = torch.randn(2, 3, 11, 7).half()
    got = kernelopt_max_pool(x, (2, 3), (2, 2), (1, 1), (1, 1), True)
    errors.append(["half", bool(torch.equal(got, F.max_pool2d(x, (2, 3), 2, 1, 1, True))), 0.0])
    print(json.dumps(errors))
    """
)


def test_the_max_pool_equals_torch_under_the_interpreter() -> None:
    cases = [
        ((2, 3, 17), (3,), (2,), (1,), (1,), False),
        ((2, 3, 17), (4,), (1,), (2,), (3,), True),  # dilated, ceil mode
        ((3, 20), (8,), (1,), (4,), (3,), False),  # unbatched
        ((2, 2, 9, 11), (3, 2), (2, 2), (1, 1), (1, 2), True),
        ((1, 2, 30, 30), (4, 4), (1, 1), (1, 1), (1, 1), False),  # several blocks of outputs
        ((1, 2, 1, 1), (1, 1), (1, 1), (0, 0), (1, 1), False),  # one element
        ((2, 2, 7, 6, 9), (3, 3, 3), (2, 2, 2), (1, 1, 1), (3, 3, 3), False),
        ((1, 2, 5, 8, 7), (2, 3, 2), (2, 1, 3), (1, 1, 0), (1, 1, 2), True),
    ]
    results = interpret(_POOL_CHECK, cases)
    assert len(results) == len(cases) + 2
    for shape, same, err in results:
        assert same and err == 0.0, (shape, err)  # a maximum is exact


# --------------------------------------------------------------------------- normalisations

_RMS: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], int]] = {
    "as KernelBench writes it": (
        lambda x: x / torch.sqrt(torch.mean(x**2, dim=1, keepdim=True) + 1e-5),
        1,
    ),
    "rsqrt over the last dim": (
        lambda x: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6),
        1,
    ),
    "methods, two dims": (lambda x: x / (x * x).mean(dim=(2, 3), keepdim=True).add(1e-5).sqrt(), 1),
    "square, eps first": (lambda x: torch.rsqrt(1e-5 + x.square().mean(1, keepdim=True)) * x, 1),
    "no keepdim": (
        lambda x: x / torch.sqrt(torch.mean(x**2, dim=(1, 2, 3)) + 1e-5)[:, None, None, None],
        0,
    ),
    "dims apart": (lambda x: x / torch.sqrt(torch.mean(x**2, dim=(1, 3), keepdim=True) + 1e-5), 0),
    "another tensor's squares": (
        lambda x: x / torch.sqrt(torch.mean((x + 1) ** 2, 1, keepdim=True) + 1e-5),
        0,
    ),
    "a cube": (lambda x: x / torch.sqrt(torch.mean(x**3, dim=1, keepdim=True) + 1e-5), 0),
}


@pytest.mark.parametrize("spelling", list(_RMS))
def test_the_rms_rule_takes_the_written_out_norm(spelling: str) -> None:
    fn, sites = _RMS[spelling]
    gm, n = rewrite(Forward(fn), [torch.randn(2, 6, 5, 7)], "rms_norm_kernel")
    assert n == sites
    if sites:
        assert foreign_compute(gm) is None


class Norm(nn.Module):
    def __init__(self, layer: nn.Module | None = None, fn: Any = None) -> None:
        super().__init__()
        self.layer, self.fn = layer, fn
        self.w, self.b = nn.Parameter(torch.randn(6)), nn.Parameter(torch.randn(6))

    def forward(self, x):
        return self.fn(self, x) if self.fn is not None else self.layer(x)


_NORMS: list[tuple[str, Any, str, int]] = [
    ("rms module", Norm(nn.RMSNorm((5, 7))), "rms_norm_kernel", 1),
    (
        "rms module, no weight",
        Norm(nn.RMSNorm(7, eps=1e-4, elementwise_affine=False)),
        "rms_norm_kernel",
        1,
    ),
    ("layer module", Norm(nn.LayerNorm((6, 5, 7))), "layer_norm_kernel", 1),
    ("layer module, no bias", Norm(nn.LayerNorm(7, bias=False)), "layer_norm_kernel", 1),
    (
        "layer module, plain",
        Norm(nn.LayerNorm([5, 7], elementwise_affine=False)),
        "layer_norm_kernel",
        1,
    ),
    (
        "layer function",
        Norm(fn=lambda m, x: F.layer_norm(x, (7,), None, None, 1e-3)),
        "layer_norm_kernel",
        1,
    ),
    (
        "layer, a shape read in forward",
        Norm(fn=lambda m, x: F.layer_norm(x, x.shape[-1:])),
        "layer_norm_kernel",
        0,
    ),
    ("instance module", Norm(nn.InstanceNorm2d(6)), "instance_norm_kernel", 1),
    ("instance module, affine", Norm(nn.InstanceNorm2d(6, affine=True)), "instance_norm_kernel", 1),
    (
        "instance, running stats",
        Norm(nn.InstanceNorm2d(6, track_running_stats=True)),
        "instance_norm_kernel",
        0,
    ),
    (
        "instance function",
        Norm(fn=lambda m, x: F.instance_norm(x, weight=m.w, bias=m.b)),
        "instance_norm_kernel",
        1,
    ),
]


@pytest.mark.parametrize(("name", "model", "rule", "sites"), _NORMS, ids=[n[0] for n in _NORMS])
def test_the_norm_rules_take_layers_and_functions(
    name: str, model: nn.Module, rule: str, sites: int
) -> None:
    gm, n = rewrite(model.eval(), [torch.randn(2, 6, 5, 7)], rule)
    assert n == sites
    if sites:
        assert foreign_compute(gm) is None


def test_the_norm_wrapper_gives_the_shape_on_the_meta_device() -> None:
    x = torch.empty(2, 3, 4, 5, device="meta", dtype=torch.bfloat16)
    out = kernelopt_norm(x, 1, 2, None, None, 1e-5, True, False)
    assert out.device.type == "meta" and out.shape == x.shape and out.dtype == x.dtype


_NORM_CHECK = textwrap.dedent(
    """
    import json, sys
    import torch
    import torch.nn as nn
    from kernelopt_jupyter.agents.rewrites import family_kernels
    from kernelopt_jupyter.agents.rewrites.canonical import canonicalize
    from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes, trace
    from kernelopt_jupyter.agents.rewrites.rules import BY_NAME

    def reference(x, first, last, w, b, eps, rms, per_channel):
        x, dims = x.double(), tuple(range(first, last))
        if rms:
            y = x / torch.sqrt((x * x).mean(dims, keepdim=True) + eps)
        else:
            mean = x.mean(dims, keepdim=True)
            var = ((x - mean) ** 2).mean(dims, keepdim=True)
            y = (x - mean) / torch.sqrt(var + eps)
        shape = [1, -1] + [1] * (x.dim() - 2) if per_channel else w.shape if w is not None else ()
        if w is not None:
            y = y * w.double().reshape(shape)
        if b is not None:
            y = y + b.double().reshape(shape)
        return y

    torch.manual_seed(0)
    errors = []
    for split in (False, True):
        # Rows split across programs (into up to 3 parts of at least 16 rows), or never.
        family_kernels.NORM_MIN_PROGRAMS = 10**9 if split else 1
        family_kernels.NORM_MIN_CHUNK = 16
        family_kernels.NORM_MAX_PARTS = 3
        for shape, first, last, affine, rms, per_channel in json.loads(sys.argv[1]):
            x = torch.randn(shape) * 3.0 + 1.0
            wshape = (shape[1],) if per_channel else tuple(shape[first:last])
            w = torch.randn(wshape) if affine else None
            b = torch.randn(wshape) if affine == "wb" else None
            got = family_kernels.kernelopt_norm(x, first, last, w, b, 1e-5, rms, per_channel)
            want = reference(x, first, last, w, b, 1e-5, rms, per_channel)
            same = list(got.shape) == list(want.shape) and got.dtype == x.dtype
            errors.append([shape, split, same, float((got.double() - want).abs().max())])
    # The rules end to end: a traced layer whose norm became the kernel, on real values.
    layers = {  # in a Sequential, so each stays a layer call in the traced graph
        "rms_norm_kernel": nn.Sequential(nn.RMSNorm((5, 7))),
        "layer_norm_kernel": nn.Sequential(nn.LayerNorm((6, 5, 7))),
        "instance_norm_kernel": nn.Sequential(nn.InstanceNorm2d(6, affine=True)),
    }
    for rule, layer in layers.items():
        with torch.no_grad():
            for p in layer.parameters():
                p.copy_(torch.randn_like(p))
        x = torch.randn(3, 6, 5, 7)
        gm = trace(layer)
        assert propagate_shapes(gm, [x])  # real values: no kernel is in the graph yet
        canonicalize(gm)
        assert BY_NAME[rule].apply(gm) == 1
        with torch.no_grad():
            errors.append([rule, None, True, float((gm(x) - layer(x)).abs().max())])
    print(json.dumps(errors))
    """
)


def test_the_norm_equals_torch_under_the_interpreter() -> None:
    cases = [
        ((4, 8, 5, 5), 1, 2, None, True, False),  # RMS over the channels (columns side by side)
        ((3, 7, 9), 2, 3, "wb", False, True),  # instance norm, a weight and bias per channel
        ((2, 3, 10, 11), 1, 4, "wb", False, False),  # layer norm over three dimensions
        ((2, 700), 1, 2, "w", True, False),  # a long row: split into parts when asked
        ((1,), 0, 1, None, False, False),  # one element
        ((6, 4, 33), 1, 2, None, False, False),  # an odd number of columns
        ((2, 3, 40, 50), 2, 4, None, False, False),  # 2000 rows: two tiles, or many parts
    ]
    results = interpret(_NORM_CHECK, cases)
    assert len(results) == 2 * len(cases) + 3
    for shape, split, same, err in results:
        assert same and err < 2e-5, (shape, split, err)


# --------------------------------------------------------------------------- arg-reductions

_ARGS: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], int]] = {
    "torch.argmin": (lambda x: torch.argmin(x, dim=1), 1),
    "method, keepdim": (lambda x: x.argmax(-1, keepdim=True), 1),
    "indices of max": (lambda x: torch.max(x, 1)[1], 1),
    "indices of min, method": (lambda x: x.min(dim=0).indices, 1),
    "values read too": (lambda x: (lambda both: both[0] + both[1])(torch.max(x, 1)), 0),
    "over everything": (lambda x: torch.argmax(x), 0),
}


@pytest.mark.parametrize("spelling", list(_ARGS))
def test_the_arg_rule_takes_every_spelling(spelling: str) -> None:
    fn, sites = _ARGS[spelling]
    gm, n = rewrite(Forward(fn), [torch.randn(4, 6, 5)], "arg_reduce_kernel")
    assert n == sites
    if sites:
        assert foreign_compute(gm) is None


def test_the_arg_wrapper_gives_the_shape_on_the_meta_device() -> None:
    x = torch.empty(3, 5, 7, device="meta")
    assert kernelopt_arg_reduce(x, 1, False, True).shape == (3, 7)
    out = kernelopt_arg_reduce(x, -1, True, False)
    assert out.shape == (3, 5, 1) and out.dtype == torch.int64


_ARG_CHECK = textwrap.dedent(
    """
    import json, sys
    import torch
    from kernelopt_jupyter.agents.rewrites.family_kernels import kernelopt_arg_reduce

    torch.manual_seed(0)
    wrong = []
    for shape, dim in json.loads(sys.argv[1]):
        for largest in (True, False):
            for kind in ("random", "ties", "nan", "all extreme"):
                x = torch.randn(shape)
                if kind == "ties":
                    x = torch.randint(0, 3, shape).float()
                if kind == "nan":
                    x.view(-1)[torch.randperm(x.numel())[: max(1, x.numel() // 7)]] = float("nan")
                if kind == "all extreme":
                    x.fill_(float("-inf") if largest else float("inf"))
                for keepdim in (False, True):
                    got = kernelopt_arg_reduce(x, dim, keepdim, largest)
                    want = (torch.argmax if largest else torch.argmin)(x, dim, keepdim)
                    if got.shape != want.shape or not torch.equal(got, want):
                        wrong.append([shape, dim, largest, kind, keepdim])
    print(json.dumps(wrong))
    """
)


def test_the_arg_reduction_equals_torch_under_the_interpreter() -> None:
    cases = [
        ((3, 2500), 1),  # three tiles along the row
        ((1,), 0),  # one element
        ((4, 1), 1),  # rows of length one
        ((5, 300, 5), 1),  # a middle dimension: columns side by side
        ((7, 3), 0),
        ((2, 17), -1),
    ]
    assert interpret(_ARG_CHECK, cases) == []  # first index of ties, NaN wins


# --------------------------------------------------------------------------- candidates

_CANDIDATES = [
    (Forward(lambda x: x.flip(1).cumsum(1).flip(1)), "scan_kernel", ["own_scan_kernel"]),
    (Pool(2, False, kernel_size=3), "max_pool_kernel", ["own_max_pool_kernel"]),
    (
        Norm(nn.LayerNorm((6, 5, 7))),
        "layer_norm_kernel",
        ["own_norm_stats_kernel", "own_norm_kernel"],
    ),
    (Forward(lambda x: x.argmin(1)), "arg_reduce_kernel", ["own_arg_reduce_kernel"]),
]


@pytest.mark.parametrize(("model", "rule", "kernels"), _CANDIDATES, ids=[c[1] for c in _CANDIDATES])
def test_each_family_candidate_gives_the_tuner_its_block_and_warps(
    model: nn.Module, rule: str, kernels: list[str]
) -> None:
    gm, n = rewrite(model.eval(), [torch.randn(2, 6, 5, 7)], rule)
    assert n == 1
    check_tunable_candidate(gm, rule, kernels)


# --------------------------------------------------------------------------- KernelBench

#: Each op family's rule, and the calls a problem's source spells that family's op with.
FAMILIES = {
    "scan_kernel": re.compile(r"\bcum(sum|prod)\b"),
    "max_pool_kernel": re.compile(r"\b(max_pool[123]d|MaxPool[123]d)\b"),
    "layer_norm_kernel": re.compile(r"\b(layer_norm|LayerNorm)\b"),
    "instance_norm_kernel": re.compile(r"\b(instance_norm|InstanceNorm[123]d)\b"),
    "rms_norm_kernel": re.compile(r"\b(rms_norm|RMSNorm)\b"),
    "arg_reduce_kernel": re.compile(r"\barg(max|min)\b"),
    "batch_norm_kernel": re.compile(r"\b(batch_norm|BatchNorm[123]d)\b"),
    "loss_kernel": re.compile(r"\b(\w+_loss|\w+Loss|kl_div|cosine_similarity)\b"),
}


def _family_problems() -> list[Any]:
    """``(rule, path)`` for every dev problem whose source calls a family's op."""
    try:
        paths = dev_problems()
    except pytest.fail.Exception as exc:  # collected everywhere: fail when selected
        return [pytest.param(None, None, str(exc), id="absent")]
    out = []
    for path in paths:
        text = path.read_text()
        for rule, pattern in FAMILIES.items():
            if pattern.search(text):
                out.append(pytest.param(rule, path, "", id=f"{rule}-{problem_ids([path])[0]}"))
    return out


@pytest.mark.kernelbench
@pytest.mark.parametrize(("rule", "path", "absent"), _family_problems())
def test_the_family_rule_offers_its_kernel_on_the_dev_problems(
    rule: str | None, path: Path | None, absent: str
) -> None:
    from kernelopt_jupyter.agents.rewrites.task import scan

    if path is None:
        pytest.fail(absent, pytrace=False)
    found = scan(path.read_text(), str(path))
    offered = [m for m in found.matches if rule in m.names and m.kernels and not m.beside]
    if not offered:
        # The rule fired, but the forward computes more than the kernel takes (a network
        # with a scan inside): its candidate runs the rest in PyTorch (a mixed candidate,
        # marked dispatch-only), or the rewritten graph cannot be rendered. Or no rule could
        # see the op: the reference has no FX graph (einops).
        mixed = [m for m in found.matches if rule in m.names and m.beside]
        if mixed:
            assert all(is_dispatch_only(m.eager_source) for m in mixed)
            return
        fired = f"{rule}: " in found.error  # a scan error is only raised after a rule fired
        untraced = found.error.startswith("not symbolically traceable")
        assert fired or untraced, (
            found.error,
            [m.names for m in found.matches],
        )
        return
    assert offered[0].title.startswith("rewrite: ") and BY_NAME[str(rule)].title in offered[0].title
    assert not is_dispatch_only(offered[0].eager_source)
