"""Kept kernel libraries (``kept_libraries.py``): the Liger-Kernel rules take the sites the
family rules take, and only those Liger can run; the candidates they render call Liger as a
labelled, dispatch-only vendor call; Liger's kernels equal torch in float64 under Triton's
interpreter (a fresh process: the interpreter is chosen when kernels are decorated); and such
a candidate passes the verifier on the CPU.

Liger-Kernel is the optional extra ``liger``; the test extra installs it (pure Python over
the pinned torch and Triton), so these tests run in CI. Where it is missing they skip and say
so; the rules then offer nothing, which ``test_without_liger_the_rules_offer_nothing`` checks.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from _family import interpret

from kernelopt_jupyter.agents.rewrites import kept_libraries
from kernelopt_jupyter.agents.rewrites.canonical import canonicalize, is_call
from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes, trace
from kernelopt_jupyter.agents.rewrites.kept_libraries import (
    KEPT_CALLS,
    liger_available,
    liger_cross_entropy_call,
    liger_group_norm_call,
    liger_kl_div_call,
    liger_norm,
)
from kernelopt_jupyter.agents.rewrites.rules import BY_NAME, REWRITES
from kernelopt_jupyter.agents.rewrites.task import scan
from kernelopt_jupyter.candidate import is_dispatch_only
from kernelopt_jupyter.verify.static import analyze_candidate

needs_liger = pytest.mark.skipif(
    not liger_available(),
    reason="Liger-Kernel is not installed: it is the optional extra `liger` "
    "(pip install -e '.[liger]'); the test extra installs it",
)


class Fn(nn.Module):
    """A module whose forward is ``fn(self, *inputs)``; ``layer`` a layer it may call."""

    def __init__(self, fn: Callable[..., torch.Tensor], layer: nn.Module | None = None) -> None:
        super().__init__()
        self.fn, self.layer = fn, layer

    def forward(self, a, b=None):
        if self.fn.__code__.co_argcount == 2:  # fn(m, x): one operand
            return self.fn(self, a)
        return self.fn(self, a, b)


def _rms(m: Any, x: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


def _probabilities() -> list[torch.Tensor]:
    return [torch.rand(6, 37).softmax(-1), torch.rand(6, 37).softmax(-1)]


def _classes() -> list[torch.Tensor]:
    return [torch.randn(6, 37), torch.randint(0, 37, (6,))]


#: name -> (module, inputs, the kept rule, the wrapper it calls): each family, spelled apart.
_SITES: dict[str, tuple[nn.Module, Callable[[], list[torch.Tensor]], str, Any]] = {
    "rms, written out with rsqrt": (Fn(_rms), lambda: [torch.randn(4, 5, 37)],
                                    "liger_rms_norm", liger_norm),
    "rms, layer": (Fn(lambda m, x: m.layer(x), nn.RMSNorm(37)), lambda: [torch.randn(4, 37)],
                   "liger_rms_norm", liger_norm),
    "layer norm, two trailing dims": (Fn(lambda m, x: m.layer(x), nn.LayerNorm((5, 37))),
                                      lambda: [torch.randn(4, 5, 37)], "liger_layer_norm",
                                      liger_norm),
    "layer norm, function without affine": (Fn(lambda m, x: F.layer_norm(x, (37,))),
                                            lambda: [torch.randn(4, 37)], "liger_layer_norm",
                                            liger_norm),
    "group norm, layer": (Fn(lambda m, x: m.layer(x), nn.GroupNorm(3, 6)),
                          lambda: [torch.randn(2, 6, 5, 7)], "liger_group_norm",
                          liger_group_norm_call),
    "group norm, function": (Fn(lambda m, x: F.group_norm(x, 2, eps=1e-3)),
                             lambda: [torch.randn(2, 6, 9)], "liger_group_norm",
                             liger_group_norm_call),
    "cross entropy, layer": (Fn(lambda m, x, y: m.layer(x, y), nn.CrossEntropyLoss()), _classes,
                             "liger_loss", liger_cross_entropy_call),
    "cross entropy, nll of a log-softmax": (
        Fn(lambda m, x, y: F.nll_loss(torch.log_softmax(x, 1), y, reduction="sum")), _classes,
        "liger_loss", liger_cross_entropy_call),
    "kl, function of a log (KernelBench)": (
        Fn(lambda m, p, q: F.kl_div(torch.log(p), q, reduction="batchmean")), _probabilities,
        "liger_loss", liger_kl_div_call),
    "kl, layer with log targets": (Fn(lambda m, p, q: m.layer(p, q),
                                      nn.KLDivLoss(reduction="sum", log_target=True)),
                                   _probabilities, "liger_loss", liger_kl_div_call),
}  # fmt: skip

#: Sites the family rule takes and Liger cannot run: name -> (module, inputs, kept rule, own).
_NOT_LIGER: dict[str, tuple[nn.Module, Callable[[], list[torch.Tensor]], str, str]] = {
    "rms over the channels of NCHW": (
        Fn(lambda m, x: x / torch.sqrt(x.pow(2).mean(1, keepdim=True) + 1e-5)),
        lambda: [torch.randn(2, 6, 5, 7)], "liger_rms_norm", "rms_norm_kernel"),
    "layer norm over rows longer than one block": (
        Fn(lambda m, x: F.layer_norm(x, (256, 300))), lambda: [torch.randn(2, 256, 300)],
        "liger_layer_norm", "layer_norm_kernel"),
    "cross entropy of images (N, C, H, W)": (
        Fn(lambda m, x, y: F.cross_entropy(x, y)),
        lambda: [torch.randn(2, 5, 3, 4), torch.randint(0, 5, (2, 3, 4))], "liger_loss",
        "loss_kernel"),
    "kl batchmean of a 3-d tensor": (
        Fn(lambda m, p, q: F.kl_div(p, q, reduction="batchmean")),
        lambda: [torch.randn(2, 3, 8), torch.rand(2, 3, 8)], "liger_loss", "loss_kernel"),
    "mse (Liger has no such loss)": (
        Fn(lambda m, a, b: F.mse_loss(a, b)), lambda: [torch.randn(4, 9), torch.randn(4, 9)],
        "liger_loss", "loss_kernel"),
}  # fmt: skip


def _apply(model: nn.Module, inputs: list[torch.Tensor], rule: str) -> tuple[Any, int]:
    gm = trace(model)
    assert propagate_shapes(gm, inputs)
    canonicalize(gm)
    return gm, BY_NAME[rule].apply(gm)


@needs_liger
@pytest.mark.parametrize("name", list(_SITES))
def test_each_kept_rule_routes_its_family_to_liger(name: str) -> None:
    model, inputs, rule, wrapper = _SITES[name]
    gm, sites = _apply(model, inputs(), rule)
    assert sites == 1
    calls = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert calls == [wrapper], calls  # the whole op, no KernelOPT kernel, no torch op left
    # The wrapper gives the reference's shape on the meta device (how a scan propagates).
    meta = [t.to("meta") for t in inputs()]
    with torch.device("meta"):
        want = model.to("meta")(*meta)
    assert gm.to("meta")(*meta).shape == want.shape


@needs_liger
@pytest.mark.parametrize("name", list(_NOT_LIGER))
def test_a_site_liger_cannot_run_is_left_to_the_family_rule(name: str) -> None:
    model, inputs, rule, own = _NOT_LIGER[name]
    _, sites = _apply(model, inputs(), rule)
    assert sites == 0
    _, own_sites = _apply(model, inputs(), own)
    assert own_sites == 1  # the project's own kernel still takes it


@needs_liger
def test_one_site_liger_cannot_run_keeps_the_whole_graph_off_liger() -> None:
    # A candidate mixing Liger with KernelOPT's kernel would be neither dispatch-only nor free
    # of PyTorch compute: the rule routes all sites or none.
    model = Fn(lambda m, x: F.layer_norm(x, (37,)) + F.layer_norm(x.view(4, -1), (5 * 37,)).sum())
    gm, sites = _apply(model, [torch.randn(4, 5, 37)], "liger_layer_norm")
    assert sites == 2
    model = Fn(lambda m, x: F.layer_norm(x, (300,)).sum() + F.layer_norm(x, (512, 300)).sum())
    gm, sites = _apply(model, [torch.randn(2, 512, 300)], "liger_layer_norm")
    assert sites == 0
    assert not any(is_call(n, *(fn for fn, _ in KEPT_CALLS.values())) for n in gm.graph.nodes)


def test_without_liger_the_rules_offer_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept_libraries, "liger_available", lambda: False)
    for name in ("rms, written out with rsqrt", "kl, function of a log (KernelBench)"):
        model, inputs, rule, _ = _SITES[name]
        assert _apply(model, inputs(), rule)[1] == 0


def test_kept_rules_are_labelled_and_never_combined() -> None:
    kept = [r for r in REWRITES if r.kept_library]
    assert {r.name for r in kept} == {
        "liger_rms_norm", "liger_layer_norm", "liger_group_norm", "liger_loss"
    }  # fmt: skip
    for r in kept:
        assert r.title.startswith("kept library Liger-Kernel: ") and "(vendor call)" in r.title
        assert r.eager_only and not r.kernels


_PROBLEM = textwrap.dedent(
    """
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.norm = nn.LayerNorm(dim)

        def forward(self, x):
            return self.norm(x) + x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


    def get_inputs():
        return [torch.randn(5, 7, 129)]


    def get_init_inputs():
        return [129]
    """
)


@needs_liger
def test_the_candidate_calls_liger_as_a_dispatch_only_vendor_call() -> None:
    found = scan(_PROBLEM, "<norms>")
    names = [m.names for m in found.matches]
    assert ["liger_layer_norm"] in names and ["liger_rms_norm"] in names
    # Alone only: combinations are KernelOPT's own rules.
    assert not any(len(n) > 1 and any(x.startswith("liger") for x in n) for n in names)
    (match,) = [m for m in found.matches if m.names == ["liger_layer_norm"]]
    assert match.title == "rewrite: kept library Liger-Kernel: LayerNorm (vendor call)"
    source = match.eager_source
    assert "from liger_kernel.transformers.functional import liger_layer_norm" in source
    assert "@triton.jit" not in source  # the kernels are Liger's, not copied in
    assert is_dispatch_only(source)
    analysis = analyze_candidate(source)
    assert analysis.violations == [] and analysis.dispatch_only_declared


_CHECK = textwrap.dedent(
    """
    import json, sys
    import torch
    import torch.nn.functional as F
    from kernelopt_jupyter.cpu_triton import install_interpreter_shims
    assert install_interpreter_shims()
    from kernelopt_jupyter.agents.rewrites import kept_libraries as k

    torch.manual_seed(0)
    results = []

    def err(got, want):
        assert got.shape == want.shape and got.dtype == torch.float32, (got.shape, want.shape)
        return float((got.double() - want).abs().max() / max(1.0, float(want.abs().max())))

    for shape, first in json.loads(sys.argv[1]):
        x = torch.randn(shape) * 3 + 1
        w, b = torch.randn(shape[first:]), torch.randn(shape[first:])
        dims = tuple(shape[first:])
        got = k.liger_norm(x, first, w, None, 1e-5, True)
        results.append(["rms", shape, err(got, F.rms_norm(x.double(), dims, w.double(), 1e-5))])
        got = k.liger_norm(x, first, w, b, 1e-5, False)
        want = F.layer_norm(x.double(), dims, w.double(), b.double(), 1e-5)
        results.append(["layer", shape, err(got, want)])
        got = k.liger_norm(x, first, None, None, 1e-5, False)
        results.append(["layer, plain", shape, err(got, F.layer_norm(x.double(), dims))])
    for shape, groups in json.loads(sys.argv[2]):
        x = torch.randn(shape) * 2 - 1
        w, b = torch.randn(shape[1]), torch.randn(shape[1])
        got = k.liger_group_norm_call(x, groups, w, b, 1e-5)
        want = F.group_norm(x.double(), groups, w.double(), b.double(), 1e-5)
        results.append(["group", shape, err(got, want)])
        got = k.liger_group_norm_call(x, groups, None, None, 1e-5)
        results.append(["group, plain", shape, err(got, F.group_norm(x.double(), groups))])
    for rows, classes in json.loads(sys.argv[3]):
        x = torch.randn(rows, classes) * 3
        y = torch.randint(0, classes, (rows,))
        y[1::3] = -100  # ignored rows: out of the sum and of the mean's count
        p, q = torch.rand(rows, classes).softmax(-1), torch.rand(rows, classes).softmax(-1)
        for reduction in ("mean", "sum"):
            got = k.liger_cross_entropy_call(x, y, -100, reduction)
            want = F.cross_entropy(x.double(), y, reduction=reduction)
            results.append(["cross entropy " + reduction, [rows, classes], err(got, want)])
        for reduction in ("mean", "sum", "batchmean"):
            got = k.liger_kl_div_call(p, q, True, False, reduction)
            want = F.kl_div(p.double().log(), q.double(), reduction=reduction)
            results.append(["kl " + reduction, [rows, classes], err(got, want)])
            got = k.liger_kl_div_call(p.log(), q.log(), False, True, reduction)
            want = F.kl_div(p.double().log(), q.double().log(), reduction=reduction,
                            log_target=True)
            results.append(["kl log target " + reduction, [rows, classes], err(got, want)])
    print(json.dumps(results))
    """
)


@needs_liger
def test_liger_kernels_equal_torch_under_the_interpreter() -> None:
    norms = [((7, 129), 1), ((3, 5, 37), 1), ((2, 3, 1023), 2), ((1, 1), 1)]
    groups = [((3, 6, 5, 7), 3), ((2, 4, 1001), 2), ((1, 5, 3), 5)]
    losses = [(7, 129), (5, 1023), (1, 3)]
    results = interpret(_CHECK, norms, groups, losses)
    assert len(results) == 3 * len(norms) + 2 * len(groups) + 8 * len(losses)
    for *case, error in results:
        assert error < 2e-6, case


_VERIFY_PROBLEM = textwrap.dedent(
    """
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def __init__(self):
            super().__init__()

        def forward(self, logits, targets):
            return torch.nn.functional.cross_entropy(logits, targets)


    def get_inputs():
        return [torch.randn(33, 257), torch.randint(0, 257, (33,))]


    def get_init_inputs():
        return []
    """
)


@needs_liger
def test_a_liger_candidate_passes_the_verifier() -> None:
    # Liger's host code runs PyTorch ops beside its kernel (the class-index mask, the final
    # sum): as a dispatch-only vendor call that is allowed, and its kernel is still launched,
    # compiled for sm_90 and its values judged against the reference and float64.
    from kernelopt_jupyter.problem import problem_from_source
    from kernelopt_jupyter.verify import verify_candidate
    from kernelopt_jupyter.verify.report import VerifyOptions

    found = scan(_VERIFY_PROBLEM, "<cross entropy>")
    (match,) = [m for m in found.matches if m.names == ["liger_loss"]]
    problem = problem_from_source(_VERIFY_PROBLEM, "<cross entropy>")
    report = verify_candidate(problem, match.eager_source, VerifyOptions(device="cpu"))
    gates = {g.name: g for g in report.gates}
    assert gates["static"].passed, gates["static"].detail
    assert "liger_cross_entropy_kernel" in gates["static"].detail  # Liger's kernel ran
    assert gates["correctness"].passed, gates["correctness"].detail
    assert gates["fp64"].passed, gates["fp64"].detail
