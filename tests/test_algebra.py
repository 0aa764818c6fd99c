"""The e-graph engine (agents/rewrites/egraph.py) and the ``algebra`` rewrite built on it
(agents/rewrites/algebra.py): the engine's invariants on a toy language, each rule family
firing for several spellings of one model and staying quiet on near misses, compositions no
single hand-written rule catches, and every rewrite checked against the reference in float64
at odd sizes."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F
from test_rewrite_algebra import _One, _Two
from torch.utils.flop_counter import FlopCounterMode

from kernelopt_jupyter.agents.rewrites import algebra as alg
from kernelopt_jupyter.agents.rewrites.canonical import canonicalize
from kernelopt_jupyter.agents.rewrites.egraph import (
    EGraph,
    ENode,
    Invalid,
    Pat,
    Rule,
    Var,
    ematch,
    extract,
    saturate,
    selection_cost,
)
from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes, trace
from kernelopt_jupyter.agents.rewrites.rules import BY_NAME, REWRITES, _reads_inputs

N, M, K = 127, 129, 131

# --------------------------------------------------------------------------- the engine


def _toy() -> EGraph:
    """An e-graph over a toy language whose analysis data is nothing."""
    return EGraph(lambda g, n: None, lambda a, b: a)


def test_merging_two_classes_merges_their_congruent_users() -> None:
    g = _toy()
    a, b = g.add("a"), g.add("b")
    fa, fb = g.add("f", (), (a,)), g.add("f", (), (b,))
    gfa, gfb = g.add("g", (), (fa,)), g.add("g", (), (fb,))
    assert len({g.find(c) for c in (fa, fb, gfa, gfb)}) == 4
    g.merge(a, b)
    g.rebuild()
    assert g.find(fa) == g.find(fb) and g.find(gfa) == g.find(gfb)
    assert g.find(a) != g.find(fa)
    assert g.add("f", (), (a,)) == g.find(fb)  # hash-consing sees the merged node
    assert len(g.nodes(fa)) == 1  # f(a) and f(b) are one canonical e-node now


def test_hash_consing_returns_the_class_of_an_existing_node() -> None:
    g = _toy()
    a = g.add("a")
    assert g.add("f", (1,), (a,)) == g.add("f", (1,), (a,))
    assert g.add("f", (1,), (a,)) != g.add("f", (2,), (a,))
    assert g.size() == 3


def test_matching_binds_variables_consistently_and_attributes() -> None:
    g = _toy()
    a, b = g.add("a"), g.add("b")
    aa, ab = g.add("add", (), (a, a)), g.add("add", (), (a, b))
    x = Var("x")
    same = Pat("add", (x, x))
    assert [s["x"] for s in ematch(g, same, aa, {})] == [a]
    assert list(ematch(g, same, ab, {})) == []
    r = g.add("r", (3, True), (a,))
    assert [s["d"] for s in ematch(g, Pat("r", (x,), Var("d")), r, {})] == [(3, True)]
    assert list(ematch(g, Pat("r", (x,), (4, True)), r, {})) == []


def test_saturation_stops_at_the_node_limit_and_reports_it() -> None:
    g = _toy()
    root = g.add("f", (), (g.add("a"),))
    x = Var("x")
    # f(x) == f(s(x)) holds of no f worth having, but it grows without end: f(s(s(...)))
    grow = Rule(
        "grow",
        "bit-exact",
        Pat("f", (x,)),
        lambda g, s, r: g.add("f", (), (g.add("s", (), (s["x"],)),)),
    )
    result = saturate(g, [grow], max_iterations=1000, max_nodes=40)
    assert not result.saturated
    assert 40 < g.size() < 200
    assert g.find(root) is not None


def test_saturation_reaches_a_fixed_point_and_counts_what_fired() -> None:
    g = _toy()
    a = g.add("a")
    nn_a = g.add("neg", (), (g.add("neg", (), (a,)),))
    x = Var("x")
    rule = Rule("neg_neg", "bit-exact", Pat("neg", (Pat("neg", (x,)),)), lambda g, s, r: s["x"])
    refuse = Rule("refuse", "bit-exact", Pat("a"), lambda g, s, r: (_ for _ in ()).throw(Invalid()))
    result = saturate(g, [rule, refuse])
    assert result.saturated and result.fired == {"neg_neg": 1}
    assert g.find(nn_a) == g.find(a)


def test_extraction_picks_the_cheapest_term_and_counts_shared_work_once() -> None:
    g = _toy()
    a = g.add("a")
    slow = g.add("slow", (), (a,))
    fast = g.add("fast", (), (a,))
    g.merge(slow, fast)
    top = g.add("pair", (), (slow, fast))  # both children are one class after the rebuild
    g.rebuild()
    costs = {"a": 0.0, "slow": 10.0, "fast": 1.0, "pair": 1.0}

    def cost(graph: EGraph, node: ENode) -> float:
        return costs[node.op]

    choice = extract(g, cost)
    assert choice[g.find(slow)].op == "fast"
    assert selection_cost(g, [top], choice, cost) == 2.0  # the shared child counted once
    tie = extract(g, lambda graph, node: 0.0, prefer=lambda node: node.op == "slow")
    assert tie[g.find(slow)].op == "slow"


# --------------------------------------------------------------------------- the rewrite


def Fn(fn: Callable[..., Any], **parts: Any) -> nn.Module:
    """A model whose forward is ``fn(self, *inputs)``, with the given layers and parameters."""
    return {1: _One, 2: _Two}[fn.__code__.co_argcount - 1](fn, parts)


def _randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, dtype=torch.float64)


def _canonical(model: nn.Module, inputs: list[Any]) -> fx.GraphModule:
    gm = trace(model)
    assert propagate_shapes(gm, inputs)
    canonicalize(gm)
    return gm


def _gemm_flops(module: nn.Module, inputs: list[Any]) -> int:
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        module(*inputs)
    return int(counter.get_total_flops())


def _fires(model: nn.Module, inputs: list[Any], *, exact: bool = False) -> fx.GraphModule:
    """Run the rewrite on ``model`` (float64): it must rewrite one region or more, and keep
    the result (bit for bit where every rule it used is, else to float64 rounding)."""
    model = model.double().eval()
    gm = _canonical(model, inputs)
    sites, _ = alg.rewrite(gm)
    assert sites >= 1, gm.code
    with torch.no_grad():
        want, got = model(*inputs), gm(*inputs)
    if exact:
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
    else:
        torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)
    return gm


def _quiet(model: nn.Module, inputs: list[Any]) -> None:
    model = model.double().eval()
    gm = _canonical(model, inputs)
    code = gm.code
    assert alg.rewrite(gm)[0] == 0
    assert gm.code == code  # nothing written back


def _targets(gm: fx.GraphModule) -> list[Any]:
    return [n.target for n in gm.graph.nodes if n.op in ("call_function", "call_method")]


def _linear_parts() -> dict[str, Any]:
    return {
        "lin": nn.Linear(M, K),
        "w": nn.Parameter(torch.randn(K, M)),
        "b": nn.Parameter(torch.randn(K)),
    }


def test_the_rewrite_is_registered_before_the_family_kernels_and_ranks_with_gemm_removal() -> None:
    from kernelopt_jupyter.agents.rewrites.moves import GEMM_REMOVING

    names = [r.name for r in REWRITES]
    first_kernel = min(i for i, r in enumerate(REWRITES) if r.kernels)
    assert names.index("algebra") < first_kernel
    assert names.index("algebra") < names.index("drop_identities")
    assert BY_NAME["algebra"].exact == "reassociation" and "algebra" in GEMM_REMOVING
    assert {r.exact for r in alg.RULES} == {"bit-exact", "reassociation"}


# ---- linearity through reductions and GEMMs

LINEAR_REDUCTION = {
    "layer, sum(dim=)": lambda m, x: m.lin(x).sum(dim=1),
    "F.linear, torch.sum": lambda m, x: torch.sum(F.linear(x, m.w, m.b), 1),
    "x @ W.T + b, mean keepdim": lambda m, x: (x @ m.w.T + m.b).mean(-1, keepdim=True),
    "mm + b, mean list": lambda m, x: torch.mean(x.mm(m.w.t()) + m.b, dim=[1]),
    "b + matmul(x, W^T)": lambda m, x: (m.b + torch.matmul(x, m.w.transpose(0, 1))).sum(-1),
}


@pytest.mark.parametrize("spelling", LINEAR_REDUCTION)
def test_a_reduction_over_a_linear_layer_becomes_a_matrix_vector_product(spelling: str) -> None:
    model = Fn(LINEAR_REDUCTION[spelling], **_linear_parts()).double()
    x = _randn(N, M)
    gm = _fires(model, [x])
    assert _gemm_flops(gm, [x]) * 50 < _gemm_flops(model, [x])  # K = 131 times fewer
    assert F.linear not in _targets(gm) and not any(n.op == "call_module" for n in gm.graph.nodes)


ROW_REDUCTION = {
    "(A @ B).sum(0)": lambda m, a, b: (a @ b).sum(0),
    "torch.mm mean(dim=-2)": lambda m, a, b: torch.mm(a, b).mean(dim=-2),
    "matmul sum keepdim": lambda m, a, b: torch.sum(torch.matmul(a, b), dim=0, keepdim=True),
}


@pytest.mark.parametrize("spelling", ROW_REDUCTION)
def test_a_reduction_over_the_rows_of_a_product_reduces_the_left_operand(spelling: str) -> None:
    a, b = _randn(N, M), _randn(M, K)
    model = Fn(ROW_REDUCTION[spelling])
    gm = _fires(model, [a, b])
    assert _gemm_flops(gm, [a, b]) * 50 < _gemm_flops(model, [a, b])


def test_a_reduction_the_bias_does_not_span_or_a_full_tensor_addend_stays() -> None:
    x, y = _randn(N, M), _randn(N, K)
    for f, inputs in (
        (lambda m, x: (x @ m.w.T + m.b).sum(0), [x]),  # the bias is summed N times over rows
        (lambda m, x, y: (x @ m.w.T + y).sum(1), [x, y]),  # not a bias
        (lambda m, x: (x @ m.w.T).amax(1), [x]),  # a maximum is not linear
    ):
        model = Fn(f, **_linear_parts()).double()
        gm = _canonical(model, inputs)
        alg.rewrite(gm)  # the bias may join the GEMM (F.linear); the GEMM stays whole
        assert _gemm_flops(gm, inputs) == _gemm_flops(model, inputs)
        with torch.no_grad():
            torch.testing.assert_close(gm(*inputs), model(*inputs), rtol=1e-10, atol=1e-10)


# ---- constant scales through reductions and GEMMs, into weights

SCALE_REDUCTION = {
    "x * c": lambda m, x: (x * 2.5).sum(1),
    "torch.mul": lambda m, x: torch.sum(torch.mul(x, 2.5), dim=1),
    "c * x, mean keepdim": lambda m, x: (0.25 * x).mean(-1, keepdim=True),
    "x.div(c)": lambda m, x: x.div(3.0).sum(dim=(0, 1)),
}


@pytest.mark.parametrize("spelling", SCALE_REDUCTION)
def test_a_constant_scale_moves_after_a_reduction(spelling: str) -> None:
    gm = _fires(Fn(SCALE_REDUCTION[spelling]), [_randn(N, M)])
    last = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    assert last.target is operator.mul  # the scale runs on the reduced tensor


SCALE_WEIGHT = {
    "layer(c x)": lambda m, x: m.lin(x * 2.0),
    "F.linear(x / c)": lambda m, x: F.linear(x / 4.0, m.w, m.b),
    "(x @ W.T) * c": lambda m, x: (x @ m.w.T) * 0.5,
    "(c x) @ W.T": lambda m, x: torch.matmul(3.0 * x, m.w.t()),
    "relu(layer(x)) / c": lambda m, x: torch.relu(m.lin(x)) / 4.0,
}


@pytest.mark.parametrize("spelling", SCALE_WEIGHT)
def test_a_scale_on_a_large_activation_folds_into_the_small_weight(spelling: str) -> None:
    parts = {
        "lin": nn.Linear(7, 9),
        "w": nn.Parameter(torch.randn(9, 7)),
        "b": nn.Parameter(torch.randn(9)),
    }
    model = Fn(SCALE_WEIGHT[spelling], **parts).double()
    x = _randn(N, 7)
    gm = _fires(model, [x])
    scaled = [n for n in gm.graph.nodes if n.target in (operator.mul, operator.truediv)]
    assert scaled and not any(_reads_inputs(n) for n in scaled)  # on weights only
    # Derived in forward, never copied: new weights (the graph shares the model's tensors)
    # give the reference's new result.
    model.load_state_dict({k: torch.randn_like(v) for k, v in model.state_dict().items()})
    with torch.no_grad():
        torch.testing.assert_close(gm(x), model(x), rtol=1e-10, atol=1e-10)


def test_a_tensor_or_negative_scale_stays() -> None:
    parts = _linear_parts()
    _quiet(Fn(lambda m, x, y: (x * y).sum(1)), [_randn(N, M), _randn(N, M)])
    _quiet(Fn(lambda m, x: torch.relu(m.lin(x)) * -2.0, **parts), [_randn(4099, M)])  # c < 0


def test_constant_chains_fold_to_one_scale() -> None:
    for f in (
        lambda m, x: ((x * 2.0) * 3.0).sum(1),
        lambda m, x: x.mul(2).div(4).mul(8).sum(1),
        lambda m, x: torch.mul(torch.mul(x, 2.0), 0.5).sum(1),
    ):
        gm = _fires(Fn(f), [_randn(N, M)])
        assert _targets(gm).count(operator.mul) <= 1


# ---- distributivity

FACTOR = {
    "two linear layers": lambda m, x: m.lin(x) + m.lin2(x),
    "two F.linear": lambda m, x: F.linear(x, m.w) + F.linear(x, m.w2),
    "two products": lambda m, x: x @ m.w.t() + torch.matmul(x, m.w2.T),
}


@pytest.mark.parametrize("spelling", FACTOR)
def test_two_products_of_one_input_become_one(spelling: str) -> None:
    parts = {
        **_linear_parts(),
        "lin2": nn.Linear(M, K),
        "w2": nn.Parameter(torch.randn(K, M)),
    }
    model = Fn(FACTOR[spelling], **parts).double()
    x = _randn(N, M)
    gm = _fires(model, [x])
    assert 2 * _gemm_flops(gm, [x]) == _gemm_flops(model, [x])


def test_products_of_different_shapes_are_not_factored() -> None:
    parts = {"w": nn.Parameter(torch.randn(M, K)), "v": nn.Parameter(torch.randn(M, 1))}
    _quiet(Fn(lambda m, x: x @ m.w + x @ m.v, **parts), [_randn(N, M)])


# ---- size-1 dimensions

SIZE_ONE = {
    "sum method": lambda m, x: x.sum(1) * 2.0,
    "mean keepdim list": lambda m, x: torch.mean(x, dim=[1], keepdim=True) * 2.0,
    "max values": lambda m, x: x.max(dim=1).values * 2.0,
    "torch.max [0]": lambda m, x: torch.max(x, 1)[0] * 2.0,
    "amin keepdim": lambda m, x: torch.amin(x, (1,), True) * 2.0,
    "softmax then its sum": lambda m, x: torch.softmax(x, dim=1).sum(1),
    "softmax layer then mean": lambda m, x: m.softmax(x).mean(dim=1),
    "log_softmax method then amax": lambda m, x: x.log_softmax(-2).amax(-2),
}


@pytest.mark.parametrize("spelling", SIZE_ONE)
def test_ops_over_a_size_one_dimension_vanish(spelling: str) -> None:
    model = Fn(SIZE_ONE[spelling], softmax=nn.Softmax(dim=1))
    x = _randn(N, 1, M)
    x[0, 0, :3] = torch.tensor([float("inf"), float("-inf"), float("nan")])  # kept as they were
    gm = _fires(model, [x], exact=True)
    kept = {torch.sum, torch.mean, torch.amax, torch.amin, torch.softmax, torch.log_softmax}
    assert not kept & set(_targets(gm))


def test_ops_over_dimensions_of_other_sizes_stay() -> None:
    for f in (
        lambda m, x: torch.softmax(x, dim=2).sum(2),
        lambda m, x: x.sum((1, 2)) * 2.0,
        lambda m, x: x.max(dim=2).values * 2.0,
    ):
        _quiet(Fn(f), [_randn(N, 1, 3)])


# ---- monotone functions through a maximum

MONOTONE = {
    "amax(relu)": lambda m, x: torch.amax(torch.relu(x), 1),
    "max values(relu method)": lambda m, x: x.relu().max(dim=2).values,
    "torch.max(hardtanh)[0]": lambda m, x: torch.max(F.hardtanh(x, -0.5, 0.5), 1)[0],
    "leaky layer, amin": lambda m, x: m.leaky(x).amin(dim=(1, 2)),
    "negation flips": lambda m, x: torch.amax(-x, 2),
    "scale, shift": lambda m, x: ((x * 2.0 + 1.0) / 3.0).amax(1),
    "negative scale flips": lambda m, x: x.mul(-2.0).max(dim=1)[0],
}


@pytest.mark.parametrize("spelling", MONOTONE)
def test_a_monotone_function_moves_after_the_maximum(spelling: str) -> None:
    model = Fn(MONOTONE[spelling], leaky=nn.LeakyReLU(0.1))
    x = _randn(5, 13, 11)
    gm = _fires(model, [x], exact=spelling != "scale, shift")  # x / 3 becomes x * (1/3)
    first = next(n for n in gm.graph.nodes if n.op == "placeholder")
    assert next(iter(first.users)).target in (torch.amax, torch.amin)  # the maximum runs first


SMOOTH = {
    "tanh amax": lambda m, x: torch.tanh(x).amax(1),
    "sigmoid method max[0]": lambda m, x: x.sigmoid().max(dim=1)[0],
    "layer, amin": lambda m, x: m.sigmoid(x).amin(2),
    "exp, keepdim": lambda m, x: torch.exp(x).amax(dim=-1, keepdim=True),
}


@pytest.mark.parametrize("spelling", SMOOTH)
def test_a_smooth_increasing_function_moves_after_the_maximum(spelling: str) -> None:
    gm = _fires(Fn(SMOOTH[spelling], sigmoid=nn.Sigmoid()), [_randn(5, 13, 11)])
    first = next(n for n in gm.graph.nodes if n.op == "placeholder")
    assert next(iter(first.users)).target in (torch.amax, torch.amin)


def test_non_monotone_functions_or_other_reductions_stay_before_the_maximum() -> None:
    x = _randn(5, 13, 11)
    for f in (
        lambda m, x: m.gelu(x).amax(1),  # GELU dips below zero
        lambda m, x: torch.sin(x).amax(2),
        lambda m, x: torch.sqrt(x).amax(2),  # NaN for a negative input would be lost
        lambda m, x: (x * 0.0).amax(1),  # a zero scale turns -inf into NaN in one form
        lambda m, x: (x + m.bias).amax(1),  # a tensor shift
        lambda m, x: torch.tanh(x).sum(1),  # not a maximum
    ):
        _quiet(Fn(f, gelu=nn.GELU(), bias=nn.Parameter(torch.randn(13, 1))), [x])


# ---- identities

IDENTITY = {
    "-torch.neg(x)": lambda m, x: -torch.neg(x),
    "torch.neg twice": lambda m, x: torch.neg(torch.neg(x)),
    "x * 1": lambda m, x: x * 1,
    "torch.mul(x, 1.0)": lambda m, x: torch.mul(x, 1.0),
    "x.div(1)": lambda m, x: x.div(1),
    "x - 0": lambda m, x: x - 0.0,
    "transposed back, scaled by 1": lambda m, x: x.t().t() * 1.0,
}


@pytest.mark.parametrize("spelling", IDENTITY)
def test_identity_ops_vanish(spelling: str) -> None:
    model = Fn(lambda m, x: torch.relu(IDENTITY[spelling](m, x)))
    gm = _fires(model, [_randn(N, M)], exact=True)
    assert _targets(gm) == [torch.relu]


TRANSPOSED_BACK = {
    ".t().t()": lambda m, x: x.t().t(),
    "transpose then .T": lambda m, x: x.transpose(0, 1).T,
    "mT of swapaxes": lambda m, x: torch.swapaxes(x, 1, 0).mT,
}


@pytest.mark.parametrize("spelling", TRANSPOSED_BACK)
def test_a_double_transpose_is_proved_equal_to_its_input(spelling: str) -> None:
    x = _randn(N, M)
    gm = _canonical(Fn(TRANSPOSED_BACK[spelling]).double(), [x])
    lifted = alg.lift(gm)
    saturate(lifted.graph, alg.RULES)
    out = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    leaf = lifted.graph.add("leaf", ("node", "x", (N, M), False))
    assert lifted.graph.find(lifted.classes[out]) == lifted.graph.find(leaf)


def test_views_alone_or_an_op_with_no_cheaper_form_change_nothing() -> None:
    _quiet(Fn(lambda m, x: torch.relu(x @ m.w.T), **_linear_parts()), [_randn(N, M)])
    _quiet(Fn(lambda m, x: torch.softmax(x, 1)), [_randn(N, 1, M)])  # ones cost a pass too


# ---- compositions no single hand-written rule catches

COMPOSED = {
    "scale, layer, mean, tanh, max over size 1": lambda m, x: torch.tanh(
        m.lin(x * 2.0).mean(-1, keepdim=True)
    ).amax(1),
    "F.linear of a scaled input, summed, relu, max method": lambda m, x: (
        torch.relu(torch.sum(F.linear(x.div(4.0), m.w, m.b), dim=1, keepdim=True)).max(dim=1).values
    ),
    "written-out, mean list, sigmoid, torch.max": lambda m, x: torch.max(
        torch.sigmoid(torch.mean(0.5 * x @ m.w.t() + m.b, dim=[1], keepdim=True)), 1
    )[0],
}


@pytest.mark.parametrize("spelling", COMPOSED)
def test_a_composition_of_rules_fires_as_one_rewrite(spelling: str) -> None:
    model = Fn(COMPOSED[spelling], **_linear_parts()).double()
    x = _randn(N, M)
    gm = _fires(model, [x])
    assert _gemm_flops(gm, [x]) * 50 < _gemm_flops(model, [x])
    assert not {torch.amax, torch.amin} & set(_targets(gm))  # the size-1 maximum is gone
    for rule in ("linear_reduction", "drop_identities", "move_constant_scale"):
        alone = _canonical(model, [x])  # a hand rule alone leaves the GEMM or the maximum
        BY_NAME[rule].apply(alone)
        done = _gemm_flops(alone, [x]) * 50 < _gemm_flops(model, [x])
        assert not (done and not {torch.amax, torch.amin} & set(_targets(alone)))


def test_a_second_pass_reads_what_the_first_wrote_and_changes_nothing() -> None:
    model = Fn(COMPOSED["scale, layer, mean, tanh, max over size 1"], **_linear_parts()).double()
    x = _randn(N, M)
    gm = _fires(model, [x])
    assert torch.squeeze in _targets(gm)  # the size-1 maximum, written as a squeeze
    assert propagate_shapes(gm, [x])
    canonicalize(gm)
    lifted = alg.lift(gm)
    assert {n.target for n in lifted.classes} >= {torch.squeeze, torch.matmul}
    code = gm.code
    assert alg.rewrite(gm)[0] == 0 and gm.code == code


def test_the_scan_offers_the_rewrite_and_its_candidate_keeps_the_result() -> None:
    from kernelopt_jupyter.agents.rewrites.task import scan
    from kernelopt_jupyter.problem import load_source_module

    source = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(129, 131)

    def forward(self, x):
        return torch.tanh(self.fc(x * 3.0).mean(-1, keepdim=True)).amax(1)


def get_inputs():
    return [torch.randn(127, 129)]


def get_init_inputs():
    return []
"""
    found = scan(source, "<algebra>")
    match = next(m for m in found.matches if m.names == ["algebra"])
    assert match.exact == "reassociation" and not match.kernels
    torch.manual_seed(0)
    ref = load_source_module(source, "algebra_scan_ref").Model().double().eval()
    cand = load_source_module(match.eager_source, "algebra_scan_cand").ModelNew().double().eval()
    cand.load_state_dict(ref.state_dict(), strict=True)
    x = _randn(127, 129)
    with torch.no_grad():
        torch.testing.assert_close(cand(x), ref(x), rtol=1e-10, atol=1e-10)


