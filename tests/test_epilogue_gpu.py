"""Pointwise epilogues compiled and run on the GPU: the transposed convolution of level 2's
3-D problems and a LayerNorm over a long row, each with a chain of activations and a
per-channel operand absorbed, against torch in float64 on the device. Run by
scripts/gpu_checks.sh; deselected on the CPU."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from _family import rewrite

from kernelopt_jupyter.agents.rewrites.epilogue_rule import fuse_epilogues
from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes

pytestmark = pytest.mark.gpu


class _ConvChain(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.ConvTranspose3d(32, 64, 3, stride=2, padding=1, output_padding=1)
        self.bias = nn.Parameter(torch.randn(64, 1, 1, 1))

    def forward(self, x):
        y = self.up(x)
        y = F.hardtanh(F.mish(y) + 0.5, -1.0, 1.0) * 2.0
        return y * torch.sigmoid(y) - self.bias


class _NormChain(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(8192)

    def forward(self, x):
        return F.gelu(self.norm(x), approximate="tanh") * 0.5 + 0.1


@pytest.mark.parametrize(
    ("make", "shape", "rule"),
    [
        (_ConvChain, (16, 32, 16, 32, 32), "conv_transpose_kernel"),
        (_NormChain, (64, 127, 8192), "layer_norm_kernel"),
    ],
)
def test_the_fused_kernel_equals_torch_on_the_gpu(
    make: type[nn.Module], shape: tuple[int, ...], rule: str
) -> None:
    torch.manual_seed(0)
    net = make()
    x = torch.randn(shape)
    gm, sites = rewrite(net, [x], rule)
    assert sites == 1
    propagate_shapes(gm, [x])
    assert fuse_epilogues(gm) == 1
    with torch.no_grad():
        want = net.double().cuda()(x.double().cuda())
        got = gm.float().cuda()(x.cuda())
    err = float((got.double() - want).abs().max()) / max(1.0, float(want.abs().max()))
    assert err < 1e-5, err
