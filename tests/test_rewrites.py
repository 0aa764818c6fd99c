"""Graph rewrites (agents/rewrites): each rule fires on its pattern, keeps the result, honours
reloaded weights, stays quiet where the pattern is absent, and renders to runnable source."""

from __future__ import annotations

import math
import types
from typing import Any

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from kernelopt_jupyter.agents.rewrites.canonical import canonicalize
from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes, trace
from kernelopt_jupyter.agents.rewrites.render import rewritten_source
from kernelopt_jupyter.agents.rewrites.rules import BY_NAME, REWRITES
from kernelopt_jupyter.agents.rewrites.task import scan


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
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    return gm


def _reloaded_still_right(model: nn.Module, gm: Any, inputs: list[Any]) -> None:
    """New weights loaded after the rewrite: derived weights follow (the verifier's check)."""
    torch.manual_seed(7)
    fresh = {
        k: torch.randn_like(v) if v.is_floating_point() else v
        for k, v in model.state_dict().items()
    }
    for k, v in fresh.items():
        if "running_var" in k:
            fresh[k] = v.abs() + 0.5
    model.load_state_dict(fresh)
    gm.load_state_dict(fresh, strict=False)
    with torch.no_grad():
        torch.testing.assert_close(gm(*inputs), model(*inputs), rtol=1e-4, atol=1e-4)


class DiagLeft(nn.Module):
    def forward(self, d, b):
        return torch.diag(d) @ b


class DiagRight(nn.Module):
    def forward(self, a, d):
        return torch.matmul(a, torch.diag(d))


def test_diag_matmul_is_a_broadcast_multiply_both_sides() -> None:
    d, b = torch.randn(33), torch.randn(33, 17)
    gm = _check(DiagLeft(), [d, b], "diag_matmul", exact=True)
    assert "matmul" not in gm.code and "diag" not in gm.code
    _check(DiagRight(), [torch.randn(9, 33), d], "diag_matmul", exact=True)
    # A vector or a batch on the other side: the broadcast follows matmul's rules.
    _check(DiagLeft(), [d, torch.randn(33)], "diag_matmul", exact=True)
    _check(DiagLeft(), [d, torch.randn(4, 33, 5)], "diag_matmul", exact=True)
    _check(DiagRight(), [torch.randn(33), d], "diag_matmul", exact=True)


def test_diag_of_a_matrix_is_not_a_diagonal_matmul() -> None:
    class DiagOfMatrix(nn.Module):
        def forward(self, a, b):
            return torch.diag(a) @ b  # diag of a matrix is its diagonal vector

    _, n = _rewrite(DiagOfMatrix(), [torch.randn(8, 8), torch.randn(8, 4)], "diag_matmul")
    assert n == 0


@pytest.mark.parametrize("which", ["tril", "triu"])
@pytest.mark.parametrize("diagonal", [0, 1, -2])
def test_triangular_matmul_computes_only_the_kept_triangle(which: str, diagonal: int) -> None:
    mask = getattr(torch, which)

    class Tri(nn.Module):
        def forward(self, a, b):
            return mask(torch.matmul(a, b), diagonal)

    # 1100 rows: two uneven bands of the banded helper.
    a, b = torch.randn(1100, 40), torch.randn(40, 1100)
    gm = _check(Tri(), [a, b], "triangular_matmul", exact=False)
    assert "kernelopt_" + which + "_matmul" in gm.code


@pytest.mark.parametrize(
    "form", ["a @ a.t()", "a @ a.T", "torch.matmul(a, a.transpose(0, 1))", "a.T @ a", "batched"]
)
def test_symmetric_gram_computes_one_triangle_and_mirrors_it(form: str) -> None:
    from kernelopt_jupyter.agents.rewrites.helpers import kernelopt_gram

    class Gram(nn.Module):
        def forward(self, a):
            if form == "batched":
                return a @ a.transpose(-1, -2)
            return eval(form)

    # 1100 rows: two uneven bands; the A^T A form needs 1100 columns instead
    shape = {"a.T @ a": (40, 1100), "batched": (2, 1100, 24)}.get(form, (1100, 40))
    a = torch.randn(*shape, dtype=torch.float64)
    gm = _check(Gram(), [a], "symmetric_gram", exact=False)
    assert "kernelopt_gram" in gm.code
    # the helper computes the lower blocks and mirrors them: symmetric exactly, dense values
    out = kernelopt_gram(a if form != "a.T @ a" else a.T)
    assert torch.equal(out, out.mT)
    torch.testing.assert_close(out, gm(a), rtol=0, atol=0)


