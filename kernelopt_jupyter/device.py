"""Device choice: ``auto`` means CUDA when a GPU is present, else the CPU and Triton's interpreter."""

from __future__ import annotations

import os
from typing import Literal

Device = Literal["cpu", "cuda"]


class DeviceError(Exception):
    """The requested device cannot be used here (a user error: one line)."""


def resolve_device(requested: str = "auto") -> Device:
    """Map ``auto|cpu|cuda`` to a concrete device, checking that CUDA is really there."""
    import torch

    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda":
        if not torch.cuda.is_available():
            raise DeviceError("--device cuda: no CUDA GPU is visible on this machine")
        return "cuda"
    if requested == "cpu":
        return "cpu"
    raise DeviceError(f"unknown device {requested!r}; use auto, cpu or cuda")


def interpreter_env(device: Device) -> dict[str, str]:
    """Environment a worker needs for ``device``: the Triton interpreter on the CPU."""
    env = dict(os.environ)
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"
    else:
        env.pop("TRITON_INTERPRET", None)
    return env
