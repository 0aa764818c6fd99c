"""The roofline: where a sub-kernel sits against memory bandwidth and compute peaks.

The peaks are the GPU's own (:mod:`kernelopt_jupyter.gpu_peaks`: the device this process
uses, the H200's where there is none); ``KERNELOPT_PEAK_BANDWIDTH`` (bytes/s) overrides the
bandwidth, as the performance gate does.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernelopt_jupyter.gpu_peaks import H200, current

H200_BANDWIDTH = H200.bandwidth
H200_FP32 = H200.fp32


def bandwidth() -> float:
    """Peak memory bandwidth in bytes/s of this process's GPU."""
    return current().bandwidth


def compute_peak(kind: str, dtype: str, *, tf32: bool = False) -> tuple[float, str]:
    """The FLOP/s peak that bounds a unit: tensor cores for vendor matmul/conv, else CUDA cores."""
    low = dtype.lower()
    peaks = current()
    if kind == "vendor":
        if "bfloat16" in low or "float16" in low or "half" in low:
            return peaks.bf16, "bf16/fp16 tensor cores"
        if tf32:
            return peaks.tf32, "TF32 tensor cores"
    return peaks.fp32, "fp32 CUDA cores"


@dataclass
class RooflinePoint:
    """A unit's position: intensity, which roof binds, the bound time and the fraction reached."""

    intensity: float | None
    bound: str | None  # "memory" | "compute"
    bound_ms: float | None
    fraction: float | None  # bound_ms / measured ms (1.0 = at the roof); None where unmeasured
    peak: str


def place(
    flops: int | None, nbytes: int | None, ms: float | None, peak_flops: float, peak_name: str
) -> RooflinePoint:
    """Place one unit on the roofline (fraction only when a measured time is given)."""
    if not nbytes and not flops:
        return RooflinePoint(None, None, None, None, peak_name)
    bw = bandwidth()
    t_mem = (nbytes or 0) / bw
    t_compute = (flops or 0) / peak_flops
    bound = "memory" if t_mem >= t_compute else "compute"
    bound_ms = max(t_mem, t_compute) * 1e3
    intensity = (flops or 0) / nbytes if nbytes else None
    fraction = bound_ms / ms if ms and ms > 0 else None
    return RooflinePoint(intensity, bound, bound_ms, fraction, peak_name)
