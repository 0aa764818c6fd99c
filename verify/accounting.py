"""Dispatch-level accounting of one candidate call (runs in the candidate's process).

A ``TorchDispatchMode`` installed by the harness around ``forward`` sees every ATen op the
call executes, however it was reached (an alias, ``getattr``, ``exec``, ``torch.ops``). Each
op is put in a class:

* ``vendor``: library compute a candidate may keep (matmul, bmm, convolution, attention);
* ``alloc``, ``view``, ``copy``, ``fill``, ``meta``: allocation, views, copies, constant fills,
  reads of a scalar: no arithmetic of the problem;
* ``compute``: everything else (element-wise math, reductions, indexing...): the work a
  candidate must do in its own Triton kernels, unless it is declared dispatch-only.

It also follows which *storage* each write went to during the call, so the harness can ask
where a returned tensor's storage was last written from: by a Triton kernel of this call
(the launch recorder reports the storages each launch was given), by a vendor op, by a
PyTorch compute op, only filled or allocated (``fresh``), or not at all during this call
(``stale``: a result cached from an earlier call, or an input). Copies carry the source's
state, so ``return cached.clone()`` is still ``stale``.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

VENDOR_OPS = frozenset(
    {
        "mm",
        "addmm",
        "bmm",
        "baddbmm",
        "addbmm",
        "mv",
        "addmv",
        "dot",
        "vdot",
        "_addmm_activation",
        "_scaled_mm",
        "_int_mm",
        "convolution",
        "_convolution",
        "convolution_overrideable",
        "cudnn_convolution",
        "cudnn_convolution_transpose",
        "cudnn_convolution_relu",
        "cudnn_convolution_add_relu",
        "mkldnn_convolution",
        "miopen_convolution",
        "_slow_conv2d_forward",
        "slow_conv3d_forward",
        "slow_conv_transpose2d",
        "slow_conv_transpose3d",
        "_conv_depthwise2d",
        "conv_depthwise3d",
        "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_flash_attention_for_cpu",
        "_scaled_dot_product_efficient_attention",
        "_scaled_dot_product_cudnn_attention",
        "_flash_attention_forward",
        "_efficient_attention_forward",
        "_cudnn_rnn",
        "miopen_rnn",
    }
)
ALLOC_OPS = frozenset(
    {
        "empty",
        "empty_like",
        "empty_strided",
        "new_empty",
        "new_empty_strided",
        "empty_permuted",
        "resize_",
        "set_",
        "lift_fresh",
        "record_stream",
    }
)
#: The allocations whose memory holds whatever was there before (poisoned on request).
UNINITIALIZED_OPS = frozenset(
    {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "empty_permuted"}
)
FILL_OPS = frozenset(
    {
        "fill",
        "fill_",
        "zero",
        "zero_",
        "zeros",
        "zeros_like",
        "ones",
        "ones_like",
        "full",
        "full_like",
        "new_zeros",
        "new_ones",
        "new_full",
        "scalar_tensor",
        "arange",
    }
)
VIEW_OPS = frozenset(
    {
        "view",
        "_unsafe_view",
        "as_strided",
        "t",
        "transpose",
        "permute",
        "expand",
        "squeeze",
        "unsqueeze",
        "select",
        "slice",
        "narrow",
        "split",
        "split_with_sizes",
        "chunk",
        "unbind",
        "alias",
        "detach",
        "view_as_real",
        "view_as_complex",
        "diagonal",
        "unfold",
        "_reshape_alias",
        "reshape",
        "flatten",
        "movedim",
        "lift_fresh_copy",
    }
)
COPY_OPS = frozenset(
    {
        "copy",
        "copy_",
        "clone",
        "_to_copy",
        "contiguous",
        "_copy_from",
        "_copy_from_and_resize",
        "cat",
        "stack",
        "constant_pad_nd",
    }
)
META_OPS = frozenset({"_local_scalar_dense", "is_nonzero", "sym_size", "sym_stride", "sym_numel"})

#: How honestly a storage was produced; the weakest source wins for a copy of several.
_RANK = {
    "unlinked": -1,
    "foreign": -1,
    "stale": 0,
    "fresh": 1,
    "torch": 2,
    "graph": 3,
    "vendor": 3,
    "kernel": 3,
}


def _poison(tensors: list[torch.Tensor]) -> None:
    """Fill fresh, uninitialised tensors with values no honest result reads as data."""
    for t in tensors:
        if t.is_floating_point() or t.is_complex():
            t.fill_(float("nan"))
        elif t.dtype == torch.bool:
            t.fill_(True)
        else:
            with contextlib.suppress(TypeError, RuntimeError):  # a quantized dtype: left as is
                t.fill_(torch.iinfo(t.dtype).max)


def op_class(name: str) -> str:
    """The accounting class of an ATen op's base name (``add`` for ``aten.add_.Tensor``).

    An op of any other namespace (``mylib::mm``: ``_op_name`` keeps its namespace) is
    ``compute``: its body runs below the dispatch mode, unseen, so a name that matches an
    allowlisted ATen op (a home-made ``mylib::clone`` that computes the answer) earns nothing.
    """
    if "::" in name:
        return "compute"
    base = name.removesuffix("_") if name not in ALLOC_OPS | FILL_OPS | COPY_OPS else name
    if name in VENDOR_OPS or base in VENDOR_OPS:
        return "vendor"
    if name in ALLOC_OPS:
        return "alloc"
    if name in FILL_OPS or base in FILL_OPS:
        return "fill"
    if name in VIEW_OPS or base in VIEW_OPS:
        return "view"
    if name in COPY_OPS or base in COPY_OPS:
        return "copy"
    if name in META_OPS:
        return "meta"
    return "compute"


def _op_name(func: Any) -> str:
    """An ATen op's base name (``add``); any other op's qualified name (``mylib::clone``)."""
    packet = getattr(func, "overloadpacket", None)
    name = getattr(packet, "__name__", None) or str(func).split(".")[-2]
    namespace = getattr(func, "namespace", None) or str(func).split(".")[0]
    return str(name) if namespace == "aten" else f"{namespace}::{name}"


def storage_key(t: torch.Tensor) -> int | None:
    """An id for a tensor's storage (its data pointer), or None for storage-less tensors."""
    try:
        ptr = int(t.untyped_storage().data_ptr())
    except (RuntimeError, NotImplementedError, TypeError):
        return None
    return ptr or None


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, list | tuple):
        return [t for v in value for t in _tensors(v)]
    return []


