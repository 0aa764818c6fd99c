"""KernelOPT's transposed convolution (``conv_transpose.py``) and its rule
(``conv_transpose_rule.py``): what the rule matches however the op is spelled, the kernel's
values under Triton's interpreter against torch in float64 (a fresh process: the interpreter
is chosen when kernels are decorated), and the candidate it renders (its launch settings
lifted for the Tuner)."""

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
from _family import compile_for_sm90, interpret
from _kernelbench import dev_problems, problem_ids

from kernelopt_jupyter.agents.rewrites.canonical import canonicalize
from kernelopt_jupyter.agents.rewrites.conv_transpose import kernelopt_conv_transpose
from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes, trace
from kernelopt_jupyter.agents.rewrites.render import rewritten_source
from kernelopt_jupyter.agents.rewrites.rules import BY_NAME, foreign_compute
from kernelopt_jupyter.agents.transforms import lift_launch_configs
from kernelopt_jupyter.candidate import is_dispatch_only
from kernelopt_jupyter.launch_configs import read_launch_configs
from kernelopt_jupyter.verify.static import analyze_candidate

RULE = "conv_transpose_kernel"


class Layer(nn.Module):
    """A model calling one layer."""

    def __init__(self, layer: nn.Module) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, x):
        return self.layer(x)


class Functional(nn.Module):
    """A model calling ``fn(x, weight, bias)`` with its own parameters."""

    def __init__(self, fn: Callable[..., torch.Tensor], weight: Any, bias: Any = None) -> None:
        super().__init__()
        self.fn = fn
        self.weight = nn.Parameter(torch.randn(weight))
        self.bias = nn.Parameter(torch.randn(bias)) if bias is not None else None

    def forward(self, x):
        return self.fn(x, self.weight, self.bias)


def _rewrite(model: nn.Module, x: torch.Tensor) -> tuple[Any, int]:
    gm = trace(model)
    assert propagate_shapes(gm, [x])
    canonicalize(gm)
    return gm, BY_NAME[RULE].apply(gm)


def _kernel_calls(gm: Any) -> list[Any]:
    return [n for n in gm.graph.nodes if n.target is kernelopt_conv_transpose]


#: A spelling, its input, and the (stride, padding, output_padding, groups, dilation) the
#: kernel call must carry.
_SPELLINGS: dict[str, tuple[nn.Module, tuple[int, ...], tuple[Any, ...]]] = {
    "ConvTranspose1d": (
        Layer(nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, dilation=2)),
        (2, 4, 9),
        ((2,), (1,), (1,), 1, (2,)),
    ),
    "ConvTranspose2d, groups, no bias": (
        Layer(
            nn.ConvTranspose2d(6, 4, (3, 2), stride=(2, 1), padding=(1, 0), groups=2, bias=False)
        ),
        (2, 6, 5, 7),
        ((2, 1), (1, 0), (0, 0), 2, (1, 1)),
    ),
    "ConvTranspose3d": (
        Layer(nn.ConvTranspose3d(3, 2, 3, stride=2, padding=1, output_padding=1)),
        (1, 3, 3, 4, 5),
        ((2, 2, 2), (1, 1, 1), (1, 1, 1), 1, (1, 1, 1)),
    ),
    "F.conv_transpose2d positional": (
        Functional(lambda x, w, b: F.conv_transpose2d(x, w, b, 2, 1, 1, 1, 1), (4, 3, 3, 3), 3),
        (2, 4, 6, 6),
        ((2, 2), (1, 1), (1, 1), 1, (1, 1)),
    ),
    "F.conv_transpose2d keywords": (
        Functional(
            lambda x, w, b: F.conv_transpose2d(
                x, w, bias=b, stride=(3, 2), dilation=(2, 1), groups=2, output_padding=(1, 0)
            ),
            (4, 3, 2, 3),
            6,
        ),
        (1, 4, 5, 4),
        ((3, 2), (0, 0), (1, 0), 2, (2, 1)),
    ),
    "torch.conv_transpose1d, no bias": (
        Functional(lambda x, w, b: torch.conv_transpose1d(x, w, stride=3), (5, 2, 4)),
        (2, 5, 8),
        ((3,), (0,), (0,), 1, (1,)),
    ),
    "F.conv_transpose3d, lists": (
        Functional(
            lambda x, w, b: F.conv_transpose3d(x, w, b, [1, 2, 1], [0, 1, 1], 0, 1, [2, 1, 1]),
            (2, 2, 2, 3, 2),
            2,
        ),
        (1, 2, 3, 4, 4),
        ((1, 2, 1), (0, 1, 1), (0, 0, 0), 1, (2, 1, 1)),
    ),
    "unbatched": (
        Layer(nn.ConvTranspose1d(3, 2, 2, stride=2)),
        (3, 7),
        ((2,), (0,), (0,), 1, (1,)),
    ),
}


