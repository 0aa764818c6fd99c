"""KernelOPT's op-family kernels compiled and run on the GPU at KernelBench's published sizes
(the sizes its level-1 problems of each family use), against torch in float64 on the device.
Run by scripts/gpu_checks.sh; deselected on the CPU."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from kernelopt_jupyter.agents.rewrites.family_kernels import (
    kernelopt_arg_reduce,
    kernelopt_max_pool,
    kernelopt_norm,
    kernelopt_scan,
)

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


@pytest.mark.parametrize(
    ("shape", "kernel", "stride", "padding", "dilation"),
    [
        ((64, 192, 65536), (8,), (1,), (4,), (3,)),  # KernelBench's 1-D max pool
        ((32, 64, 512, 512), (4, 4), (1, 1), (1, 1), (1, 1)),  # its 2-D one
        ((16, 32, 128, 128, 128), (3, 3, 3), (2, 2, 2), (1, 1, 1), (3, 3, 3)),  # its 3-D one
    ],
)
def test_the_max_pool_at_published_sizes(
    shape: tuple[int, ...],
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
) -> None:
    torch.manual_seed(0)
    x = torch.rand(shape, device="cuda")
    pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[len(kernel) - 1]
    for ceil in (False, True):
        got = kernelopt_max_pool(x, kernel, stride, padding, dilation, ceil)
        want = pool(x, kernel, stride, padding, dilation, ceil)
        assert torch.equal(got, want)  # a maximum is exact


def _norm_reference(x, first, last, weight, bias, eps, rms, per_channel):
    x, dims = x.double(), tuple(range(first, last))
    if rms:
        y = x / torch.sqrt((x * x).mean(dims, keepdim=True) + eps)
    else:
        mean = x.mean(dims, keepdim=True)
        y = (x - mean) / torch.sqrt(((x - mean) ** 2).mean(dims, keepdim=True) + eps)
    if weight is None and bias is None:
        return y
    shape = (
        [1, -1] + [1] * (x.dim() - 2)
        if per_channel
        else (weight if weight is not None else bias).shape
    )
    if weight is not None:
        y = y * weight.double().reshape(shape)
    if bias is not None:
        y = y + bias.double().reshape(shape)
    return y


@pytest.mark.parametrize(
    ("shape", "first", "last", "rms", "per_channel"),
    [
        ((112, 64, 512, 512), 1, 2, True, False),  # KernelBench's RMSNorm, over the channels
        ((112, 64, 512, 512), 2, 4, False, True),  # its InstanceNorm2d
        ((16, 64, 256, 256), 1, 4, False, False),  # its LayerNorm over (64, 256, 256)
    ],
)
def test_the_norm_at_published_sizes(
    shape: tuple[int, ...], first: int, last: int, rms: bool, per_channel: bool
) -> None:
    torch.manual_seed(0)
    x = torch.rand(shape, device="cuda")
    wshape = (shape[1],) if per_channel else shape[first:last]
    weight = None if rms else torch.randn(wshape, device="cuda")
    bias = None if rms else torch.randn(wshape, device="cuda")
    got = kernelopt_norm(x, first, last, weight, bias, 1e-5, rms, per_channel)
    assert got.shape == x.shape and got.dtype == x.dtype
    for images in torch.arange(shape[0], device="cuda").split(8):  # float64 in slices
        want = _norm_reference(x[images], first, last, weight, bias, 1e-5, rms, per_channel)
        err = (got[images].double() - want).abs().max().item()
        assert err < 1e-4 * max(1.0, want.abs().max().item()), err


@pytest.mark.parametrize(("dim", "largest"), [(1, False), (1, True), (2, True)])
def test_the_arg_reduction_at_published_sizes(dim: int, largest: bool) -> None:
    # KernelBench's argmax/argmin: a 128 x 4096 x 4095 input, reduced along dimension 1.
    torch.manual_seed(0)
    x = torch.rand(128, 4096, 4095, device="cuda")
    got = kernelopt_arg_reduce(x, dim, False, largest)
    want = torch.argmax(x, dim) if largest else torch.argmin(x, dim)
    assert torch.equal(got, want)  # comparisons only: exact
