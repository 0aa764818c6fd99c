"""Messages between the checker and its children, and tensors taken as data.

A message is a JSON header plus raw byte blobs, length-prefixed on a socket. Values travel as
a JSON *tree* (tensor, tuple, list, dict, number, string, None) whose tensor leaves point at
blobs holding their raw bytes, so the checker rebuilds plain ``torch.Tensor`` objects from
bytes it parsed itself: nothing the candidate's process sends is unpickled or called in the
checker, and a ``torch.Tensor`` subclass cannot lie about its values (its bytes are compared,
not its methods).

Only a trusted peer (the checker, the reference process) may put a pickled leaf in a tree;
``decode`` refuses one unless told the sender is trusted.
"""

from __future__ import annotations

import json
import pickle
import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

#: The largest JSON header a child may send (a tree of leaves, diagnostics).
MAX_HEADER = 8 * 1024 * 1024
_LEN = struct.Struct("!Q")

DTYPES: dict[str, torch.dtype] = {
    str(d).removeprefix("torch."): d
    for d in (
        torch.float64,
        torch.float32,
        torch.float16,
        torch.bfloat16,
        torch.complex64,
        torch.complex128,
        torch.int64,
        torch.int32,
        torch.int16,
        torch.int8,
        torch.uint8,
        torch.bool,
    )
}


class WireError(Exception):
    """A malformed or oversized message, or a closed peer."""


# ---------------------------------------------------------------------------- framing


def _recv_exact(sock: socket.socket, n: int) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], min(n - got, 1 << 24))
        if k == 0:
            raise WireError("the peer closed the connection")
        got += k
    return buf


def send(sock: socket.socket, header: dict[str, Any], blobs: list[Any] | None = None) -> None:
    """Send a header and blobs (bytes-like objects)."""
    blobs = blobs or []
    views = [memoryview(b).cast("B") for b in blobs]
    head = json.dumps({**header, "_blobs": [len(v) for v in views]}).encode()
    sock.sendall(_LEN.pack(len(head)) + head)
    for view in views:
        sock.sendall(view)


def recv(sock: socket.socket, max_blob_bytes: int) -> tuple[dict[str, Any], list[bytearray]]:
    """Receive one message; a header or blobs over the limits is a ``WireError``."""
    (size,) = _LEN.unpack(_recv_exact(sock, _LEN.size))
    if size > MAX_HEADER:
        raise WireError(f"header of {size} bytes exceeds {MAX_HEADER}")
    try:
        header = json.loads(bytes(_recv_exact(sock, size)))
    except ValueError as exc:
        raise WireError(f"header is not JSON ({exc})") from None
    if not isinstance(header, dict):
        raise WireError("header is not an object")
    sizes = header.pop("_blobs", [])
    if not isinstance(sizes, list) or not all(isinstance(s, int) and s >= 0 for s in sizes):
        raise WireError("bad blob sizes")
    if sum(sizes) > max_blob_bytes:
        raise WireError(f"{sum(sizes)} bytes of data exceed the limit of {max_blob_bytes}")
    return header, [_recv_exact(sock, s) for s in sizes]


# ---------------------------------------------------------------------------- values


@dataclass
class Encoded:
    """A value as a JSON tree plus the blobs its leaves point at."""

    tree: Any
    blobs: list[Any] = field(default_factory=list)


def _tensor_bytes(t: torch.Tensor) -> Any:
    host = t.detach()
    if host.device.type != "cpu":
        host = host.cpu()
    host = host.contiguous()
    if host.numel() == 0:
        return b""
    return host.view(-1).view(torch.uint8).numpy()


#: ``share(tensor)`` in ``encode``: the fields that carry a tensor off the byte path (a CUDA
#: IPC handle, a staging slot; ``verify.ipc``), or None for the byte path.
Share = Callable[[torch.Tensor], "dict[str, Any] | None"]


def tensor_leaf(t: torch.Tensor) -> dict[str, Any]:
    """A tensor's leaf without its data (dtype, shape, strides, device, contiguity)."""
    return {
        "t": "tensor",
        "dtype": str(t.dtype).removeprefix("torch."),
        "shape": list(t.shape),
        "stride": list(t.stride()),
        "device": t.device.type,
        "contiguous": bool(t.is_contiguous()),
    }


