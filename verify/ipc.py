"""Bulk tensors between the verification's processes through CUDA IPC, without the host.

At KernelBench sizes the wire's byte path (device to host, a socket, host to device) was
most of a verification: 6-8 GB per candidate for a 256 MB output (the float64 referee's
outputs, the inputs, the candidate's outputs), 20 of 24 seconds on the H200. This module
moves them device to device instead, with the same trust rules:

* The **reference's** outputs, float64 outputs and inputs are exported by the reference's
  process (trusted) and mapped by the checker, which copies them into its own memory at once;
  the reference then zero-fills and drops what it exported (``scrub``) before the candidate
  is called, so no memory of the reference's process holds an answer while a candidate runs.
* The **candidate** never exports anything the checker would open: a handle it made up could
  point anywhere. Instead the checker allocates *staging* buffers of its own (raw driver
  allocations, outside torch's caching allocator, so nothing else ever lives in them): one
  per input, which it fills and the candidate maps and copies from, and one per expected
  output, which the candidate's harness fills with its output's bytes. What the checker
  judges is copied out of its own staging buffer; a candidate that writes there later only
  changes bytes the checker already took.
* Anything that cannot go this way (no driver, a tensor outside a driver allocation, an
  expandable-segment allocator, a size that does not match a staging buffer) goes the byte
  path, leaf by leaf; a probe at setup turns IPC off for a verification where it fails.

Only ``cuda`` devices use this module; the CPU keeps the byte path.
"""

from __future__ import annotations

import base64
import ctypes
from dataclasses import dataclass, field
from typing import Any

import torch

#: Bytes of a legacy CUDA IPC memory handle.
HANDLE_BYTES = 64
#: Below this, a tensor goes the byte path (a handle and a mapping cost more than the bytes).
MIN_BYTES = 1 << 20


class IpcError(Exception):
    """A CUDA IPC step failed (the caller falls back to the byte path)."""


class _Handle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * HANDLE_BYTES)]


_driver: Any = None


def _lib() -> Any:
    global _driver
    if _driver is None:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as exc:
            raise IpcError(f"no CUDA driver library ({exc})") from None
        u64, size = ctypes.c_uint64, ctypes.c_size_t
        lib.cuMemGetAddressRange_v2.argtypes = [
            ctypes.POINTER(u64),
            ctypes.POINTER(size),
            u64,
        ]
        lib.cuIpcGetMemHandle.argtypes = [ctypes.POINTER(_Handle), u64]
        lib.cuIpcOpenMemHandle_v2.argtypes = [ctypes.POINTER(u64), _Handle, ctypes.c_uint]
        lib.cuIpcCloseMemHandle.argtypes = [u64]
        lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(u64), size]
        lib.cuMemFree_v2.argtypes = [u64]
        _driver = lib
    return _driver


def _check(rc: int, what: str) -> None:
    if rc != 0:
        raise IpcError(f"{what} failed (CUDA driver error {rc})")


def _ready() -> None:
    """The device's primary context current on this thread (torch's runtime makes it so)."""
    if not torch.cuda.is_available():
        raise IpcError("no CUDA device")
    torch.cuda.synchronize()


def _range(ptr: int) -> tuple[int, int]:
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    _check(_lib().cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ptr), "range")
    return int(base.value), int(size.value)


class _Cai:
    """A device byte range as ``__cuda_array_interface__``, for ``torch.as_tensor``."""

    def __init__(self, ptr: int, nbytes: int) -> None:
        self.__cuda_array_interface__ = {
            "shape": (nbytes,),
            "typestr": "|u1",
            "data": (ptr, False),
            "version": 2,
            "strides": None,
        }


def bytes_at(ptr: int, nbytes: int) -> torch.Tensor:
    """``nbytes`` of device memory at ``ptr`` as a uint8 tensor (no copy, not owned)."""
    return torch.as_tensor(_Cai(ptr, nbytes), device="cuda")


def span_bytes(shape: list[int], stride: list[int], itemsize: int) -> int:
    """Bytes from a tensor's first element to just past its last (0 for an empty one)."""
    if any(s == 0 for s in shape):
        return 0
    return (sum((s - 1) * st for s, st in zip(shape, stride)) + 1) * itemsize


def copy_out(src: torch.Tensor, host: bool) -> torch.Tensor:
    """A contiguous copy of a device tensor in this process's own memory: on the device, or
    in page-locked host memory (``host``: the checker's answer key and its copy of a
    candidate's output, which it only reads in steps; ``wire.Bulk.host``)."""
    if not host:
        return src.clone(memory_format=torch.contiguous_format)
    try:
        out = torch.empty(tuple(src.shape), dtype=src.dtype, pin_memory=True)
    except RuntimeError:  # the host would not lock that much: ordinary pages, copied slower
        out = torch.empty(tuple(src.shape), dtype=src.dtype)
    out.copy_(src)
    return out


def view(raw: torch.Tensor, dtype: torch.dtype, shape: list[int], stride: list[int]) -> Any:
    """Typed, strided view of a byte tensor (element offset 0)."""
    itemsize = torch.empty((), dtype=dtype).element_size()
    usable = raw.numel() - raw.numel() % itemsize
    return raw[:usable].view(dtype).as_strided(shape, stride)


# ---------------------------------------------------------------------------- importing