def test_symmetric_gram_leaves_other_products_and_small_ones_alone() -> None:
    class Other(nn.Module):
        def forward(self, a, b):
            return a @ b.t()  # not the same tensor

    _, n = _rewrite(Other(), [torch.randn(1100, 8), torch.randn(1100, 8)], "symmetric_gram")
    assert n == 0

    class Small(nn.Module):
        def forward(self, a):
            return a @ a.t()  # 64 rows: one band, nothing to skip

    _, n = _rewrite(Small(), [torch.randn(64, 8)], "symmetric_gram")
    assert n == 0

    class Transposed3d(nn.Module):
        def forward(self, a):
            return a @ a.transpose(0, 1)  # swaps the batch dimension: not a Gram matrix

    _, n = _rewrite(Transposed3d(), [torch.randn(4, 4, 4)], "symmetric_gram")
    assert n == 0


def test_gram_helper_skips_products() -> None:
    """The banded helper really does less work: count the multiply-adds of its GEMMs."""
    from torch.utils.flop_counter import FlopCounterMode

    from kernelopt_jupyter.agents.rewrites.helpers import kernelopt_gram

    a = torch.randn(4096, 64)
    with FlopCounterMode(display=False) as dense:
        a @ a.T
    with FlopCounterMode(display=False) as banded:
        kernelopt_gram(a)
    ratio = banded.get_total_flops() / dense.get_total_flops()
    assert ratio == pytest.approx(9 / 16, abs=0.01)  # eight bands: (8 + 1) / (2 * 8)


def test_triangular_matmul_leaves_a_shared_product_alone() -> None:
    class Shared(nn.Module):
        def forward(self, a, b):
            p = a @ b
            return torch.tril(p) + p

    _, n = _rewrite(Shared(), [torch.randn(16, 16), torch.randn(16, 16)], "triangular_matmul")
    assert n == 0


class LinearSum(nn.Module):
    def __init__(self, kind: str = "sum", keepdim: bool = False, bias: bool = True) -> None:
        super().__init__()
        self.fc = nn.Linear(24, 40, bias=bias)
        self.kind, self.keepdim = kind, keepdim

    def forward(self, x):
        y = self.fc(x)
        return getattr(torch, self.kind)(y, dim=-1, keepdim=self.keepdim)


