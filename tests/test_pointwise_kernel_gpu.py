"""KernelOPT's one-pass pointwise kernel on the GPU at level-2-like sizes: a GEMM followed by
two Mish, and a convolution followed by ReLU and a per-channel bias, the chain fused into the
kernel after the vendor call, against torch in float64 on the device. Run by
scripts/gpu_checks.sh; deselected on the CPU."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from _family import rewrite

from kernelopt_jupyter.agents.rewrites.rules import foreign_compute

pytestmark = pytest.mark.gpu


class _GemmMish(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8192, 8192)

    def forward(self, x):
        return F.mish(F.mish(self.fc(x)))


class _ConvReluBias(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(64, 128, 3)
        self.bias = nn.Parameter(torch.randn(128, 1, 1))

    def forward(self, x):
        return torch.relu(self.conv(x)) + self.bias


@pytest.mark.parametrize(
    ("make", "shape"), [(_GemmMish, (1024, 8192)), (_ConvReluBias, (128, 64, 127, 129))]
)
def test_the_pointwise_kernel_equals_torch_on_the_gpu(
    make: type[nn.Module], shape: tuple[int, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(torch.backends.cuda.matmul, "allow_tf32", False)
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    torch.manual_seed(0)
    net = make().cuda()
    x = torch.randn(shape, device="cuda")
    gm, sites = rewrite(net, [x], "pointwise_kernel")
    assert sites == 1 and foreign_compute(gm) is None
    with torch.no_grad():
        got = gm(x)
        want = net.double()(x.double())
    # The vendor call rounds in float32 before the chain: compare at its precision.
    err = float((got.double() - want).abs().max()) / max(1.0, float(want.abs().max()))
    assert err < 1e-4, err
