"""Device memory in the verification's processes is released when its owner drops it.

A recursive closure is a reference cycle (the function holds its own cell): whatever it
captured, a message's blobs among them, then lives until the cyclic collector runs. On the
H200 the checker's peak was 8.7x and 13.9x the reference's footprint on a 0.8 GB problem (two
candidates checked by one service, the second's peak the higher) and 54 GiB on a 12.9 GB one:
copies kept alive by cycles like these are one cause. These run on the CPU: the same code
moves the device tensors there.
"""

from __future__ import annotations

import ast
import gc
import weakref
from pathlib import Path

import torch
from _checksum import checksum_by_formula

from kernelopt_jupyter.verify import wire

VERIFY = Path(__file__).resolve().parents[1] / "verify"


def _leaf(blob: int) -> dict[str, object]:
    return {
        "t": "tensor",
        "dtype": "float32",
        "shape": [1000],
        "stride": [1],
        "device": "cpu",
        "contiguous": True,
        "blob": blob,
    }


def test_a_subset_frees_its_blobs_without_the_cyclic_collector() -> None:
    enabled = gc.isenabled()
    gc.disable()
    try:
        kept, other = torch.ones(1000), torch.zeros(1000)
        alive = weakref.ref(kept)
        tree = {"t": "list", "items": [_leaf(1)]}
        sub, picked = wire.subset(tree, [other, kept])
        assert picked == [kept] and sub["items"][0]["blob"] == 0
        del sub, picked, kept
        assert alive() is None
    finally:
        if enabled:
            gc.enable()


def test_map_leaves_replaces_data_leaves_only() -> None:
    tree = {
        "t": "dict",
        "keys": ["a", "b"],
        "items": [_leaf(0), {"t": "list", "items": [_leaf(1)]}],
    }
    out = wire.map_leaves(tree, lambda leaf: {"blob": leaf["blob"] + 10})
    assert out["items"][0] == {"blob": 10} and out["items"][1]["items"][0] == {"blob": 11}
    assert out["keys"] == ["a", "b"]


def test_no_recursive_closure_in_the_verifier() -> None:
    """Every recursive helper of ``verify/`` is module-level (see the module docstring)."""
    found = []
    for path in sorted(VERIFY.glob("*.py")):
        for outer in ast.walk(ast.parse(path.read_text())):
            if not isinstance(outer, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for inner in ast.walk(outer):
                if inner is outer or not isinstance(inner, ast.FunctionDef):
                    continue
                names = {n.id for n in ast.walk(inner) if isinstance(n, ast.Name)}
                if inner.name in names:
                    found.append(f"{path.name}: {outer.name}.{inner.name}")
    assert not found, found


def test_the_device_checksum_is_the_same_in_small_steps_and_sees_one_byte(monkeypatch) -> None:
    from kernelopt_jupyter.verify import sandbox

    raw = torch.randint(0, 256, (3003,), dtype=torch.uint8)  # three bytes past the last word
    whole = sandbox._device_checksum(raw)
    assert whole == checksum_by_formula(raw)
    monkeypatch.setattr(sandbox, "CHECKSUM_STEP", 64)  # many steps, a partial last one
    assert sandbox._device_checksum(raw) == whole
    # Where the bytes start in their allocation changes nothing (a word view needs 4).
    for shift in (1, 2, 3):
        padded = torch.cat([torch.zeros(shift, dtype=torch.uint8), raw])
        assert (
            padded[shift:].storage_offset() % 4
            and sandbox._device_checksum(padded[shift:]) == whole
        )
    # Any single bit of any byte, the high bit of a word and the tail's bytes included.
    for index in (0, 3, 1000, 2999, 3000, 3002):
        for bit in (0, 7):
            changed = raw.clone()
            changed[index] ^= 1 << bit
            assert sandbox._device_checksum(changed) != whole, (index, bit)
    swapped = raw.clone()
    swapped[[10, 11]] = raw[[11, 10]]
    assert raw[10] == raw[11] or sandbox._device_checksum(swapped) != whole
    for n in (0, 1, 4, 5, 7):
        assert sandbox._device_checksum(raw[:n]) == checksum_by_formula(raw[:n])


def test_salting_in_steps_scales_every_element_within_bounds(monkeypatch) -> None:
    from kernelopt_jupyter.verify import timing

    monkeypatch.setattr(timing, "SALT_STEP", 7)  # many steps, a partial last one
    x = torch.randn(5, 13)
    strided = torch.randn(13, 5).t()  # not contiguous: salted whole
    ints = torch.arange(6)
    a = timing.salted([x, strided, ints, 3.0], 11, "cpu")
    b = timing.salted([x, strided, ints, 3.0], 11, "cpu")
    c = timing.salted([x, strided, ints, 3.0], 12, "cpu")
    for orig, got in ((x, a[0]), (strided, a[1])):
        ratio = got / orig
        assert torch.all((ratio >= 1 - timing.SALT - 1e-6) & (ratio <= 1 + timing.SALT + 1e-6))
        assert got.data_ptr() != orig.data_ptr()
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])  # the salt decides
    assert not torch.equal(a[0], c[0])
    # every step is drawn on: no element keeps its value by being past the first step
    assert bool(torch.all(a[0].reshape(-1) != x.reshape(-1)))
    assert torch.equal(a[2], ints) and a[3] == 3.0
