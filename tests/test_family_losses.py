"""KernelOPT's loss and batch-norm kernels (``family_kernels.py``) and their rules
(``family_rules.py``): what each rule matches however the op is spelled, the kernels' values
under Triton's interpreter against torch in float64 (a fresh process: the interpreter is
chosen when kernels are decorated), a BatchNorm's running statistics after several calls,
and the candidates they render."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from _family import check_tunable_candidate, interpret, rewrite

from kernelopt_jupyter.agents.rewrites.family_kernels import (
    kernelopt_batch_norm,
    kernelopt_batch_norm_layer,
    kernelopt_pointwise_loss,
    kernelopt_row_loss,
)
from kernelopt_jupyter.agents.rewrites.rules import foreign_compute
from kernelopt_jupyter.agents.rewrites.task import scan
from kernelopt_jupyter.candidate import is_dispatch_only


class Loss(nn.Module):
    """A module whose forward is ``fn(self, *inputs)``; ``layer`` a loss layer it may call."""

    def __init__(self, fn: Callable[..., torch.Tensor], layer: nn.Module | None = None) -> None:
        super().__init__()
        self.fn, self.layer = fn, layer

    def forward(self, a, b, c=None):
        if self.fn.__code__.co_argcount == 3:  # fn(m, a, b): a loss of two operands
            return self.fn(self, a, b)
        return self.fn(self, a, b, c)


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


#: Losses written out with torch ops, as source (the interpreter check below runs them in a
#: fresh process): name -> (``lambda m, a, b: ...``, the inputs' kind, the kernel's form,
#: its reduction). Kinds: "kl" (log-probabilities, then probabilities), "probabilities"
#: (two tensors of probabilities), "classes" (logits,
#: then class indices), "pair" (two tensors of one shape).
_WRITTEN: dict[str, tuple[str, str, str, str]] = {
    "kl, sum over the batch size": (
        "lambda m, q, p: (p * (p.log() - q)).sum() / p.size(0)", "kl", "kl_written",
        "batchmean"),
    "kl, torch.sum": (
        "lambda m, q, p: torch.sum(p * (torch.log(p) - q))", "kl", "kl_written", "sum"),
    "kl, mean, factors swapped": (
        "lambda m, q, p: torch.mean((torch.log(p) - q) * p)", "kl", "kl_written", "mean"),
    "kl, mean of the rows' sums": (
        "lambda m, q, p: (p * (p.log() - q)).sum(dim=1).mean()", "kl", "kl_written",
        "batchmean"),
    "kl, sum over the element count": (
        "lambda m, q, p: torch.sum(p * (p.log() - q)) / q.numel()", "kl", "kl_written",
        "mean"),
    "kl, of probabilities' ratio": (
        "lambda m, q, p: (p * torch.log(p / q)).sum() / q.shape[0]", "probabilities",
        "kl_written", "batchmean"),
    "cross entropy, gather of a log-softmax": (
        "lambda m, x, y: -F.log_softmax(x, dim=1).gather(1, y[:, None]).mean()", "classes",
        "cross_entropy", "mean"),
    "cross entropy, gather of log(softmax)": (
        "lambda m, x, y: -torch.log(torch.softmax(x, -1)).gather(1, y.unsqueeze(1)).squeeze(1)"
        ".sum()", "classes", "cross_entropy", "sum"),
    "cross entropy, negated terms over the batch": (
        "lambda m, x, y: torch.sum(-torch.gather(x.log_softmax(-1), -1, y.view(-1, 1)))"
        " / x.size(0)", "classes", "cross_entropy", "mean"),
    "cross entropy, mean of the rows' sums": (
        "lambda m, x, y: -F.log_softmax(x, 1).gather(1, y[:, None]).sum(1).mean()", "classes",
        "cross_entropy", "mean"),
    "huber, torch.where": (
        "lambda m, a, b: torch.where(torch.abs(a - b) < 0.7, 0.5 * (a - b) * (a - b), "
        "0.7 * (torch.abs(a - b) - 0.5 * 0.7)).mean()", "pair", "huber", "mean"),
    "huber, shared difference, squares of |d|": (
        "lambda m, a, b: (lambda d: torch.where(d.abs() < 2.0, d.abs() ** 2 * 0.5, "
        "(d.abs() - 1.0) * 2.0).sum())(b - a)", "pair", "huber", "sum"),
    "smooth l1, torch.where": (
        "lambda m, a, b: (lambda d: torch.where(d.abs() < 0.5, 0.5 * d.pow(2) / 0.5, "
        "d.abs() - 0.25).mean())(a - b)", "pair", "smooth_l1", "mean"),
    # Smooth L1 of beta 1 is Huber of delta 1: the kernel's Huber form computes it.
    "smooth l1, beta of one, reversed test": (
        "lambda m, a, b: (lambda d: torch.where(1.0 > torch.abs(d), 0.5 * d * d, "
        "torch.abs(d) - 0.5).mean())(a - b)", "pair", "huber", "mean"),
}  # fmt: skip
_KINDS: dict[str, Callable[[], list[torch.Tensor]]] = {
    "kl": lambda: [torch.rand(6, 5).log_softmax(-1), torch.rand(6, 5).softmax(-1)],
    "probabilities": _probabilities,
    "classes": _classes,
    "pair": _pair,
}
for _name, (_fn, _kind, _form, _reduction) in _WRITTEN.items():
    _LOSSES[_name] = (Loss(eval(_fn)), _KINDS[_kind], _form, _reduction)


@pytest.mark.parametrize("name", list(_LOSSES))
def test_the_loss_rule_takes_every_spelling_and_leaves_no_other_compute(name: str) -> None:
    model, inputs, form, reduction = _LOSSES[name]
    gm, n = rewrite(model, inputs(), "loss_kernel")
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
    # Near-misses of the written losses: one change each, and the value is not the loss's.
    "kl with the log of the wrong operand": (
        Loss(lambda m, q, p: (p * (q.log() - q)).sum() / p.size(0)), _KINDS["kl"]),
    "kl with the difference reversed": (
        Loss(lambda m, q, p: (p * (q - p.log())).sum()), _KINDS["kl"]),
    "cross entropy not negated": (
        Loss(lambda m, x, y: F.log_softmax(x, 1).gather(1, y[:, None]).mean()), _classes),
    "log-softmax over the other dimension": (
        Loss(lambda m, x, y: -F.log_softmax(x, 0).gather(1, y[:, None]).mean()), _classes),
    "huber without the half in the far branch": (
        Loss(lambda m, a, b: torch.where(torch.abs(a - b) < 0.7, 0.5 * (a - b) * (a - b),
                                         0.7 * (torch.abs(a - b) - 0.7)).mean()), _pair),
    "huber with the test at another threshold": (
        Loss(lambda m, a, b: torch.where(torch.abs(a - b) < 1.0, 0.5 * (a - b) ** 2,
                                         0.7 * (torch.abs(a - b) - 0.35)).mean()), _pair),
    "huber with the square of another difference": (
        Loss(lambda m, a, b: torch.where(torch.abs(a - b) < 0.7, 0.5 * (a + b) ** 2,
                                         0.7 * (torch.abs(a - b) - 0.35)).mean()), _pair),
}  # fmt: skip


@pytest.mark.parametrize("name", list(_NOT_LOSSES))
def test_what_the_loss_kernels_do_not_compute_stays_as_written(name: str) -> None:
    model, inputs = _NOT_LOSSES[name]
    _, n = rewrite(model, inputs(), "loss_kernel")
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
    gm, n = rewrite(model, [torch.randn(shape)], "batch_norm_kernel")
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
        # Values far from zero (spread 1 about 1000): the moments and x - mean run about a
        # pivot (the channel's first value), else their rounding at 1000's scale lands on
        # every normalised output (an error of about 2e-5; torch's float32 one is 1e-5).
        x = torch.randn(6, 4, 50, 45) + 1000
        got = fk.kernelopt_batch_norm(x, None, None, None, None, True, 0.1, 1e-5)
        want = F.batch_norm(x.double(), None, None, training=True, eps=1e-5)
        results.append(["batch norm, offset 1000", [6, 4, 50, 45], None, split, 0, err(got, want)])
    x = torch.randn(5, 4, 9)
    got = fk.kernelopt_batch_norm(x, None, None, None, None, True, 0.1, 1e-3)
    want = F.batch_norm(x.double(), None, None, training=True, eps=1e-3)
    results.append(["batch norm, no statistics", [5, 4, 9], None, False, 0, err(got, want)])
    print(json.dumps(results))
    """
)


