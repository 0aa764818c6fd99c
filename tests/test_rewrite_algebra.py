"""The rewrite rules fire however an op is spelled (agents/rewrites/canonical.py), and the
exact-algebra rules hold: each table lists spellings of one model that must all fire, each
rewritten graph checked against the reference in float64 on random inputs at odd sizes, and
models where the rule must stay quiet."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from kernelopt_jupyter.agents.rewrites.canonical import canonicalize
from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes, trace
from kernelopt_jupyter.agents.rewrites.rules import BY_NAME
from kernelopt_jupyter.agents.rewrites.task import scan
from kernelopt_jupyter.candidate import is_dispatch_only

N, M, K = 127, 129, 131


class _Model(nn.Module):
    def __init__(self, fn: Callable[..., Any], parts: dict[str, Any]) -> None:
        super().__init__()
        self.fn = fn
        for name, part in parts.items():
            setattr(self, name, part)


class _One(_Model):
    def forward(self, x: Any) -> Any:
        return self.fn(self, x)


class _Two(_Model):
    def forward(self, x: Any, y: Any) -> Any:
        return self.fn(self, x, y)


class _Three(_Model):
    def forward(self, x: Any, y: Any, z: Any) -> Any:
        return self.fn(self, x, y, z)


def Fn(fn: Callable[..., Any], **parts: Any) -> nn.Module:
    """A model whose forward is ``fn(self, *inputs)``, with the given layers and parameters."""
    arity = fn.__code__.co_argcount - 1
    return {1: _One, 2: _Two, 3: _Three}[arity](fn, parts)


def _canonical(model: nn.Module, inputs: list[Any]) -> Any:
    gm = trace(model)
    assert propagate_shapes(gm, inputs)
    canonicalize(gm)
    return gm


def _fires(model: nn.Module, inputs: list[Any], rule: str, *, exact: bool, sites: int = 1) -> Any:
    """Apply ``rule`` after canonicalization; it must change ``sites`` sites and keep the
    result (bit for bit where the rule says bit-exact, else to float64 rounding)."""
    model = model.double().eval()
    inputs = [x.double() if x.is_floating_point() else x for x in inputs]
    gm = _canonical(model, inputs)
    assert BY_NAME[rule].apply(gm) == sites, gm.code
    with torch.no_grad():
        want, got = model(*inputs), gm(*inputs)
    if exact:
        assert torch.equal(got, want)
    else:
        torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)
    return gm


def _quiet(model: nn.Module, inputs: list[Any], rule: str) -> None:
    model = model.double().eval()
    inputs = [x.double() for x in inputs]
    assert BY_NAME[rule].apply(_canonical(model, inputs)) == 0


def _randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, dtype=torch.float64)


torch.manual_seed(0)

# --------------------------------------------------------------------------- canonicalization


def test_canonicalization_alone_changes_no_result_and_leaves_one_spelling() -> None:
    def many(m: Any, x: Any, y: Any) -> Any:
        return (
            x.mm(y.t()) + torch.mm(x, y.T) + x @ y.mT + torch.matmul(x, y.transpose(0, 1)),
            x.sum(dim=1) + torch.sum(x, 1) + x.sum(1, keepdim=False) + x.sum(-1),
            torch.max(x, 1)[0] + x.max(dim=1).values + torch.amax(x, -1) + x.amax([1]),
            m.relu(x) + F.relu(x) + x.relu() + x.clamp(min=0) + torch.clamp_min(x, 0.0),
            m.softmax(x) + F.softmax(x, dim=-1) + x.softmax(1) + torch.softmax(x, 1),
            x.mul(2) + torch.mul(x, 2) + x.div(3) + torch.div(x, 3) + x.neg() + x.exp(),
            F.hardtanh(x) + F.relu6(x) + m.leaky(x) + m.tanh(x) + F.tanh(x) + x.sigmoid(),
            m.pool(x[None]) + F.max_pool2d(x[None], 2),
            F.avg_pool2d(x[None], 3, padding=1),
        )

    model = Fn(
        many,
        relu=nn.ReLU(),
        softmax=nn.Softmax(dim=1),
        leaky=nn.LeakyReLU(0.2),
        tanh=nn.Tanh(),
        pool=nn.MaxPool2d(2),
    )
    x, y = _randn(N, M), _randn(K, M)
    gm = _canonical(model, [x, y])
    for want, got in zip(model(x, y), gm(x, y), strict=True):
        assert torch.equal(got, want)
    spelled = {n.target for n in gm.graph.nodes if n.op in ("call_function", "call_method")}
    assert torch.matmul in spelled and torch.transpose in spelled
    assert not spelled & {torch.mm, operator.matmul, "mm", "t", "sum", "max", "relu", "mul"}
    assert not spelled & {F.relu, F.softmax, torch.clamp_min, torch.div, torch.mul, F.relu6}
    assert not [n for n in gm.graph.nodes if n.op == "call_module"]  # all parameter-free


def test_an_einsum_matrix_product_is_a_matmul() -> None:
    def f(m: Any, a: Any, b: Any, c: Any) -> Any:
        return torch.einsum("ij,jk->ik", a, b) + torch.einsum("ij,kj->ik", a, c)

    a, b, c = _randn(N, M), _randn(M, K), _randn(K, M)
    model = Fn(f)
    gm = _canonical(model, [a, b, c])
    assert not [n for n in gm.graph.nodes if n.target is torch.einsum]
    torch.testing.assert_close(gm(a, b, c), model(a, b, c), rtol=1e-12, atol=1e-12)
    other = Fn(lambda m, a, b: torch.einsum("ij,ij->i", a, b))  # not a product: left alone
    gm = _canonical(other, [a, a])
    assert [n for n in gm.graph.nodes if n.target is torch.einsum]


def test_an_in_place_op_with_another_reader_keeps_its_spelling() -> None:
    def f(m: Any, x: Any) -> Any:
        y = x * 1.0
        z = F.relu(y, inplace=True)
        return z + y  # y reads the ReLU's result through the in-place write

    x = _randn(N, 3)
    gm = _canonical(Fn(f), [x])
    assert [n for n in gm.graph.nodes if n.target is F.relu]
    assert torch.equal(gm(x), Fn(f)(x))


def test_max_with_its_indices_read_stays_one_call() -> None:
    def f(m: Any, x: Any) -> Any:
        values, indices = torch.max(x, 1)
        return values + indices

    gm = _canonical(Fn(f), [_randn(N, 3)])
    assert not [n for n in gm.graph.nodes if n.target is torch.amax]


# --------------------------------------------------------------------------- GEMM structure

DIAG = {
    "@": lambda m, d, b: torch.diag(d) @ b,
    "matmul": lambda m, d, b: torch.matmul(torch.diag(d), b),
    "mm method": lambda m, d, b: d.diag().mm(b),
    "einsum": lambda m, d, b: torch.einsum("ij,jk->ik", torch.diag(d), b),
    "right": lambda m, d, b: b.T @ d.diag(0),
}


@pytest.mark.parametrize("spelling", DIAG)
def test_diag_matmul_fires_for_every_spelling(spelling: str) -> None:
    _fires(Fn(DIAG[spelling]), [_randn(N), _randn(N, M)], "diag_matmul", exact=spelling != "einsum")


TRIANGLE = {
    "torch.tril": lambda m, a, b: torch.tril(a @ b),
    "method": lambda m, a, b: a.mm(b).tril(),
    "keyword": lambda m, a, b: torch.matmul(a, b).triu(diagonal=1),
    "einsum": lambda m, a, b: torch.einsum("ij,jk->ik", a, b).tril(-2),
}


@pytest.mark.parametrize("spelling", TRIANGLE)
def test_triangular_matmul_fires_for_every_spelling(spelling: str) -> None:
    _fires(Fn(TRIANGLE[spelling]), [_randn(N, M), _randn(M, K)], "triangular_matmul", exact=False)


GRAM = {
    "@ .T": lambda m, a: a @ a.T,
    "mm .t()": lambda m, a: a.mm(a.t()),
    "transpose": lambda m, a: torch.matmul(a, a.transpose(1, 0)),
    "einsum": lambda m, a: torch.einsum("ik,jk->ij", a, a),
    "A^T A": lambda m, a: a.mT @ a,
}


@pytest.mark.parametrize("spelling", GRAM)
def test_symmetric_gram_fires_for_every_spelling(spelling: str) -> None:
    a = _randn(1031, 37) if spelling != "A^T A" else _randn(37, 1031)
    _fires(Fn(GRAM[spelling]), [a], "symmetric_gram", exact=False)


ATTENTION = {
    "div": lambda m, q, k, v: torch.softmax(q @ k.transpose(-2, -1) / 8.0, -1) @ v,
    "F, mT": lambda m, q, k, v: F.softmax(torch.matmul(q, k.mT) * 0.125, dim=-1).matmul(v),
    "method": lambda m, q, k, v: (q.matmul(k.transpose(2, 3)) * 0.2).softmax(dim=3) @ v,
    "layer": lambda m, q, k, v: m.softmax(q @ k.transpose(3, 2)) @ v,
}


@pytest.mark.parametrize("spelling", ATTENTION)
def test_attention_fires_for_every_spelling(spelling: str) -> None:
    q, k, v = _randn(2, 3, 17, 8), _randn(2, 3, 19, 8), _randn(2, 3, 19, 5)
    model = Fn(ATTENTION[spelling], softmax=nn.Softmax(dim=-1))
    _fires(model, [q, k, v], "attention_to_sdpa", exact=False)


# --------------------------------------------------------------------------- linearity


def _linear_parts() -> dict[str, Any]:
    return {
        "lin": nn.Linear(M, K),
        "w": nn.Parameter(torch.randn(K, M)),
        "b": nn.Parameter(torch.randn(K)),
    }


LINEAR_SUM = {
    "layer, sum(dim=)": lambda m, x: m.lin(x).sum(dim=1),
    "F.linear, torch.sum": lambda m, x: torch.sum(F.linear(x, m.w, m.b), 1),
    "x @ W.T + b": lambda m, x: (x @ m.w.T + m.b).sum(-1, keepdim=False),
    "mm + b, mean list": lambda m, x: torch.mean(x.mm(m.w.t()) + m.b, dim=[1]),
    "keepdim": lambda m, x: (m.b + torch.matmul(x, m.w.transpose(0, 1))).sum(-1, keepdim=True),
}


@pytest.mark.parametrize("spelling", LINEAR_SUM)
def test_sum_over_a_gemm_output_is_a_matrix_vector_product(spelling: str) -> None:
    gm = _fires(
        Fn(LINEAR_SUM[spelling], **_linear_parts()), [_randn(N, M)], "linear_reduction", exact=False
    )
    assert not [n for n in gm.graph.nodes if n.op == "call_module" or n.target is F.linear]


def test_sum_over_the_batch_dim_of_a_linear_is_not_folded() -> None:
    _quiet(
        Fn(lambda m, x: (x @ m.w.T + m.b).sum(0), **_linear_parts()),
        [_randn(N, M)],
        "linear_reduction",
    )


SCALE_SUM = {
    "x * c": lambda m, x: (x * 2.5).sum(1),
    "torch.mul": lambda m, x: torch.sum(torch.mul(x, 2.5), dim=1),
    "c * x, mean": lambda m, x: (0.25 * x).mean(-1, keepdim=True),
    "x.div(c)": lambda m, x: x.div(3.0).sum(dim=(0, 1)),
    "everything": lambda m, x: torch.sum(x / 7),
}


@pytest.mark.parametrize("spelling", SCALE_SUM)
def test_a_constant_scale_moves_after_a_sum(spelling: str) -> None:
    gm = _fires(Fn(SCALE_SUM[spelling]), [_randn(N, M)], "move_constant_scale", exact=False)
    last = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    assert last.target in (operator.mul, operator.truediv)  # the scale is the last step


SCALE_GEMM = {
    "A @ (c B)": lambda m, a, b: a @ (b * 0.5),
    "torch.matmul(A, B / c)": lambda m, a, b: torch.matmul(a, b / 4.0),
    "(A mm B).mul(c)": lambda m, a, b: torch.mm(a, b).mul(3.0),
}


@pytest.mark.parametrize("spelling", SCALE_GEMM)
def test_a_constant_scale_moves_to_the_smallest_gemm_operand(spelling: str) -> None:
    a, b = _randn(3, N), _randn(N, M)  # A (3 x 127) is smaller than B and the product
    gm = _fires(Fn(SCALE_GEMM[spelling]), [a, b], "move_constant_scale", exact=False)
    scaled = next(n for n in gm.graph.nodes if n.target in (operator.mul, operator.truediv))
    assert scaled.args[0].op == "placeholder" and scaled.args[0].name == "x"


SCALE_WEIGHT = {
    "layer(c x)": lambda m, x: m.lin(x * 2.0),
    "F.linear(x / c)": lambda m, x: F.linear(x / 4.0, m.w, m.b),
    "(x @ W.T) * c": lambda m, x: (x @ m.w.T) * 0.5,
    "(c x) @ W.T": lambda m, x: torch.matmul(3.0 * x, m.w.t()),
}


@pytest.mark.parametrize("spelling", SCALE_WEIGHT)
def test_a_constant_scale_folds_into_the_weight(spelling: str) -> None:
    gm = _fires(
        Fn(SCALE_WEIGHT[spelling], **_linear_parts()),
        [_randn(N, M)],
        "move_constant_scale",
        exact=False,
    )
    scaled = [n for n in gm.graph.nodes if n.target in (operator.mul, operator.truediv)]
    assert len(scaled) == 1 and scaled[0].args[0].op in ("get_attr", "call_function")
    assert {a.op for a in scaled[0].all_input_nodes} != {"placeholder"}


def test_a_tensor_scale_or_a_shared_scaled_value_does_not_move() -> None:
    _quiet(Fn(lambda m, x, y: (x * y).sum(1)), [_randn(N, M), _randn(N, M)], "move_constant_scale")

    def shared(m: Any, x: Any) -> Any:
        y = x * 2.0
        return y.sum(1) + y[:, 0]

    _quiet(Fn(shared), [_randn(N, M)], "move_constant_scale")


# --------------------------------------------------------------------------- size-1 dimensions

SIZE_ONE = {
    "softmax": lambda m, x: torch.softmax(x, dim=1),
    "F.softmax": lambda m, x: F.softmax(x, 1),
    "softmax layer": lambda m, x: m.softmax(x),
    "log_softmax method": lambda m, x: x.log_softmax(-2),
    "sum method": lambda m, x: x.sum(1),
    "mean keepdim list": lambda m, x: torch.mean(x, dim=[1], keepdim=True),
    "max values": lambda m, x: x.max(dim=1).values,
    "torch.max [0]": lambda m, x: torch.max(x, 1)[0],
    "amin keepdim": lambda m, x: torch.amin(x, (1,), True),
    "logsumexp": lambda m, x: x.logsumexp(1),
}


@pytest.mark.parametrize("spelling", SIZE_ONE)
def test_ops_over_a_size_one_dim_vanish(spelling: str) -> None:
    model = Fn(SIZE_ONE[spelling], softmax=nn.Softmax(dim=1))
    exact = spelling != "logsumexp"
    _fires(model, [_randn(N, 1, M)], "drop_identities", exact=exact)


GLOBAL_MEAN_TWICE = {
    "mean dims list": lambda m, x: x.mean(dim=[2, 3], keepdim=True).mean(dim=[2, 3], keepdim=True),
    "torch.mean tuple": lambda m, x: torch.mean(torch.mean(x, (2, 3), True), dim=(-1, -2)),
    "amax then sum": lambda m, x: x.amax((2, 3), keepdim=True).sum((3, 2)),
}


@pytest.mark.parametrize("spelling", GLOBAL_MEAN_TWICE)
def test_a_second_reduction_over_dims_already_reduced_vanishes(spelling: str) -> None:
    _fires(Fn(GLOBAL_MEAN_TWICE[spelling]), [_randn(3, 5, 7, 9)], "drop_identities", exact=True)


def test_reductions_over_dims_of_other_sizes_stay() -> None:
    for f in (
        lambda m, x: torch.softmax(x, dim=2),
        lambda m, x: x.sum((1, 2)),
        lambda m, x: x.max(dim=2).values,
        lambda m, x: torch.sum(x),
    ):
        _quiet(Fn(f), [_randn(N, 1, 3)], "drop_identities")


# --------------------------------------------------------------------------- monotone functions

MONOTONE = {
    "pool(layer relu)": lambda m, x: m.pool(m.relu(x)),
    "F.max_pool2d(F.relu)": lambda m, x: F.max_pool2d(F.relu(x), 2),
    "clamp min keywords": lambda m, x: F.max_pool2d(x.clamp(min=0), kernel_size=2, stride=2),
    "amax(relu)": lambda m, x: torch.amax(torch.relu(x), 1),
    "max values(relu method)": lambda m, x: x.relu().max(dim=3).values,
    "torch.max(hardtanh)[0]": lambda m, x: torch.max(F.hardtanh(x, -0.5, 0.5), 1)[0],
    "leaky layer, amin": lambda m, x: m.leaky(x).amin(dim=(2, 3)),
    "scale, shift": lambda m, x: ((x * 2.0 + 1.0) / 3.0).amax(1),
    "negation flips": lambda m, x: torch.amax(-x, 2),
    "c - x flips": lambda m, x: (1.0 - x).min(dim=1)[0],
    "per-channel bias under a pool": lambda m, x: F.max_pool2d(x + m.bias, 3, 2),
    "per-channel bias, keepdim amax": lambda m, x: (x.sub(m.bias)).amax((2, 3), keepdim=True),
}


@pytest.mark.parametrize("spelling", MONOTONE)
def test_a_monotone_function_moves_after_the_maximum(spelling: str) -> None:
    model = Fn(
        MONOTONE[spelling],
        relu=nn.ReLU(),
        leaky=nn.LeakyReLU(0.1),
        pool=nn.MaxPool2d(3, 2),
        bias=nn.Parameter(torch.randn(5, 1, 1)),
    )
    x = _randn(3, 5, 13, 11)
    sites = 3 if spelling == "scale, shift" else 1
    gm = _fires(model, [x], "pool_before_activation", exact=True, sites=sites)
    first = next(n for n in gm.graph.nodes if n.op == "placeholder")
    reduce = next(iter(first.users))
    assert reduce.target in (torch.amax, torch.amin, F.max_pool2d)  # the maximum runs first


SMOOTH = {
    "tanh amax": lambda m, x: torch.tanh(x).amax(1),
    "sigmoid method max[0]": lambda m, x: x.sigmoid().max(dim=1)[0],
    "layers": lambda m, x: m.pool(m.sigmoid(x)),
    "exp, F.max_pool2d": lambda m, x: F.max_pool2d(torch.exp(x), 2),
}


@pytest.mark.parametrize("spelling", SMOOTH)
def test_a_smooth_increasing_function_moves_after_the_maximum(spelling: str) -> None:
    model = Fn(SMOOTH[spelling], sigmoid=nn.Sigmoid(), pool=nn.MaxPool2d(2))
    _fires(model, [_randn(3, 5, 13, 11)], "smooth_after_max", exact=False)


def test_non_monotone_or_position_dependent_functions_stay_before_the_maximum() -> None:
    x = _randn(3, 5, 13, 11)
    parts = {"bias": nn.Parameter(torch.randn(5, 1, 1)), "gelu": nn.GELU()}
    for rule in ("pool_before_activation", "smooth_after_max"):
        for f in (
            lambda m, x: m.gelu(x).amax(1),  # GELU dips below zero
            lambda m, x: F.max_pool2d(F.silu(x), 2),
            lambda m, x: torch.sin(x).amax(2),
            lambda m, x: (x + m.bias).amax(1),  # the bias varies along the reduced channels
            lambda m, x: (x + m.bias).amax(2),  # keepdim=False: the bias would not broadcast
            lambda m, x: (x * 0.0).amax(1),  # a zero scale turns -inf into NaN in one form
            lambda m, x: F.max_pool2d(-x, 2),  # no min-pool to become
            lambda m, x: torch.relu(x).sum(1),  # not a maximum
        ):
            _quiet(Fn(f, **parts), [x], rule)


def test_a_shared_activation_stays() -> None:
    def f(m: Any, x: Any) -> Any:
        y = torch.tanh(x)
        return y.amax(1) + y.sum(1)

    _quiet(Fn(f), [_randn(N, M)], "smooth_after_max")


# --------------------------------------------------------------------------- folds into weights

AFFINE = {
    "operators": lambda m, x: m.lin(x) * 2.0 + 1.0,
    "torch functions": lambda m, x: torch.add(torch.mul(F.linear(x, m.w, m.b), 2.0), 1.0),
    "methods": lambda m, x: m.lin(x).mul(2.0).add(1.0).div(4.0),
    "written-out linear": lambda m, x: (x @ m.w.t() + m.b).sub(3.0).neg(),
}


@pytest.mark.parametrize("spelling", AFFINE)
def test_constant_chains_fold_into_the_weights_for_every_spelling(spelling: str) -> None:
    gm = _fires(
        Fn(AFFINE[spelling], **_linear_parts()),
        [_randn(N, M)],
        "fold_affine_constants",
        exact=False,
    )
    output = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    assert output.target is F.linear  # no epilogue pass left


BATCHNORM = {
    "layer": lambda m, x: m.bn(m.lin(x)),
    "F.linear": lambda m, x: m.bn(F.linear(x, m.w, m.b)),
    "x @ W.T + b": lambda m, x: m.bn(x @ m.w.T + m.b),
}


@pytest.mark.parametrize("spelling", BATCHNORM)
def test_batchnorm_folds_into_every_spelling_of_a_linear_layer(spelling: str) -> None:
    bn = nn.BatchNorm1d(K)
    bn.running_mean.normal_()
    bn.running_var.uniform_(0.5, 2.0)
    model = Fn(BATCHNORM[spelling], bn=bn, **_linear_parts())
    _fires(model, [_randn(N, M)], "fold_batchnorm", exact=False)


CHANNEL_BIAS = {
    "conv + p": lambda m, x: m.conv(x) + m.p,
    "torch.add(p, conv)": lambda m, x: torch.add(m.p, m.conv(x)),
    "conv.add": lambda m, x: m.conv(x).add(m.p),
    "conv.sub": lambda m, x: m.conv(x).sub(m.p),
}


@pytest.mark.parametrize("spelling", CHANNEL_BIAS)
def test_channel_bias_folds_for_every_spelling(spelling: str) -> None:
    model = Fn(
        CHANNEL_BIAS[spelling], conv=nn.Conv2d(3, 5, 3), p=nn.Parameter(torch.randn(5, 1, 1))
    )
    _fires(model, [_randn(2, 3, 13, 11)], "fold_channel_bias", exact=False)


EPILOGUE = {
    "layer relu": lambda m, x: m.relu(m.lin(x)),
    "F.relu(F.linear)": lambda m, x: F.relu(F.linear(x, m.w, m.b)),
    "clamp of x @ W.T + b": lambda m, x: (x @ m.w.T + m.b).clamp(min=0),
    "relu method": lambda m, x: m.lin(x).relu(),
}


@pytest.mark.parametrize("spelling", EPILOGUE)
def test_gemm_relu_epilogue_fires_for_every_spelling(spelling: str) -> None:
    model = Fn(EPILOGUE[spelling], relu=nn.ReLU(), **_linear_parts())
    _fires(model, [_randn(N, M)], "gemm_activation_epilogue", exact=False)


STABLE = {
    "log(softmax)": lambda m, x: torch.log(torch.softmax(x, 1)),
    "method chain": lambda m, x: x.softmax(1).log(),
    "F.softmax(dim=).log()": lambda m, x: F.softmax(x, dim=-1).log(),
    "log(sum(exp))": lambda m, x: torch.log(torch.exp(x).sum(1)),
    "methods": lambda m, x: x.exp().sum(dim=1).log(),
    "exp / sum": lambda m, x: _over_its_sum(x.exp()),
}


def _over_its_sum(e: Any) -> Any:
    return e / torch.sum(e, dim=1, keepdim=True)


@pytest.mark.parametrize("spelling", STABLE)
def test_stable_chains_fire_for_every_spelling(spelling: str) -> None:
    _fires(Fn(STABLE[spelling]), [_randn(N, M)], "stable_chains", exact=False)


AVG_POOL = {
    "layer": lambda m, x: m.pool(x),
    "F positional": lambda m, x: F.avg_pool2d(x, 3),
    "F keywords": lambda m, x: F.avg_pool2d(x, kernel_size=3, stride=3, padding=0),
}


@pytest.mark.parametrize("spelling", AVG_POOL)
def test_separable_average_pool_fires_for_every_spelling(spelling: str) -> None:
    model = Fn(AVG_POOL[spelling], pool=nn.AvgPool2d(3))
    _fires(model, [_randn(2, 3, 13, 11)], "separable_avg_pool", exact=False)


# --------------------------------------------------------------------------- the scan

SPELLED = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(features, features))
        self.bias = nn.Parameter(torch.randn(features))
        self.pool = nn.MaxPool1d(3)

    def forward(self, x, d):
        y = torch.einsum("ij,jk->ik", d.diag(), x)
        z = torch.mm(y, self.weight.t()).add(self.bias)
        s = z.sum(dim=-1, keepdim=True)
        return self.pool(F.relu(s.expand(-1, 9)[None])).squeeze(0), torch.max(y.tanh(), 1)[0]


def get_inputs():
    return [torch.randn(7, 5), torch.randn(7)]


def get_init_inputs():
    return [5]
"""