@dataclass
class Mappings:
    """Handles opened by this process: each opened once, all closed by ``close``."""

    opened: dict[bytes, int] = field(default_factory=dict)

    def base(self, handle_b64: str) -> tuple[int, int]:
        """The mapped base pointer and the mapping's size (as the driver says, not the peer)."""
        try:
            raw = base64.b64decode(handle_b64.encode(), validate=True)
        except ValueError:
            raise IpcError("malformed handle") from None
        if len(raw) != HANDLE_BYTES:
            raise IpcError("malformed handle")
        if raw not in self.opened:
            _ready()
            handle = _Handle()
            ctypes.memmove(ctypes.byref(handle), raw, HANDLE_BYTES)
            ptr = ctypes.c_uint64()
            # 1 = CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS
            _check(_lib().cuIpcOpenMemHandle_v2(ctypes.byref(ptr), handle, 1), "open")
            self.opened[raw] = int(ptr.value)
        base = self.opened[raw]
        return base, _range(base)[1]

    def tensor(
        self,
        leaf: dict[str, Any],
        dtype: torch.dtype,
        shape: list[int],
        stride: list[int],
        host: bool = False,
    ) -> torch.Tensor:
        """A copy, in this process's memory (its host memory where ``host``), of the tensor a
        leaf's handle points at."""
        base, extent = self.base(str(leaf.get("handle")))
        offset = leaf.get("offset")
        itemsize = torch.empty((), dtype=dtype).element_size()
        span = span_bytes(shape, stride, itemsize)
        if not isinstance(offset, int) or offset < 0 or offset % itemsize:
            raise IpcError("bad offset")
        if offset + span > extent:
            raise IpcError("the tensor runs past its allocation")
        src = view(bytes_at(base + offset, span), dtype, shape, stride)
        out = copy_out(src, host)
        if host:  # read in steps from the host from now on: its scale taken here, on the device
            from kernelopt_jupyter.verify.compare import note_scale

            note_scale(out, src)
        torch.cuda.synchronize()
        return out

    def close(self) -> None:
        if not self.opened:
            return
        torch.cuda.synchronize()
        lib = _lib()
        for ptr in self.opened.values():
            lib.cuIpcCloseMemHandle(ptr)
        self.opened.clear()


# ---------------------------------------------------------------------------- staging


@dataclass
class _Buffer:
    ptr: int
    nbytes: int
    handle: str
    raw: torch.Tensor


class Staging:
    """Raw device allocations a trusted process lends to a candidate's process: only what is
    copied into them ever lives there (no other tensor shares their allocation)."""

    def __init__(self) -> None:
        self.buffers: dict[str, list[_Buffer]] = {}

    def get(self, kind: str, index: int, nbytes: int) -> _Buffer:
        """The ``index``-th buffer of ``kind`` ("in" or "out"), at least ``nbytes`` long."""
        row = self.buffers.setdefault(kind, [])
        while len(row) <= index:
            row.append(_Buffer(0, 0, "", torch.empty(0, dtype=torch.uint8)))
        buf = row[index]
        if buf.nbytes < nbytes:
            self._free(buf)
            row[index] = buf = self._alloc(nbytes)
        return buf

    def _alloc(self, nbytes: int) -> _Buffer:
        _ready()
        lib = _lib()
        ptr = ctypes.c_uint64()
        _check(lib.cuMemAlloc_v2(ctypes.byref(ptr), nbytes), f"allocating {nbytes} bytes")
        handle = _Handle()
        rc = lib.cuIpcGetMemHandle(ctypes.byref(handle), ptr.value)
        if rc != 0:
            lib.cuMemFree_v2(ptr.value)
            _check(rc, "export")
        return _Buffer(
            int(ptr.value),
            nbytes,
            base64.b64encode(ctypes.string_at(ctypes.addressof(handle), HANDLE_BYTES)).decode(),
            bytes_at(int(ptr.value), nbytes),
        )

    def _free(self, buf: _Buffer) -> None:
        if buf.ptr:
            torch.cuda.synchronize()
            _lib().cuMemFree_v2(buf.ptr)
            buf.ptr = 0

    def nbytes(self) -> int:
        """Device bytes these buffers hold (torch's memory statistics do not see them)."""
        return sum(b.nbytes for row in self.buffers.values() for b in row if b.ptr)

    def close(self) -> None:
        for row in self.buffers.values():
            for buf in row:
                self._free(buf)
        self.buffers.clear()


def stage(staging: Staging, kind: str, index: int, t: torch.Tensor) -> dict[str, Any]:
    """Copy a tensor's bytes (contiguous) into staging buffer ``index`` of ``kind``: the
    handle a peer maps it by (``ipc``) and the bytes used (``nbytes``)."""
    src = t.detach().contiguous()
    nbytes = src.numel() * src.element_size()
    buf = staging.get(kind, index, nbytes)
    buf.raw[:nbytes].copy_(src.reshape(-1).view(torch.uint8))
    torch.cuda.synchronize()
    return {"ipc": {"handle": buf.handle, "offset": 0, "extent": buf.nbytes}, "nbytes": nbytes}


def stage_input(staging: Staging, index: int, t: torch.Tensor) -> dict[str, Any]:
    """Copy a (trusted) input into staging buffer ``index``; the leaf a candidate maps it by."""
    from kernelopt_jupyter.verify.wire import tensor_leaf

    spec = stage(staging, "in", index, t)
    return {**tensor_leaf(t), "ipc": spec["ipc"]}


def available() -> bool:
    """Whether this process can use the driver's IPC calls (a CUDA device and the library)."""
    try:
        _lib()
        _ready()
    except (IpcError, RuntimeError):
        return False
    return True
