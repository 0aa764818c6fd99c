"""Pointwise epilogues compiled and run on the GPU: the transposed convolution of level 2's
3-D problems and a LayerNorm over a long row, each with a chain of activations and a
per-channel operand absorbed, and a training-mode BatchNorm (1-D and 2-D, with its running
statistics) and a max pool with theirs, against torch in float64 on the device. Run by
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
    # Shapes on the meta device: on a GPU machine the kernel cannot run on host tensors.
    propagate_shapes(gm, [x.to("meta")])
    assert fuse_epilogues(gm) == 1
    with torch.no_grad():
        want = net.double().cuda()(x.double().cuda())
        got = gm.float().cuda()(x.cuda())
    err = float((got.double() - want).abs().max()) / max(1.0, float(want.abs().max()))
    assert err < 1e-5, err


class _BatchNormSwish(nn.Module):
    """A GEMM's output normalised in training mode, a bias, a divide and swish."""

    def __init__(self) -> None:
        super().__init__()
        self.bn = nn.BatchNorm1d(8192)
        self.bias = nn.Parameter(torch.randn(1))

    def forward(self, x):
        y = (self.bn(x) + self.bias) / 1.5
        return y * torch.sigmoid(y)


class _BatchNormRelu(nn.Module):
    """A CNN's BatchNorm then ReLU, in training mode."""

    def __init__(self) -> None:
        super().__init__()
        self.bn = nn.BatchNorm2d(32)

    def forward(self, x):
        return F.relu(self.bn(x))


class _PoolClamp(nn.Module):
    """A max pool, then a clamp."""

    def __init__(self) -> None:
        super().__init__()
        self.pool = nn.MaxPool2d(4)

    def forward(self, x):
        return torch.clamp(self.pool(x), 0.0, 1.0)


@pytest.mark.parametrize(
    ("make", "shape", "rule"),
    [
        (_BatchNormSwish, (1024, 8192), "batch_norm_kernel"),
        (_BatchNormRelu, (128, 32, 127, 129), "batch_norm_kernel"),
        (_PoolClamp, (128, 64, 126, 126), "max_pool_kernel"),
    ],
)
def test_the_batch_norm_and_max_pool_epilogues_equal_torch_on_the_gpu(
    make: type[nn.Module], shape: tuple[int, ...], rule: str
) -> None:
    import copy

    torch.manual_seed(0)
    net = make().cuda()
    ref = copy.deepcopy(net).double()  # the running statistics the kernel must match too
    state = copy.deepcopy(net.state_dict())
    x = torch.rand(shape, device="cuda") * 2.0 - 0.5
    gm, sites = rewrite(net, [x], rule)
    assert sites == 1
    propagate_shapes(gm, [x])
    assert fuse_epilogues(gm) == 1
    net.load_state_dict(state)  # the propagations ran training steps (gm shares net's layers)
    with torch.no_grad():
        want = ref(x.double())
        got = gm(x)
    err = float((got.double() - want).abs().max()) / max(1.0, float(want.abs().max()))
    assert err < 1e-5, err
    for key, value in ref.state_dict().items():
        mine = net.state_dict()[key]
        assert float((mine.double() - value.double()).abs().max()) < 1e-5, key
