"""The roof is the GPU's own: peaks by device name, the bandwidth override, and the readers
(the roofline, the performance gate's floor, the dispatch map the panel draws from)."""

from __future__ import annotations

import pytest

from kernelopt_jupyter import gpu_peaks
from kernelopt_jupyter.analysis import roofline
from kernelopt_jupyter.verify import timing


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("NVIDIA H100 80GB HBM3", "H100 SXM"),
        ("NVIDIA H100 PCIe", "H100 PCIe"),
        ("NVIDIA H200", "H200"),
        ("NVIDIA A100-SXM4-80GB", "A100 80GB"),
        ("NVIDIA A100-PCIE-40GB", "A100 40GB"),
        ("NVIDIA GeForce RTX 4090", "H200"),
        (None, "H200"),
    ],
)
def test_peaks_follow_the_device_name(name: str | None, expected: str) -> None:
    assert gpu_peaks.peaks_for(name).name == expected


def test_the_h100_roof_is_lower_than_the_h200s() -> None:
    h100, h200 = gpu_peaks.peaks_for("NVIDIA H100 80GB HBM3"), gpu_peaks.peaks_for("NVIDIA H200")
    assert 2.9e12 < h100.bandwidth < 3.1e12 < h200.bandwidth
    assert h100.fp32 == h200.fp32


def test_the_bandwidth_override_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNELOPT_PEAK_BANDWIDTH", "1e12")
    assert gpu_peaks.peaks_for("NVIDIA H100 80GB HBM3").bandwidth == 1e12


def test_the_readers_take_this_gpus_roof(monkeypatch: pytest.MonkeyPatch) -> None:
    h100 = gpu_peaks.peaks_for("NVIDIA H100 80GB HBM3")
    monkeypatch.setattr(gpu_peaks, "current", lambda: h100)
    monkeypatch.setattr(roofline, "current", lambda: h100)
    assert roofline.bandwidth() == h100.bandwidth
    # 3 GB through an H100 takes longer than through an H200: the gate's floor says so.
    assert timing.roofline_ms(3 * 10**9) == pytest.approx(3e9 / h100.bandwidth * 1e3)
    assert roofline.compute_peak("vendor", "torch.float32", tf32=True) == (
        h100.tf32,
        "TF32 tensor cores",
    )


def test_without_a_gpu_the_roof_is_the_h200s(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert gpu_peaks.current() == gpu_peaks.peaks_for(None)