@pytest.mark.parametrize("spelling", list(_SPELLINGS))
def test_the_rule_takes_layers_and_functions_however_spelled(spelling: str) -> None:
    model, shape, want = _SPELLINGS[spelling]
    x = torch.randn(shape)
    with torch.no_grad():
        reference = model(x)
    gm, n = _rewrite(model, x)
    assert n == 1
    assert foreign_compute(gm) is None
    (call,) = _kernel_calls(gm)
    assert tuple(call.args[3:]) == want
    # The call means what the op meant: its arguments, fed to torch, give the same output.
    x_node, w_node, b_node = call.args[:3]
    assert x_node.op == "placeholder"
    weight = gm.get_parameter(w_node.target)
    bias = gm.get_parameter(b_node.target) if b_node is not None else None
    fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[weight.dim() - 3]
    stride, padding, extra, groups, dilation = want
    with torch.no_grad():
        again = fn(x, weight, bias, stride, padding, extra, groups, dilation)
    assert torch.equal(again, reference)


class WithOutputSize(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.ConvTranspose2d(3, 2, 3, stride=2)

    def forward(self, x):
        return self.layer(x, output_size=[12, 12])


_LEFT_ALONE: dict[str, tuple[nn.Module, torch.Tensor]] = {
    "an explicit output_size": (WithOutputSize(), torch.randn(1, 3, 5, 5)),
    "doubles": (Layer(nn.ConvTranspose2d(3, 2, 3).double()), torch.randn(1, 3, 5, 5).double()),
    "a plain convolution": (Layer(nn.Conv2d(3, 2, 3)), torch.randn(1, 3, 5, 5)),
}


@pytest.mark.parametrize("case", list(_LEFT_ALONE))
def test_what_the_kernel_does_not_take_stays_with_the_vendor(case: str) -> None:
    model, x = _LEFT_ALONE[case]
    gm, n = _rewrite(model, x)
    assert n == 0 and not _kernel_calls(gm)


def test_the_wrapper_gives_the_shape_on_the_meta_device() -> None:
    x = torch.empty(2, 6, 5, 7, 4, device="meta")
    w = torch.empty(6, 3, 3, 2, 4, device="meta")
    args = ((2, 1, 3), (1, 0, 2), (1, 0, 2), 2, (1, 2, 1))
    out = kernelopt_conv_transpose(x, w, None, *args)
    want = F.conv_transpose3d(x, w, None, *args)
    assert out.device.type == "meta" and out.shape == want.shape
    out = kernelopt_conv_transpose(x[0], w, None, *args)  # unbatched
    assert out.shape == want.shape[1:]


_SOURCE = "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    pass\n"


def test_the_candidate_carries_the_kernel_and_its_tunable_launch() -> None:
    model, shape, _ = _SPELLINGS["ConvTranspose3d"]
    gm, _ = _rewrite(model, torch.randn(shape))
    source = rewritten_source(_SOURCE, gm, "none", [RULE], candidate=True)
    assert "def own_conv_transpose_kernel(" in source
    assert "def kernelopt_conv_transpose(" in source
    assert not is_dispatch_only(source)
    lifted = lift_launch_configs(source)
    config = read_launch_configs(lifted)["own_conv_transpose_kernel"]
    assert {"M_BLOCK", "num_warps", "num_stages"} <= set(config)
    assert analyze_candidate(lifted).violations == []
    compile(lifted, "candidate", "exec")


_CHECK = textwrap.dedent(
    """
    import json, sys
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from kernelopt_jupyter.agents.rewrites.canonical import canonicalize
    from kernelopt_jupyter.agents.rewrites.conv_transpose import kernelopt_conv_transpose
    from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes, trace
    from kernelopt_jupyter.agents.rewrites.render import rewritten_source
    from kernelopt_jupyter.agents.rewrites.rules import BY_NAME
    from kernelopt_jupyter.agents.transforms import lift_launch_configs

    _SOURCE = "import torch\\nimport torch.nn as nn\\n\\n\\nclass Model(nn.Module):\\n    pass\\n"
    fns = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)
    torch.manual_seed(0)

    def error(got, want):
        if list(got.shape) != list(want.shape):
            return -1.0
        return float((got.double() - want).abs().max()) / max(1.0, float(want.abs().max()))

    errors = []
    for shape, c_out_g, kernel, stride, pad, extra, groups, dil, has_bias in json.loads(
        sys.argv[1]
    ):
        x = torch.randn(shape)
        dims = len(kernel)
        w = torch.randn(shape[-dims - 1], c_out_g, *kernel)
        b = torch.randn(c_out_g * groups) if has_bias else None
        args = (tuple(stride), tuple(pad), tuple(extra), groups, tuple(dil))
        got = kernelopt_conv_transpose(x, w, b, *args)
        bias = None if b is None else b.double()
        want = fns[dims - 1](x.double(), w.double(), bias, *args)
        errors.append([shape, got.dtype == x.dtype, error(got, want)])

    # Half precision in and out, float32 inside: within half's rounding of the output.
    x, w, b = torch.randn(2, 8, 9).half(), torch.randn(8, 4, 3).half(), torch.randn(4).half()
    got = kernelopt_conv_transpose(x, w, b, (2,), (1,), (0,), 1, (1,))
    want = F.conv_transpose1d(x.double(), w.double(), b.double(), 2, 1)
    errors.append(["half", got.dtype == torch.half, error(got, want) / 100])

    # A rewritten model, end to end: a layer and a functional call in one forward.
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1,
                                         groups=2)
            self.w = nn.Parameter(torch.randn(6, 2, 2, 3))

        def forward(self, x):
            return F.conv_transpose2d(self.up(x), self.w, stride=(1, 2), dilation=2)

    net, x = Net(), torch.randn(1, 4, 3, 4)
    gm = trace(net)
    propagate_shapes(gm, [x])
    canonicalize(gm)
    sites = BY_NAME["conv_transpose_kernel"].apply(gm)
    with torch.no_grad():
        want = net.double()(x.double())
        got = gm.float()(x)
    errors.append(["rewritten", sites == 2, error(got, want)])

    # The candidate's kernel at other settings the Tuner may pick: rows of the tile fewer
    # than its width, narrower tiles, where the grid follows them.
    source = rewritten_source(_SOURCE, gm, "none", ["t"], candidate=True)
    namespace = {}
    exec(compile(lift_launch_configs(source), "candidate", "exec"), namespace)
    x, w = torch.randn(1, 3, 3, 40), torch.randn(3, 4, 2, 3)
    want = F.conv_transpose2d(x.double(), w.double(), None, (1, 2), (0, 1), (0, 1), 1, 1)
    for rows in (16, 128):
        namespace["LAUNCH_CONFIGS"]["own_conv_transpose_kernel"]["M_BLOCK"] = rows
        got = namespace["kernelopt_conv_transpose"](x, w, None, (1, 2), (0, 1), (0, 1), 1, (1, 1))
        errors.append([f"M_BLOCK={rows}", True, error(got, want)])
    print(json.dumps(errors))
    """
)


def test_the_kernel_equals_torch_under_the_interpreter() -> None:
    # (shape, C_out per group, kernel, stride, padding, output_padding, groups, dilation,
    # bias): odd sizes, each dimensionality, and each argument away from its default.
    cases = [
        ((2, 3, 7), 5, (3,), (1,), (0,), (0,), 1, (1,), True),  # stride 1: one phase
        ((2, 4, 9), 3, (4,), (3,), (2,), (1,), 2, (2,), False),  # strided, dilated, grouped
        ((3, 5), 4, (2,), (2,), (0,), (1,), 1, (1,), True),  # unbatched
        ((1, 37, 3), 19, (2,), (2,), (0,), (0,), 1, (1,), True),  # channels over one block
        ((1, 2, 131), 3, (3,), (2,), (1,), (1,), 1, (2,), True),  # rows over one tile
        ((1, 5, 5, 7), 3, (3, 2), (2, 3), (1, 0), (1, 2), 1, (1, 2), True),
        ((2, 6, 4, 5), 2, (3, 3), (2, 2), (1, 1), (0, 1), 3, (2, 1), True),
        ((1, 2, 3, 3), 2, (1, 1), (3, 3), (0, 0), (2, 0), 1, (1, 1), False),  # phases no tap hits
        ((1, 3, 3, 4, 5), 2, (3, 2, 3), (2, 1, 2), (1, 0, 1), (1, 0, 0), 1, (1, 2, 1), True),
        ((1, 4, 2, 3, 3), 1, (2, 2, 2), (1, 2, 1), (0, 0, 1), (0, 1, 0), 4, (2, 1, 1), False),
    ]
    results = interpret(_CHECK, cases)
    assert len(results) == len(cases) + 4
    for case, same, err in results:
        assert same and 0.0 <= err < 1e-5, (case, err)


# --------------------------------------------------------------------------- KernelBench

_CONV_TRANSPOSE = re.compile(r"\b(conv_transpose[123]d|ConvTranspose[123]d)\b")


def _problems() -> list[Any]:
    """Every dev problem whose source calls a transposed convolution."""
    try:
        paths = dev_problems()
    except pytest.fail.Exception as exc:  # collected everywhere: fail when selected
        return [pytest.param(None, str(exc), id="absent")]
    return [
        pytest.param(path, "", id=problem_ids([path])[0])
        for path in paths
        if _CONV_TRANSPOSE.search(path.read_text())
    ]


@pytest.mark.kernelbench
@pytest.mark.parametrize(("path", "absent"), _problems())
def test_the_rule_fires_on_the_dev_problems(path: Path | None, absent: str) -> None:
    from kernelopt_jupyter.agents.rewrites.task import scan

    if path is None:
        pytest.fail(absent, pytrace=False)
    found = scan(path.read_text(), str(path))
    offered = [m for m in found.matches if RULE in m.names and m.kernels]
    assert offered, found.error
    for match in offered:
        assert "own_conv_transpose_kernel" in match.eager_source
        # The forward may compute more than the kernel takes (a level-2 chain): the rest
        # runs in PyTorch, and such a mixed candidate says so and is marked dispatch-only
        # (the verifier then counts those ops as its work); one of kernels alone is not.
        assert is_dispatch_only(match.eager_source) == bool(match.beside), match.title
        if match.beside:
            assert f"PyTorch ops for the rest ({match.beside})" in match.title


def test_the_kernel_compiles_for_the_gpu_without_one() -> None:
    # The interpreter accepts code the real compiler rejects; the verifier compiles every
    # launch for sm_90 before a GPU sees it, and so does this test, at one launch the
    # wrapper makes (a strided, dilated, grouped 3-D convolution) and the Tuner's largest
    # row block.
    from kernelopt_jupyter.agents.rewrites.conv_transpose import own_conv_transpose_kernel

    sizes = ("ROWS", "GROUPS", "C_IN_G", "C_OUT_G", "D", "H", "W", "D_OUT", "H_OUT", "W_OUT",
             "QD", "QH", "QW")  # fmt: skip
    constants = dict(SD=2, SH=1, SW=2, PD=1, PH=0, PW=2, DD=2, DH=1, DW=1, KD=3, KH=2, KW=5,
                     STEP_D=1, STEP_H=1, STEP_W=2, HAS_BIAS=True, W_TILE=32, M_BLOCK=128,
                     N_BLOCK=32, K_BLOCK=16, EPILOGUE=())  # fmt: skip
    signature = {name: "*fp32" for name in ("x_ptr", "w_ptr", "b_ptr", "out_ptr", "ep_ptr")}
    signature |= {name: "i32" for name in sizes}
    compiled = compile_for_sm90(own_conv_transpose_kernel, signature, constants, 8, 3)
    assert compiled.asm["cubin"]
    assert "tt.dot" in compiled.asm["ttgir"]
