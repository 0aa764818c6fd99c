"""KernelOPT's loss and batch-norm kernels (``family_kernels.py``) and their rules
(``family_rules.py``): what each rule matches however the op is spelled, the kernels' values
under Triton's interpreter against torch in float64 (a fresh process: the interpreter is
chosen when kernels are decorated), a BatchNorm's running statistics after several calls,
and the candidates they render."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from kernelopt_jupyter.agents.rewrites.canonical import canonicalize
from kernelopt_jupyter.agents.rewrites.family_kernels import (
    kernelopt_batch_norm,
    kernelopt_batch_norm_layer,
    kernelopt_pointwise_loss,
    kernelopt_row_loss,
)
from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes, trace
from kernelopt_jupyter.agents.rewrites.render import rewritten_source
from kernelopt_jupyter.agents.rewrites.rules import BY_NAME, foreign_compute
from kernelopt_jupyter.agents.rewrites.task import scan
from kernelopt_jupyter.agents.transforms import lift_launch_configs
from kernelopt_jupyter.candidate import is_dispatch_only
from kernelopt_jupyter.launch_configs import read_launch_configs
from kernelopt_jupyter.verify.static import analyze_candidate


class Loss(nn.Module):
    """A module whose forward is ``fn(self, *inputs)``; ``layer`` a loss layer it may call."""

    def __init__(self, fn: Callable[..., torch.Tensor], layer: nn.Module | None = None) -> None:
        super().__init__()
        self.fn, self.layer = fn, layer

    def forward(self, a, b, c=None):
        if self.fn.__code__.co_argcount == 3:  # fn(m, a, b): a loss of two operands
            return self.fn(self, a, b)
        return self.fn(self, a, b, c)


def _rewrite(model: nn.Module, inputs: list[torch.Tensor], rule: str) -> tuple[Any, int]:
    gm = trace(model)
    assert propagate_shapes(gm, inputs)
    canonicalize(gm)
    return gm, BY_NAME[rule].apply(gm)


def _pair(shape: tuple[int, ...] = (6, 5)) -> list[torch.Tensor]:
    return [torch.randn(shape), torch.randn(shape)]


def _probabilities() -> list[torch.Tensor]:
    return [torch.rand(6, 5).softmax(-1), torch.rand(6, 5).softmax(-1)]


def _classes() -> list[torch.Tensor]:
    return [torch.randn(6, 5), torch.randint(0, 5, (6,))]


def _triplet() -> list[torch.Tensor]:
    return [torch.randn(6, 5), torch.randn(6, 5), torch.randn(6, 5)]


#: name -> (module, inputs, the kernel's form, its reduction): each spelling of each loss.
_LOSSES: dict[str, tuple[nn.Module, Callable[[], list[torch.Tensor]], str, str]] = {
    "mse, written as KernelBench does": (
        Loss(lambda m, p, t: torch.mean((p - t) ** 2)), _pair, "mse", "mean"),
    "mse, square summed": (Loss(lambda m, p, t: (p - t).square().sum()), _pair, "mse", "sum"),
    "mse, function": (Loss(lambda m, p, t: F.mse_loss(p, t)), _pair, "mse", "mean"),
    "mse, layer": (Loss(lambda m, p, t: m.layer(p, t), nn.MSELoss(reduction="sum")), _pair,
                   "mse", "sum"),
    "l1, written": (Loss(lambda m, p, t: (p - t).abs().mean()), _pair, "l1", "mean"),
    "l1, layer": (Loss(lambda m, p, t: m.layer(p, t), nn.L1Loss()), _pair, "l1", "mean"),
    "smooth l1, function (KernelBench)": (
        Loss(lambda m, p, t: F.smooth_l1_loss(p, t)), _pair, "smooth_l1", "mean"),
    "smooth l1, layer with beta": (
        Loss(lambda m, p, t: m.layer(p, t), nn.SmoothL1Loss(beta=0.5)), _pair, "smooth_l1",
        "mean"),
    "huber, function": (Loss(lambda m, p, t: F.huber_loss(p, t, delta=2.0, reduction="sum")),
                        _pair, "huber", "sum"),
    "huber, layer": (Loss(lambda m, p, t: m.layer(p, t), nn.HuberLoss()), _pair, "huber", "mean"),
    "hinge, written as KernelBench does": (
        Loss(lambda m, p, t: torch.mean(torch.clamp(1 - p * t, min=0))),
        lambda: [torch.randn(6, 5), torch.randn(5)], "hinge", "mean"),
    "hinge, relu of a margin": (
        Loss(lambda m, p, t: F.relu(0.5 - t * p).sum()),
        lambda: [torch.randn(6, 5), torch.randn(6, 1)], "hinge", "sum"),
    "kl, function of a log (KernelBench)": (
        Loss(lambda m, p, t: F.kl_div(torch.log(p), t, reduction="batchmean")), _probabilities,
        "kl", "batchmean"),
    "kl, layer of log-probabilities": (
        Loss(lambda m, p, t: m.layer(p, t), nn.KLDivLoss(reduction="sum", log_target=True)),
        lambda: [x.log() for x in _probabilities()], "kl_log_target", "sum"),
    "cross entropy, function": (
        Loss(lambda m, x, y: F.cross_entropy(x, y)), _classes, "cross_entropy", "mean"),
    "cross entropy, layer": (
        Loss(lambda m, x, y: m.layer(x, y), nn.CrossEntropyLoss(ignore_index=2,
                                                                reduction="sum")),
        _classes, "cross_entropy", "sum"),
    "cross entropy, nll of a log-softmax": (
        Loss(lambda m, x, y: F.nll_loss(F.log_softmax(x, dim=1), y)), _classes,
        "cross_entropy", "mean"),
    "cross entropy, over pixels": (
        Loss(lambda m, x, y: F.cross_entropy(x, y)),
        lambda: [torch.randn(2, 5, 3, 4), torch.randint(0, 5, (2, 3, 4))], "cross_entropy",
        "mean"),
    "cosine, written as KernelBench does": (
        Loss(lambda m, p, t: torch.mean(1 - F.cosine_similarity(p, t, dim=1))), _pair,
        "cosine", "mean"),
    "cosine, layer summed": (
        Loss(lambda m, p, t: (1 - m.layer(p, t)).sum(), nn.CosineSimilarity(dim=-1, eps=1e-6)),
        _pair, "cosine", "sum"),
    "triplet, layer (KernelBench)": (
        Loss(lambda m, a, p, n: m.layer(a, p, n), nn.TripletMarginLoss(margin=1.0)), _triplet,
        "triplet", "mean"),
    "triplet, function": (
        Loss(lambda m, a, p, n: F.triplet_margin_loss(a, p, n, margin=0.3, reduction="sum")),
        _triplet, "triplet", "sum"),
    "triplet, written with distances": (
        Loss(lambda m, a, p, n: torch.clamp(
            F.pairwise_distance(a, p) - F.pairwise_distance(a, n) + 1.0, min=0).mean()),
        _triplet, "triplet", "mean"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(_LOSSES))
def test_the_loss_rule_takes_every_spelling_and_leaves_no_other_compute(name: str) -> None:
    model, inputs, form, reduction = _LOSSES[name]
    gm, n = _rewrite(model, inputs(), "loss_kernel")
    assert n == 1
    assert foreign_compute(gm) is None  # the elementwise terms and the reduction went with it
    (call,) = [
        node
        for node in gm.graph.nodes
        if node.target in (kernelopt_pointwise_loss, kernelopt_row_loss)
    ]
    if call.target is kernelopt_pointwise_loss:
        assert call.args[2] == form and call.args[5] == reduction
    else:
        assert call.args[4] == form and call.args[7] == reduction


_NOT_LOSSES: dict[str, tuple[nn.Module, Callable[[], list[torch.Tensor]]]] = {
    # Options the kernels do not compute stay with the vendor.
    "no reduction": (Loss(lambda m, p, t: F.mse_loss(p, t, reduction="none")), _pair),
    "class weights": (
        Loss(lambda m, x, y: m.layer(x, y), nn.CrossEntropyLoss(weight=torch.ones(5))), _classes),
    "label smoothing": (Loss(lambda m, x, y: F.cross_entropy(x, y, label_smoothing=0.1)),
                        _classes),
    "class probabilities": (Loss(lambda m, x, y: F.cross_entropy(x, y.softmax(1))), _pair),
    "triplet with swap": (
        Loss(lambda m, a, p, n: F.triplet_margin_loss(a, p, n, swap=True)), _triplet),
    "triplet of 1-norms": (Loss(lambda m, a, p, n: F.triplet_margin_loss(a, p, n, p=1)), _triplet),
    "a mean over one dimension": (Loss(lambda m, p, t: ((p - t) ** 2).mean(1)), _pair),
    "doubles": (Loss(lambda m, p, t: F.mse_loss(p, t)), lambda: [x.double() for x in _pair()]),
    "operands repeating along dimensions apart": (
        Loss(lambda m, p, t: torch.clamp(1 - p * t, min=0).mean()),
        lambda: [torch.randn(6, 1, 5), torch.randn(1, 4, 1)]),
    "a cube": (Loss(lambda m, p, t: ((p - t) ** 3).mean()), _pair),
}  # fmt: skip


@pytest.mark.parametrize("name", list(_NOT_LOSSES))
def test_what_the_loss_kernels_do_not_compute_stays_as_written(name: str) -> None:
    model, inputs = _NOT_LOSSES[name]
    _, n = _rewrite(model, inputs(), "loss_kernel")
    assert n == 0


def test_the_loss_wrappers_give_the_shape_on_the_meta_device() -> None:
    a, b = torch.empty(7, 3, device="meta"), torch.empty(3, device="meta")
    out = kernelopt_pointwise_loss(a, b, "hinge", 1.0, False, "mean")
    assert out.device.type == "meta" and out.shape == () and out.dtype == a.dtype
    t = torch.empty(7, dtype=torch.int64, device="meta")
    out = kernelopt_row_loss(a.half(), t, None, 1, "cross_entropy", -100, 0.0, "sum")
    assert out.shape == () and out.dtype == torch.half


# --------------------------------------------------------------------------- batch norm


class Batch(nn.Module):
    def __init__(self, layer: nn.Module | None = None, fn: Any = None) -> None:
        super().__init__()
        self.layer, self.fn = layer, fn
        self.register_buffer("mean", torch.zeros(6))
        self.register_buffer("var", torch.ones(6))
        self.w, self.b = nn.Parameter(torch.randn(6)), nn.Parameter(torch.randn(6))

    def forward(self, x):
        return self.fn(self, x) if self.fn is not None else self.layer(x)


def _hooked(layer: nn.Module) -> nn.Module:
    layer.register_forward_hook(lambda module, args, out: None)
    return layer


_BATCH_NORMS: list[tuple[str, nn.Module, tuple[int, ...], int]] = [
    ("2d layer (KernelBench)", Batch(nn.BatchNorm2d(6)), (4, 6, 5, 7), 1),
    ("1d layer of vectors", Batch(nn.BatchNorm1d(6, momentum=None)), (9, 6), 1),
    ("1d layer of sequences", Batch(nn.BatchNorm1d(6, affine=False)), (3, 6, 11), 1),
    ("3d layer", Batch(nn.BatchNorm3d(6, track_running_stats=False)), (2, 6, 3, 4, 5), 1),
    ("function, training", Batch(fn=lambda m, x: F.batch_norm(
        x, m.mean, m.var, m.w, m.b, training=True, momentum=0.2)), (4, 6, 5, 7), 1),
    ("function, no statistics", Batch(fn=lambda m, x: F.batch_norm(
        x, None, None, training=True)), (4, 6, 5), 1),
    ("function, evaluation", Batch(fn=lambda m, x: F.batch_norm(x, m.mean, m.var)), (4, 6), 1),
    ("a layer with a hook", Batch(_hooked(nn.BatchNorm2d(6))), (4, 6, 5, 7), 0),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "model", "shape", "sites"), _BATCH_NORMS, ids=[b[0] for b in _BATCH_NORMS]
)
def test_the_batch_norm_rule_takes_layers_and_functions(
    name: str, model: nn.Module, shape: tuple[int, ...], sites: int
) -> None:
    gm, n = _rewrite(model, [torch.randn(shape)], "batch_norm_kernel")
    assert n == sites
    if sites:
        assert foreign_compute(gm) is None
        wrappers = (kernelopt_batch_norm, kernelopt_batch_norm_layer)
        assert [node.target in wrappers for node in gm.graph.nodes].count(True) == 1


def test_the_batch_norm_wrapper_gives_the_shape_on_the_meta_device() -> None:
    layer = nn.BatchNorm2d(3, device="meta")
    x = torch.empty(2, 3, 4, 5, device="meta", dtype=torch.float16)
    out = kernelopt_batch_norm_layer(x, layer)
    assert out.device.type == "meta" and out.shape == x.shape and out.dtype == x.dtype


def test_a_meta_call_leaves_the_layer_as_it_was() -> None:
    # Shapes are propagated on meta tensors: the real layer's statistics and counter stay.
    layer = nn.BatchNorm1d(3)
    kernelopt_batch_norm_layer(torch.empty(4, 3, device="meta"), layer)
    assert int(layer.num_batches_tracked) == 0 and torch.equal(layer.running_var, torch.ones(3))


# --------------------------------------------------------------------------- values

_CHECK = textwrap.dedent(
    """
    import copy, json, sys
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from kernelopt_jupyter.agents.rewrites import family_kernels as fk

    torch.manual_seed(0)
    results = []

    def err(got, want):
        same = tuple(got.shape) == tuple(want.shape)
        return float((got.double() - want).abs().max() / max(1.0, float(want.abs().max())))

    # Pointwise losses, each reduction, operands full or repeating along a block of dims.
    terms = {
        "mse": lambda a, b: (a - b) ** 2,
        "l1": lambda a, b: (a - b).abs(),
        "smooth_l1": lambda a, b: F.smooth_l1_loss(a, b, reduction="none", beta=0.7),
        "huber": lambda a, b: F.huber_loss(a, b, reduction="none", delta=0.7),
        "hinge": lambda a, b: torch.clamp(0.7 - a * b, min=0),
        "kl": lambda a, b: F.kl_div(a, b, reduction="none"),
        "kl_log_target": lambda a, b: F.kl_div(a, b, reduction="none", log_target=True),
    }
    for a_shape, b_shape in json.loads(sys.argv[1]):
        for form, term in terms.items():
            for reduction in ("mean", "sum", "batchmean"):
                a, b = torch.randn(a_shape), torch.randn(b_shape)
                log_a = form == "kl"
                if form.startswith("kl"):
                    a = a.softmax(-1) if log_a else a.log_softmax(-1)
                    b = b.softmax(-1) if form == "kl" else b.log_softmax(-1)
                got = fk.kernelopt_pointwise_loss(a, b, form, 0.7, log_a, reduction)
                full = term(a.double().log() if log_a else a.double(), b.double())
                shape = torch.broadcast_shapes(a.shape, b.shape)
                want = {"mean": full.mean(), "sum": full.sum(),
                        "batchmean": full.sum() / (shape[0] if len(shape) else 1)}[reduction]
                results.append([form, a_shape, b_shape, reduction, err(got, want)])
    x = torch.randn(40, 33).half()
    got = fk.kernelopt_pointwise_loss(x, x.flip(0), "mse", 0.0, False, "mean")
    want = ((x.double() - x.flip(0).double()) ** 2).mean()
    results.append(["half", [40, 33], [40, 33], "mean", err(got, want) / 1000])  # half ulp

    # Row losses: rows along the last or a middle dimension, several tiles along a row.
    for shape, dim in json.loads(sys.argv[2]):
        for reduction in ("mean", "sum"):
            x = torch.randn(shape) * 3
            classes = list(shape[:dim]) + list(shape[dim + 1:])
            y = torch.randint(0, shape[dim], classes)
            y.view(-1)[1::3] = -100  # ignored rows: out of the sum and of the mean's count
            got = fk.kernelopt_row_loss(x, y, None, dim, "cross_entropy", -100, 0.0, reduction)
            want = F.cross_entropy(x.double(), y, reduction=reduction)
            results.append(["cross_entropy", shape, dim, reduction, err(got, want)])
            z = torch.randn(shape)
            got = fk.kernelopt_row_loss(x, z, None, dim, "cosine", 0.0, 1e-8, reduction)
            cos = 1 - F.cosine_similarity(x.double(), z.double(), dim=dim)
            want = cos.mean() if reduction == "mean" else cos.sum()
            results.append(["cosine", shape, dim, reduction, err(got, want)])
            if dim == len(shape) - 1 and len(shape) <= 2:
                n = torch.randn(shape)
                got = fk.kernelopt_row_loss(x, z, n, dim, "triplet", 1.5, 1e-6, reduction)
                want = F.triplet_margin_loss(
                    x.double(), z.double(), n.double(), margin=1.5, reduction=reduction
                )
                results.append(["triplet", shape, dim, reduction, err(got, want)])
    x, y = torch.randn(7, 5), torch.full((7,), -100)
    got = fk.kernelopt_row_loss(x, y, None, 1, "cross_entropy", -100, 0.0, "mean")
    results.append(["all ignored: nan", [7, 5], 1, "mean", 0.0 if got.isnan() else 1.0])

    # Batch norm: training (the running statistics after two calls too) and evaluation,
    # channels whole or split across programs (parts of at least 16 values, up to 3).
    for split in (False, True):
        fk.NORM_MIN_PROGRAMS = 10**9 if split else 1
        fk.NORM_MIN_CHUNK, fk.NORM_MAX_PARTS = 16, 3
        for shape, momentum, affine in json.loads(sys.argv[3]):
            cls = {2: nn.BatchNorm1d, 3: nn.BatchNorm1d, 4: nn.BatchNorm2d, 5: nn.BatchNorm3d}
            layer = cls[len(shape)](shape[1], momentum=momentum, affine=affine)
            with torch.no_grad():
                for t in [*layer.parameters(), layer.running_mean]:
                    t.copy_(torch.randn_like(t))
                layer.running_var.copy_(torch.rand_like(layer.running_var) + 0.5)
            ref, mine = copy.deepcopy(layer).double(), copy.deepcopy(layer)
            for step in range(2):
                x = torch.randn(shape) * 2 + 1
                got, want = fk.kernelopt_batch_norm_layer(x, mine), ref(x.double())
                key = [shape, momentum, split, step]
                results.append(["batch norm"] + key + [err(got, want)])
                results.append(["running mean"] + key + [err(mine.running_mean, ref.running_mean)])
                results.append(["running var"] + key + [err(mine.running_var, ref.running_var)])
                same = int(mine.num_batches_tracked) == int(ref.num_batches_tracked) == step + 1
                results.append(["batch count"] + key + [0.0 if same else 1.0])
            mine.eval(), ref.eval()
            x = torch.randn(shape)
            got, want = fk.kernelopt_batch_norm_layer(x, mine), ref(x.double())
            results.append(["batch norm, evaluation", shape, momentum, split, 2, err(got, want)])
    x = torch.randn(5, 4, 9)
    got = fk.kernelopt_batch_norm(x, None, None, None, None, True, 0.1, 1e-3)
    want = F.batch_norm(x.double(), None, None, training=True, eps=1e-3)
    results.append(["batch norm, no statistics", [5, 4, 9], None, False, 0, err(got, want)])
    print(json.dumps(results))
    """
)


def test_the_loss_and_batch_norm_kernels_equal_torch_under_the_interpreter() -> None:
    pointwise = [
        ((37, 53), (37, 53)),  # the same shape
        ((6, 700), (700,)),  # the last dims repeated along the rows (KernelBench's hinge)
        ((9, 9000), (9000,)),  # the same, rows in blocks and columns in parts
        ((5, 9, 3), (5, 1, 1)),  # one value per leading index
        ((3, 4, 5), (4, 1)),  # a middle dimension
        ((6, 1), (1, 5)),  # each repeating along the other's dimension
        ((4100,), ()),  # a scalar; two programs of the partial sums
        ((1,), (1,)),
    ]
    rows = [
        ((13, 2100), 1),  # three tiles along each row
        ((6, 7, 5), 1),  # a middle dimension: columns side by side
        ((3, 5, 4, 4), 1),  # pixels of an image
        ((1, 9), 1),
    ]
    batch_norms = [
        ((8, 6, 5, 7), 0.1, True),
        ((33, 20), 0.3, True),  # one value per channel: channels side by side
        ((4, 3, 11), None, False),  # the cumulative average, no weight or bias
        ((2, 5, 40, 50), 0.1, True),  # channels of 4000 values: whole, or in 3 parts
        ((2, 3, 2, 3, 4), 0.5, True),
    ]
    out = subprocess.run(
        [sys.executable, "-c", _CHECK, *(json.dumps(c) for c in (pointwise, rows, batch_norms))],
        capture_output=True,
        text=True,
        env={**os.environ, "TRITON_INTERPRET": "1"},
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    results = json.loads(out.stdout.strip().splitlines()[-1])
    triplets = 2 * sum(dim == len(shape) - 1 and len(shape) <= 2 for shape, dim in rows)
    pointwise_n = 7 * 3 * len(pointwise) + 1
    assert (
        len(results)
        == pointwise_n + 2 * 2 * len(rows) + triplets + 1 + 2 * len(batch_norms) * 9 + 1
    )
    for *case, error in results:
        assert error < 2e-6, case


# --------------------------------------------------------------------------- candidates

_SOURCE = "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    pass\n"

_CANDIDATES = [
    (_LOSSES["kl, function of a log (KernelBench)"], "loss_kernel",
     ["own_pointwise_loss_kernel", "own_loss_sum_kernel"]),
    (_LOSSES["cross entropy, function"], "loss_kernel",
     ["own_row_loss_kernel", "own_loss_sum_kernel"]),
    ((Batch(nn.BatchNorm2d(6)), lambda: [torch.randn(4, 6, 5, 7)], "", ""), "batch_norm_kernel",
     ["own_batch_norm_stats_kernel", "own_batch_norm_kernel"]),
]  # fmt: skip


@pytest.mark.parametrize(("case", "rule", "kernels"), _CANDIDATES, ids=["pointwise", "row", "bn"])
def test_each_candidate_gives_the_tuner_its_block_and_warps(
    case: Any, rule: str, kernels: list[str]
) -> None:
    model, inputs, *_ = case
    gm, n = _rewrite(model, inputs(), rule)
    assert n == 1
    source = rewritten_source(_SOURCE, gm, "none", [rule], candidate=True)
    assert not is_dispatch_only(source)
    lifted = lift_launch_configs(source)
    configs = read_launch_configs(lifted)
    for kernel in kernels:
        assert {"BLOCK", "num_warps"} <= set(configs[kernel]), configs
    assert analyze_candidate(lifted).violations == []
    compile(lifted, "candidate", "exec")


# --------------------------------------------------------------------------- whole problems

_PROBLEM = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
    {init}

        def forward(self, {args}):
            return {body}


    def get_inputs():
        return [{inputs}]


    def get_init_inputs():
        return []
    """
)

