"""Pointwise epilogues absorbed into KernelOPT's kernels (``epilogue.py``,
``epilogue_rule.py``): which chains the pass takes and which it leaves, the fused kernel's
values under Triton's interpreter against torch in float64 (a fresh process: the interpreter
is chosen when kernels are decorated), the program compiled for the GPU without one, and the
scan of a level-2-style problem offering the one-kernel candidate."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
import torch
import torch.nn as nn
from _family import SOURCE, compile_for_sm90, interpret, rewrite

from kernelopt_jupyter.agents.rewrites.conv_transpose import kernelopt_conv_transpose
from kernelopt_jupyter.agents.rewrites.epilogue import EPILOGUE_OPS
from kernelopt_jupyter.agents.rewrites.epilogue_rule import fuse_epilogues
from kernelopt_jupyter.agents.rewrites.render import rewritten_source
from kernelopt_jupyter.agents.rewrites.rules import foreign_compute
from kernelopt_jupyter.agents.transforms import lift_launch_configs
from kernelopt_jupyter.candidate import is_dispatch_only
from kernelopt_jupyter.verify.static import analyze_candidate

#: Each epilogue op after a transposed convolution, as a model's forward would write it
#: (source text: the interpreter's process builds the same models).
OPS = {
    "relu": "torch.relu(y)",
    "leaky_relu": "F.leaky_relu(y, 0.2)",
    "gelu": "F.gelu(y)",
    "gelu_tanh": "F.gelu(y, approximate='tanh')",
    "sigmoid": "torch.sigmoid(y)",
    "tanh": "torch.tanh(y)",
    "silu": "F.silu(y)",
    "swish written out": "y * torch.sigmoid(y)",
    "mish": "F.mish(y)",
    "softplus": "F.softplus(y, beta=2.0, threshold=1.5)",
    "hardtanh": "F.hardtanh(y, -0.5, 0.75)",
    "clamp_min": "torch.clamp(y, min=-0.25)",
    "clamp_max": "y.clamp(max=0.3)",
    "hardswish": "F.hardswish(y)",
    "hardsigmoid": "F.hardsigmoid(y)",
    "elu": "F.elu(y, alpha=0.7)",
    "exp": "torch.exp(y)",
    "abs": "torch.abs(y)",
    "neg": "-y",
    "number ops": "(2.0 - (y + 0.5) * 3.0) / 1.5",
    "number first": "1.0 / (1.5 + y.abs())",
    "per-channel bias": "y + self.bias",
    "per-channel operand first": "self.bias - y * self.bias",
    "full-shape buffer": "y * self.full",
    "a chain": "F.hardtanh(F.mish(y) + 0.5, -1.0, 1.0) * 2.0",
    "a long chain": "torch.tanh(F.gelu(torch.sigmoid(y) * y / self.bias) - 0.1) * 0.5 + y",
}

_MODEL = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Base(nn.Module):
        def __init__(self, dims):
            super().__init__()
            conv = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)[dims - 1]
            self.up = conv(3, 5, 3, stride=2, padding=1, output_padding=1)
            self.bias = nn.Parameter(torch.rand((5,) + (1,) * dims) + 0.5)
            self.register_buffer("full", torch.randn(5, *[(7, 6, 5)[d] * 2 for d in range(dims)]))

    def make(dims, epilogue):
        # The forward written out as source, so that FX traces it.
        scope = {"Base": Base, "torch": torch, "F": F}
        code = "class Net(Base):\\n    def forward(self, x):\\n        y = self.up(x)\\n"
        exec(code + f"        return {epilogue}\\n", scope)
        torch.manual_seed(0)
        return scope["Net"](dims), torch.randn(2, 3, *(7, 6, 5)[:dims])
    """
)
namespace: dict[str, Any] = {}
exec(compile(_MODEL, "epilogue_models", "exec"), namespace)


def _net(dims: int, epilogue: str) -> tuple[nn.Module, torch.Tensor]:
    net, x = namespace["make"](dims, epilogue)
    return net, x


def _fused(net: nn.Module, x: torch.Tensor) -> tuple[Any, int]:
    gm, sites = rewrite(net, [x], "conv_transpose_kernel")
    assert sites == 1
    return gm, fuse_epilogues(gm)


def _kernel_calls(gm: Any) -> list[Any]:
    return [n for n in gm.graph.nodes if n.target is kernelopt_conv_transpose]


