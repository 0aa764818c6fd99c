"""Runtime of a KernelOPT export: copied verbatim into every exported package.

It reads the package's ``manifest.json``, warns once when the running torch, Triton or GPU
(or an edited ``candidate.py``/``reference.py``) is not what the kernels were verified with,
registers the winner as a ``torch.library`` custom op with a fake (meta) implementation, and
builds guarded models whose verified calls go through that op. It imports only torch, the
standard library and its sibling ``guard_runtime``; custom-op schemas are read from the
annotations at run time, so this file has no ``from __future__`` import.
"""

import hashlib
import importlib.util
import json
import os
import warnings
import weakref
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from .guard_runtime import _KERNELOPT_DTYPES, KernelOPTGuarded, kernelopt_guard

MANIFEST_NAME = "manifest.json"
#: What a fingerprint records, in the order changes are reported.
FINGERPRINT_KEYS = ("torch", "triton", "gpu", "capability")
#: The package's files whose contents the manifest pins (an edit needs a re-verification).
PINNED_FILES = {"candidate": "candidate.py", "problem": "reference.py"}


def _with_tuples(recorded: Any, written: Any) -> Any:
    """``recorded`` (read from JSON) with each list that is a tuple in ``written`` (the same
    value as the problem writes it) made that tuple again; anything that differs stays."""
    if isinstance(recorded, list) and isinstance(written, list | tuple):
        if len(recorded) != len(written):
            return recorded
        items = [_with_tuples(r, w) for r, w in zip(recorded, written)]
        if isinstance(written, tuple) and json.loads(json.dumps(written, default=str)) == recorded:
            return tuple(items)
        return items
    return recorded


class KernelOPTUnverifiedWarning(UserWarning):
    """The export runs on a torch/Triton/GPU (or edited files) it was not verified with."""


def _triton_version() -> str:
    if importlib.util.find_spec("triton") is None:
        return "not installed"
    import triton

    return str(triton.__version__)


def current_fingerprint(device: str) -> dict[str, str]:
    """The torch, Triton and GPU this process runs on, for an export verified on ``device``."""
    if device == "cuda" and torch.cuda.is_available():
        gpu = torch.cuda.get_device_name(0)
        capability = "{}.{}".format(*torch.cuda.get_device_capability(0))
    elif device == "cuda":
        gpu, capability = "no GPU", "none"
    else:
        gpu, capability = "cpu (Triton interpreter)", "none"
    return {
        "torch": str(torch.__version__),
        "triton": _triton_version(),
        "gpu": gpu,
        "capability": capability,
    }