def _symbolic_types() -> tuple[type, ...]:
    from torch._subclasses.fake_tensor import FakeTensor
    from torch._subclasses.functional_tensor import FunctionalTensor

    return (FakeTensor, FunctionalTensor)


def _symbolic(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Ops on fake or meta tensors compute nothing: a kernel language tracing its kernel
    (Helion on its first call) runs them, and they cannot produce an answer. Torch's own
    classes, by identity: a class of the candidate's merely *named* ``FakeTensor`` ran any op
    unseen."""
    symbolic = _symbolic_types()
    for t in _tensors(list(args) + list(kwargs.values())):
        if t.device.type == "meta" or type(t) in symbolic:
            return True
    return False


def own_dispatch(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """The name of a tensor class among the arguments whose ``__torch_dispatch__`` is not
    torch's own: the op then runs that method's body below the accounting's mode, where none
    of its ops are seen, so the op is compute whatever its name."""
    plain = torch.Tensor.__torch_dispatch__
    for t in _tensors(list(args) + list(kwargs.values())):
        cls = type(t)
        if cls is torch.Tensor or cls is torch.nn.Parameter:
            continue
        handler = getattr(cls, "__torch_dispatch__", plain)
        if handler is not plain and not str(getattr(cls, "__module__", "")).startswith("torch."):
            return cls.__qualname__
    return None


def _host_root(host: Any) -> Any:
    """The object owning ``host``'s memory: a numpy view's base array, followed to the root
    (a strided view's storage spans the gaps between its elements, which a kernel can read)."""
    seen = 0
    while getattr(host, "base", None) is not None and seen < 64:
        base = host.base
        if not hasattr(base, "__array_interface__") and not isinstance(base, bytes | bytearray):
            break
        host, seen = base, seen + 1
    return host


class StorageBytes:
    """The bytes of a storage whose address the candidate read, held without keeping the
    storage alive (a storage freed since is no longer followed)."""

    __slots__ = ("ref",)

    def __init__(self, storage: torch.UntypedStorage) -> None:
        from torch.multiprocessing.reductions import StorageWeakRef

        self.ref = StorageWeakRef(storage)

    def expired(self) -> bool:
        """Whether the storage was freed."""
        return bool(self.ref.expired())

    def digest(self) -> bytes | None:
        """A digest of the storage's bytes, read in place through a byte view made with no
        mode active (no op of it is the candidate's); None once the storage was freed."""
        import hashlib

        from torch.utils._python_dispatch import _disable_current_modes

        storage = torch.UntypedStorage._new_with_weak_ptr(self.ref.cdata)
        if storage is None:
            return None
        with _disable_current_modes():
            view = torch.empty(0, dtype=torch.uint8).set_(storage)
        # TensorBase's own method: the sandbox's wrapper on Tensor.numpy marks an export.
        data = torch._C.TensorBase.numpy(view)
        return hashlib.blake2b(data.data, digest_size=16).digest()


def _host_digest(host: Any) -> bytes | None:
    """A digest of the bytes of the memory ``host`` owns (read without torch), or None where
    they cannot be read as a buffer: such memory cannot be followed."""
    import hashlib

    if isinstance(host, StorageBytes):
        return host.digest()
    root = _host_root(host)
    try:
        view = memoryview(root)
    except TypeError:
        return None
    data = view if view.c_contiguous else view.tobytes()
    return hashlib.blake2b(data, digest_size=16).digest()


def _weak(t: torch.Tensor) -> Any:
    from torch.multiprocessing.reductions import StorageWeakRef

    try:
        return StorageWeakRef(t.untyped_storage())
    except (RuntimeError, NotImplementedError, TypeError):
        return None


#: The candidate's module's name starts with this (``problem.load_source_module``).
CANDIDATE_MODULE = "kernelopt_src_candidate"


#: Modules whose code may run ATen ops inside a Triton launch or autotuning without their
#: being counted: Triton itself (the interpreter's argument copies, autotuning's timing), the
#: project's interpreter shims (``libdevice`` functions implemented with ATen ops) and the
#: launch recorder. Everything else that runs there is counted: a kernel body that calls torch
#: under the interpreter, a hook of the candidate's, code ``exec``'d into a module of its own.
_TRUSTED_IN_LAUNCH = ("triton", "kernelopt_jupyter.cpu_triton")


def _real_module(frame: Any, name: str) -> bool:
    """Whether ``frame`` runs in the real module ``name`` (its globals *are* that module's):
    code ``exec``'d into globals of its own that merely carry the name is not."""
    module = sys.modules.get(name)
    return module is not None and frame.f_globals is getattr(module, "__dict__", None)


def _transparent(name: str) -> bool:
    """Frames that pass the question on to their caller: torch, this module, the sandbox
    (its audit hook), the standard library (``subprocess`` started by Triton is Triton's)."""
    top = name.partition(".")[0]
    return (
        name in (__name__, "kernelopt_jupyter.verify.sandbox")
        or top == "torch"
        or top in getattr(sys, "stdlib_module_names", ())
    )


def _trusted_in_launch(name: str) -> bool:
    return name == _SUSPENDER or any(
        name == root or name.startswith(root + ".") for root in _TRUSTED_IN_LAUNCH
    )


def called_by_candidate(depth: int = 32) -> bool:
    """Whether the caller of the wrapped torch method asking this is the candidate's module,
    past torch's and the standard library's frames (a torch helper calling it on the
    candidate's behalf, ``default_convert`` or ``TypedStorage.data_ptr``, hid the call) but
    not past the harness's (its own calls, made while it accounts for an op of the
    candidate's, are not the candidate's) nor Triton's."""
    frame: Any = sys._getframe(2)
    while frame is not None and depth:
        name = str(frame.f_globals.get("__name__", ""))
        top = name.partition(".")[0]
        if (top == "torch" or top in getattr(sys, "stdlib_module_names", ())) and _real_module(
            frame, name
        ):
            frame = frame.f_back
            depth -= 1
            continue
        return name.startswith(CANDIDATE_MODULE)
    return False


def candidate_code(depth: int = 96) -> bool:
    """Whether an op (or an audited event) that happens while counting is suspended (inside
    a Triton launch or autotuning) is the candidate's, and so counted. The nearest frame that
    is not torch's, the standard library's or the harness's own decides: only Triton's own
    code and the project's interpreter shims are exempt, each only in its real module. (Before,
    any frame named like a kernel of the candidate's exempted its ops, so a hook sharing a
    kernel's name, or a kernel body calling ``torch.ops.aten`` under the interpreter, ran
    unseen.) A hook that is not Python code (a torch op registered as a pre-run hook) would be
    called from Triton's frames: the launch recorder refuses those (``launches.foreign_hooks``).
    """
    frame: Any = sys._getframe(1)
    while frame is not None and depth:
        name = str(frame.f_globals.get("__name__", ""))
        if _transparent(name) and _real_module(frame, name):
            frame = frame.f_back
            depth -= 1
            continue
        return not (_trusted_in_launch(name) and _real_module(frame, name))
    return True


#: Elements a call may bring in from the host as constants (``torch.tensor`` of numbers).
HOST_CONSTANTS = 64
#: The module whose wrappers suspend the counting (``LaunchRecorder``).
_SUSPENDER = "kernelopt_jupyter.verify.launches"


class Accounting(TorchDispatchMode):
    """Counts ATen ops by class and follows which storages each call wrote, and how."""

    def __init__(self) -> None:
        super().__init__()
        self._local = threading.local()
        self.observe_only = False
        #: Storages an op or a kernel produced, or the harness gave, in this process (by key,
        #: with a weak reference: a key whose storage died is forgotten, so a foreign buffer
        #: that lands at a freed address is not taken for the old one).
        self.known: dict[int, Any] = {}
        #: Storages handed to the host (numpy, DLPack) while the candidate ran: foreign for good.
        self.exported: set[int] = set()
        #: Storages that share memory with a host object (``torch.from_numpy`` and the like,
        #: made at any time, construction included): key -> (the host object, its digest when
        #: last seen by an op or a launch). The host can write them without any op; a digest
        #: that changed in between makes the storage host data (foreign).
        self.aliased: dict[int, tuple[Any, bytes | None]] = {}
        #: The dispatcher's kernels before the candidate ran (set by the sandbox), and what
        #: this process found re-registered since (sent with the next call's changes).
        self.registry: Any = None
        self.registry_changes: list[str] = []
        #: Fill every fresh allocation of the candidate's with a poison value (NaN, the
        #: integer maximum, True): set by the sandbox on the calls that run programs out of
        #: grid order, where a program reading another's not-yet-written output would
        #: otherwise find whatever the memory held (the previous call's result, often right).
        self.poison = False
        self.reset()

    @property
    def suspended(self) -> int:
        """Ops are not counted while positive (Triton's own machinery); per thread."""
        return int(getattr(self._local, "suspended", 0))

    @suspended.setter
    def suspended(self, value: int) -> None:
        self._local.suspended = value

    def reset(self) -> None:
        """Forget the previous call (what is known stays known)."""
        self.ops: Counter[str] = Counter()
        self.classes: Counter[str] = Counter()
        self.state: dict[int, str] = {}
        self.graph_replays = 0
        #: Storages holding data derived from this call's inputs (through ops and launches).
        self.live: set[int] = set()
        self.host_constants = 0
        self.known = {k: w for k, w in self.known.items() if w is not None and not w.expired()}

    # ------------------------------------------------------------------ what is known

    def know(self, tensors: list[torch.Tensor]) -> None:
        """These storages are the harness's or the candidate's own (not foreign)."""
        for t in tensors:
            key = storage_key(t)
            if key is not None and key not in self.exported:
                self.known[key] = _weak(t)

    def inputs(self, tensors: list[torch.Tensor]) -> None:
        """This call's inputs: known, and the roots of what depends on them."""
        self.know(tensors)
        self.live |= {k for k in (storage_key(t) for t in tensors) if k is not None}

    def _derives(self, tensors: list[torch.Tensor], written: list[torch.Tensor]) -> None:
        if self.live and any(storage_key(t) in self.live for t in tensors):
            self.live |= {k for k in (storage_key(t) for t in written) if k is not None}

    def _small_constant(self, tensors: list[torch.Tensor]) -> bool:
        """A few numbers from the host (``torch.tensor(scale)``) per call are constants; more
        is host data (``HOST_CONSTANTS`` elements a call)."""
        count = sum(t.numel() for t in tensors if self.foreign(t))
        if self.host_constants + count > HOST_CONSTANTS:
            return False
        self.host_constants += count
        return True

    def _known(self, key: int) -> bool:
        ref = self.known.get(key)
        return ref is not None and not ref.expired()

    def foreign(self, t: Any) -> bool:
        """Whether ``t``'s memory holds data no op or kernel produced (or the host can write)."""
        if isinstance(t, torch.UntypedStorage):
            ptr = int(t.data_ptr())
            return bool(ptr) and (ptr in self.exported or not self._known(ptr))
        key = storage_key(t)
        if key is None:
            return False
        return key in self.exported or self.state.get(key) == "foreign" or not self._known(key)

    def exported_to_host(self, t: torch.Tensor | torch.UntypedStorage) -> None:
        """The candidate handed ``t``'s memory to the host (numpy, DLPack) during a call."""
        if self.suspended and not candidate_code():
            return
        key = int(t.data_ptr()) or None if isinstance(t, torch.UntypedStorage) else storage_key(t)
        if key is not None:
            self.exported.add(key)
            self.state[key] = "foreign"

    @contextmanager
    def observing(self) -> Iterator[None]:
        """Import and construction: nothing is counted, every storage made becomes known."""
        self.observe_only = True
        try:
            with self:
                yield
        finally:
            self.observe_only = False

    def thread_mode(self) -> TorchDispatchMode:
        """A mode for another thread that records into this accounting."""
        return _ThreadMode(self)

    # ------------------------------------------------------------------ per op

    def __torch_dispatch__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        decomposed = _triton_op_decomposition(self, func, args, kwargs or {})
        if decomposed is NotImplemented:
            decomposed = _inference_decomposition(self, func, args, kwargs or {})
        if decomposed is not NotImplemented:
            return decomposed
        return self.record(func, args, kwargs or {})

    def record(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run one op and account for it."""
        if self.aliased:
            self.check_aliased(_tensors(list(args) + list(kwargs.values())))
        out = func(*args, **kwargs)
        if self.aliased:
            self.refresh_aliased(_tensors(list(args) + list(kwargs.values())) + _tensors(out))
        if (self.suspended and not candidate_code()) or _symbolic(args, kwargs):
            return out
        written = _tensors(out)
        if self.observe_only:
            self.know(written + _tensors(list(args)))
            return out
        name = _op_name(func)
        kind = op_class(name)
        if self.poison and name in UNINITIALIZED_OPS:
            _poison(written)
        subclass = own_dispatch(args, kwargs)
        if subclass is not None:
            kind, name = "compute", f"{name} (on a {subclass}, whose __torch_dispatch__ is unseen)"
        schema = getattr(func, "_schema", None)
        if self.registry is not None and schema is not None:
            # Every invocation (about 60 us): a kernel re-registered for the length of one
            # call, then restored, is still seen where it runs.
            qualified = schema.name
            self.registry.watch.add(qualified)
            replaced = self.registry.changed([qualified])
            if replaced:
                for message in replaced:
                    if message not in self.registry_changes:
                        self.registry_changes.append(message)
                kind, name = "compute", f"{qualified} (a re-registered kernel)"
        self.ops[name if "::" in name else f"aten.{name}"] += 1
        self.classes[kind] += 1
        if kind in ("view", "meta"):
            return out
        given = _tensors(list(args) + list(kwargs.values()))
        if name in ("lift_fresh", "lift_fresh_copy") and self._small_constant(given):
            self.know(given + written)  # torch.tensor(0.5): a constant, not host data
            for t in written:
                key = storage_key(t)
                if key is not None:
                    self.state[key] = "fresh"
            return out
        storages = [
            a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.UntypedStorage)
        ]
        tainted = any(self.foreign(t) for t in given + storages)
        if kind == "copy":
            sources = _tensors(args[1] if name in ("copy_", "copy") and len(args) > 1 else args[0])
            state = min((self.state_of(s) for s in sources), key=_RANK.__getitem__, default="fresh")
        else:
            state = {"vendor": "vendor", "alloc": "fresh", "fill": "fresh"}.get(kind, "torch")
        if tainted:
            state = "foreign"
        if kind not in ("alloc", "fill"):  # those read no values (empty_like reads a shape)
            self._derives(given, written)
        for t in written:
            key = storage_key(t)
            if key is not None:
                self.state[key] = state
                if state != "foreign" and key not in self.exported:
                    self.known[key] = _weak(t)
        return out

    def state_of(self, t: torch.Tensor) -> str:
        """How ``t``'s storage was last written during this call (``stale`` if it was not)."""
        key = storage_key(t)
        if key is None:
            return "stale"
        if key in self.exported:
            return "foreign"
        state = self.state.get(key, "stale")
        if self.live and state in ("kernel", "vendor", "torch") and key not in self.live:
            return "unlinked"  # written, but from nothing this call's inputs reached
        return state

    def address_taken(self, t: torch.Tensor | torch.UntypedStorage) -> None:
        """The candidate read the address of ``t``'s memory (``data_ptr``) during a call. The
        host can write that memory with no op (a numpy array over the address, a ``memmove``),
        or only compare the address (an alignment check picking a fast path): from here on
        its bytes are followed, as host-shared memory's are (``aliased``), and bytes that
        change with no op or launch in between make it host data. An address read inside a
        launch (a hook, a grid function) is host data at once: the launch's own writes would
        hide a host write there."""
        if self.suspended:
            self.exported_to_host(t)
            return
        storage = t if isinstance(t, torch.UntypedStorage) else t.untyped_storage()
        key = int(storage.data_ptr()) or None
        if key is None:
            return
        entry = self.aliased.get(key)
        if entry is not None and not (isinstance(entry[0], StorageBytes) and entry[0].expired()):
            return  # followed already (since an earlier read, which is the stricter digest)
        host = StorageBytes(storage)
        self.aliased[key] = (host, host.digest())

    def host_alias(self, t: torch.Tensor, host: Any) -> None:
        """``t`` shares its memory with the host object ``host`` (a numpy array, a buffer).
        Memory whose bytes cannot be read (an object with ``__dlpack__`` only) is host data
        at once: it cannot be followed."""
        key = storage_key(t)
        if key is None:
            return
        found = _host_digest(host)
        if found is None:
            self.exported.add(key)
            self.state[key] = "foreign"
            return
        self.aliased[key] = (host, found)

    def check_aliased(self, tensors: list[torch.Tensor]) -> None:
        """Before an op or a launch reads ``tensors``: a host-aliased storage whose bytes
        changed since an op or a launch last saw it was written by the host."""
        if not self.aliased or self.observe_only:  # construction may fill its own buffers
            return
        for t in tensors:
            key = storage_key(t)
            entry = self.aliased.get(key) if key is not None else None
            if entry is not None and isinstance(entry[0], StorageBytes) and entry[0].expired():
                del self.aliased[key]  # type: ignore[arg-type]  # another storage lives there now
                continue
            if entry is not None and _host_digest(entry[0]) != entry[1]:
                self.exported.add(key)  # type: ignore[arg-type]
                self.state[key] = "foreign"  # type: ignore[index]

    def refresh_aliased(self, tensors: list[torch.Tensor] | None = None) -> None:
        """After an op or a launch wrote ``tensors`` (all aliased storages when None): their
        bytes as they now are."""
        if not self.aliased:
            return
        keys = (
            list(self.aliased)
            if tensors is None
            else [k for k in (storage_key(t) for t in tensors) if k in self.aliased]
        )
        for key in keys:
            host = self.aliased[key][0]
            if isinstance(host, StorageBytes) and host.expired():
                del self.aliased[key]
                continue
            self.aliased[key] = (host, _host_digest(host))

    def mark_kernel(self, tensors: list[torch.Tensor]) -> None:
        """A Triton launch of this call was given these tensors (it may have written them):
        from foreign data, everything it was given is foreign."""
        self.refresh_aliased(tensors)
        tainted = any(self.foreign(t) for t in tensors)
        self._derives(tensors, tensors)
        for t in tensors:
            key = storage_key(t)
            if key is not None:
                self.state[key] = "foreign" if tainted else "kernel"
                if not tainted and key not in self.exported:
                    self.known[key] = _weak(t)

    def take_registry_changes(self) -> list[str]:
        """Re-registered kernels found while ops ran (the list is emptied)."""
        found, self.registry_changes = self.registry_changes, []
        return found

    def compute_ops(self) -> dict[str, int]:
        """The ``compute``-class ops of this call, by name."""
        return {n: c for n, c in self.ops.items() if op_class(n.removeprefix("aten.")) == "compute"}

    def vendor_ops(self) -> dict[str, int]:
        """The vendor-library ops of this call, by name."""
        return {n: c for n, c in self.ops.items() if op_class(n.removeprefix("aten.")) == "vendor"}


def triton_op_body(func: Any) -> Any:
    """The Python function of a ``torch.library.triton_op`` (the body that launches its
    Triton kernels through ``wrap_triton``), or None for any other op. Found where torch
    keeps it: the decomposition ``triton_op`` registers for ``FunctionalTensorMode``, a
    function of torch's own module whose closure holds the body."""
    schema = getattr(func, "_schema", None)
    if schema is None or "::" not in str(schema.name) or str(schema.name).startswith("aten::"):
        return None
    try:
        from torch._library.custom_ops import OPDEFS
        from torch._subclasses.functional_tensor import FunctionalTensorMode
    except ImportError:  # pragma: no cover - every supported torch has them
        return None
    opdef = OPDEFS.get(str(schema.name))
    decomposition = (getattr(opdef, "_torch_dispatch_fns", None) or {}).get(FunctionalTensorMode)
    module = sys.modules.get("torch._library.triton")
    if (
        decomposition is None
        or module is None
        or getattr(decomposition, "__globals__", None) is not vars(module)
    ):
        return None
    cells = dict(zip(decomposition.__code__.co_freevars, decomposition.__closure__ or ()))
    body = cells.get("fn")
    return body.cell_contents if body is not None else None


def _triton_op_decomposition(
    mode: TorchDispatchMode, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """A ``torch.library.triton_op`` is judged by what it runs: its body runs with the mode
    on (as torch itself decomposes it for tracing), so each of its ops is accounted and each
    kernel it launches is recorded, where the registered op would run its body below the
    mode, unseen, and count as compute. ``NotImplemented`` for any other op."""
    body = triton_op_body(func)
    if body is None:
        return NotImplemented
    from torch._library.triton import set_wrap_triton_enabled

    # wrap_triton launches the kernel directly (its tracing path is for graph capture).
    with mode, set_wrap_triton_enabled(False):
        return body(*args, **kwargs)


def _inference_decomposition(
    mode: TorchDispatchMode, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """Under ``torch.inference_mode`` a composite op (``aten.linear``, ``aten.to``) reaches
    the mode whole, where elsewhere the mode sees the ops it is made of (``aten.addmm``, a
    copy): run its decomposition with the mode on, so each of those is accounted as usual.
    ``NotImplemented`` where that does not apply."""
    if not torch.is_inference_mode_enabled():
        return NotImplemented
    name = getattr(func, "name", None)
    if name is None or not torch._C._dispatch_has_kernel_for_dispatch_key(
        name(), "CompositeImplicitAutograd"
    ):
        return NotImplemented
    with mode:
        return func.decompose(*args, **kwargs)


class _ThreadMode(TorchDispatchMode):
    """The accounting of a call, entered in a thread the call started."""

    def __init__(self, parent: Accounting) -> None:
        super().__init__()
        self.parent = parent

    def __torch_dispatch__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        decomposed = _triton_op_decomposition(self, func, args, kwargs or {})
        if decomposed is NotImplemented:
            decomposed = _inference_decomposition(self, func, args, kwargs or {})
        if decomposed is not NotImplemented:
            return decomposed
        return self.parent.record(func, args, kwargs or {})