@pytest.mark.parametrize("op", list(OPS))
def test_each_op_is_absorbed_into_the_kernel(op: str) -> None:
    net, x = _net(2, OPS[op])
    gm, fused = _fused(net, x)
    assert fused == 1
    assert foreign_compute(gm) is None, foreign_compute(gm)
    (call,) = _kernel_calls(gm)
    assert call.kwargs["epilogue"] and len(call.kwargs["epilogue"]) % 5 == 0
    assert [n.op for n in gm.graph.nodes][-1] == "output"


def test_the_program_uses_each_op_code_it_names() -> None:
    net, x = _net(2, OPS["a chain"])
    gm, _ = _fused(net, x)
    (call,) = _kernel_calls(gm)
    codes = call.kwargs["epilogue"][::5]
    names = {code: name for name, code in EPILOGUE_OPS.items()}
    assert [names[c] for c in codes] == ["mish", "add_c", "clamp", "mul_c"]


class _Used(nn.Module):
    """The convolution's output read by a pointwise op and by something else."""

    def __init__(self, forward: str) -> None:
        super().__init__()
        self.up = nn.ConvTranspose2d(3, 4, 3, stride=2)
        self.odd = nn.Parameter(torch.randn(4, 1, 11))
        self.how = forward

    def forward(self, x):
        y = self.up(x)
        if self.how == "used elsewhere":
            return torch.relu(y) + y.sum()
        if self.how == "a reduction in the chain":
            return torch.tanh(torch.softmax(torch.relu(y), 1))
        if self.how == "two outputs":
            z = torch.sigmoid(y)
            return z, torch.relu(z)
        return y * self.odd  # sizes that are no block of the output's


@pytest.mark.parametrize(
    "how", ["used elsewhere", "a reduction in the chain", "two outputs", "an odd broadcast"]
)
def test_what_is_needed_elsewhere_stays_outside(how: str) -> None:
    net, x = _Used(how), torch.randn(1, 3, 4, 5)
    gm, fused = _fused(net, x)
    calls = _kernel_calls(gm)
    if how == "used elsewhere" or how == "an odd broadcast":
        assert fused == 0 and not calls[0].kwargs
        assert foreign_compute(gm) is not None
    elif how == "a reduction in the chain":
        # The ReLU goes in; the softmax needs whole rows and the tanh reads it: both stay.
        assert fused == 1
        assert calls[0].kwargs["epilogue"][::5] == (EPILOGUE_OPS["relu"],)
        assert foreign_compute(gm) == "softmax"
    else:
        # The sigmoid is an output itself: it is stored, and the ReLU stays outside.
        assert fused == 1
        assert calls[0].kwargs["epilogue"][::5] == (EPILOGUE_OPS["sigmoid"],)
        assert foreign_compute(gm) == "relu"


def test_the_fused_candidate_renders_and_passes_the_static_gate() -> None:
    net, x = _net(2, OPS["a long chain"])
    gm, _ = _fused(net, x)
    source = rewritten_source(SOURCE, gm, "none", ["t"], candidate=True)
    assert "def own_epilogue_apply(" in source and "def own_broadcast_index(" in source
    assert not is_dispatch_only(source)
    lifted = lift_launch_configs(source)
    assert analyze_candidate(lifted).violations == []
    compile(lifted, "candidate", "exec")


_CHECK = _MODEL + textwrap.dedent(
    """
    import json, sys
    from kernelopt_jupyter.agents.rewrites.canonical import canonicalize
    from kernelopt_jupyter.agents.rewrites.epilogue_rule import fuse_epilogues
    from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes, trace
    from kernelopt_jupyter.agents.rewrites.rules import BY_NAME

    results = []
    for dims, epilogue, half in json.loads(sys.argv[1]):
        net, x = make(dims, epilogue)
        gm = trace(net)
        propagate_shapes(gm, [x])
        canonicalize(gm)
        BY_NAME["conv_transpose_kernel"].apply(gm)
        fused = fuse_epilogues(gm)
        with torch.no_grad():
            want = net.double()(x.double())
            got = gm.half()(x.half()) if half else gm.float()(x)
        err = float((got.double() - want).abs().max()) / max(1.0, float(want.abs().max()))
        same = got.dtype == (torch.half if half else torch.float)
        results.append([dims, epilogue, half, fused, same, err])
    print(json.dumps(results))
    """
)


