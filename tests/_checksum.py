"""The device checksum's definition (``verify.sandbox._device_checksum``), word by word in
Python integers with int64 wrap: little-endian signed 32-bit words weighted by (2 i + 1) K,
the last ``numel % 4`` bytes one by one. Shared by the CPU and the GPU checksum tests."""

from __future__ import annotations

import torch


def checksum_by_formula(raw: torch.Tensor) -> str:
    data = bytes(raw.cpu().tolist())
    words = len(data) // 4
    k = 2654435761
    total = 0
    for i in range(words):
        total += int.from_bytes(data[4 * i : 4 * i + 4], "little", signed=True) * (2 * i + 1) * k
    for i in range(words, words + len(data) % 4):
        total += data[4 * words + (i - words)] * (2 * i + 1) * k
    total %= 1 << 64
    signed = total - (1 << 64) if total >= 1 << 63 else total
    return f"{raw.numel()}:{signed % (1 << 61)}"
