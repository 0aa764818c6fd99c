"""The wire's device-to-device leaves (``verify.ipc``), as data: which receiver accepts which.

The CUDA calls themselves run on the H200 (``tests/test_verify_gpu.py``); here the rules a
receiver applies run on the CPU, with byte tensors standing in for staging buffers.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

from kernelopt_jupyter.verify import wire


def _leaf(t: torch.Tensor, **extra: Any) -> dict[str, Any]:
    return {**wire.tensor_leaf(t), **extra}


def test_a_slot_leaf_is_read_from_the_receivers_own_buffer() -> None:
    value = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    slot = torch.zeros(64, dtype=torch.uint8)
    slot[:48].copy_(value.reshape(-1).view(torch.uint8))
    got = wire.decode(_leaf(value, slot=0), [], bulk=wire.Bulk(slots=[slot]))
    assert torch.equal(got.tensor, value)
    slot.zero_()  # what the sender writes there later changes nothing already taken
    assert torch.equal(got.tensor, value)


def test_a_slot_leaf_kept_in_host_memory_is_its_own_copy() -> None:
    """Where the receiver keeps what it only reads on the host (``Bulk.host``: the checker's
    copy of a candidate's output), the copy is taken at once, in host memory (page-locked
    where the host allows; here, without a GPU, ordinary pages), and later writes to the slot
    change nothing."""
    value = torch.randn(5, 7)
    slot = torch.zeros(256, dtype=torch.uint8)
    slot[:140].copy_(value.reshape(-1).view(torch.uint8))
    got = wire.decode(_leaf(value, slot=0), [], bulk=wire.Bulk(slots=[slot], host=True))
    slot.fill_(255)
    assert got.tensor.device.type == "cpu" and torch.equal(got.tensor, value)
    assert got.tensor.data_ptr() != slot.data_ptr()


@pytest.mark.parametrize(
    ("leaf_extra", "bulk", "why"),
    [
        ({"slot": 0}, None, "no staging slot was offered"),
        ({"slot": 3}, "one", "bad staging slot"),
        ({"slot": -1}, "one", "bad staging slot"),
        ({"slot": 0}, "small", "bigger than its slot"),
        ({"ipc": {"handle": "AAAA", "offset": 0}}, None, "handles are not accepted"),
        ({"ipc": {"handle": "AAAA", "offset": 0}}, "one", "handles are not accepted"),
    ],
)
def test_a_sender_cannot_point_the_receiver_elsewhere(
    leaf_extra: dict[str, Any], bulk: str | None, why: str
) -> None:
    """A candidate's reply is decoded with slots only: a handle leaf (which would make the
    checker map memory the candidate names) and a slot out of range are malformed data."""
    value = torch.ones(4, 4)
    slots = {
        "one": [torch.zeros(64, dtype=torch.uint8)],
        "small": [torch.zeros(8, dtype=torch.uint8)],
    }
    given = wire.Bulk(slots=slots[bulk]) if bulk else None
    with pytest.raises(wire.WireError):
        wire.decode(_leaf(value, **leaf_extra), [], bulk=given)
    assert why  # (the case's reason, for the reader)


class _FakeMappings:
    """Stands in for ``ipc.Mappings`` (a trusted sender's handles): returns its own copy."""

    def __init__(self, source: torch.Tensor) -> None:
        self.source = source
        self.opened = 0
        self.host: list[bool] = []

    def tensor(
        self,
        spec: dict[str, Any],
        dtype: torch.dtype,
        shape: list[int],
        stride: list[int],
        host: bool = False,
    ):
        self.opened += 1
        self.host.append(host)
        return self.source.clone().as_strided(shape, stride)


def test_localize_leaves_nothing_pointing_into_another_process() -> None:
    value = torch.randn(5, 7)
    tree = wire.encode((value, 3, {"k": value})).tree

    def to_handle(node: Any) -> Any:
        if isinstance(node, dict):
            if node.get("t") == "tensor":
                node = {k: v for k, v in node.items() if k != "blob"}
                return {**node, "ipc": {"handle": "x", "offset": 0}}
            return {k: to_handle(v) for k, v in node.items()}
        if isinstance(node, list):
            return [to_handle(v) for v in node]
        return node

    shared = to_handle(tree)
    assert wire.has_bulk(shared)
    blobs: list[Any] = []
    mappings = _FakeMappings(value)
    local = wire.localize(shared, blobs, wire.Bulk(mappings=mappings))
    assert not wire.has_bulk(local)
    assert mappings.opened == 2 and mappings.host == [False, False]
    # Where the receiver keeps what it only reads in host memory, every copy is made there.
    again = _FakeMappings(value)
    wire.localize(shared, [], wire.Bulk(mappings=again, host=True))
    assert again.host == [True, True]
    got = wire.unwrap(wire.decode(local, blobs, trusted=True))
    assert torch.equal(got[0], value) and got[1] == 3 and torch.equal(got[2]["k"], value)


def test_a_local_blob_must_match_its_leaf() -> None:
    value = torch.randn(2, 3)
    leaf = _leaf(value, blob=0)
    with pytest.raises(wire.WireError):
        wire.decode(leaf, [torch.randn(3, 2)])
    assert torch.equal(wire.decode(leaf, [value]).tensor, value)


_THREAD_LEFT_RUNNING = '''
"""Exact GELU with a helper worker started once in __init__ (never joined)."""
import torch
import torch.nn as nn
import torch.storage as _storage
import triton
import triton.language as tl


@triton.jit
def _gelu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._stop = _storage.threading.Event()
        _storage.threading._start_new_thread(self._stop.wait, ())

    def forward(self, x):
        out = torch.empty_like(x)
        _gelu[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
        return out
'''


def test_a_thread_left_running_by_init_fails_the_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread started while building (through ``_thread``, which ``threading.enumerate``
    does not list) would run beside every call: reading the input staging lent for the next
    call, or writing the output slot after the harness filled it. The load refuses it (with
    the source rules off: they refuse ``torch.storage.threading`` before anything runs)."""
    from pathlib import Path

    import kernelopt_jupyter.verify.cascade as cascade
    from kernelopt_jupyter.problem import load_problem
    from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

    monkeypatch.setattr(cascade, "_source_failure", lambda *args, **kwargs: None)

    problem = load_problem(Path(__file__).parent / "adversarial" / "problems" / "gelu.py")
    options = VerifyOptions(device="cpu", time_limit_s=120, seed=1)
    report = verify_candidate(problem, _THREAD_LEFT_RUNNING, options, "thread_left_running.py")
    assert report.verdict == "fail"
    assert report.failed_gate == "static", [(g.name, g.detail) for g in report.gates]
    assert "thread(s) running" in " ".join(g.detail for g in report.gates)