@pytest.mark.slow
def test_the_fused_kernel_equals_torch_under_the_interpreter() -> None:
    cases = [[2, e, False] for e in OPS.values()]
    cases += [[1, OPS["a chain"], False], [3, OPS["per-channel bias"], False]]
    cases += [[3, OPS["a long chain"], False], [2, OPS["a chain"], True]]
    results = interpret(_CHECK, cases)
    assert len(results) == len(cases)
    for dims, epilogue, half, fused, same, err in results:
        tolerance = 2e-3 if half else 1e-5  # half: within its rounding of the output
        assert fused == 1 and same and 0.0 <= err < tolerance, (dims, epilogue, err)


_NORMS = textwrap.dedent(
    """
    import json, sys
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from kernelopt_jupyter.agents.rewrites.canonical import canonicalize
    from kernelopt_jupyter.agents.rewrites.epilogue_rule import fuse_epilogues
    from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes, trace
    from kernelopt_jupyter.agents.rewrites.rules import BY_NAME, foreign_compute

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(37)
            self.scale = nn.Parameter(torch.rand(37) + 0.5)

        def forward(self, x):
            return F.gelu(self.norm(x)) * self.scale + 0.25

    class Instance(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.InstanceNorm2d(5, affine=True)
            self.shift = nn.Parameter(torch.randn(5, 1, 1))

        def forward(self, x):
            y = self.norm(x)
            return F.leaky_relu(y * torch.sigmoid(y) - self.shift, 0.1)

    class Group(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.GroupNorm(3, 6)

        def forward(self, x):
            return torch.tanh(F.hardswish(self.norm(x)) / 0.75)

    results = []
    for name, rule, shape in json.loads(sys.argv[1]):
        torch.manual_seed(0)
        net = {"layer": Layer, "instance": Instance, "group": Group}[name]()
        x = torch.randn(shape)
        gm = trace(net)
        propagate_shapes(gm, [x])
        canonicalize(gm)
        BY_NAME[rule].apply(gm)
        propagate_shapes(gm, [x])  # as the scan does after each rule
        fused = fuse_epilogues(gm)
        with torch.no_grad():
            want = net.double()(x.double())
            got = gm.float()(x)
        err = float((got.double() - want).abs().max()) / max(1.0, float(want.abs().max()))
        results.append([name, fused, foreign_compute(gm), err])
    print(json.dumps(results))
    """
)


def test_the_norm_kernel_takes_an_epilogue_under_the_interpreter() -> None:
    cases = [["layer", "layer_norm_kernel", [3, 7, 37]]]
    cases += [["instance", "instance_norm_kernel", [2, 5, 9, 11]]]
    cases += [["group", "group_norm_kernel", [2, 6, 7, 5]]]
    for name, fused, foreign, err in interpret(_NORMS, cases):
        assert fused == 1 and foreign is None and 0.0 <= err < 1e-5, (name, foreign, err)


_PROBLEM = textwrap.dedent(
    """
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, stride, padding,
                     output_padding, add_value, scale):
            super().__init__()
            self.conv_transpose = nn.ConvTranspose2d(
                in_channels, out_channels, kernel_size, stride, padding, output_padding
            )
            self.add_value = add_value
            self.scale = scale

        def forward(self, x):
            x = self.conv_transpose(x)
            x = torch.nn.functional.mish(x)
            x = x + self.add_value
            x = torch.nn.functional.hardtanh(x, min_val=-1, max_val=1)
            x = x * self.scale
            return x


    def get_inputs():
        return [torch.randn(2, 5, 7, 9)]


    def get_init_inputs():
        return [5, 6, 3, 2, 1, 1, 0.5, 2.0]
    """
)


def test_the_scan_offers_a_level_two_chain_as_one_kernel() -> None:
    from kernelopt_jupyter.agents.rewrites.task import scan

    found = scan(_PROBLEM, "convt_chain.py")
    offered = [m for m in found.matches if "conv_transpose_kernel" in m.names and m.kernels]
    assert offered, found.error
    source = offered[0].eager_source
    assert "epilogue" in offered[0].title
    assert "own_epilogue_apply" in source and not is_dispatch_only(source)
    assert "mish" not in source.split("class ModelNew")[-1]
    assert "conv_transpose_kernel: the rest of the forward" not in found.error