# --------------------------------------------------------------------------- KernelBench

try:  # collected everywhere, selected only with -m kernelbench: fail then, not at collection
    from _kernelbench import dev_problems, problem_ids

    KB_PROBLEMS: list[Any] = list(dev_problems())
    KB_IDS = problem_ids(KB_PROBLEMS)
    KB_ABSENT = ""
except pytest.fail.Exception as exc:
    KB_PROBLEMS, KB_IDS, KB_ABSENT = [None], ["absent"], str(exc)


def _double(value: Any) -> Any:
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.double()
    return value


@pytest.mark.kernelbench
@pytest.mark.parametrize("path", KB_PROBLEMS, ids=KB_IDS)
def test_the_rewrite_keeps_every_dev_problem_result_in_float64(
    path: Any, record_property: Callable[[str, Any], None]
) -> None:
    """Per problem, shrunk for the CPU: where the rewrite fires, the rewritten graph gives the
    reference's result in float64 (whether it fires is recorded as the ``algebra`` property,
    printed with ``-rP``)."""
    from _kernelbench import shrunk_problem

    from kernelopt_jupyter.agents.rewrites.graph import RewriteError
    from kernelopt_jupyter.problem import materialize

    if path is None:
        pytest.fail(KB_ABSENT, pytrace=False)
    small = shrunk_problem(path)
    loaded = materialize(small)
    ref = loaded.make_model("cpu", seed=0).eval().double()
    inputs = [_double(x) for x in loaded.make_inputs(seed=0, device="cpu")]
    try:
        gm = trace(ref, inputs)
    except RewriteError:
        record_property("algebra", "not traceable")
        return
    if not propagate_shapes(gm, inputs):
        record_property("algebra", "no shapes")
        return
    canonicalize(gm)
    sites, saturation = alg.rewrite(gm)
    fired = saturation.fired if saturation is not None else {}
    record_property("algebra", f"{sites} region(s); rules {sorted(fired)}" if sites else "quiet")
    print(f"algebra: {sites} region(s) rewritten; rules that merged: {fired}")
    if not sites:
        return
    with torch.no_grad():
        want, got = ref(*inputs), gm(*inputs)
    torch.testing.assert_close(got, want, rtol=1e-7, atol=1e-9, equal_nan=True)
