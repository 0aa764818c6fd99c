"""Pointwise epilogues absorbed into KernelOPT's batch normalisation and max pool
(``batch_norm_kernel`` or ``max_pool_kernel``, then ``epilogue_rule.fuse_epilogues``): the
chains a network writes after a BatchNorm (ReLU, ReLU6, bias, divide, swish) or a max pool
(clamp, scale, tanh) taken into the kernel's store, the layer's running statistics still
updated, near misses left outside, the candidate rendered, the values under Triton's
interpreter against torch in float64 at odd sizes, and the kernels compiled for the GPU with
an epilogue."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from _family import SOURCE, compile_for_sm90, interpret, rewrite

from kernelopt_jupyter.agents.rewrites.epilogue import EPILOGUE_OPS
from kernelopt_jupyter.agents.rewrites.epilogue_rule import fuse_epilogues
from kernelopt_jupyter.agents.rewrites.family_kernels import (
    kernelopt_batch_norm,
    kernelopt_batch_norm_layer,
    kernelopt_max_pool,
)
from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes
from kernelopt_jupyter.agents.rewrites.render import rewritten_source
from kernelopt_jupyter.agents.rewrites.rules import foreign_compute
from kernelopt_jupyter.agents.transforms import lift_launch_configs
from kernelopt_jupyter.candidate import is_dispatch_only
from kernelopt_jupyter.verify.static import analyze_candidate

#: The networks, as source text: the interpreter's process builds the same ones.
_NETS = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class BiasSwish(nn.Module):
        # A GEMM's output normalised, a bias added, divided, then swish (x * sigmoid(x)).
        def __init__(self, features):
            super().__init__()
            self.bn = nn.BatchNorm1d(features, momentum=0.2)
            self.bias = nn.Parameter(torch.randn(features))

        def forward(self, x):
            y = (self.bn(x) + self.bias) / 1.5
            return y * torch.sigmoid(y)

    class Relu(nn.Module):
        # A CNN's BatchNorm then ReLU.
        def __init__(self, features):
            super().__init__()
            self.bn = nn.BatchNorm2d(features)

        def forward(self, x):
            return F.relu(self.bn(x))

    class Relu6(nn.Module):
        # MobileNet's BatchNorm then ReLU6, on a 3-D volume.
        def __init__(self, features):
            super().__init__()
            self.bn = nn.BatchNorm3d(features)
            self.act = nn.ReLU6()

        def forward(self, x):
            return self.act(self.bn(x))

    class Functional(nn.Module):
        # F.batch_norm with the module's buffers, then a per-channel shift and leaky ReLU.
        def __init__(self, features):
            super().__init__()
            self.register_buffer("mean", torch.randn(features))
            self.register_buffer("var", torch.rand(features) + 0.5)
            self.shift = nn.Parameter(torch.randn(features, 1, 1))

        def forward(self, x):
            y = F.batch_norm(x, self.mean, self.var, None, None, False, 0.1, 1e-3)
            return F.leaky_relu(y - self.shift, 0.05)

    class PoolClamp(nn.Module):
        # A max pool then a clamp (level 2's GroupNorm_Scale_MaxPool_Clamp tail).
        def __init__(self, features):
            super().__init__()
            self.pool = nn.MaxPool2d(3, stride=2, padding=1)

        def forward(self, x):
            return torch.clamp(self.pool(x), -0.5, 0.75)

    class Pool3dScale(nn.Module):
        # A 3-D max pool, a per-channel scale, then tanh.
        def __init__(self, features):
            super().__init__()
            self.scale = nn.Parameter(torch.rand(features, 1, 1, 1) + 0.5)

        def forward(self, x):
            return torch.tanh(F.max_pool3d(x, 2) * self.scale)

    class Pool1dRelu(nn.Module):
        # A 1-D max pool (ceil mode), ReLU, a shift.
        def __init__(self, features):
            super().__init__()
            self.pool = nn.MaxPool1d(3, stride=2, ceil_mode=True)

        def forward(self, x):
            return torch.relu(self.pool(x)) - 0.125

    NETS = {"bias_swish": BiasSwish, "relu": Relu, "relu6": Relu6, "functional": Functional,
            "pool_clamp": PoolClamp, "pool3d_scale": Pool3dScale, "pool1d_relu": Pool1dRelu}
    RULES = {name: "max_pool_kernel" if name.startswith("pool") else "batch_norm_kernel"
             for name in NETS}
    """
)
namespace: dict[str, Any] = {}
exec(compile(_NETS, "batch_norm_nets", "exec"), namespace)


