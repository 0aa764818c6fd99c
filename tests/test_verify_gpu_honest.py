"""Honest code the verifier must pass on the GPU (run there with scripts/gpu_checks.sh):

* a Triton candidate inside the project's own CUDA-graph wrapper (which reads its inputs'
  device addresses to know whether they moved): the address of device memory is not host data;
* a ``triton.autotune`` kernel with several configurations: Triton's own first-launch work
  (its platform key runs ``file``) is not the candidate starting a process.
"""

from __future__ import annotations

import pytest

from kernelopt_jupyter.agents.transforms import wrap_cuda_graph
from kernelopt_jupyter.problem import problem_from_source
from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

pytestmark = pytest.mark.gpu

# KernelBench's spelling, at a size where one call is a few milliseconds.
PROBLEM = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale):
        super(Model, self).__init__()
        self.scale = scale

    def forward(self, x):
        return torch.relu(x * self.scale + 1.0)


def get_inputs():
    return [torch.randn(4096, 8191)]


def get_init_inputs():
    return [2.0]
"""

KERNEL = """
import torch
import torch.nn as nn
import triton
import triton.language as tl

{decorator}
@triton.jit
def _affine_relu(x_ptr, y_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x * scale + 1.0, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, scale):
        super(ModelNew, self).__init__()
        self.scale = scale

    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        _affine_relu[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n, self.scale{block})
        return y
"""

AUTOTUNE = (
    '@triton.autotune(configs=[triton.Config({"BLOCK": 1024}, num_warps=4), '
    'triton.Config({"BLOCK": 2048}, num_warps=8)], key=["n"])'
)


def _verify(source: str) -> dict[str, str]:
    problem = problem_from_source(PROBLEM, "affine_relu")
    report = verify_candidate(
        problem, source, VerifyOptions(device="cuda", seeds=3, run_performance=False)
    )
    gates = {g.name: f"{g.status}: {g.detail}" for g in report.gates}
    assert report.verdict == "pass", gates
    return gates


def test_a_triton_candidate_in_the_cuda_graph_wrapper_passes() -> None:
    plain = KERNEL.format(decorator="", block=", BLOCK=1024")
    gates = _verify(wrap_cuda_graph(plain))
    assert gates["static"].startswith("pass")


def test_an_autotuned_kernel_with_several_configs_passes() -> None:
    gates = _verify(KERNEL.format(decorator=AUTOTUNE, block=""))
    assert gates["static"].startswith("pass")
