"""The session counts a problem's input bytes on the meta device (nothing allocated): large
inputs make the GPU quick start wait for the analysis instead of running beside it."""

from __future__ import annotations

from kernelopt_jupyter.problem import problem_from_source
from kernelopt_jupyter.session.optimization import ALONE_INPUT_BYTES, input_bytes

# KernelBench's layout at a size no CPU test could allocate: 64 GiB of inputs.
HUGE = """
import torch
import torch.nn as nn

batch_size = 65536
dim = 262144


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x, k):
        return torch.relu(x) * k


def get_inputs():
    return [torch.randn(batch_size, dim), 3]


def get_init_inputs():
    return []
"""


def test_input_bytes_are_counted_without_allocating() -> None:
    problem = problem_from_source(HUGE, "huge.py")
    assert input_bytes(problem) == 65536 * 262144 * 4
    assert input_bytes(problem) >= ALONE_INPUT_BYTES
