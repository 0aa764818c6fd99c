"""The checker's lending: bulk tensors between its process and the children's, device to device.

On the GPU (``verify.ipc``, CUDA IPC) the checker copies the reference's large tensors out of
the reference's staging buffers and has the reference scrub them (``Lender.shared``), lends a
case's inputs to the candidate from staging buffers of its own (``lend_inputs``) and lends
the candidate output slots to copy its results into (``out_slots``). Where a handle cannot be
opened, or on the CPU, everything goes the wire's byte path (``ipc`` is then False and
``ipc_note`` says why). Runs in the verification worker (the checker's process shell).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import torch

from kernelopt_jupyter.verify import wire

#: On a GPU, the largest output (bytes) whose answer key (the fp32 output, the float64 one,
#: a linear bound) and whose candidate's copy the checker holds in page-locked host memory:
#: it only reads them, in steps that go to the device one at a time (``compare._chunks``).
#: On the device they were 4-5 output-sized units, 4.2-5.1x the footprint of the small
#: problems where the output is most of it. A larger output keeps them on the device: its
#: copies over the bus would cost more than a verification's checks.
HOST_KEY_BYTES = 1 << 30

#: A reference command and its reply (``Checker._ref_ask``).
AskReference = Callable[[dict[str, Any]], tuple[dict[str, Any], list[bytearray]]]
#: Where a copy's seconds go (``checker._Clock.add``).
NoteParts = Callable[[str, dict[str, float]], None]


class Lender:
    """One verification's lending: whether CUDA IPC is on, the staging buffers lent to the
    candidate, and where the candidate's outputs come back (``reply_bulk``)."""

    def __init__(self, device: str, ask_reference: AskReference) -> None:
        self.ask_reference = ask_reference
        # Bulk tensors device to device (verify.ipc) on the GPU; the byte path otherwise.
        self.ipc = device == "cuda" and os.environ.get("KERNELOPT_VERIFY_IPC", "1") != "0"
        self.staging: Any = None  # verify.ipc.Staging: the buffers lent to the candidate
        self.reply_bulk: wire.Bulk | None = None
        self.key_host = False  # whether this case's answer key is held in host memory
        self.ipc_note = ""

    def turn_off(self, note: str) -> None:
        """The byte path from here on; ``note`` says why (the timings' ``transfer``)."""
        self.ipc = False
        self.ipc_note = note

    def transfer(self) -> str:
        """How the bulk tensors moved, in words."""
        if self.ipc:
            return "device to device (CUDA IPC)"
        return "bytes" + (f" ({self.ipc_note})" if self.ipc_note else "")

    def staged_bytes(self) -> int:
        """The device bytes of the staging buffers lent so far."""
        return int(self.staging.nbytes()) if self.staging is not None else 0

    def close(self) -> None:
        """Free the staging buffers (the candidate's process is gone)."""
        if self.staging is not None:
            self.staging.close()
            self.staging = None

    def shared(
        self, header: dict[str, Any], note: NoteParts | None = None
    ) -> tuple[Any, list[Any]]:
        """A reference reply whose device-handle leaves are copied into this process and
        then scrubbed there; ``(None, [])`` where a handle could not be opened (this
        verification goes the byte path from then on). ``note`` is told the copy's seconds."""
        reply, blobs = self.ask_reference(header)
        if not self.ipc or not wire.has_bulk(reply):
            return reply, blobs
        from kernelopt_jupyter.verify import ipc

        mappings = ipc.Mappings()
        if isinstance(reply.get("out"), dict):
            self.key_host = key_on_host(reply["out"])
        on_device = wire.Bulk(mappings=mappings)
        on_host = wire.Bulk(mappings=mappings, host=self.key_host)
        try:
            # The inputs (a case's, the timing pool) are lent to the candidate from the
            # device; the answer key is only read, in steps, so it waits in host memory
            # where it is not large.
            started = time.monotonic()
            local = {
                k: wire.localize(v, blobs, on_device if k in ("inputs", "pool") else on_host)
                for k, v in reply.items()
            }
            if note is not None:
                note("checker", {"key copy": time.monotonic() - started})
            return local, blobs
        except (wire.WireError, ipc.IpcError, RuntimeError) as exc:  # RuntimeError: torch, OOM
            self.turn_off(f"the reference's device handles could not be opened ({exc})")
            return None, []
        finally:
            try:
                mappings.close()
            finally:
                self.ask_reference({"cmd": "scrub"})

    def lend_inputs(self, tree: Any, blobs: list[Any]) -> tuple[Any, list[Any]]:
        """The inputs as the candidate gets them: each local device tensor copied into a
        staging buffer of this process that the candidate maps (``verify.ipc``); the rest as
        bytes."""
        if not any(isinstance(b, torch.Tensor) for b in blobs):
            return tree, blobs
        from kernelopt_jupyter.verify import ipc

        if self.staging is None:
            self.staging = ipc.Staging()
        count = [0]

        def lend(leaf: dict[str, Any]) -> dict[str, Any]:
            blob = leaf.get("blob")
            if leaf.get("t") != "tensor" or not isinstance(blob, int):
                return leaf
            value = blobs[blob]
            if not isinstance(value, torch.Tensor):
                return leaf
            count[0] += 1
            try:
                return ipc.stage_input(self.staging, count[0] - 1, value)
            except (ipc.IpcError, RuntimeError):
                blobs[blob] = wire._tensor_bytes(value)
                return leaf

        return wire.subset(wire.map_leaves(tree, lend), blobs)

    def out_slots(self, out_tree: Any) -> list[Any] | None:
        """Staging buffers of this process for the candidate's outputs, one per tensor leaf
        of the reference's output (``None`` for a small one): the candidate's harness copies
        its output's bytes there instead of sending them."""
        self.reply_bulk = None
        if not self.ipc:
            return None
        from kernelopt_jupyter.verify import ipc

        sizes: list[int] = []

        def size(leaf: dict[str, Any]) -> None:
            if leaf.get("t") == "tensor":
                sizes.append(wire.nbytes(leaf))

        wire.map_leaves(out_tree, size)
        if not any(n >= ipc.MIN_BYTES for n in sizes):
            return None
        if self.staging is None:
            self.staging = ipc.Staging()
        slots: list[Any] = []
        raws: list[torch.Tensor] = []
        for k, n in enumerate(sizes):
            if n < ipc.MIN_BYTES:
                slots.append(None)
                raws.append(torch.empty(0, dtype=torch.uint8))
                continue
            try:
                buf = self.staging.get("out", k, n)
            except (ipc.IpcError, RuntimeError):
                slots.append(None)
                raws.append(torch.empty(0, dtype=torch.uint8))
                continue
            buf.raw.zero_()  # nothing of an earlier output is left for this one to claim
            slots.append({"handle": buf.handle, "extent": buf.nbytes})
            raws.append(buf.raw)
        torch.cuda.synchronize()
        self.reply_bulk = wire.Bulk(slots=raws, host=key_on_host(out_tree))
        return slots


def key_on_host(out_tree: Any) -> bool:
    """Whether an output of this tree's size, its answer key and the candidate's copy of it
    wait in this process's host memory (``HOST_KEY_BYTES``)."""
    return wire.nbytes(out_tree) <= HOST_KEY_BYTES


def drop_device_blobs(tree: Any, blobs: list[Any]) -> None:
    """Release this process's device copies of a tree's tensors (their blobs become empty)."""

    def drop(leaf: dict[str, Any]) -> None:
        blob = leaf.get("blob")
        if isinstance(blob, int) and isinstance(blobs[blob], torch.Tensor):
            blobs[blob] = b""

    wire.map_leaves(tree, drop)