def _fused(name: str, shape: tuple[int, ...]) -> tuple[nn.Module, Any, int]:
    # On the meta device, as the scan traces a problem: the kernels return at once.
    net = namespace["NETS"][name](shape[1]).to("meta")
    x = torch.empty(shape, device="meta")
    gm, sites = rewrite(net, [x], namespace["RULES"][name])
    assert sites == 1
    propagate_shapes(gm, [x])  # as the scan does after each rule
    return net, gm, fuse_epilogues(gm)


def _calls(gm: Any) -> list[Any]:
    wrappers = (kernelopt_batch_norm, kernelopt_batch_norm_layer, kernelopt_max_pool)
    return [n for n in gm.graph.nodes if n.target in wrappers]


@pytest.mark.parametrize(
    ("name", "shape", "ops"),
    [
        ("bias_swish", (5, 7), ["load", "add", "div_c", "sigmoid", "mul"]),
        ("relu", (2, 3, 5, 7), ["relu"]),
        ("relu6", (2, 3, 2, 3, 5), ["clamp"]),
        ("functional", (2, 3, 5, 7), ["load", "sub", "leaky_relu"]),
        ("pool_clamp", (2, 3, 9, 7), ["clamp"]),
        ("pool3d_scale", (2, 3, 5, 4, 6), ["load", "mul", "tanh"]),
        ("pool1d_relu", (2, 3, 11), ["relu", "sub_c"]),
    ],
)
def test_the_chain_after_the_kernel_goes_into_it(
    name: str, shape: tuple[int, ...], ops: list[str]
) -> None:
    _, gm, fused = _fused(name, shape)
    assert fused == 1
    assert foreign_compute(gm) is None, foreign_compute(gm)
    (call,) = _calls(gm)
    names = {code: op for op, code in EPILOGUE_OPS.items()}
    assert [names[c] for c in call.kwargs["epilogue"][::5]] == ops


class _NearMiss(nn.Module):
    def __init__(self, how: str, pool: bool) -> None:
        super().__init__()
        self.bn = nn.BatchNorm2d(4)
        self.odd = nn.Parameter(torch.randn(4, 1, 5))
        self.how = how
        self.pool = pool

    def forward(self, x):
        y = F.max_pool2d(x, 1) if self.pool else self.bn(x)
        if self.how == "a reduction after":
            return y - y.mean(dim=(2, 3), keepdim=True)  # level 2's BatchNorm_Subtract
        if self.how == "the kernel's output is an output":
            return y, torch.relu(y)
        if self.how == "an integer result":
            return y > 0.5  # a comparison's bool output is no float32 register's
        return y * self.odd  # "an odd broadcast": sizes no block of the output's


@pytest.mark.parametrize("pool", [False, True], ids=["batch_norm", "max_pool"])
@pytest.mark.parametrize(
    "how",
    ["a reduction after", "the kernel's output is an output", "an integer result",
     "an odd broadcast"],
)  # fmt: skip
def test_what_an_epilogue_cannot_take_stays_outside(how: str, pool: bool) -> None:
    x = torch.empty(2, 4, 3, 5, device="meta")
    rule = "max_pool_kernel" if pool else "batch_norm_kernel"
    gm, sites = rewrite(_NearMiss(how, pool).to("meta"), [x], rule)
    assert sites == 1
    propagate_shapes(gm, [x])
    assert fuse_epilogues(gm) == 0
    (call,) = _calls(gm)
    assert "epilogue" not in call.kwargs
    want = {"the kernel's output is an output": "relu", "an integer result": "gt"}
    assert foreign_compute(gm) == want.get(how, foreign_compute(gm))
    assert foreign_compute(gm) is not None


@pytest.mark.parametrize(
    ("name", "kernel"),
    [("bias_swish", "own_batch_norm_kernel"), ("pool3d_scale", "own_max_pool_kernel")],
)
def test_the_fused_candidate_renders_and_passes_the_static_gate(name: str, kernel: str) -> None:
    _, gm, _ = _fused(name, (2, 3, 5, 4, 6) if name.startswith("pool") else (5, 7))
    source = rewritten_source(SOURCE, gm, "none", ["t"], candidate=True)
    assert "def own_epilogue_apply(" in source and f"def {kernel}(" in source
    assert not is_dispatch_only(source)
    lifted = lift_launch_configs(source)
    assert analyze_candidate(lifted).violations == []
    compile(lifted, "candidate", "exec")


