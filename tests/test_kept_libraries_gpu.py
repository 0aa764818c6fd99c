"""Liger-Kernel's kernels through KernelOPT's wrappers (``kept_libraries.py``), compiled and
run on the GPU at realistic sizes (KernelBench's KL divergence and cross entropy, transformer
rows for the norms, a convolution's GroupNorm), against torch in float64 on the device, and a
Liger candidate verified on the GPU. Run by scripts/gpu_checks.sh; deselected on the CPU."""

from __future__ import annotations

import textwrap

import pytest
import torch
import torch.nn.functional as F

from kernelopt_jupyter.agents.rewrites.kept_libraries import (
    liger_available,
    liger_cross_entropy_call,
    liger_group_norm_call,
    liger_kl_div_call,
    liger_norm,
)

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        not liger_available(),
        reason="Liger-Kernel is not installed: pip install -e '.[liger]' on the GPU machine",
    ),
]


def _error(got: torch.Tensor, want: torch.Tensor) -> float:
    assert got.shape == want.shape and got.dtype == torch.float32
    return float((got.double() - want).abs().max() / max(1.0, float(want.abs().max())))


@pytest.mark.parametrize(
    ("shape", "first"),
    [
        ((8192, 4096), 1),  # transformer rows (a 4096-wide model)
        ((16, 1024, 768), 2),  # a GPT-2 block's LayerNorm over the channels
        ((4, 127, 8, 1001), 2),  # odd sizes, two trailing dimensions flattened
        ((3, 65536), 1),  # the longest row Liger takes in one block
    ],
)
def test_liger_norms_on_the_gpu(shape: tuple[int, ...], first: int) -> None:
    x = torch.randn(shape, device="cuda") * 3 + 1
    w, b = torch.randn(shape[first:], device="cuda"), torch.randn(shape[first:], device="cuda")
    dims = tuple(shape[first:])
    got = liger_norm(x, first, w, None, 1e-5, True)
    assert _error(got, F.rms_norm(x.double(), dims, w.double(), 1e-5)) < 2e-6
    got = liger_norm(x, first, w, b, 1e-5, False)
    want = F.layer_norm(x.double(), dims, w.double(), b.double(), 1e-5)
    assert _error(got, want) < 2e-6


def test_liger_group_norm_on_the_gpu() -> None:
    x = torch.randn(64, 128, 62, 62, device="cuda")  # after a 3x3 convolution of 64x64 images
    w, b = torch.randn(128, device="cuda"), torch.randn(128, device="cuda")
    got = liger_group_norm_call(x, 8, w, b, 1e-5)
    want = F.group_norm(x.double(), 8, w.double(), b.double(), 1e-5)
    assert _error(got, want) < 2e-6


def test_liger_losses_at_published_sizes() -> None:
    # KernelBench's KL divergence (16384 x 16384 probabilities, batchmean of the log) and
    # cross entropy (4096 classes, 32768 rows; some rows ignored).
    p = (torch.rand(16384, 16384, device="cuda") * torch.rand((), device="cuda")).softmax(-1)
    q = torch.rand(16384, 16384, device="cuda").softmax(-1)
    got = liger_kl_div_call(p, q, True, False, "batchmean")
    want = F.kl_div(p.double().log(), q.double(), reduction="batchmean")
    assert _error(got, want) < 2e-6
    del p, q
    x = torch.randn(32768, 4096, device="cuda")
    y = torch.randint(0, 4096, (32768,), device="cuda")
    y[::7] = -100
    for reduction in ("mean", "sum"):
        got = liger_cross_entropy_call(x, y, -100, reduction)
        want = F.cross_entropy(x.double(), y, reduction=reduction)
        assert _error(got, want) < 2e-6


_PROBLEM = textwrap.dedent(
    """
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.norm = nn.LayerNorm(dim)

        def forward(self, x):
            return self.norm(x)


    def get_inputs():
        return [torch.randn(16, 1024, 768)]


    def get_init_inputs():
        return [768]
    """
)


def test_a_liger_candidate_passes_the_verifier_on_the_gpu() -> None:
    from kernelopt_jupyter.agents.rewrites.task import scan
    from kernelopt_jupyter.problem import problem_from_source
    from kernelopt_jupyter.verify import verify_candidate
    from kernelopt_jupyter.verify.report import VerifyOptions

    found = scan(_PROBLEM, "<layer norm>")
    (match,) = [m for m in found.matches if m.names == ["liger_layer_norm"]]
    problem = problem_from_source(_PROBLEM, "<layer norm>")
    report = verify_candidate(problem, match.eager_source, VerifyOptions(device="cuda"))
    gates = {g.name: g for g in report.gates}
    for name in ("static", "correctness", "fp64"):
        assert gates[name].passed, (name, gates[name].detail)
    assert "_layer_norm_forward_kernel" in gates["static"].detail
