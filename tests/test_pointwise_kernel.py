"""KernelOPT's one-pass pointwise kernel (``pointwise_kernel``, ``kernelopt_pointwise``): a
chain of activations and arithmetic after a vendor GEMM or convolution, or on an input,
taken into one kernel with the chain as its epilogue, only where nothing but our kernels and
vendor calls is left; the near misses left as they were; the candidate rendered with its
tunable launch; the values under Triton's interpreter against torch in float64 at odd sizes;
the kernel compiled for the GPU."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
import torch
import torch.nn as nn
from _family import check_tunable_candidate, compile_for_sm90, interpret, rewrite

from kernelopt_jupyter.agents.rewrites.conv_transpose import kernelopt_conv_transpose
from kernelopt_jupyter.agents.rewrites.epilogue import EPILOGUE_OPS
from kernelopt_jupyter.agents.rewrites.family_kernels import kernelopt_pointwise
from kernelopt_jupyter.agents.rewrites.rules import BY_NAME, foreign_compute

#: The networks, as source text: the interpreter's process builds the same ones.
_NETS = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class OnInput(nn.Module):
        # A chain on the input itself.
        def forward(self, x):
            return torch.relu(x) * 2.0 - 0.5

    class GemmMish(nn.Module):
        # A GEMM (vendor), then two Mish.
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(13, 11)

        def forward(self, x):
            return F.mish(F.mish(self.fc(x)))

    class ConvReluBias(nn.Module):
        # A convolution (vendor), ReLU, then a per-channel bias.
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 5, 3)
            self.bias = nn.Parameter(torch.randn(5, 1, 1))

        def forward(self, x):
            return torch.relu(self.conv(x)) + self.bias

    class Residual(nn.Module):
        # The convolution's output read by the chain and added back (an operand).
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 1)

        def forward(self, x):
            y = self.conv(x)
            return torch.sigmoid(y) * y + y

    NETS = {"on_input": OnInput, "gemm_mish": GemmMish, "conv_relu_bias": ConvReluBias,
            "residual": Residual}
    SHAPES = {"on_input": (3, 7, 5), "gemm_mish": (5, 13), "conv_relu_bias": (2, 3, 7, 9),
              "residual": (2, 3, 5, 7)}
    """
)
namespace: dict[str, Any] = {}
exec(compile(_NETS, "pointwise_nets", "exec"), namespace)


def _rewritten(net: nn.Module, x: torch.Tensor) -> tuple[Any, int]:
    return rewrite(net, [x], "pointwise_kernel")


def _calls(gm: Any) -> list[Any]:
    return [n for n in gm.graph.nodes if n.target is kernelopt_pointwise]


@pytest.mark.parametrize(
    ("name", "ops"),
    [
        ("on_input", ["relu", "mul_c", "sub_c"]),
        ("gemm_mish", ["mish", "mish"]),
        ("conv_relu_bias", ["relu", "load", "add"]),
        ("residual", ["sigmoid", "mul", "add"]),
    ],
)
def test_a_chain_becomes_one_pointwise_kernel(name: str, ops: list[str]) -> None:
    torch.manual_seed(0)
    x = torch.randn(namespace["SHAPES"][name])
    gm, sites = _rewritten(namespace["NETS"][name](), x)
    assert sites == 1
    assert foreign_compute(gm) is None, foreign_compute(gm)
    (call,) = _calls(gm)
    names = {code: op for op, code in EPILOGUE_OPS.items()}
    assert [names[c] for c in call.kwargs["epilogue"][::5]] == ops


class _NearMiss(nn.Module):
    def __init__(self, how: str) -> None:
        super().__init__()
        self.how = how
        self.bn = nn.BatchNorm1d(6)

    def forward(self, x):
        if self.how == "a softmax after":
            return torch.softmax(torch.relu(x), 1)
        if self.how == "a value needed twice":
            y = torch.relu(x)
            return y, torch.tanh(y)
        if self.how == "PyTorch compute before":
            return torch.relu(self.bn(x))
        return torch.relu(x.double())  # "a double": left to the vendor


@pytest.mark.parametrize(
    "how", ["a softmax after", "a value needed twice", "PyTorch compute before", "a double"]
)
def test_a_chain_beside_pytorch_compute_is_left_as_it_was(how: str) -> None:
    gm, sites = _rewritten(_NearMiss(how), torch.randn(4, 6))
    assert sites == 0 and not _calls(gm)
    assert foreign_compute(gm) is not None