def _every_op() -> tuple[Any, ...]:
    """A program that runs every op once (operand 0 loaded into register 1)."""
    program: list[Any] = [EPILOGUE_OPS["load"], 1, 0, 4, 5]
    for name, code in EPILOGUE_OPS.items():
        if name not in ("load", "copy"):
            program += [code, 0, 0, 1 if name in ("add", "sub", "mul", "div") else 0.5, 2.0]
    program += [EPILOGUE_OPS["copy"], 2, 0, 0, 0, EPILOGUE_OPS["add"], 0, 0, 2, 0]
    return tuple(program)


def _conv_transpose_launch() -> tuple[Any, dict[str, str], dict[str, Any]]:
    from kernelopt_jupyter.agents.rewrites.conv_transpose import own_conv_transpose_kernel

    sizes = ("ROWS", "GROUPS", "C_IN_G", "C_OUT_G", "D", "H", "W", "D_OUT", "H_OUT", "W_OUT",
             "QD", "QH", "QW")  # fmt: skip
    constants = dict(SD=2, SH=1, SW=2, PD=1, PH=0, PW=2, DD=1, DH=1, DW=1, KD=3, KH=2, KW=3,
                     STEP_D=2, STEP_H=1, STEP_W=2, HAS_BIAS=True, W_TILE=32, M_BLOCK=64,
                     N_BLOCK=32, K_BLOCK=16, EPILOGUE=_every_op())  # fmt: skip
    signature = {name: "*fp32" for name in ("x_ptr", "w_ptr", "b_ptr", "out_ptr", "ep_ptr")}
    signature |= {name: "i32" for name in sizes}
    return own_conv_transpose_kernel, signature, constants


def _group_norm_launch() -> tuple[Any, dict[str, str], dict[str, Any]]:
    from kernelopt_jupyter.agents.rewrites.kernels import own_group_norm_kernel

    signature = {name: "*fp32" for name in ("x_ptr", "w_ptr", "b_ptr", "out_ptr", "ep_ptr")}
    signature |= {name: "i32" for name in ("GROUPS", "HW", "CG", "GROUP_SIZE")}
    signature["eps"] = "fp32"
    constants = dict(HAS_AFFINE=True, BLOCK=1024, EPILOGUE=_every_op())
    return own_group_norm_kernel, signature, constants


def _group_norm_rows_launch() -> tuple[Any, dict[str, str], dict[str, Any]]:
    from kernelopt_jupyter.agents.rewrites.kernels import own_group_norm_rows_kernel

    signature = {name: "*fp32" for name in ("x_ptr", "w_ptr", "b_ptr", "out_ptr", "ep_ptr")}
    signature |= {name: "i32" for name in ("ROWS_TOTAL", "GROUPS", "HW", "CG", "GROUP_SIZE")}
    signature["eps"] = "fp32"
    constants = dict(HAS_AFFINE=True, ROWS=128, BLOCK=16, EPILOGUE=_every_op())
    return own_group_norm_rows_kernel, signature, constants


def _norm_launch() -> tuple[Any, dict[str, str], dict[str, Any]]:
    from kernelopt_jupyter.agents.rewrites.family_kernels import own_norm_kernel

    pointers = ("x_ptr", "w_ptr", "b_ptr", "mean_ptr", "m2_ptr", "out_ptr", "ep_ptr")
    signature = {name: "*fp32" for name in pointers}
    signature |= {name: "i32" for name in ("L", "INNER", "CHUNK", "PARTS", "CHANNELS")}
    signature["eps"] = "fp32"
    constants = dict(RMS=False, SPLIT=True, PARTS_BLOCK=4, AFFINE=2, HAS_BIAS=True,
                     BLOCK=1024, INNER_BLOCK=16, EPILOGUE=_every_op())  # fmt: skip
    return own_norm_kernel, signature, constants


_LAUNCHES = {
    "conv_transpose": _conv_transpose_launch,
    "norm": _norm_launch,
    "group_norm": _group_norm_launch,
    "group_norm_rows": _group_norm_rows_launch,
}


@pytest.mark.parametrize("kernel", list(_LAUNCHES))
def test_the_epilogue_compiles_for_the_gpu_without_one(kernel: str) -> None:
    # Every op in one program (the interpreter accepts code the real compiler rejects).
    fn, signature, constants = _LAUNCHES[kernel]()
    assert compile_for_sm90(fn, signature, constants).asm["cubin"]