#: Problems in KernelBench's shape, each a loss or BatchNorm spelled otherwise than the
#: sample's problem of that family does (a layer where it calls a function, and the reverse).
_RESPELLED = {
    "smooth l1 as a layer": (
        "        self.loss = nn.SmoothL1Loss()", "p, t", "self.loss(p, t)",
        "torch.rand(64, 33), torch.rand(64, 33)", "loss_kernel"),
    "kl divergence as a layer": (
        "        self.kl = nn.KLDivLoss(reduction='batchmean')", "p, t", "self.kl(p.log(), t)",
        "torch.rand(8, 40).softmax(-1), torch.rand(8, 40).softmax(-1)", "loss_kernel"),
    "hinge of a relu": (
        "        pass", "p, t", "F.relu(1.0 - t * p).mean()",
        "torch.rand(16, 16), torch.randint(0, 2, (16,)).float() * 2 - 1", "loss_kernel"),
    "mse of Pareto draws (KernelBench's inputs)": (
        "        pass", "p, t", "F.mse_loss(p, t)",
        "torch.distributions.Pareto(0.01, 1.5).sample((16, 16)), torch.rand(16, 16)",
        "loss_kernel"),
    "batch norm as a function": (
        "        self.bn = nn.BatchNorm2d(3)", "x",
        "F.batch_norm(x, self.bn.running_mean, self.bn.running_var, self.bn.weight, "
        "self.bn.bias, True, 0.1, 1e-5)",
        "torch.rand(4, 3, 8, 8)", "batch_norm_kernel"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(_RESPELLED))
def test_the_rules_offer_their_kernel_on_respelled_problems(name: str) -> None:
    init, args, body, inputs, rule = _RESPELLED[name]
    source = _PROBLEM.format(init=init, args=args, body=body, inputs=inputs)
    validating = torch.distributions.Distribution._validate_args
    found = scan(source, "<respelled>")
    offered = [m for m in found.matches if m.names == [rule] and m.kernels]
    assert offered, found.error
    # The scan draws meta inputs with the distributions' argument checks off, then back on.
    assert torch.distributions.Distribution._validate_args == validating
    assert not is_dispatch_only(offered[0].eager_source)


_VERIFY_PROBLEM = _PROBLEM.format(
    init="        self.bn = nn.BatchNorm2d(3)",
    args="x",
    body="self.bn(x)",
    inputs="torch.rand(4, 3, 6, 5) * 3 + 1",
)


def test_a_batch_norm_candidate_passes_the_verifier_with_its_running_statistics() -> None:
    # The verifier compares the module's state after the calls with the reference's: the
    # running statistics and the batch counter must move exactly as torch moves them.
    from kernelopt_jupyter.problem import problem_from_source
    from kernelopt_jupyter.verify import verify_candidate
    from kernelopt_jupyter.verify.report import VerifyOptions

    found = scan(_VERIFY_PROBLEM, "<batch norm>")
    (match,) = [m for m in found.matches if m.names == ["batch_norm_kernel"]]
    problem = problem_from_source(_VERIFY_PROBLEM, "<batch norm>")
    report = verify_candidate(problem, match.eager_source, VerifyOptions(device="cpu"))
    gates = {g.name: g for g in report.gates}
    assert gates["correctness"].passed, gates["correctness"].detail
    assert gates["fp64"].passed, gates["fp64"].detail