@pytest.mark.slow
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
    results = interpret(_CHECK, pointwise, rows, batch_norms)
    triplets = 2 * sum(dim == len(shape) - 1 and len(shape) <= 2 for shape, dim in rows)
    pointwise_n = 7 * 3 * len(pointwise) + 1
    assert (
        len(results)
        == pointwise_n + 2 * 2 * len(rows) + triplets + 1 + 2 * (len(batch_norms) * 9 + 1) + 1
    )
    for *case, error in results:
        assert error < 2e-6, case


_WRITTEN_CHECK = textwrap.dedent(
    """
    import json, sys
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from kernelopt_jupyter.agents.rewrites.canonical import canonicalize
    from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes, trace
    from kernelopt_jupyter.agents.rewrites.rules import BY_NAME

    class Loss(nn.Module):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        def forward(self, a, b):
            return self.fn(self, a, b)

    def inputs(kind, rows, cols, zero):
        if kind == "kl":
            q, p = torch.randn(rows, cols).log_softmax(-1), torch.randn(rows, cols).softmax(-1)
            if zero:
                p[0, 0] = 0.0  # written out, 0 * log(0) is NaN: the kernel gives it too
            return [q, p]
        if kind == "probabilities":
            return [torch.randn(rows, cols).softmax(-1), torch.randn(rows, cols).softmax(-1)]
        if kind == "classes":
            return [torch.randn(rows, cols) * 3, torch.randint(0, cols, (rows,))]
        return [torch.randn(rows, cols), torch.randn(rows, cols)]

    torch.manual_seed(0)
    results = []
    for name, (fn, kind, rows, cols, zero) in json.loads(sys.argv[1]).items():
        model = Loss(eval(fn))
        xs = inputs(kind, rows, cols, zero)
        gm = trace(model)
        assert propagate_shapes(gm, xs)
        canonicalize(gm)
        sites = BY_NAME["loss_kernel"].apply(gm)
        got = gm(*xs)
        want = model(*[x.double() if x.is_floating_point() else x for x in xs])
        if bool(want.isnan()):
            err = 0.0 if bool(got.isnan()) else 1.0
        else:
            err = float((got.double() - want).abs() / max(1.0, float(want.abs())))
        results.append([name, rows, cols, sites, err])
    print(json.dumps(results))
    """
)


def test_the_written_losses_equal_torch_under_the_interpreter() -> None:
    # Odd sizes: rows and columns off any block, several programs' partial sums for the
    # pointwise losses, a row of classes in several tiles for the cross entropy.
    sizes = {"kl": [(37, 53, False), (129, 7, True)], "probabilities": [(37, 53, False)],
             "pair": [(37, 53, False), (3, 4099, False)],
             "classes": [(37, 53, False), (5, 2100, False)]}  # fmt: skip
    cases = {
        f"{name} {rows}x{cols}": (fn, kind, rows, cols, zero)
        for name, (fn, kind, _, _) in _WRITTEN.items()
        for rows, cols, zero in sizes[kind]
    }
    results = interpret(_WRITTEN_CHECK, cases)
    assert len(results) == len(cases)
    for name, _rows, _cols, sites, error in results:
        assert sites == 1 and error < 1e-5, name


# --------------------------------------------------------------------------- candidates

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
    gm, n = rewrite(model, inputs(), rule)
    assert n == 1
    check_tunable_candidate(gm, rule, kernels)


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
