"""KernelOPT's op-family kernels (``family_kernels.py``) and their rules (``family_rules.py``):
what each rule matches however the op is spelled, the kernels' values under Triton's
interpreter against torch in float64 (a fresh process: the interpreter is chosen when kernels
are decorated), and the candidate they render (its launch settings lifted for the Tuner)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn as nn
from _kernelbench import dev_problems, problem_ids

from kernelopt_jupyter.agents.rewrites.canonical import canonicalize
from kernelopt_jupyter.agents.rewrites.family_kernels import kernelopt_scan
from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes, trace
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


def _rewrite(model: nn.Module, inputs: list[torch.Tensor], rule: str) -> tuple[Any, int]:
    gm = trace(model)
    assert propagate_shapes(gm, inputs)
    canonicalize(gm)
    return gm, BY_NAME[rule].apply(gm)


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
}


@pytest.mark.parametrize("spelling", list(_SCANS))
def test_the_scan_rule_takes_every_spelling_and_leaves_no_other_compute(spelling: str) -> None:
    gm, n = _rewrite(Forward(_SCANS[spelling]), [torch.randn(4, 9)], "scan_kernel")
    assert n == 1
    assert foreign_compute(gm) is None  # the flips, slices and concatenation went with it
    calls = [node for node in gm.graph.nodes if node.target is kernelopt_scan]
    assert len(calls) == 1


@pytest.mark.parametrize("order", ["x*m", "m*x"])
def test_a_masked_scan_takes_the_mask_into_the_kernel(order: str) -> None:
    x, mask = torch.randn(4, 9), torch.rand(4, 9) > 0.5
    gm, n = _rewrite(Masked(order), [x, mask], "scan_kernel")
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
}


@pytest.mark.parametrize("spelling", list(_LEFT))
def test_what_is_not_the_scan_form_stays_as_written(spelling: str) -> None:
    gm, n = _rewrite(Forward(_LEFT[spelling]), [torch.randn(4, 9)], "scan_kernel")
    assert n == 1
    assert foreign_compute(gm) is not None


def test_a_scan_with_a_dtype_or_of_doubles_is_left_to_the_vendor() -> None:
    _, n = _rewrite(
        Forward(lambda x: x.cumsum(1, dtype=torch.float64)), [torch.randn(3, 5)], "scan_kernel"
    )
    assert n == 0
    _, n = _rewrite(Forward(lambda x: x.cumsum(1)), [torch.randn(3, 5).double()], "scan_kernel")
    assert n == 0


def test_the_scan_wrapper_gives_the_shape_on_the_meta_device() -> None:
    x = torch.empty(3, 5, 7, device="meta", dtype=torch.float16)
    out = kernelopt_scan(x, 1, False, True, True, None)
    assert out.device.type == "meta" and out.shape == x.shape and out.dtype == x.dtype


_SOURCE = "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    pass\n"


def test_the_scan_candidate_carries_the_kernel_and_its_tunable_launch() -> None:
    gm, _ = _rewrite(Forward(_SCANS["reverse"]), [torch.randn(4, 9)], "scan_kernel")
    source = rewritten_source(_SOURCE, gm, "none", ["scan"], candidate=True)
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
    out = subprocess.run(
        [sys.executable, "-c", _CHECK, json.dumps(cases)],
        capture_output=True,
        text=True,
        env={**os.environ, "TRITON_INTERPRET": "1"},
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    results = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(results) == 16 * len(cases) + 1
    for shape, dim, same, err in results:
        assert same and err < 1e-5, (shape, dim, err)


# --------------------------------------------------------------------------- KernelBench

#: Each op family's rule, and the calls a problem's source spells that family's op with.
FAMILIES = {"scan_kernel": re.compile(r"\bcum(sum|prod)\b")}


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
    offered = [m for m in found.matches if rule in m.names and m.kernels]
    if not offered:
        # The rule fired, but the forward computes more than the kernel takes (a network
        # with a scan inside): its candidate would launch the kernel beside PyTorch compute,
        # which the verifier refuses, so none is offered. Or no rule could see the op: the
        # reference has no FX graph (einops on a proxy).
        fired = f"{rule}: the rest of the forward runs PyTorch compute" in found.error
        untraced = found.error.startswith("not symbolically traceable")
        assert fired or untraced, (
            found.error,
            [m.names for m in found.matches],
        )
        return
    assert offered[0].title.startswith("rewrite: ") and BY_NAME[str(rule)].title in offered[0].title
    assert not is_dispatch_only(offered[0].eager_source)
