"""The harness the op-family kernel tests share: a module traced and rewritten as a problem's
reference is, a check run under Triton's interpreter in a fresh process (the interpreter is
chosen when kernels are decorated), and the checks every rendered candidate must pass."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
import torch
import torch.nn as nn

from kernelopt_jupyter.agents.rewrites.canonical import canonicalize
from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes, trace
from kernelopt_jupyter.agents.rewrites.render import rewritten_source
from kernelopt_jupyter.agents.rewrites.rules import BY_NAME
from kernelopt_jupyter.agents.transforms import lift_launch_configs
from kernelopt_jupyter.candidate import is_dispatch_only
from kernelopt_jupyter.launch_configs import read_launch_configs
from kernelopt_jupyter.verify.static import analyze_candidate

#: The smallest problem text a rewritten forward renders into.
SOURCE = "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    pass\n"


def rewrite(model: nn.Module, inputs: list[torch.Tensor], rule: str) -> tuple[Any, int]:
    """``model`` traced, its shapes propagated from ``inputs`` and canonicalized, then
    ``rule`` applied: the graph and the number of sites rewritten."""
    gm = trace(model)
    assert propagate_shapes(gm, inputs)
    canonicalize(gm)
    return gm, BY_NAME[rule].apply(gm)


def interpret(script: str, *cases: Any) -> Any:
    """What ``script`` prints last (JSON), run with Triton's interpreter and each of
    ``cases`` as a JSON argument."""
    out = subprocess.run(
        [sys.executable, "-c", script, *(json.dumps(c) for c in cases)],
        capture_output=True,
        text=True,
        env={**os.environ, "TRITON_INTERPRET": "1"},
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def check_tunable_candidate(gm: Any, rule: str, kernels: list[str]) -> None:
    """The candidate a rewritten graph renders launches KernelOPT's kernels, gives the Tuner
    each kernel's block and warps, passes the static gate and compiles."""
    source = rewritten_source(SOURCE, gm, "none", [rule], candidate=True)
    assert not is_dispatch_only(source)
    lifted = lift_launch_configs(source)
    configs = read_launch_configs(lifted)
    for kernel in kernels:
        assert {"BLOCK", "num_warps"} <= set(configs[kernel]), configs
    assert analyze_candidate(lifted).violations == []
    compile(lifted, "candidate", "exec")


def compile_for_sm90(
    fn: Any, signature: dict[str, str], constants: dict[str, Any], warps: int = 4, stages: int = 2
) -> Any:
    """``fn`` compiled for sm_90 (the H100/H200 target) without a GPU, ``constants`` as its
    constexprs: the interpreter accepts code the real compiler rejects. Skips where Triton's
    interpreter is on in this process (its kernels are not compilable then)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    if getattr(fn, "arg_names", None) is None:
        pytest.skip("Triton's interpreter is on in this process")
    source = ASTSource(
        fn=fn,
        signature=signature | {name: "constexpr" for name in constants},
        constexprs={(fn.arg_names.index(k),): v for k, v in constants.items()},
    )
    return triton.compile(
        source, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": stages}
    )
