"""KernelOPT's op-family kernels compiled and run on the GPU at KernelBench's published sizes
(the sizes its level-1 problems of each family use), against torch in float64 on the device.
Run by scripts/gpu_checks.sh; deselected on the CPU."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from kernelopt_jupyter.agents.rewrites.family_kernels import (
    kernelopt_arg_reduce,
    kernelopt_batch_norm_layer,
    kernelopt_max_pool,
    kernelopt_norm,
    kernelopt_pointwise_loss,
    kernelopt_row_loss,
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


def _sliced_sum(fn, *tensors, rows: int = 2048) -> float:
    """``fn(*slices).sum()`` in float64 over slices of rows (the whole would not fit)."""
    total = 0.0
    for start in range(0, tensors[0].shape[0], rows):
        parts = [t[start : start + rows].double() if t.dim() > 1 else t.double() for t in tensors]
        total += fn(*parts).sum().item()
    return total


@pytest.mark.parametrize(
    ("form", "param"), [("mse", 0.0), ("l1", 0.0), ("smooth_l1", 1.0), ("huber", 1.0)]
)
def test_the_pointwise_losses_at_published_sizes(form: str, param: float) -> None:
    # KernelBench's regression losses: two 32768 x 32768 float32 inputs, the mean loss.
    torch.manual_seed(0)
    p = torch.rand(32768, 32768, device="cuda") * torch.rand((), device="cuda")
    t = torch.rand(32768, 32768, device="cuda")
    got = kernelopt_pointwise_loss(p, t, form, param, False, "mean")
    terms = {
        "mse": lambda a, b: (a - b) ** 2,
        "l1": lambda a, b: (a - b).abs(),
        "smooth_l1": lambda a, b: F.smooth_l1_loss(a, b, reduction="none"),
        "huber": lambda a, b: F.huber_loss(a, b, reduction="none"),
    }
    want = _sliced_sum(terms[form], p, t) / p.numel()
    assert got.shape == () and got.dtype == torch.float32
    assert abs(got.item() - want) <= 1e-5 * abs(want)


def test_the_hinge_loss_at_published_sizes() -> None:
    # KernelBench's hinge loss: predictions 32768 x 32768, targets of +-1 along the last dim.
    torch.manual_seed(0)
    p = torch.rand(32768, 32768, device="cuda")
    t = torch.randint(0, 2, (32768,), device="cuda").float() * 2 - 1
    got = kernelopt_pointwise_loss(p, t, "hinge", 1.0, False, "mean")
    want = _sliced_sum(lambda a, b: torch.clamp(1 - a * b, min=0), p, t) / p.numel()
    assert abs(got.item() - want) <= 1e-5 * abs(want)


def test_the_kl_divergence_at_published_sizes() -> None:
    # KernelBench's KL divergence: 16384 x 16384 probabilities, the log of the first taken
    # in the kernel, reduced by the batch.
    torch.manual_seed(0)
    p = (torch.rand(16384, 16384, device="cuda") * torch.rand((), device="cuda")).softmax(-1)
    q = torch.rand(16384, 16384, device="cuda").softmax(-1)
    got = kernelopt_pointwise_loss(p, q, "kl", 0.0, True, "batchmean")
    want = _sliced_sum(lambda a, b: F.kl_div(a.log(), b, reduction="none"), p, q) / 16384
    assert abs(got.item() - want) <= 1e-5 * abs(want) + 1e-9


def test_the_written_kl_divergence_at_published_sizes() -> None:
    # The same sizes, the divergence written out (``kl_written``): the target times the
    # difference of its log and the log-probabilities, as the user's code computes it.
    torch.manual_seed(0)
    q = torch.rand(16384, 16384, device="cuda").log_softmax(-1)
    p = torch.rand(16384, 16384, device="cuda").softmax(-1)
    got = kernelopt_pointwise_loss(q, p, "kl_written", 0.0, False, "batchmean")
    want = _sliced_sum(lambda a, b: b * (b.log() - a), q, p) / 16384
    assert abs(got.item() - want) <= 1e-5 * abs(want) + 1e-9


def test_the_row_losses_at_published_sizes() -> None:
    torch.manual_seed(0)
    # Cross entropy over 4096 classes for 32768 rows.
    x = torch.randn(32768, 4096, device="cuda")
    y = torch.randint(0, 4096, (32768,), device="cuda")
    got = kernelopt_row_loss(x, y, None, 1, "cross_entropy", -100, 0.0, "mean")
    want = F.cross_entropy(x.double(), y).item()
    assert abs(got.item() - want) <= 1e-5 * abs(want)
    del x, y
    # The cosine loss of two 32768 x 32768 inputs, along dimension 1.
    p, t = torch.randn(32768, 32768, device="cuda"), torch.randn(32768, 32768, device="cuda")
    got = kernelopt_row_loss(p, t, None, 1, "cosine", 0.0, 1e-8, "mean")
    want = _sliced_sum(lambda a, b: 1 - F.cosine_similarity(a, b, dim=1), p, t) / 32768
    assert abs(got.item() - want) <= 1e-5 * abs(want)
    del p, t
    # The triplet margin loss of three 32768 x 8192 embeddings.
    a, pos, neg = (torch.randn(32768, 8192, device="cuda") for _ in range(3))
    got = kernelopt_row_loss(a, pos, neg, 1, "triplet", 1.0, 1e-6, "mean")
    want = F.triplet_margin_loss(a.double(), pos.double(), neg.double()).item()
    assert abs(got.item() - want) <= 1e-5 * abs(want)


def test_the_batch_norm_in_training_at_published_sizes() -> None:
    # KernelBench's BatchNorm2d: 64 x 64 x 512 x 512, in training (batch statistics, the
    # running statistics updated). Checked per channel in float64.
    torch.manual_seed(0)
    x = torch.rand(64, 64, 512, 512, device="cuda")
    layer = nn.BatchNorm2d(64).cuda()
    with torch.no_grad():
        layer.weight.copy_(torch.randn(64))
        layer.bias.copy_(torch.randn(64))
    got = kernelopt_batch_norm_layer(x, layer)
    assert int(layer.num_batches_tracked) == 1
    for c in range(0, 64, 8):
        v = x[:, c : c + 8].double()
        mean = v.mean((0, 2, 3))
        var = v.var((0, 2, 3), unbiased=False)
        w = layer.weight[c : c + 8].double()
        b = layer.bias[c : c + 8].double()
        want = (v - mean[None, :, None, None]) / torch.sqrt(var + 1e-5)[None, :, None, None]
        want = want * w[None, :, None, None] + b[None, :, None, None]
        assert (got[:, c : c + 8].double() - want).abs().max().item() < 1e-4
        n = v[:, 0].numel()
        torch.testing.assert_close(
            layer.running_mean[c : c + 8].double(), 0.1 * mean, rtol=1e-5, atol=1e-6
        )
        torch.testing.assert_close(
            layer.running_var[c : c + 8].double(),
            0.9 + 0.1 * var * n / (n - 1),
            rtol=1e-5,
            atol=1e-6,
        )