def test_the_scan_finds_rules_on_unusual_spellings_and_renders_them() -> None:
    from kernelopt_jupyter.problem import load_source_module

    found = scan(SPELLED, "<spelled>")
    names = {n for m in found.matches for n in m.names}
    assert {"diag_matmul", "linear_reduction", "pool_before_activation"} <= names
    assert "smooth_after_max" in names
    torch.manual_seed(0)
    ref = load_source_module(SPELLED, "algebra_ref").Model(5).eval()
    x, d = torch.randn(7, 5), torch.randn(7)
    for i, match in enumerate(found.matches):
        if match.kernels:
            # KernelOPT's own kernel (the max pool's, PyTorch for the rest: a mixed candidate)
            # runs under Triton's interpreter, in the family kernels' tests.
            assert is_dispatch_only(match.eager_source) == bool(match.beside), match.title
            continue
        cand = load_source_module(match.eager_source, f"algebra_cand_{i}").ModelNew(5).eval()
        cand.load_state_dict(ref.state_dict(), strict=True)
        with torch.no_grad():
            for got, want in zip(cand(x, d), ref(x, d), strict=True):
                torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


CHANNEL_SCALE = {
    "conv * p": lambda m, x: m.conv(x) * m.p,
    "torch.mul(p, conv)": lambda m, x: torch.mul(m.p, m.conv(x)),
    "conv.mul": lambda m, x: m.conv(x).mul(m.p),
    "transposed conv": lambda m, x: m.convt(x) * m.p,
    "linear * row": lambda m, x: torch.flatten(m.conv(x), 1)[:, :5] @ m.w5.T * m.row,
}