_CHECK = _NETS + textwrap.dedent(
    """
    import json, sys
    from kernelopt_jupyter.agents.rewrites.canonical import canonicalize
    from kernelopt_jupyter.agents.rewrites.epilogue_rule import fuse_epilogues
    from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes, trace
    from kernelopt_jupyter.agents.rewrites.rules import BY_NAME, foreign_compute

    results = []
    for name, shape, training in json.loads(sys.argv[1]):
        torch.manual_seed(0)
        net = NETS[name](shape[1])
        ref = NETS[name](shape[1])
        ref.load_state_dict(net.state_dict())
        net.train(training)
        ref.train(training).double()
        x = torch.randn(shape) * 3.0 + 1.0
        state = {k: v.clone() for k, v in net.state_dict().items()}
        gm = trace(net)
        propagate_shapes(gm, [x])
        canonicalize(gm)
        BY_NAME[RULES[name]].apply(gm)
        propagate_shapes(gm, [x])  # as the scan does after each rule
        fused = fuse_epilogues(gm)
        own = dict(gm.named_buffers())
        with torch.no_grad():
            for key, value in state.items():  # the propagations above ran training steps
                if key in own:
                    own[key].copy_(value)
            want = ref(x.double())
            got = gm(x)
        scale = max(1.0, float(want.abs().max()))
        err = float((got.double() - want).abs().max()) / scale
        # The running statistics moved as the layer moves them (training) or kept (eval).
        stats = 0.0
        for key, b in ref.named_buffers():
            a = own[key].double()
            stats = max(stats, float((a - b.double()).abs().max()))
        results.append([name, fused, foreign_compute(gm), err, stats])
    print(json.dumps(results))
    """
)


def test_the_fused_kernels_equal_torch_under_the_interpreter() -> None:
    cases = [
        ["bias_swish", [37, 13], True],
        ["bias_swish", [37, 13], False],
        ["relu", [3, 5, 7, 11], True],
        ["relu6", [2, 3, 3, 5, 7], True],
        ["functional", [2, 6, 9, 5], False],
        ["pool_clamp", [2, 3, 13, 9], False],
        ["pool3d_scale", [2, 3, 7, 5, 9], False],
        ["pool1d_relu", [3, 2, 17], False],
    ]
    results = interpret(_CHECK, cases)
    assert len(results) == len(cases)
    for name, fused, foreign, err, stats in results:
        assert fused == 1 and foreign is None, (name, foreign)
        assert 0.0 <= err < 1e-5 and 0.0 <= stats < 1e-5, (name, err, stats)


#: A program with an operand, a binary op, an activation and a clamp.
_PROGRAM = (EPILOGUE_OPS["load"], 1, 0, 4, 5, EPILOGUE_OPS["add"], 0, 0, 1, 0,
            EPILOGUE_OPS["silu"], 0, 0, 0, 0, EPILOGUE_OPS["clamp"], 0, 0, 0.0, 6.0)  # fmt: skip


def _batch_norm_launch() -> tuple[Any, dict[str, str], dict[str, Any]]:
    from kernelopt_jupyter.agents.rewrites.family_kernels import own_batch_norm_kernel

    pointers = ("x_ptr", "w_ptr", "b_ptr", "mean_ptr", "m2_ptr", "rmean_ptr", "rvar_ptr",
                "count_ptr", "out_ptr", "ep_ptr")  # fmt: skip
    signature = {name: "*fp32" for name in pointers}
    signature |= {name: "i32" for name in ("K", "S", "C", "CHUNK", "PARTS")}
    signature |= {"eps": "fp32", "momentum": "fp32"}
    constants = dict(BATCH_STATS=True, UPDATE=True, CUMULATIVE=False, SPLIT=True,
                     PARTS_BLOCK=4, HAS_WEIGHT=True, HAS_BIAS=True, BLOCK=1024,
                     CHANNEL_BLOCK=1, EPILOGUE=_PROGRAM)  # fmt: skip
    return own_batch_norm_kernel, signature, constants


