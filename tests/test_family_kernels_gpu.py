"""KernelOPT's op-family kernels compiled and run on the GPU at KernelBench's published sizes
(the sizes its level-1 problems of each family use), against torch in float64 on the device.
Run by scripts/gpu_checks.sh; deselected on the CPU."""

from __future__ import annotations

import pytest
import torch

from kernelopt_jupyter.agents.rewrites.family_kernels import kernelopt_scan

pytestmark = pytest.mark.gpu


def _scan_reference(x, dim, product, reverse, exclusive, mask):
    y = x.double() * (mask.double() if mask is not None else 1.0)
    if reverse:
        y = y.flip(dim)
    out = y.cumprod(dim) if product else y.cumsum(dim)
    if exclusive:
        first = y.narrow(dim, 0, 1)
        fill = torch.ones_like(first) if product else torch.zeros_like(first)
        out = torch.cat([fill, out.narrow(dim, 0, y.shape[dim] - 1)], dim)
    return out.flip(dim) if reverse else out


@pytest.mark.parametrize(
    ("product", "reverse", "exclusive", "masked"),
    [
        (False, False, False, False),  # cumsum
        (True, False, False, False),  # cumprod
        (False, True, False, False),  # reverse cumsum
        (False, False, True, False),  # exclusive cumsum
        (False, False, False, True),  # masked cumsum
    ],
)
def test_the_scan_at_published_sizes(
    product: bool, reverse: bool, exclusive: bool, masked: bool
) -> None:
    # KernelBench's scans: a 32768 x 32768 float32 input, scanned along dimension 1.
    torch.manual_seed(0)
    x = torch.rand(32768, 32768, device="cuda")
    mask = torch.rand(32768, 32768, device="cuda") > 0.5 if masked else None
    got = kernelopt_scan(x, 1, product, reverse, exclusive, mask)
    torch.cuda.synchronize()
    assert got.shape == x.shape and got.dtype == x.dtype
    for rows in torch.arange(32768, device="cuda").split(4096):  # float64 in slices
        want = _scan_reference(
            x[rows], 1, product, reverse, exclusive, None if mask is None else mask[rows]
        )
        scale = want.abs().amax(dim=1, keepdim=True).clamp_min(1.0)
        err = ((got[rows].double() - want).abs() / scale).max().item()
        assert err < 1e-5, err


def test_the_scan_along_a_middle_dimension_on_the_gpu() -> None:
    torch.manual_seed(0)
    x = torch.randn(64, 3000, 40, device="cuda")
    got = kernelopt_scan(x, 1, False, True, False, None)
    want = _scan_reference(x, 1, False, True, False, None)
    scale = want.abs().max().item()
    assert ((got.double() - want).abs().max().item()) / scale < 1e-5