@pytest.mark.parametrize("spelling", CHANNEL_SCALE)
def test_channel_scale_folds_into_the_weight_for_every_spelling(spelling: str) -> None:
    model = Fn(
        CHANNEL_SCALE[spelling],
        conv=nn.Conv2d(3, 5, 3, groups=1),
        convt=nn.ConvTranspose2d(3, 5, 3, stride=2),
        p=nn.Parameter(torch.randn(5, 1, 1)),
        w5=nn.Parameter(torch.randn(7, 5)),
        row=nn.Parameter(torch.randn(7)),
    )
    gm = _fires(model, [_randn(2, 3, 13, 11)], "fold_channel_scale", exact=False)
    output = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    assert output.target is not operator.mul  # no scaling pass after the layer


def test_a_scale_varying_in_space_or_a_grouped_transposed_conv_stays() -> None:
    x = _randn(2, 4, 13, 11)
    spatial = Fn(
        lambda m, x: m.conv(x) * m.q, conv=nn.Conv2d(4, 6, 3), q=nn.Parameter(torch.randn(6, 11, 9))
    )
    _quiet(spatial, [x], "fold_channel_scale")
    grouped = Fn(
        lambda m, x: m.convt(x) * m.p,
        convt=nn.ConvTranspose2d(4, 6, 3, groups=2),
        p=nn.Parameter(torch.randn(6, 1, 1)),
    )
    _quiet(grouped, [x], "fold_channel_scale")


