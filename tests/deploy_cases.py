"""Test material shared by the deploy tests: a small problem, a general and a
shape-specialized candidate, and a run folder as ``optimize --out`` leaves it."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

PROBLEM = """
import torch
import torch.nn as nn

ROWS = 64
COLS = 128


class Model(nn.Module):
    def __init__(self, cols):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(cols))

    def forward(self, x):
        return torch.relu(x + self.bias)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [COLS]
"""

CANDIDATE = """
import torch
import torch.nn as nn
import triton
import triton.language as tl

LAUNCH_CONFIGS = {"_bias_relu": {"BLOCK": 1024, "num_warps": 4, "num_stages": 1}}


@triton.jit
def _bias_relu(x_ptr, b_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs % cols, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x + b, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, cols):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(cols))

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        cfg = LAUNCH_CONFIGS["_bias_relu"]
        _bias_relu[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](
            x, self.bias, out, n, x.shape[-1], **cfg
        )
        return out
"""


#: Correct only at the problem's own 64 x 128: its output and element count are fixed.
SPECIALIZED = CANDIDATE.replace(
    "out = torch.empty_like(x)", "out = torch.empty((64, 128), device=x.device)"
).replace("n = x.numel()", "n = 8192")


def make_run(folder: Path, candidate: str, problem: str = PROBLEM) -> Path:
    """A finished run's folder (the contract's result.json, problem.py, candidates/c0.py)."""
    (folder / "candidates").mkdir(parents=True)
    (folder / "problem.py").write_text(textwrap.dedent(problem))
    (folder / "candidates" / "c0.py").write_text(candidate)
    result = {
        "schema": 1,
        "problem": "p.py",  # where the problem came from: names the package
        "device": "cpu",
        "best": "c0",
        "candidates": [{"id": "c0", "agent": "person", "dispatch_only": False}],
    }
    (folder / "result.json").write_text(json.dumps(result))
    return folder


#: A Triton problem: the user's kernel and launcher are the reference.
TRITON_PROBLEM = """
import torch
import triton
import triton.language as tl

KERNELOPT_ENTRY = "scale_shift"
N = 3000


@triton.jit
def _scale_shift_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0 + 1.0, mask=mask)


def scale_shift(x):
    out = torch.empty_like(x)
    n = x.numel()
    _scale_shift_kernel[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
    return out


def get_inputs():
    return [torch.randn(N)]


def reference(x):
    return x * 2.0 + 1.0
"""

#: Its candidate: the same kernel with a larger block (what a Tuner would change).
TRITON_CANDIDATE = TRITON_PROBLEM.replace(
    "[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)",
    "[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)",
)