def file_digest(path: Path) -> str:
    """A short content hash of one file."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def fingerprint_changes(verified: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """One line per fingerprint field that differs: ``torch: 2.13.0 -> 2.11.0``."""
    return [
        f"{key}: {verified.get(key)} -> {current.get(key)}"
        for key in FINGERPRINT_KEYS
        if verified.get(key) != current.get(key)
    ]


def package_changes(folder: Path, manifest: dict[str, Any], device: str) -> list[str]:
    """What differs between the verification the manifest records and this process on
    ``device``: fingerprint fields, the device itself, and edited pinned files."""
    changes = []
    if device != manifest["device"]:
        changes.append(f"device: {manifest['device']} -> {device}")
    changes += fingerprint_changes(manifest["fingerprint"], current_fingerprint(device))
    for key, name in PINNED_FILES.items():
        if file_digest(folder / name) != manifest[key]["digest"]:
            changes.append(f"{name}: edited since it was verified")
    return changes


_WARNED: set[str] = set()


def warn_unverified(folder: Path, manifest: dict[str, Any]) -> list[str]:
    """Warn (once per export and process) when this process is not what was verified."""
    changes = package_changes(folder, manifest, manifest["device"])
    if changes and manifest["op"] not in _WARNED:
        _WARNED.add(manifest["op"])
        warnings.warn(
            f"KernelOPT export {folder.name}: not verified on this setup ({'; '.join(changes)}); "
            f"run `kernelopt reverify {folder}`",
            KernelOPTUnverifiedWarning,
            stacklevel=3,
        )
    return changes


def prepare() -> None:
    """Before the kernels are imported: on the CPU (Triton's interpreter) install the
    project's interpreter shims when the project is installed (libdevice, stub driver)."""
    interpreted = os.environ.get("TRITON_INTERPRET") == "1" and not torch.cuda.is_available()
    if interpreted and importlib.util.find_spec("kernelopt_jupyter") is not None:
        from kernelopt_jupyter.cpu_triton import install_interpreter_shims

        install_interpreter_shims()


def unavailable_here(device: str) -> str | None:
    """Why no call can take the kernels in this process, or None: on the CPU they run only
    under Triton's interpreter, which Triton reads when kernels are defined."""
    if device == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
        return "on the CPU the kernels run only under TRITON_INTERPRET=1"
    return None


def _rebuild(tensors: list[torch.Tensor], signature: list[dict[str, Any]]) -> list[Any]:
    """The call's arguments from the op's tensors and the signature's plain values."""
    args: list[Any] = []
    it = iter(tensors)
    for spec in signature:
        if spec["kind"] == "tensor":
            t = next(it)
            # Compiled graphs may hand the op other strides than the verified contiguous ones.
            args.append(t.contiguous() if spec["contiguous"] else t)
        elif spec["kind"] == "value":
            args.append(spec["value"])
        else:
            raise TypeError(f"argument of type {spec['type']} cannot pass through the op")
    return args


#: Registered ops and the Export each name now belongs to (this module is not reloaded
#: with the package's ``__init__``, so both outlive a reload).
_OPS: dict[str, Any] = {}
_OPENED: dict[str, "Export"] = {}


def _unaliased(outs: list[torch.Tensor], inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    """The outputs with any that shares storage with an input or an earlier output copied:
    a custom op's outputs may not alias (a candidate may return a view, as the reference can)."""
    seen = {t.untyped_storage().data_ptr() for t in inputs}
    kept = []
    for out in outs:
        ptr = out.untyped_storage().data_ptr()
        if ptr in seen:
            out = out.clone()
            ptr = out.untyped_storage().data_ptr()
        seen.add(ptr)
        kept.append(out)
    return kept


class Export:
    """One imported export: its manifest, custom op and guard factory."""

    def __init__(
        self, folder: Path, manifest: dict[str, Any], candidate: ModuleType, reference: ModuleType
    ) -> None:
        self.folder = folder
        self.manifest = manifest
        self.candidate = candidate
        self.reference = reference
        self.verified = manifest["verified"]
        self.changes = warn_unverified(folder, manifest)
        self._instances: Any = weakref.WeakValueDictionary()
        self._functions: dict[int, Any] = {}
        self.op = self._register(manifest["op"])

    @classmethod
    def open(cls, folder: Path, candidate: ModuleType, reference: ModuleType) -> "Export":
        """Read ``folder``'s manifest and register its op."""
        manifest = json.loads((folder / MANIFEST_NAME).read_text())
        return cls(folder, manifest, candidate, reference)

    def _target(self, handle: int) -> Any:
        target = self._instances.get(handle)
        if target is None:  # not `or`: an empty container module is falsy
            target = self._functions.get(handle)
        if target is None:
            raise RuntimeError(f"KernelOPT export {self.folder.name}: model {handle} is gone")
        return target

    def _register(self, qualname: str) -> Any:
        # A reload of the package (a notebook re-running its import) opens the export again:
        # the op stays registered, and calls go to the newest Export of that name.
        _OPENED[qualname] = self
        if qualname in _OPS:
            return _OPS[qualname]

        @torch.library.custom_op(qualname, mutates_args=())
        def kernel(tensors: list[torch.Tensor], signature: int, handle: int) -> list[torch.Tensor]:
            export = _OPENED[qualname]
            args = _rebuild(list(tensors), export.verified["signatures"][signature])
            out = export._target(handle)(*args)
            return _unaliased([out] if isinstance(out, torch.Tensor) else list(out), tensors)

        @kernel.register_fake
        def _(tensors: list[torch.Tensor], signature: int, handle: int) -> list[torch.Tensor]:
            verified = _OPENED[qualname].verified
            device = tensors[0].device if tensors else torch.device(verified["device"])
            return [
                torch.empty_strided(
                    t["shape"], t["stride"], dtype=_KERNELOPT_DTYPES[t["dtype"]], device=device
                )
                for t in verified["outputs"][signature]["tensors"]
            ]

        _OPS[qualname] = kernel
        return kernel

    def _kernel_call(self, handle: int) -> Any:
        outputs = self.verified["outputs"]
        op = self.op

        def call(args: Any, number: int) -> Any:
            tensors = [a for a in args if isinstance(a, torch.Tensor)]
            outs = op(tensors, number, handle)
            structure = outputs[number]["structure"]
            if structure == "tensor":
                return outs[0]
            return tuple(outs) if structure == "tuple" else list(outs)

        return call

    def guard(self, reference: Any = None, *init: Any, fallback: str = "eager") -> Any:
        """Guard a reference (a ``Model`` instance, or the problem's function; default: built
        from the packaged problem): verified calls run the kernels through the custom op,
        the others the reference, eager or (``fallback="compile"``) under torch.compile."""
        if fallback not in ("eager", "compile"):
            raise ValueError(f"fallback={fallback!r}: use 'eager' or 'compile'")
        entry = self.manifest["problem"]["entry"]
        kind = self.manifest["problem"]["kind"]
        optimized_name = self.manifest["candidate"]["optimized"]
        if reference is None:
            reference = (
                self.reference_model(*init) if kind == "module" else getattr(self.reference, entry)
            )
        args = list(init) if init else self.recorded_init()
        guarded = kernelopt_guard(
            reference,
            getattr(self.candidate, optimized_name),
            self.verified,
            args,
            unavailable=unavailable_here(self.verified["device"]),
        )
        compiled = torch.compile(reference) if fallback == "compile" else None
        if isinstance(guarded, KernelOPTGuarded):
            parts = guarded.kernelopt_parts
            handle = id(parts.optimized)
            self._instances[handle] = parts.optimized
            parts.kernel_call = self._kernel_call(handle)
            parts.fallback = compiled
        else:
            handle = id(guarded.optimized)
            self._functions[handle] = guarded.optimized
            guarded.kernel_call = self._kernel_call(handle)
            guarded.fallback = compiled
        return guarded

    def recorded_init(self) -> Any:
        """The constructor arguments the kernels were verified with (None: not plain data).

        JSON has no tuples: where the packaged problem's own ``get_init_inputs()`` gives a
        tuple holding the same items as a recorded list (``kernel_size=(3, 5)``), the tuple
        is what the reference was built with, and what is passed."""
        recorded = self.manifest["init"]
        written = getattr(self.reference, "get_init_inputs", None)
        if recorded is None or not callable(written):
            return recorded
        return _with_tuples(recorded, written())

    def reference_model(self, *init: Any) -> Any:
        """The packaged reference ``Model(*init)`` (default: the recorded init) in the mode the
        kernels were verified in (as constructed: training mode; or eval)."""
        args = list(init) if init else self.recorded_init()
        if args is None:
            raise TypeError(
                f"KernelOPT export {self.folder.name}: its constructor arguments are not plain "
                "data; pass them: load(*init)"
            )
        return self.reference.Model(*args).train(bool(self.verified.get("training", False)))

    def load(self, *init: Any, fallback: str = "eager") -> Any:
        """A guarded model from the packaged reference (module problem) or the guarded
        entry function (kernel problem); ``fallback`` as for :meth:`guard`."""
        if self.manifest["problem"]["kind"] == "module":
            return self.guard(self.reference_model(*init), *init, fallback=fallback)
        return self.guard(fallback=fallback)