def test_a_chain_after_an_epilogue_kernel_is_left_to_that_kernel() -> None:
    # After a transposed convolution the chain is that kernel's epilogue, not a pass of its own.
    net = nn.Sequential(nn.ConvTranspose2d(3, 4, 3, stride=2), nn.Tanh())
    x = torch.randn(1, 3, 5, 6)
    gm, sites = rewrite(net, [x], "conv_transpose_kernel")
    assert sites == 1
    assert BY_NAME["pointwise_kernel"].apply(gm) == 0 and not _calls(gm)
    assert any(n.target is kernelopt_conv_transpose for n in gm.graph.nodes)


def test_the_pointwise_candidate_gives_the_tuner_its_block_and_warps() -> None:
    x = torch.randn(namespace["SHAPES"]["conv_relu_bias"])
    gm, sites = _rewritten(namespace["NETS"]["conv_relu_bias"](), x)
    assert sites == 1
    check_tunable_candidate(gm, "pointwise_kernel", ["own_pointwise_kernel"])


def test_the_scan_offers_a_gemm_and_its_activations_as_vendor_call_and_kernel() -> None:
    from kernelopt_jupyter.agents.rewrites.task import scan

    source = textwrap.dedent(
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F


        class Model(nn.Module):
            def __init__(self, features, classes):
                super().__init__()
                self.fc = nn.Linear(features, classes)

            def forward(self, x):
                return F.mish(F.mish(self.fc(x)))


        def get_inputs():
            return [torch.randn(5, 13)]


        def get_init_inputs():
            return [13, 11]
        """
    )
    found = scan(source, "gemm_mish.py")
    (match,) = [m for m in found.matches if m.names == ["pointwise_kernel"]]
    assert match.kernels and match.exact == "reassociation"
    assert "own_pointwise_kernel" in match.eager_source


_CHECK = _NETS + textwrap.dedent(
    """
    import json, sys
    from kernelopt_jupyter.agents.rewrites.canonical import canonicalize
    from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes, trace
    from kernelopt_jupyter.agents.rewrites.rules import BY_NAME, foreign_compute

    results = []
    for name, shape, half in json.loads(sys.argv[1]):
        torch.manual_seed(0)
        net = NETS[name]()
        x = torch.randn(shape)
        gm = trace(net)
        propagate_shapes(gm, [x])
        canonicalize(gm)
        sites = BY_NAME["pointwise_kernel"].apply(gm)
        with torch.no_grad():
            want = net.double()(x.double())
            got = gm.half()(x.half()) if half else gm.float()(x)
        err = float((got.double() - want).abs().max()) / max(1.0, float(want.abs().max()))
        results.append([name, sites, foreign_compute(gm), err, half])
    print(json.dumps(results))
    """
)


def test_the_pointwise_kernel_equals_torch_under_the_interpreter() -> None:
    cases = [
        ["on_input", [3, 7, 5], False],
        ["on_input", [1031], False],
        ["gemm_mish", [5, 13], False],
        ["conv_relu_bias", [2, 3, 7, 9], False],
        ["residual", [2, 3, 5, 7], False],
        ["on_input", [5, 129], True],
    ]
    results = interpret(_CHECK, cases)
    assert len(results) == len(cases)
    for name, sites, foreign, err, half in results:
        assert sites == 1 and foreign is None, (name, foreign)
        assert 0.0 <= err < (2e-3 if half else 1e-5), (name, err)  # half: its rounding


def test_the_pointwise_kernel_compiles_for_the_gpu() -> None:
    # The interpreter accepts code the real compiler rejects: compile it for sm_90.
    from kernelopt_jupyter.agents.rewrites.family_kernels import own_pointwise_kernel

    program = (EPILOGUE_OPS["load"], 1, 0, 4, 5, EPILOGUE_OPS["add"], 0, 0, 1, 0,
               EPILOGUE_OPS["mish"], 0, 0, 0, 0)  # fmt: skip
    constants = {"BLOCK": 1024, "EPILOGUE": program}
    signature = {name: "*fp32" for name in ("x_ptr", "out_ptr", "ep_ptr")}
    signature |= {"TOTAL": "i32"}
    assert compile_for_sm90(own_pointwise_kernel, signature, constants).asm["cubin"]
