"""The peaks of the GPU a run is on: sustained memory bandwidth and dense compute.

The roofline (``analysis.roofline``, the panel's chart) and the performance gate's
"faster than memory allows" check (``verify.timing``) read these, so a kernel on an H100 is
placed under the H100's roof rather than the H200's (an H100 SXM moves about 3 TB/s, an H200
4.3: read against the H200, every H100 kernel looked a third further from its roof, and the
gate let through claims the H100 cannot make).

Bandwidth is the sustained copy rate: the H200's is measured on this project's machines
(4.3e12 bytes/s of the 4.8 TB/s spec); for the others it is 90% of NVIDIA's datasheet figure,
the same ratio. Compute peaks are the datasheets' dense figures (no sparsity). Sources: NVIDIA
H200 and H100 Tensor Core GPU datasheets, NVIDIA A100 Tensor Core GPU datasheet.
``KERNELOPT_PEAK_BANDWIDTH`` (bytes/s) overrides the bandwidth, as before.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuPeaks:
    """One GPU's roof: bytes/s and FLOP/s (fp32 CUDA cores, TF32 and bf16 tensor cores)."""

    name: str
    bandwidth: float
    fp32: float
    tf32: float
    bf16: float


H200 = GpuPeaks("H200", 4.3e12, 67e12, 495e12, 990e12)
#: Matched by name, most specific first (``torch.cuda.get_device_name()``).
KNOWN: tuple[tuple[str, GpuPeaks], ...] = (
    ("H200", H200),
    ("H100 PCIe", GpuPeaks("H100 PCIe", 0.9 * 2.0e12, 51e12, 378e12, 756e12)),
    ("H100 NVL", GpuPeaks("H100 NVL", 0.9 * 3.9e12, 60e12, 418e12, 835e12)),
    ("H100", GpuPeaks("H100 SXM", 0.9 * 3.35e12, 67e12, 495e12, 990e12)),
    ("A100-SXM4-80GB", GpuPeaks("A100 80GB", 0.9 * 2.039e12, 19.5e12, 156e12, 312e12)),
    ("A100", GpuPeaks("A100 40GB", 0.9 * 1.555e12, 19.5e12, 156e12, 312e12)),
)


def peaks_for(device_name: str | None) -> GpuPeaks:
    """The peaks of the GPU called ``device_name``; the H200's for an unknown or absent one
    (the CPU tier ranks by estimated time against them). The bandwidth override applies."""
    found = next((p for key, p in KNOWN if device_name and key in device_name), H200)
    override = os.environ.get("KERNELOPT_PEAK_BANDWIDTH")
    if override:
        found = GpuPeaks(found.name, float(override), found.fp32, found.tf32, found.bf16)
    return found


def roof_name(device_name: str | None) -> str:
    """Whose roof a kernel is placed under, in words: the GPU's own where it is known, else
    the H200's, said to be an assumption (an unknown card, or none: the CPU tier)."""
    found = next((p for key, p in KNOWN if device_name and key in device_name), None)
    if found is not None:
        return found.name
    if device_name:
        return f"{H200.name} (assumed: {device_name} has no known peaks)"
    return f"{H200.name} (no GPU here: its peaks stand in)"


def current() -> GpuPeaks:
    """The peaks of the CUDA device this process uses (torch's current device), or the
    H200's where there is none. Never initialises CUDA in a process that has not."""
    import torch

    name = None
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        name = torch.cuda.get_device_name()
    return peaks_for(name)
