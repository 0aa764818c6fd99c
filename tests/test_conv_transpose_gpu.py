"""KernelOPT's transposed convolution compiled and run on the GPU at sizes like KernelBench's
(its level-1 transposed convolutions and the 3-D one that opens many level-2 problems),
against torch in float64 on the device, with its time beside cuDNN's in float32 without TF32
(printed, not asserted: the dispatch map races the two at the problem's sizes). Run by
scripts/gpu_checks.sh; deselected on the CPU."""

from __future__ import annotations

import statistics
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

from kernelopt_jupyter.agents.rewrites.conv_transpose import kernelopt_conv_transpose

pytestmark = pytest.mark.gpu

_FNS = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)


def _milliseconds(fn: Callable[[], torch.Tensor], repeats: int = 10) -> float:
    """The median time of ``fn`` on the device, after a warm-up call (compilation)."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


#: (input shape, C_out, kernel, stride, padding, output_padding, groups, dilation, bias).
_CASES = {
    "1-D, strided and dilated": (
        (16, 32, 131072), 64, (3,), (2,), (1,), (0,), 1, (2,), False,
    ),
    "1-D, stride 1": ((64, 128, 16384), 128, (3,), (1,), (0,), (0,), 1, (1,), False),
    "2-D, stride 1, asymmetric kernel": (
        (8, 64, 256, 256), 64, (3, 7), (1, 1), (0, 0), (0, 0), 1, (1, 1), False,
    ),
    "2-D, strided, grouped, padded, dilated": (
        (16, 32, 128, 256), 64, (3, 5), (2, 3), (1, 2), (0, 0), 4, (2, 1), False,
    ),
    "3-D, strided, padded, grouped": (
        (8, 32, 12, 24, 48), 32, (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), 4, (1, 1, 1),
        False,
    ),
    "3-D, stride 2, bias (level 2's)": (
        (16, 32, 16, 32, 32), 64, (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), 1, (1, 1, 1),
        True,
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(_CASES))
def test_the_transposed_convolution_at_published_sizes(case: str) -> None:
    shape, c_out, kernel, stride, padding, extra, groups, dilation, has_bias = _CASES[case]
    torch.manual_seed(0)
    dims = len(kernel)
    x = torch.randn(shape, device="cuda")
    w = torch.randn(shape[1], c_out // groups, *kernel, device="cuda") / (shape[1] ** 0.5)
    b = torch.randn(c_out, device="cuda") if has_bias else None
    args = (stride, padding, extra, groups, dilation)
    got = kernelopt_conv_transpose(x, w, b, *args)
    torch.cuda.synchronize()
    want = _FNS[dims - 1](x.double(), w.double(), None if b is None else b.double(), *args)
    assert got.shape == want.shape and got.dtype == x.dtype
    err = ((got.double() - want).abs().max() / want.abs().max().clamp_min(1.0)).item()
    del want
    assert err < 1e-5, err

    tf32 = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False  # the float32 the project compares at
    try:
        ours = _milliseconds(lambda: kernelopt_conv_transpose(x, w, b, *args))
        vendor = _milliseconds(lambda: _FNS[dims - 1](x, w, b, *args))
    finally:
        torch.backends.cudnn.allow_tf32 = tf32
    print(f"\n{case}: KernelOPT {ours:.3f} ms, cuDNN {vendor:.3f} ms, {vendor / ours:.2f}x")