TRACED_CONSTANT = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.fc(x)) + SHIFT.to(x.device)


SHIFT = torch.arange(4.0)


def get_inputs():
    return [torch.randn(3, 4)]


def get_init_inputs():
    return []
"""


def test_a_rewrite_reading_a_constant_that_tracing_made_is_not_offered() -> None:
    found = scan(TRACED_CONSTANT, "<constant>")
    assert not found.matches  # its class would lack the attribute the traced forward reads
    assert "_tensor_constant0, a constant the reference lacks" in found.error


CONV_FOLDS = {
    "batchnorm": ("fold_batchnorm", lambda m, x: m.bn(F.conv2d(x, m.w, m.b, padding=1))),
    "constant chain": (
        "fold_affine_constants",
        lambda m, x: torch.conv2d(x, m.w, m.b, 1, 1) * 2.0 - 1.0,
    ),
    "channel bias": ("fold_channel_bias", lambda m, x: F.conv2d(x, m.w, None, 1, 1).add(m.p)),
    "channel scale": ("fold_channel_scale", lambda m, x: m.p * F.conv2d(x, m.w, m.b, stride=2)),
}


@pytest.mark.parametrize("case", CONV_FOLDS)
def test_folds_write_into_a_functional_convolution_as_into_a_layer(case: str) -> None:
    rule, fn = CONV_FOLDS[case]
    bn = nn.BatchNorm2d(5)
    bn.running_mean.normal_()
    bn.running_var.uniform_(0.5, 2.0)
    model = Fn(
        fn,
        bn=bn,
        w=nn.Parameter(torch.randn(5, 3, 3, 3)),
        b=nn.Parameter(torch.randn(5)),
        p=nn.Parameter(torch.randn(5, 1, 1)),
    )
    gm = _fires(model, [_randn(2, 3, 13, 11)], rule, exact=False)
    output = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    assert output.target is F.conv2d  # no pass after the convolution