def encode(value: Any, *, allow_pickle: bool = False, share: Share | None = None) -> Encoded:
    """A value as a tree: tensors (exact ``torch.Tensor`` only), containers, plain scalars.

    A tensor subclass, or any other object, is described (``"t": "object"``) instead of being
    encoded; with ``allow_pickle`` (a trusted sender) other objects are pickled. ``share``
    may carry a tensor's data device to device instead of as bytes.
    """
    out = Encoded(None)
    out.tree = _encode(value, out, allow_pickle, share)
    return out


def _encode(value: Any, out: Encoded, allow_pickle: bool, share: Share | None = None) -> Any:
    kind = type(value)
    if kind is torch.Tensor:
        name = str(value.dtype).removeprefix("torch.")
        if name not in DTYPES:
            return {"t": "object", "type": f"tensor of dtype {name}"}
        leaf = tensor_leaf(value)
        shared = share(value) if share is not None else None
        if shared:
            return {**leaf, **shared}
        out.blobs.append(_tensor_bytes(value))
        return {**leaf, "blob": len(out.blobs) - 1}
    if kind is tuple or kind is list:
        return {
            "t": kind.__name__,
            "items": [_encode(v, out, allow_pickle, share) for v in value],
        }
    if kind is dict and all(type(k) is str for k in value):
        return {
            "t": "dict",
            "keys": list(value),
            "items": [_encode(v, out, allow_pickle, share) for v in value.values()],
        }
    if value is None:
        return {"t": "none"}
    if kind is bool or kind is int or kind is str:
        return {"t": kind.__name__, "v": value}
    if kind is float:
        return {"t": "float", "v": repr(value)}  # repr keeps nan/inf through JSON
    if allow_pickle:
        out.blobs.append(pickle.dumps(value))
        return {"t": "pickle", "blob": len(out.blobs) - 1}
    if isinstance(value, torch.Tensor):
        return {
            "t": "object",
            "type": f"{kind.__module__}.{kind.__qualname__} (a torch.Tensor subclass)",
        }
    return {"t": "object", "type": f"{kind.__module__}.{kind.__qualname__}"}


@dataclass
class Bulk:
    """What a receiver accepts besides bytes: ``mappings`` (a ``verify.ipc.Mappings``) opens
    CUDA IPC handles, from a sender this receiver trusts with its handles; ``slots`` are this
    receiver's own staging buffers (byte tensors) a sender filled. ``host``: the copies are
    made in this process's page-locked host memory instead of on the device (what it only
    reads, in steps: ``compare.WORK_DEVICE``)."""

    mappings: Any = None
    slots: list[torch.Tensor] | None = None
    host: bool = False


def decode(
    tree: Any,
    blobs: list[Any],
    *,
    trusted: bool = False,
    device: str = "cpu",
    bulk: Bulk | None = None,
) -> Any:
    """Rebuild a value from its tree: ``Sent`` tensors on ``device``, plain containers.

    An ``object`` leaf (a subclass or a foreign object the sender described) becomes an
    ``Opaque`` marker; a malformed tree is a ``WireError``. A blob may also be a tensor this
    process put there itself (``localize``).
    """
    if not isinstance(tree, dict) or "t" not in tree:
        raise WireError("malformed value tree")
    t = tree["t"]
    if t == "tensor":
        return _decode_tensor(tree, blobs, device, bulk)
    if t in ("tuple", "list"):
        items = [
            decode(v, blobs, trusted=trusted, device=device, bulk=bulk)
            for v in _list(tree, "items")
        ]
        return tuple(items) if t == "tuple" else items
    if t == "dict":
        keys = _list(tree, "keys")
        items = _list(tree, "items")
        if len(keys) != len(items) or not all(isinstance(k, str) for k in keys):
            raise WireError("malformed dict")
        return {
            k: decode(v, blobs, trusted=trusted, device=device, bulk=bulk)
            for k, v in zip(keys, items)
        }
    if t == "none":
        return None
    if t in ("bool", "int", "str"):
        value = tree.get("v")
        if type(value).__name__ != t:
            raise WireError(f"malformed {t}")
        return value
    if t == "float":
        try:
            return float(str(tree.get("v")))
        except ValueError:
            raise WireError("malformed float") from None
    if t == "pickle":
        if not trusted:
            raise WireError("a pickled value from an untrusted sender")
        return pickle.loads(bytes(_blob(tree, blobs)))
    if t == "object":
        return Opaque(str(tree.get("type", "object"))[:200])
    raise WireError(f"unknown value kind {t!r}")