def _max_pool_launch() -> tuple[Any, dict[str, str], dict[str, Any]]:
    from kernelopt_jupyter.agents.rewrites.family_kernels import own_max_pool_kernel

    signature = {name: "*fp32" for name in ("x_ptr", "out_ptr", "ep_ptr")}
    signature |= {name: "i32" for name in ("TOTAL", "D", "H", "W", "D_OUT", "H_OUT", "W_OUT")}
    constants = dict(SD=1, SH=2, SW=2, PD=0, PH=1, PW=1, DD=1, DH=1, DW=2, KD=1, KH=3, KW=3,
                     BLOCK=1024, EPILOGUE=_PROGRAM)  # fmt: skip
    return own_max_pool_kernel, signature, constants


@pytest.mark.parametrize("launch", [_batch_norm_launch, _max_pool_launch])
def test_the_kernel_compiles_for_the_gpu_with_an_epilogue(launch: Any) -> None:
    # The interpreter accepts code the real compiler rejects: compile it for sm_90.
    fn, signature, constants = launch()
    assert compile_for_sm90(fn, signature, constants).asm["cubin"]


def test_a_batch_norm_without_an_epilogue_is_unchanged() -> None:
    # The pass adds nothing to a BatchNorm whose output is returned as it is.
    x = torch.empty(4, 6, device="meta")
    gm, sites = rewrite(nn.Sequential(nn.BatchNorm1d(6)).to("meta"), [x], "batch_norm_kernel")
    assert sites == 1 and propagate_shapes(gm, [x])
    assert fuse_epilogues(gm) == 0
    (call,) = _calls(gm)
    assert "epilogue" not in call.kwargs


_LENET_LIKE = """import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels, classes):
        super().__init__()
        self.conv = nn.Conv2d(1, channels, 3)
        self.fc = nn.Linear(channels * 4 * 4, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return F.relu(self.fc(x.flatten(1)))


def get_inputs():
    return [torch.randn(2, 1, 10, 10)]


def get_init_inputs():
    return [3, 5]
"""

_POOL_ALONE = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(3, stride=2)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(2, 3, 11, 9)]


def get_init_inputs():
    return []
"""


def test_the_scan_offers_a_pool_with_its_epilogue_beside_cublaslt_as_a_reassociation() -> None:
    from kernelopt_jupyter.agents.rewrites.task import scan

    found = scan(_LENET_LIKE, "lenet_like.py")
    offered = [m for m in found.matches if m.kernels and "max_pool_kernel" in m.names]
    assert offered, found.error
    # The pool's rule alone leaves the convolution's ReLU and the GEMMs beside it (a mixed
    # candidate); with the other rules, only vendor calls are left.
    (match,) = [m for m in offered if not m.beside]
    assert all(m.names == ["max_pool_kernel"] for m in offered if m.beside)
    # The ReLU moved after the pool is the pool's epilogue; the GEMM + ReLU is cuBLASLt's.
    assert {"pool_before_activation", "gemm_activation_epilogue"} <= set(match.names)
    assert "epilogue" in match.title and match.exact == "reassociation"
    assert "_addmm_activation" in match.eager_source
    alone = [m for m in scan(_POOL_ALONE, "pool.py").matches if m.kernels]
    assert [m.exact for m in alone] == ["bit-exact"]  # no epilogue: the maximum, bit for bit


@pytest.mark.parametrize(
    ("layer", "training", "sites"),
    [
        (nn.Conv2d(3, 4, 3), False, 0),  # eval after a conv: the fold removes the pass
        (nn.Conv2d(3, 4, 3), True, 1),  # batch statistics: nothing to fold
        (nn.Identity(), False, 1),  # eval with no layer before it to fold into
    ],
)
def test_an_eval_batch_norm_the_fold_takes_is_left_to_it(
    layer: nn.Module, training: bool, sites: int
) -> None:
    net = nn.Sequential(layer, nn.BatchNorm2d(4 if isinstance(layer, nn.Conv2d) else 3))
    net.train(training)
    _, found = rewrite(net, [torch.randn(2, 3, 7, 9)], "batch_norm_kernel")
    assert found == sites
    if not training:
        _, folded = rewrite(net, [torch.randn(2, 3, 7, 9)], "fold_batchnorm")
        assert folded == 1 - sites