@pytest.mark.parametrize("kind", ["sum", "mean"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reduction_after_linear_folds_into_the_weights(kind: str, keepdim: bool) -> None:
    model, x = LinearSum(kind, keepdim), [torch.randn(6, 5, 24)]
    gm = _check(model, x, "linear_reduction", exact=False)
    assert "fc(" not in gm.code  # the GEMM is gone
    _reloaded_still_right(model, gm, x)


def test_reduction_after_plain_matmul_both_axes() -> None:
    class RowCol(nn.Module):
        def forward(self, a, m):
            return (a @ m).sum(-1) + (a @ m).sum(-2, keepdim=True).sum()

    _check(
        RowCol(), [torch.randn(12, 9), torch.randn(9, 7)], "linear_reduction", exact=False, sites=2
    )


def test_reduction_over_the_batch_dim_is_not_folded() -> None:
    class BatchSum(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(8, 8)

        def forward(self, x):
            return self.fc(x).sum(dim=0)

    _, n = _rewrite(BatchSum(), [torch.randn(4, 8)], "linear_reduction")
    assert n == 0


def _bn(c: int, dims: int = 2) -> nn.Module:
    bn = [nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d][dims - 1](c)
    with torch.no_grad():
        bn.running_mean.normal_(0, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.normal_(0, 0.2)
    return bn


class ConvBN(nn.Module):
    def __init__(self, dims: int, bias: bool, groups: int = 1) -> None:
        super().__init__()
        conv = [nn.Conv1d, nn.Conv2d, nn.Conv3d][dims - 1]
        self.conv = conv(4, 8, 3, padding=1, bias=bias, groups=groups)
        self.bn = _bn(8, dims)

    def forward(self, x):
        return F.silu(self.bn(self.conv(x)))


@pytest.mark.parametrize(
    ("dims", "bias", "groups"), [(1, True, 1), (2, False, 1), (2, True, 4), (3, False, 2)]
)
def test_batchnorm_folds_into_the_conv_and_follows_reloads(
    dims: int, bias: bool, groups: int
) -> None:
    model = ConvBN(dims, bias, groups)
    x = [torch.randn(2, 4, *([6] * dims))]
    gm = _check(model, x, "fold_batchnorm", exact=False)
    assert "bn(" not in gm.code
    _reloaded_still_right(model, gm, x)
    # The rewritten module keeps every state_dict key (the harvest declares them all).
    assert set(model.state_dict()) <= set(gm.state_dict()) | {"bn.num_batches_tracked"}


def test_batchnorm_after_linear_folds_only_on_2d_features() -> None:
    class LinBN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(16, 8)
            self.bn = _bn(8, 1)

        def forward(self, x):
            return torch.relu(self.bn(self.fc(x)))

    model = LinBN()
    gm = _check(model, [torch.randn(5, 16)], "fold_batchnorm", exact=False)
    _reloaded_still_right(model, gm, [torch.randn(5, 16)])


def test_batchnorm_in_training_mode_is_not_folded() -> None:
    model = ConvBN(2, True)
    gm = trace(model.train())  # training mode: batch statistics, no fold
    propagate_shapes(gm, [torch.randn(2, 4, 6, 6)])
    canonicalize(gm)
    assert BY_NAME["fold_batchnorm"].apply(gm) == 0


class AffineChain(nn.Module):
    def __init__(self, bias: bool = True, conv: bool = False) -> None:
        super().__init__()
        self.layer = nn.Conv2d(3, 5, 3, bias=bias) if conv else nn.Linear(12, 10, bias=bias)

    def forward(self, x):
        y = self.layer(x) * 1.5
        y = y + 0.25
        y = y / 3.0
        y = 2.0 - y
        return -y


@pytest.mark.parametrize(
    ("bias", "conv"), [(True, False), (False, False), (True, True), (False, True)]
)
def test_constant_chain_folds_into_the_layer(bias: bool, conv: bool) -> None:
    model = AffineChain(bias, conv)
    x = [torch.randn(4, 3, 7, 7) if conv else torch.randn(4, 12)]
    gm = _check(model, x, "fold_affine_constants", exact=False)
    assert "2.0" not in gm.code and "0.25" not in gm.code
    _reloaded_still_right(model, gm, x)


def test_constant_chain_with_a_tensor_operand_is_not_folded() -> None:
    class TensorScale(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x, s):
            return self.fc(x) * s

    _, n = _rewrite(TensorScale(), [torch.randn(2, 4), torch.randn(2, 4)], "fold_affine_constants")
    assert n == 0


@pytest.mark.parametrize("act", ["relu", "module_relu", "method_relu"])
def test_gemm_activation_becomes_the_vendor_epilogue(act: str) -> None:
    class Lin(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(16, 24)
            self.act = nn.ReLU()

        def forward(self, x):
            y = self.fc(x)
            if act == "relu":
                return torch.relu(y)
            if act == "module_relu":
                return self.act(y)
            return y.relu()

    for x in (torch.randn(7, 16), torch.randn(3, 5, 16)):
        gm = _check(Lin(), [x], "gemm_activation_epilogue", exact=False)
        assert "_addmm_activation" in gm.code


def test_gelu_is_not_turned_into_the_device_dependent_epilogue() -> None:
    class Lin(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(8, 8)

        def forward(self, x):
            return F.gelu(self.fc(x), approximate="tanh") + F.gelu(self.fc(x))

    _, n = _rewrite(Lin(), [torch.randn(2, 8)], "gemm_activation_epilogue")
    assert n == 0


def test_identities_are_removed_bit_exactly() -> None:
    class Idle(nn.Module):
        def forward(self, x):
            s = x.sum(dim=1, keepdim=True)  # (n, 1): a real reduction, kept
            a = torch.softmax(s, dim=1) + torch.log_softmax(s, dim=-1)
            b = torch.logsumexp(s, dim=1) + s.mean(1) + torch.amax(s, dim=(1,))
            c = x.transpose(0, 1).transpose(1, 0) + x.transpose(-1, 0).transpose(0, 1)
            return a.squeeze(1) + b + c.sum(1)

    x = torch.randn(6, 5)
    x[0, 0] = math.inf  # softmax/log_softmax of inf over one element are NaN: kept as NaN
    gm, n = _rewrite(Idle(), [x], "drop_identities")
    assert n == 7
    with torch.no_grad():
        torch.testing.assert_close(gm(x), Idle()(x), equal_nan=True, rtol=0, atol=0)
    assert "softmax" not in gm.code and "logsumexp" not in gm.code


def test_stable_chains_replace_hand_written_softmax_and_logsumexp() -> None:
    class Chains(nn.Module):
        def forward(self, x):
            e = torch.exp(x)
            soft = e / e.sum(dim=-1, keepdim=True)
            lse = torch.log(torch.sum(torch.exp(x), dim=1))
            return soft.sum(-1) + lse + torch.log(torch.softmax(x, dim=-1)).mean(-1)

    x = torch.randn(4, 9)
    gm = _check(Chains(), [x], "stable_chains", exact=False, sites=3)
    assert "torch.exp" not in gm.code and "torch.log(" not in gm.code


def test_every_rule_says_how_exact_it_is() -> None:
    assert {r.exact for r in REWRITES} <= {"bit-exact", "reassociation"}
    assert all(r.apply.__doc__ and "Faster" in r.apply.__doc__ for r in REWRITES)


def _load(text: str, name: str) -> types.ModuleType:
    from kernelopt_jupyter.problem import load_source_module

    return load_source_module(text, name)


PROBLEM = '''"""A conv + BN + ReLU, then a constant scale."""

import os

import torch
import torch.nn as nn

# Sizes read from the environment: a problem may, a candidate may not.
SIDE = 6 if os.environ.get("KERNELOPT_SMALL") == "1" else 8

KERNELOPT_MODE = "eval"  # an inference block: BatchNorm uses its running statistics


class Model(nn.Module):
    def __init__(self, c: int):
        super().__init__()
        self.conv = nn.Conv2d(c, 2 * c, 3, padding=1)
        self.bn = nn.BatchNorm2d(2 * c)
        with torch.no_grad():
            self.bn.running_var.uniform_(0.5, 2.0)
        self.head = nn.Linear(2 * c, 3)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        return self.head(y.mean(dim=(2, 3))) * 0.5


def get_inputs():
    return [torch.randn(2, 4, SIDE, SIDE)]


def get_init_inputs():
    return [4]
'''


def test_scan_finds_rules_and_renders_runnable_sources() -> None:
    found = scan(PROBLEM, "<test>")
    names = [tuple(m.names) for m in found.matches]
    assert ("fold_batchnorm",) in names and ("fold_affine_constants",) in names
    assert names[0] == ("fold_batchnorm", "fold_affine_constants")  # the combination first
    ref_mod = _load(PROBLEM, "rw_ref")
    torch.manual_seed(0)
    ref = ref_mod.Model(4).eval()
    x = torch.randn(2, 4, 8, 8)
    for m in found.matches:
        cand_mod = _load(m.eager_source, f"rw_cand_{'_'.join(m.names)}")
        assert cand_mod.KERNELOPT_DISPATCH_ONLY is True
        cand = cand_mod.ModelNew(4).eval()
        cand.load_state_dict(ref.state_dict(), strict=True)
        prob_mod = _load(m.problem_source, f"rw_prob_{'_'.join(m.names)}")
        rewritten = prob_mod.Model(4).eval()
        rewritten.load_state_dict(ref.state_dict(), strict=True)
        with torch.no_grad():
            torch.testing.assert_close(cand(x), ref(x), rtol=1e-4, atol=1e-5)
            torch.testing.assert_close(rewritten(x), ref(x), rtol=1e-4, atol=1e-5)
        assert "\nclass Model(" not in m.eager_source  # the static gate bans the name
        # The harness's parts stay in the problem: no input makers, no environment reads.
        assert "get_inputs" not in m.eager_source and "environ" not in m.eager_source
        assert "get_inputs" in m.problem_source


def test_rendered_helper_is_self_contained() -> None:
    class Tri(nn.Module):
        def forward(self, a, b):
            return torch.tril(a @ b)

    a, b = torch.randn(20, 20), torch.randn(20, 20)
    gm, n = _rewrite(Tri(), [a, b], "triangular_matmul")
    assert n == 1
    source = "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    pass\n"
    text = rewritten_source(source, gm, "none", ["tri"], candidate=True)
    cand = _load(text, "rw_tri").ModelNew()
    torch.testing.assert_close(cand(a, b), torch.tril(a @ b), rtol=1e-5, atol=1e-5)


def test_a_gram_problem_is_found_and_rendered_self_contained() -> None:
    source = (
        "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
        "    def forward(self, x):\n        return torch.matmul(x, x.T) * 0.5\n\n\n"
        "def get_inputs():\n    return [torch.randn(1536, 32)]\n"
    )
    found = scan(source, "<gram>")
    [match] = [m for m in found.matches if m.names == ["symmetric_gram"]]
    assert match.exact == "reassociation" and match.sites == 1
    text = match.eager_source
    assert "def kernelopt_gram" in text and "import kernelopt_jupyter" not in text
    assert "from kernelopt_jupyter" not in text
    x = torch.randn(1536, 32)
    torch.testing.assert_close(_load(text, "rw_gram").ModelNew()(x), x @ x.T * 0.5)


def test_untraceable_model_is_reported_not_raised() -> None:
    source = PROBLEM.replace(
        "y = torch.relu(self.bn(self.conv(x)))",
        "y = torch.relu(self.bn(self.conv(x)))\n        if float(y.mean()) > 0.0:  # data-dependent\n            y = y + 1",
    )
    found = scan(source, "<test>")
    assert not found.matches and "meta device" in found.error


class WrittenAttention(nn.Module):
    def __init__(self, how: str) -> None:
        super().__init__()
        self.how = how

    def forward(self, q, k, v):
        s = q @ k.transpose(-2, -1)
        if self.how == "div":
            s = s / math.sqrt(q.shape[-1])
        elif self.how == "mul":
            s = 0.3 * s
        return torch.matmul(torch.softmax(s, dim=-1), v)


@pytest.mark.parametrize("how", ["div", "mul", "none"])
def test_written_out_attention_becomes_one_attention_kernel(how: str) -> None:
    q, k, v = torch.randn(2, 3, 10, 8), torch.randn(2, 3, 12, 8), torch.randn(2, 3, 12, 5)
    gm = _check(WrittenAttention(how), [q, k, v], "attention_to_sdpa", exact=False)
    assert "scaled_dot_product_attention" in gm.code and "softmax" not in gm.code


def test_attention_with_a_mask_or_shared_scores_is_left_alone() -> None:
    class Masked(nn.Module):
        def forward(self, q, k, v, m):
            s = q @ k.transpose(-2, -1) + m
            return torch.softmax(s, dim=-1) @ v

    class Shared(nn.Module):
        def forward(self, q, k, v):
            p = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
            return p @ v, p

    q = torch.randn(2, 6, 4)
    _, n = _rewrite(Masked(), [q, q, q, torch.randn(6, 6)], "attention_to_sdpa")
    assert n == 0
    _, n = _rewrite(Shared(), [q, q, q], "attention_to_sdpa")
    assert n == 0


CHAIN = '''"""Linear, a constant division, a sum over features, a scale: two rules in sequence."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 32)

    def forward(self, x):
        y = self.fc(x) / 2.0
        return torch.sum(y, dim=1, keepdim=True) * 1.5


def get_inputs():
    return [torch.randn(8, 16)]


def get_init_inputs():
    return []
'''


def test_combined_rewrite_reaches_a_fixed_point() -> None:
    # The division must leave the layer's output before the sum can be folded into weights:
    # the e-graph engine does both in one saturation (the hand-written rules took two, in
    # turn: fold_affine_constants, then linear_reduction).
    found = scan(CHAIN, "<chain>")
    combined = found.matches[0]
    assert combined.names == ["algebra"]
    ref = _load(CHAIN, "rw_chain_ref").Model().eval()
    cand = _load(combined.eager_source, "rw_chain_cand").ModelNew().eval()
    cand.load_state_dict(ref.state_dict())
    x = torch.randn(8, 16)
    with torch.no_grad():
        torch.testing.assert_close(cand(x), ref(x), rtol=1e-5, atol=1e-5)
    assert "fc(" not in combined.eager_source.split("class ModelNew")[1]


class Unrolled(nn.Module):
    """An input projection applied step by step, under a loop over a shape (meta tracing)."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(6, 10)
        self.rec = nn.Linear(10, 10, bias=False)

    def forward(self, xs, h):
        outs = []
        for t in range(xs.shape[1]):
            h = torch.tanh(self.proj(xs[:, t]) + self.rec(h))
            outs.append(h)
        return torch.stack(outs, dim=1)


def test_sliced_linear_is_hoisted_out_of_an_unrolled_loop() -> None:
    model = Unrolled().eval()
    inputs = [torch.randn(3, 5, 6), torch.randn(3, 10)]
    with pytest.raises(Exception):  # noqa: B017 (plain symbolic tracing cannot follow range(shape))
        torch.fx.symbolic_trace(model)
    gm = trace(model, inputs)
    propagate_shapes(gm, inputs)
    canonicalize(gm)
    assert BY_NAME["hoist_sliced_linear"].apply(gm) == 5
    assert gm.code.count("self.proj(") == 1 and gm.code.count("self.rec(") == 5
    with torch.no_grad():
        torch.testing.assert_close(gm(*inputs), model(*inputs), rtol=1e-5, atol=1e-5)


def test_a_slice_of_the_feature_dim_is_not_hoisted() -> None:
    class Features(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            return self.fc(x[:, 0]) + self.fc(x[:, 1])  # x is (n, 2, 4): dim 1 is a step

    class Last(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(1, 3)

        def forward(self, x):
            return self.fc(x[:, 0:1]) + self.fc(x[:, 1:2])  # slices, not indices: left alone

    _check(Features(), [torch.randn(5, 2, 4)], "hoist_sliced_linear", exact=False, sites=2)
    _, n = _rewrite(Last(), [torch.randn(5, 2)], "hoist_sliced_linear")
    assert n == 0


def test_a_rule_that_raises_costs_only_its_own_candidate(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in one rule (an exception other than RewriteError) is recorded in the scan's error
    and the other rules' candidates are still offered (before, the whole scan failed)."""
    from kernelopt_jupyter.agents.rewrites import rules
    from kernelopt_jupyter.agents.rewrites.rules import Rewrite

    def broken(gm: Any) -> int:
        raise IndexError("a bug in the rule")

    rule = Rewrite("broken_rule", "a rule with a bug", "bit-exact", broken)
    monkeypatch.setattr(rules, "REWRITES", [rule, *rules.REWRITES])
    found = scan(PROBLEM, "<test>")
    names = [tuple(m.names) for m in found.matches]
    assert ("fold_batchnorm",) in names, names
    assert "broken_rule: IndexError: a bug in the rule" in found.error, found.error
    assert "combined: IndexError" in found.error, found.error