@dataclass(frozen=True)
class Opaque:
    """A returned object that was not data the checker can take (a subclass, a foreign type)."""

    type_name: str


@dataclass
class Sent:
    """A tensor rebuilt from bytes, with what the sender said about it (its strides, device)."""

    tensor: torch.Tensor
    stride: tuple[int, ...]
    device: str
    contiguous: bool


def unwrap(value: Any) -> Any:
    """The value with each ``Sent`` leaf replaced by its tensor."""
    if isinstance(value, Sent):
        return value.tensor
    if isinstance(value, tuple | list):
        return type(value)(unwrap(v) for v in value)
    if isinstance(value, dict):
        return {k: unwrap(v) for k, v in value.items()}
    return value


def _list(tree: dict[str, Any], key: str) -> list[Any]:
    value = tree.get(key)
    if not isinstance(value, list):
        raise WireError(f"malformed {key}")
    return value


def _blob(tree: dict[str, Any], blobs: list[Any]) -> Any:
    index = tree.get("blob")
    if not isinstance(index, int) or not 0 <= index < len(blobs):
        raise WireError("bad blob index")
    return blobs[index]


def _decode_tensor(
    tree: dict[str, Any], blobs: list[Any], device: str, bulk: Bulk | None = None
) -> Sent:
    dtype = DTYPES.get(str(tree.get("dtype")))
    shape = tree.get("shape")
    if (
        dtype is None
        or not isinstance(shape, list)
        or not all(isinstance(s, int) and s >= 0 for s in shape)
    ):
        raise WireError("malformed tensor")
    stride = tree.get("stride")
    if not isinstance(stride, list) or not all(isinstance(s, int) for s in stride):
        raise WireError("malformed tensor strides")
    numel = 1
    for s in shape:
        numel *= s
    itemsize = torch.empty((), dtype=dtype).element_size()
    if "ipc" in tree or "slot" in tree:
        out = _decode_bulk(tree, dtype, list(shape), numel * itemsize, bulk)
    else:
        raw = _blob(tree, blobs)
        if isinstance(raw, torch.Tensor):  # a tensor this process localized itself
            if raw.dtype != dtype or list(raw.shape) != shape:
                raise WireError("a local tensor that does not match its leaf")
            out = raw
        else:
            if len(raw) != numel * itemsize:
                raise WireError(f"tensor data of {len(raw)} bytes for {numel} {dtype} elements")
            if numel == 0:
                flat = torch.empty(0, dtype=dtype)
            else:
                flat = torch.frombuffer(raw, dtype=torch.uint8).view(dtype)
            out = flat.reshape(shape)
    if device != "cpu" and out.device.type == "cpu":
        out = out.to(device)
    return Sent(out, tuple(stride), str(tree.get("device", "cpu")), bool(tree.get("contiguous")))


def _contiguous_strides(shape: list[int]) -> list[int]:
    strides, step = [], 1
    for s in reversed(shape):
        strides.append(step)
        step *= max(s, 1)
    return strides[::-1]


def _decode_bulk(
    tree: dict[str, Any], dtype: torch.dtype, shape: list[int], nbytes: int, bulk: Bulk | None
) -> torch.Tensor:
    """A copy, in this process's memory, of a tensor sent device to device (``verify.ipc``):
    contiguous bytes behind an IPC handle of a trusted sender, or in one of this receiver's
    own staging slots."""
    from kernelopt_jupyter.verify import ipc

    if nbytes == 0:
        raise WireError("an empty tensor off the byte path")
    if "slot" in tree:
        slot = tree.get("slot")
        if bulk is None or bulk.slots is None:
            raise WireError("a staging slot where none was offered")
        if not isinstance(slot, int) or not 0 <= slot < len(bulk.slots):
            raise WireError("bad staging slot")
        raw = bulk.slots[slot]
        if nbytes > raw.numel():
            raise WireError(f"a tensor of {nbytes} bytes in a slot of {raw.numel()}")
        return ipc.copy_out(
            ipc.view(raw[:nbytes], dtype, shape, _contiguous_strides(shape)), bulk.host
        )
    if bulk is None or bulk.mappings is None:
        raise WireError("a device handle from a sender whose handles are not accepted")
    spec = tree.get("ipc")
    if not isinstance(spec, dict):
        raise WireError("malformed device handle")
    try:
        return bulk.mappings.tensor(spec, dtype, shape, _contiguous_strides(shape), bulk.host)
    except ipc.IpcError as exc:
        raise WireError(f"the device handle could not be opened ({exc})") from None


def pack(
    named: list[tuple[str, Any]], *, allow_pickle: bool = False, share: Share | None = None
) -> tuple[dict[str, Any], list[Any]]:
    """Several values in one message: a header field per name, their blobs concatenated."""
    fields: dict[str, Any] = {}
    blobs: list[Any] = []
    for name, value in named:
        enc = encode(value, allow_pickle=allow_pickle, share=share)
        shift(enc.tree, len(blobs))
        fields[name] = enc.tree
        blobs += enc.blobs
    return fields, blobs


def shift(tree: Any, offset: int) -> None:
    """Add ``offset`` to every blob index in a tree (to append its blobs after others)."""
    if isinstance(tree, dict):
        if tree.get("t") in ("tensor", "pickle") and isinstance(tree.get("blob"), int):
            tree["blob"] += offset
        for value in tree.values():
            shift(value, offset)
    elif isinstance(tree, list):
        for value in tree:
            shift(value, offset)


def map_leaves(tree: Any, fn: Callable[[dict[str, Any]], Any]) -> Any:
    """The tree with every data leaf (a tensor or pickle leaf) replaced by ``fn(leaf)``.

    Module-level on purpose: a recursive closure is a reference cycle (the function holds
    its own cell), which keeps whatever it captured (a message's blobs: gigabytes of device
    tensors) alive until the cyclic collector happens to run."""
    if isinstance(tree, dict):
        if tree.get("t") in ("tensor", "pickle"):
            return fn(tree)
        return {k: map_leaves(v, fn) for k, v in tree.items()}
    if isinstance(tree, list):
        return [map_leaves(v, fn) for v in tree]
    return tree


def subset(tree: Any, blobs: list[Any]) -> tuple[Any, list[Any]]:
    """A tree with only the blobs it points at, re-indexed (so a message can forward one
    field of another without the rest: the reference's inputs, never its outputs)."""
    used: dict[int, int] = {}
    picked: list[Any] = []

    def pick(leaf: dict[str, Any]) -> dict[str, Any]:
        out = dict(leaf)
        old = leaf.get("blob")
        if isinstance(old, int):
            if old not in used:
                used[old] = len(picked)
                picked.append(blobs[old])
            out["blob"] = used[old]
        return out

    return map_leaves(tree, pick), picked


def localize(tree: Any, blobs: list[Any], bulk: Bulk) -> Any:
    """The tree with every device-handle leaf replaced by a blob leaf whose blob is the
    tensor copied into this process (``blobs`` grows): after this, nothing in the tree points
    into another process's memory."""
    if isinstance(tree, dict):
        if tree.get("t") == "tensor" and "ipc" in tree:
            sent = _decode_tensor(tree, blobs, "cpu", bulk)
            blobs.append(sent.tensor)
            leaf = {k: v for k, v in tree.items() if k != "ipc"}
            return {**leaf, "blob": len(blobs) - 1}
        return {k: localize(v, blobs, bulk) for k, v in tree.items()}
    if isinstance(tree, list):
        return [localize(v, blobs, bulk) for v in tree]
    return tree


def has_bulk(tree: Any) -> bool:
    """Whether a tree has a leaf off the byte path."""
    if isinstance(tree, dict):
        if tree.get("t") == "tensor" and ("ipc" in tree or "slot" in tree):
            return True
        return any(has_bulk(v) for v in tree.values())
    if isinstance(tree, list):
        return any(has_bulk(v) for v in tree)
    return False


def nbytes(tree: Any) -> int:
    """Bytes of the tensors a tree describes (its shapes and dtypes; no data needed)."""
    if isinstance(tree, dict):
        if tree.get("t") == "tensor":
            dtype = DTYPES.get(str(tree.get("dtype")), torch.float32)
            n = 1
            for s in tree.get("shape", []):
                n *= int(s)
            return n * torch.empty((), dtype=dtype).element_size()
        return sum(nbytes(v) for v in tree.values())
    if isinstance(tree, list):
        return sum(nbytes(v) for v in tree)
    return 0
