"""Watching a candidate run (worker side): Triton launches, streams, threads, patched globals.

The static gate demands that a Triton kernel is *actually launched* in ``forward``: text alone
cannot tell a kernel that is defined but never called, or called only in ``__init__``. The
recorder wraps the launch entry points of Triton's JIT and interpreter functions (every
``kernel[grid](...)``, autotuned or not, ends in their ``run``) and, while recording, counts
launches per kernel, keeps each distinct launch's signature for the sm_90 compile check (on
the CPU) and checks that the launch goes to the stream the harness times (on the GPU).
"""

from __future__ import annotations

import bisect
import os
import pickle
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

#: At most this many distinct launch signatures are kept for the compile check; a candidate
#: with more fails the static gate (each must be built: an unbuilt one is unchecked).
MAX_SPECS = 64
_SM90 = ("cuda", 90, 32)


class LaunchRecorder:
    """Counts Triton launches made while :meth:`recording` is active."""

    def __init__(self, device: str) -> None:
        self.device = device
        self.active = False
        self.total = 0
        self.kernels: Counter[str] = Counter()
        self.specs: list[dict[str, Any]] = []
        self.spec_errors: dict[str, str] = {}
        self.stream_violations: list[str] = []
        #: Interpreted loads and stores that reached memory outside every storage the launch
        #: was given (one message per kernel and access kind).
        self.memory_violations: list[str] = []
        #: The storages of each interpreted launch in progress, innermost last: what its loads
        #: and stores may touch.
        self._launch_memory: list[LaunchMemory] = []
        self._memory_reported: set[tuple[str, str]] = set()
        self._spec_keys: set[str] = set()
        self._spec_names: set[str] = set()
        self._quick_keys: set[Any] = set()
        self._binders: dict[Any, Any] = {}
        self._expected_stream: int | None = None
        #: The dispatch-level accounting of the current call, told which storages each
        #: launch was given (set by the candidate's process while it records a call).
        self.accounting: Any = None

    # ------------------------------------------------------------------ installation

    def install(self) -> None:
        """Wrap ``run`` of Triton's kernel classes (idempotent per class)."""
        from triton.runtime.jit import JITFunction

        classes: list[Any] = [JITFunction]
        try:
            from triton.runtime.interpreter import InterpretedFunction

            classes.append(InterpretedFunction)
        except ImportError:  # pragma: no cover - every supported Triton has the interpreter
            pass
        for cls in classes:
            original = cls.run
            if getattr(original, "_kernelopt_wrapped", False):
                continue
            cls.run = self._wrap(original)
        self._wrap_autotune_bench()
        self._watch_interpreted_memory()

    def _wrap_autotune_bench(self) -> None:
        """Autotuning's benchmark (cache flushes, quantiles of the timings) runs torch ops that
        are Triton's machinery, not the candidate's compute: not counted (its launches are)."""
        try:
            from triton.runtime.autotuner import Autotuner
        except ImportError:  # pragma: no cover - every supported Triton has it
            return
        original = getattr(Autotuner, "_bench", None)
        if original is None or getattr(original, "_kernelopt_wrapped", False):
            return
        recorder = self

        def bench(tuner: Any, *args: Any, **kwargs: Any) -> Any:
            config = args[0] if args else kwargs.get("config")
            recorder._check_hooks(
                tuner,
                [
                    getattr(tuner, "pre_hook", None),
                    getattr(tuner, "post_hook", None),
                    getattr(config, "pre_hook", None),
                    getattr(tuner, "do_bench", None),
                ],
            )
            accounting = recorder.accounting
            if accounting is not None:
                accounting.suspended += 1
            try:
                return original(tuner, *args, **kwargs)
            finally:
                if accounting is not None:
                    accounting.suspended -= 1

        bench._kernelopt_wrapped = True  # type: ignore[attr-defined]
        Autotuner._bench = bench  # type: ignore[method-assign]

    def _wrap(self, original: Any) -> Any:
        recorder = self

        def run(kernel: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
            if not recorder.active or warmup:
                return original(kernel, *args, grid=grid, warmup=warmup, **kwargs)
            # The grid, when callable, is called by Triton inside the launch too.
            hooks = list(getattr(kernel, "pre_run_hooks", None) or [])
            recorder._check_hooks(kernel, [*hooks, grid] if callable(grid) else hooks)
            accounting = recorder.accounting
            if accounting is not None:
                accounting.check_aliased(_launch_tensors(list(args) + list(kwargs.values())))
            if accounting is not None:
                # The interpreter copies arguments to and from the host with ATen ops: those
                # are the launch's own doing, not ops of the candidate.
                accounting.suspended += 1
            interpreted = type(kernel).__name__ == "InterpretedFunction"
            if interpreted:
                recorder._launch_memory.append(LaunchMemory.of(kernel, args, kwargs))
            try:
                result = original(kernel, *args, grid=grid, warmup=warmup, **kwargs)
            finally:
                if interpreted:
                    recorder._launch_memory.pop()
                if accounting is not None:
                    accounting.suspended -= 1
            # Recorded only once it returned: a launch that raised did no work.
            recorder._on_launch(kernel, args, kwargs)
            return result

        run._kernelopt_wrapped = True  # type: ignore[attr-defined]
        return run

    def _watch_interpreted_memory(self) -> None:
        """Check the addresses of every load, store and atomic the interpreter runs for a
        recorded launch (plain, masked, block-pointer and descriptor accesses all end in the
        builder's masked entry points): each masked-in lane must lie inside a storage the
        launch was given. A lane outside is recorded and masked off, so the access never
        touches memory the kernel does not own (values cannot show a load whose lanes are
        discarded; on a GPU it reads another allocation, or faults)."""
        try:
            from triton.runtime import interpreter as interp
        except ImportError:  # pragma: no cover - every supported Triton has the interpreter
            return
        builder = interp.interpreter_builder
        if getattr(builder.create_masked_load, "_kernelopt_wrapped", False):
            return
        load, store = builder.create_masked_load, builder.create_masked_store
        rmw, cas = builder.create_atomic_rmw, builder.create_atomic_cas
        recorder = self

        def masked_load(ptrs: Any, mask: Any, other: Any, *rest: Any) -> Any:
            mask = recorder._bounded("loads", ptrs, mask, interp.TensorHandle)
            return load(ptrs, mask, other, *rest)

        def masked_store(ptrs: Any, value: Any, mask: Any, *rest: Any) -> Any:
            mask = recorder._bounded("stores", ptrs, mask, interp.TensorHandle)
            return store(ptrs, value, mask, *rest)

        def atomic_rmw(op: Any, ptr: Any, val: Any, mask: Any, *rest: Any) -> Any:
            mask = recorder._bounded("updates (atomic)", ptr, mask, interp.TensorHandle)
            return rmw(op, ptr, val, mask, *rest)

        def atomic_cas(ptr: Any, cmp: Any, val: Any, *rest: Any) -> Any:
            kind = "updates (atomic compare-and-swap)"
            if recorder._bounded(kind, ptr, None, interp.TensorHandle) is not None:
                # A compare-and-swap has no mask to turn the lanes off with: not made at all.
                raise RuntimeError("an atomic compare-and-swap outside the launch's tensors")
            return cas(ptr, cmp, val, *rest)

        set_grid_dim = builder.set_grid_dim

        def grid_dim(nx: int, ny: int, nz: int) -> None:
            # The launch's hooks and its grid function ran (candidate code inside the
            # launch); its programs have not: memory whose address the candidate read and
            # that changed since the last op or launch was written by the host.
            accounting = recorder.accounting
            if recorder._launch_memory and accounting is not None:
                accounting.check_aliased(recorder._launch_memory[-1].tensors)
            set_grid_dim(nx, ny, nz)

        masked_load._kernelopt_wrapped = True  # type: ignore[attr-defined]
        builder.set_grid_dim = grid_dim
        builder.create_masked_load = masked_load
        builder.create_masked_store = masked_store
        builder.create_atomic_rmw = atomic_rmw
        builder.create_atomic_cas = atomic_cas

    def _bounded(self, kind: str, ptrs: Any, mask: Any, handle: Any) -> Any:
        """``mask`` with the lanes outside the current launch's storages masked off (each
        such access recorded); ``mask`` itself when every masked-in lane is inside."""
        if not self._launch_memory:
            return mask
        memory = self._launch_memory[-1]
        inside = memory.inside(ptrs.data, None if mask is None else mask.data, ptrs)
        if inside is None:
            return mask
        if (memory.kernel, kind) not in self._memory_reported:
            self._memory_reported.add((memory.kernel, kind))
            self.memory_violations.append(memory.describe(kind, ptrs.data, inside, mask))
        return handle(inside, mask.dtype if mask is not None else _int1())

    @contextmanager
    def recording(self) -> Iterator[None]:
        """Record launches made inside the block (the candidate's construction or forward)."""
        if self.device == "cuda":
            self._expected_stream = torch.cuda.current_stream().cuda_stream
        self.active = True
        try:
            yield
        finally:
            self.active = False

    # ------------------------------------------------------------------ per launch

    def _check_hooks(self, owner: Any, hooks: list[Any]) -> None:
        """Hooks Triton calls inside a launch or autotuning, where the accounting only counts
        ops whose nearest caller is not Triton's (``accounting.candidate_code``): each must be
        a Python function (its ops are then the candidate's, counted), not a torch op or other
        callable that Triton would appear to call itself."""
        for hook in hooks:
            problem = foreign_hook(hook)
            if problem is not None:
                fn = getattr(owner, "fn", owner)
                name = getattr(fn, "__qualname__", None) or type(owner).__name__
                message = (
                    f"kernel {name} has a callable Triton calls inside the launch (a hook or "
                    f"the grid): {problem}"
                )
                if message not in self.stream_violations:
                    self.stream_violations.append(message)

    def _on_launch(self, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        fn = getattr(kernel, "fn", None)
        name = str(getattr(fn, "__qualname__", None) or getattr(kernel, "__name__", "kernel"))
        self.total += 1
        self.kernels[name] += 1
        if self.accounting is not None:
            self.accounting.mark_kernel(_launch_tensors(list(args) + list(kwargs.values())))
        if self.device == "cuda":
            self._check_stream(name)
        elif fn is not None:
            # Every launch's configuration is looked at (a kernel that changed its constexprs
            # after its 64th launch was never built), and every launched kernel must have a
            # spec: the static gate fails a kernel the compile check did not build.
            self._record_spec(name, fn, args, kwargs)

    def _check_stream(self, name: str) -> None:
        # Inside CUDA-graph capture the launch goes to the capture stream by design.
        if torch.cuda.is_current_stream_capturing():
            return
        stream = torch.cuda.current_stream().cuda_stream
        if stream != self._expected_stream:
            self.stream_violations.append(
                f"kernel {name} was launched on a side stream (not the stream the harness times)"
            )

    def _record_spec(
        self, name: str, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        """Keep what ``triton.compile`` needs to build this launch for sm_90 elsewhere."""
        quick = _quick_key(fn, args, kwargs)
        if quick is not None:
            if quick in self._quick_keys:
                return  # the same specialisation as a launch already recorded
            self._quick_keys.add(quick)
        try:
            spec = launch_spec(fn, args, kwargs, self._binders)
            key = repr((spec["qualname"], spec["signature"], spec["constexprs"], spec["options"]))
            if key in self._spec_keys:
                return
            pickle.dumps(spec)
        except Exception as exc:  # an exotic argument: report the check as not possible
            self.spec_errors.setdefault(name, f"{type(exc).__name__}: {exc}"[:300])
            return
        if len(self.specs) >= MAX_SPECS:
            self.spec_errors.setdefault(
                name,
                f"more than {MAX_SPECS} distinct launch configurations in all; the compile "
                "check builds at most that many",
            )
            return
        generated = _generated_source(fn)
        if generated is not None:
            spec["module_source"] = generated
        self._spec_keys.add(key)
        self._spec_names.add(name)
        self.specs.append(spec)


#: Above every address: the masked minimum of an access whose lanes are all masked off.
_NO_ADDRESS = (1 << 64) - 1


def _int1() -> Any:
    import triton.language as tl

    return tl.int1


class LaunchMemory:
    """The byte ranges of the storages one launch was given (its tensor arguments, also
    inside tuples and tensor descriptors), sorted and merged, with the arguments' names."""

    __slots__ = ("end_list", "ends", "kernel", "names", "start_list", "starts", "tensors")

    def __init__(
        self, kernel: str, ranges: list[tuple[int, int, str]], tensors: list[torch.Tensor]
    ) -> None:
        import numpy as np

        merged: list[list[Any]] = []
        for start, end, name in sorted(ranges):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
                if name not in merged[-1][2]:
                    merged[-1][2].append(name)
            else:
                merged.append([start, end, [name]])
        self.kernel = kernel
        self.start_list: list[int] = [m[0] for m in merged]
        self.end_list: list[int] = [m[1] for m in merged]
        self.starts = np.array(self.start_list, dtype=np.uint64)
        self.ends = np.array(self.end_list, dtype=np.uint64)
        self.names = ["/".join(m[2]) for m in merged]
        self.tensors = tensors

    @classmethod
    def of(cls, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> LaunchMemory:
        """The storages of ``kernel[grid](*args, **kwargs)``."""
        fn = getattr(kernel, "fn", None)
        name = str(getattr(fn, "__qualname__", None) or getattr(kernel, "__name__", "kernel"))
        params = list(getattr(kernel, "arg_names", None) or [])
        named = [(params[i] if i < len(params) else f"#{i}", v) for i, v in enumerate(args)]
        ranges: list[tuple[int, int, str]] = []
        tensors: list[torch.Tensor] = []
        for arg, value in [*named, *kwargs.items()]:
            for t in _launch_tensors([value]):
                tensors.append(t)
                try:
                    storage = t.untyped_storage()
                    start, size = int(storage.data_ptr()), int(storage.nbytes())
                except (RuntimeError, NotImplementedError, TypeError):
                    continue
                if size:
                    ranges.append((start, start + size, arg))
        return cls(name, ranges, tensors)

    def inside(self, addresses: Any, mask: Any, ptrs: Any) -> Any:
        """None when every masked-in address (with its element's width) lies inside one of
        the storages; else the mask of the lanes that do. Vectorised: the common case is one
        masked min and max and a bisection over the few storages."""
        import numpy as np

        width = max(1, int(ptrs.get_element_ty().primitive_bitwidth) // 8)
        addresses = np.asarray(addresses)
        if addresses.dtype != np.uint64:
            addresses = addresses.astype(np.uint64)
        if mask is None:
            wanted = None
            if addresses.size == 0:
                return None
            lo, hi = int(addresses.min()), int(addresses.max())
        else:
            wanted = np.broadcast_to(np.asarray(mask, dtype=bool), addresses.shape)
            lo = int(np.minimum.reduce(addresses, axis=None, where=wanted, initial=_NO_ADDRESS))
            if lo == _NO_ADDRESS and not wanted.any():
                return None  # every lane masked off
            hi = int(np.maximum.reduce(addresses, axis=None, where=wanted, initial=0))
        k = bisect.bisect_right(self.start_list, lo) - 1
        if k >= 0 and hi + width <= self.end_list[k]:
            return None
        index = np.searchsorted(self.starts, addresses, side="right").astype(np.int64) - 1
        ends = self.ends[np.maximum(index, 0)] if len(self.ends) else np.zeros_like(addresses)
        within = (index >= 0) & (addresses + np.uint64(width) <= ends)
        if wanted is None:
            return None if bool(within.all()) else within
        allowed = wanted & within
        return None if bool((allowed == wanted).all()) else allowed

    def describe(self, kind: str, addresses: Any, inside: Any, mask: Any) -> str:
        """The violation's message, naming the kernel, how many lanes of the access were
        outside and where the first was, relative to the nearest argument."""
        import numpy as np

        addresses = np.asarray(addresses).astype(np.uint64, copy=False)
        wanted = (
            np.ones(addresses.shape, dtype=bool)
            if mask is None
            else np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape)
        )
        outside = addresses[wanted & ~inside]
        first = int(outside[0])
        k = int(np.searchsorted(self.starts, np.uint64(first), side="right")) - 1

        def storage(i: int) -> str:
            size = int(self.ends[i]) - int(self.starts[i])
            return f"{self.names[i]}'s storage ({size} bytes)"

        if k >= 0 and first >= int(self.ends[k]):
            where = f"{first - int(self.ends[k])} bytes past the end of {storage(k)}"
        elif k >= 0:
            where = f"straddling the end of {storage(k)}"
        elif len(self.starts):
            where = f"{int(self.starts[0]) - first} bytes before the start of {storage(0)}"
        else:
            where = "with no tensor argument at all"
        return (
            f"kernel {self.kernel} {kind} memory outside the tensors it was given: "
            f"{outside.size} masked-in lane(s) of one access, the first {where} (mask every "
            "lane to its tensor's extent: a lane outside it touches memory the kernel does not "
            "own, even when its value is discarded: another allocation, or a fault on a GPU)"
        )


#: The candidate's own module name starts with this (``problem.load_source_module``).
CANDIDATE_MODULE_PREFIX = "kernelopt_src_candidate"


def _quick_key(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """What decides a launch's specialisation, cheaply (Triton's binder is costly, and an
    autotuner's benchmark launches each configuration hundreds of times): tensors by dtype and
    16-byte alignment, integers, strings and keyword values exactly, floats by type. None when
    a value cannot be keyed so (the launch is then specialised in full)."""

    def part(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            address = (
                value.untyped_storage().data_ptr() + value.storage_offset() * value.element_size()
            )
            return ("T", str(value.dtype), address % 16 == 0)
        if value is None or isinstance(value, bool | int | str):
            return (type(value).__name__, value)
        if isinstance(value, float):
            return ("float",)
        raise TypeError(type(value).__name__)

    try:
        return (
            id(fn),
            getattr(fn, "__qualname__", ""),
            tuple(part(v) for v in args),
            tuple((k, part(v)) for k, v in sorted(kwargs.items())),
        )
    except (TypeError, RuntimeError):
        return None


def foreign_hook(hook: Any) -> str | None:
    """Why ``hook`` may not run inside a launch, or None: a plain Python function (or a bound
    method of one) of the candidate's module or of Triton's is fine; anything else (a torch op,
    a ``functools.partial``, a builtin, a callable object) runs code no frame attributes."""
    import sys
    import types

    if hook is None:
        return None
    fn = hook.__func__ if isinstance(hook, types.MethodType) else hook
    if not isinstance(fn, types.FunctionType):
        return f"a {type(hook).__qualname__}, not a Python function"
    name = str(fn.__globals__.get("__name__", ""))
    module = sys.modules.get(name)
    own = name.startswith(CANDIDATE_MODULE_PREFIX)
    # Triton's own, and the project's interpreter shims (the CPU benchmarker autotuning uses).
    trusted = name in ("triton", "kernelopt_jupyter.cpu_triton") or name.startswith("triton.")
    if not (own or (trusted and module is not None and fn.__globals__ is vars(module))):
        return f"a function of module {name or '?'}, not of the candidate"
    return None


_MAX_GENERATED = 1 << 20


def _generated_source(fn: Any) -> str | None:
    """The source of the module a kernel was defined in, when a kernel language generated it
    from the candidate (Helion writes its Triton code to a file): the compile check builds it
    from there, since the candidate's own module does not define it."""
    import sys

    name = str(getattr(fn, "__module__", "") or "")
    if name.startswith(CANDIDATE_MODULE_PREFIX):
        return None
    module = sys.modules.get(name)
    path = getattr(module, "__file__", None)
    if not path:
        return None
    try:
        with open(path) as fh:
            text = fh.read(_MAX_GENERATED + 1)
    except OSError:
        return None
    return text if len(text) <= _MAX_GENERATED else None


def _launch_tensors(values: list[Any]) -> list[torch.Tensor]:
    found: list[torch.Tensor] = []
    for value in values:
        if isinstance(value, torch.Tensor):
            found.append(value)
        elif isinstance(value, tuple | list):
            found.extend(_launch_tensors(list(value)))
        else:
            base = getattr(value, "base", None)  # TensorDescriptor, TensorWrapper
            if isinstance(base, torch.Tensor):
                found.append(base)
    return found


@contextmanager
def program_order(mode: str, seed: int = 0) -> Iterator[None]:
    """Run every interpreted launch's programs in ``mode`` order: ``grid`` (the interpreter's
    own), ``reverse``, ``shuffle`` or ``mixed`` (each launch, on its own draw, in grid order
    or shuffled). The interpreter runs programs one after another in grid order, which hides
    races between programs; another order exposes a kernel whose result depends on it.
    ``mixed`` gives a launch that probes the order its programs run in (atomics read back)
    nothing to go on for the next launch: a racy kernel chosen when a probe saw grid order
    then runs shuffled half the time. Implemented by remapping the program index the
    interpreter sets."""
    if mode == "grid":
        yield
        return
    import random

    from triton.runtime import interpreter as interp

    builder = interp.interpreter_builder
    set_dim, set_idx = builder.set_grid_dim, builder.set_grid_idx
    state: dict[str, Any] = {}
    draws = random.Random(seed)

    def grid_dim(nx: int, ny: int, nz: int) -> None:
        state["dims"] = (nx, ny, nz)
        order = list(range(nx * ny * nz))
        if mode == "reverse":
            order.reverse()
        elif mode == "shuffle":
            random.Random(seed).shuffle(order)
        elif draws.random() < 0.5:  # mixed: this launch shuffled, on the call's own stream
            draws.shuffle(order)
        state["order"] = order
        set_dim(nx, ny, nz)

    def grid_idx(x: int, y: int, z: int) -> None:
        _, ny, nz = state["dims"]
        k = state["order"][(x * ny + y) * nz + z]
        set_idx(k // (ny * nz), (k // nz) % ny, k % nz)

    builder.set_grid_dim, builder.set_grid_idx = grid_dim, grid_idx
    try:
        yield
    finally:
        builder.set_grid_dim, builder.set_grid_idx = set_dim, set_idx


def launch_spec(
    fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any], cache: dict[Any, Any]
) -> dict[str, Any]:
    """Signature, constexprs and attributes of one launch, specialised as Triton would for
    sm_90: a real ``JITFunction`` is built from the Python function (the interpreter's wrapper
    has none of Triton's binder), and its binder is applied to the actual arguments."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import make_backend
    from triton.runtime.jit import JITFunction, create_function_from_signature

    if fn not in cache:
        jit = JITFunction(fn)
        backend = make_backend(GPUTarget(*_SM90))
        cache[fn] = (
            jit,
            backend,
            create_function_from_signature(jit.signature, jit.params, backend),
        )
    jit, backend, binder = cache[fn]
    bound, specialization, options = binder(*args, **kwargs)
    parsed, signature, constexprs, attrs = jit._pack_args(
        backend, kwargs, bound, specialization, options
    )
    launch_options = {k: v for k, v in kwargs.items() if k in parsed.__dict__}
    code = getattr(fn, "__code__", None)
    return {
        "qualname": fn.__qualname__,
        "firstline": int(code.co_firstlineno) if code is not None else None,
        "signature": dict(signature),
        "constexprs": {k: _plain(v) for k, v in constexprs.items()},
        "attrs": attrs,
        "options": launch_options,
    }


#: A ``tl.dtype`` constexpr travels to the compile check as ``{TL_DTYPE: "fp32"}`` (plain data:
#: the caller reads launch records with a plain-data unpickler) and is rebuilt there.
TL_DTYPE = "__tl_dtype__"
_PLAIN_SCALARS = (bool, int, float, str, type(None))


def _plain(value: Any) -> Any:
    """A constexpr's value as plain data, or ``TypeError`` for one the compile check cannot be
    given faithfully (a tensor, a function, any object): such a launch is not checkable."""
    # tl.constexpr wrappers carry their value; the compiler accepts the bare value.
    if type(value).__name__ == "constexpr":
        value = getattr(value, "value", value)
    import triton.language as tl

    if isinstance(value, tl.dtype):
        return {TL_DTYPE: str(value.name)}
    if isinstance(value, _PLAIN_SCALARS):
        return value
    if isinstance(value, tuple) and all(isinstance(v, _PLAIN_SCALARS) for v in value):
        return value
    raise TypeError(
        f"a {type(value).__module__}.{type(value).__qualname__} passed as a tl.constexpr "
        "(the compiled kernel would not see it as the interpreter did)"
    )


def unplain(value: Any) -> Any:
    """Inverse of :func:`_plain` in the compile check's process."""
    if isinstance(value, dict) and set(value) == {TL_DTYPE}:
        import triton.language as tl

        return tl.dtype(str(value[TL_DTYPE]))
    return value


# ---------------------------------------------------------------------- global-state guards

_WATCHED_MODULES = (
    "builtins",
    "time",
    "math",
    "torch",
    "torch.nn.functional",
    "torch.cuda",
    "torch.testing",
    "triton",
    "triton.testing",
    "kernelopt_jupyter.problem",
    "kernelopt_jupyter.verify.compare",
    "kernelopt_jupyter.verify.launches",
    "kernelopt_jupyter.verify.timing",
    "kernelopt_jupyter.verify.sandbox",
    "kernelopt_jupyter.verify.accounting",
    "kernelopt_jupyter.verify.wire",
    "kernelopt_jupyter.verify.ipc",
)


#: Variables the kernel languages' own runtimes set on first use (Triton's and Helion's cache
#: folders, OpenMP's fork settings): changing them gains a candidate nothing.
_RUNTIME_OWNED_ENV = frozenset(
    {"TRITON_CACHE_DIR", "KMP_DUPLICATE_LIB_OK", "KMP_INIT_AT_FORK", "TORCHINDUCTOR_CACHE_DIR"}
)


def flush_denormal_on() -> bool:
    """Whether this thread flushes denormals to zero (torch has a setter but no getter)."""
    tiny = torch.tensor([2.0**-140], dtype=torch.float32)
    return bool(float((tiny * 1.0)[0]) == 0.0)


def settings() -> dict[str, Any]:
    """Process-wide numerics a candidate may not change, by value."""
    values: dict[str, Any] = {
        "torch.get_float32_matmul_precision()": torch.get_float32_matmul_precision(),
        "torch.get_default_dtype()": torch.get_default_dtype(),
        "torch.backends.cudnn.enabled": torch.backends.cudnn.enabled,
        "torch.backends.cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        "torch.backends.cudnn.benchmark": torch.backends.cudnn.benchmark,
        "torch.backends.cudnn.deterministic": torch.backends.cudnn.deterministic,
        "torch.backends.mkldnn.enabled": torch.backends.mkldnn.enabled,
        "torch.are_deterministic_algorithms_enabled()": (
            torch.are_deterministic_algorithms_enabled()
        ),
        "torch.backends.cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction": (
            torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction
        ),
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction": (
            torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction
        ),
        "flush denormals to zero (torch.set_flush_denormal)": flush_denormal_on(),
        # The caller's thread pools: a module that resizes them changes every later op's
        # speed (and a reduction's order) in the caller's process.
        "torch.get_num_threads()": torch.get_num_threads(),
        "torch.get_num_interop_threads()": torch.get_num_interop_threads(),
    }
    return values


_settings = settings

#: Ops the harness itself runs in the candidate's process (encoding outputs, digests, copies
#: into lent slots, weight loading): their kernels are checked after every call, whether or
#: not the forward used them.
HARNESS_OPS = (
    "aten::copy_", "aten::clone", "aten::_to_copy", "aten::empty", "aten::empty_like",
    "aten::empty_strided", "aten::as_strided", "aten::view", "aten::reshape", "aten::detach",
    "aten::alias", "aten::slice", "aten::select", "aten::contiguous", "aten::resize_",
    "aten::zero_", "aten::fill_", "aten::mul", "aten::add", "aten::sum", "aten::view_as_real",
    "aten::_local_scalar_dense", "aten::equal", "aten::set_", "aten::lift_fresh",
)  # fmt: skip


class OpRegistry:
    """The dispatcher's kernels, as they were before the candidate's code ran.

    ``torch.library`` (or ``torch._C._dispatch_library``) lets code replace the kernel of an
    existing op in its own process: an ``aten::clone`` whose CPU or CUDA kernel computes the
    answer is seen by the dispatch-level accounting as a copy, and one that replaces
    ``aten::copy_`` would alter what the harness copies out. Each op's registration record
    (``torch._C._dispatch_dump``: every kernel with where it was registered) is kept before the
    candidate is imported and compared by value: after import and build (every op), for every
    op the forward runs (as it runs), and for the harness's own ops after every call. A new op
    in a namespace of its own (a custom op) is not a change: calling it counts as compute.
    """

    def __init__(self) -> None:
        self._base = {n: torch._C._dispatch_dump(n) for n in torch._C._dispatch_get_all_op_names()}
        self.watch: set[str] = set(HARNESS_OPS)

    def changed(self, names: Any) -> list[str]:
        """A message for each op among ``names`` whose kernels differ from the snapshot."""
        found = []
        for name in sorted(set(names)):
            base = self._base.get(name)
            if base is None:
                continue
            now = torch._C._dispatch_dump(name)
            if now == base:
                continue
            before, after = base.splitlines(), now.splitlines()
            new = [line for line in after if line not in before]
            gone = [line for line in before if line not in after]
            what = (new or gone or ["its registrations changed"])[0].strip()
            found.append(f"re-registered a kernel of {name} (torch.library): {what[:160]}")
        return found

    def changed_all(self) -> list[str]:
        """:meth:`changed` over every op that existed at the snapshot."""
        return self.changed(self._base)


class GlobalGuard:
    """Identity snapshot of the functions the harness relies on, to catch monkeypatching that
    the source analysis missed (``setattr`` through an alias, patching inside a kernel call)."""

    def __init__(self) -> None:
        import sys

        self._snapshot: dict[str, Any] = {}
        for mod_name in _WATCHED_MODULES:
            module = sys.modules.get(mod_name)
            if module is None:
                continue
            for key, value in list(vars(module).items()):
                if callable(value) and not key.startswith("__"):
                    self._snapshot[f"{mod_name}.{key}"] = value
        for cls_name, cls in (("torch.Tensor", torch.Tensor), ("torch.nn.Module", torch.nn.Module)):
            for key, value in list(vars(cls).items()):
                if callable(value):
                    self._snapshot[f"{cls_name}.{key}"] = value
        self._settings = _settings()
        self._environ = dict(os.environ)
        self._threads = set(threading.enumerate())
        self.registry = OpRegistry()

    def changes(self, *, every_op: bool = False) -> list[str]:
        """What differs from the snapshot: replaced functions, settings, live new threads, op
        kernels (the watched ops; every op with ``every_op``)."""
        import sys

        found: list[str] = (
            self.registry.changed_all() if every_op else self.registry.changed(self.registry.watch)
        )
        for dotted, original in self._snapshot.items():
            owner, _, key = dotted.rpartition(".")
            if owner == "torch.Tensor":
                value = vars(torch.Tensor).get(key)
            elif owner == "torch.nn.Module":
                value = vars(torch.nn.Module).get(key)
            else:
                value = vars(sys.modules[owner]).get(key)
            if value is not original:
                found.append(f"replaced {dotted}")
        for key, value in _settings().items():
            if value != self._settings.get(key, value):
                found.append(f"changed {key} to {value!r}")
        now = dict(os.environ)
        for key in sorted(set(now) | set(self._environ)):
            if key in _RUNTIME_OWNED_ENV:
                continue
            if now.get(key) != self._environ.get(key):
                verb = (
                    "set"
                    if key not in self._environ
                    else "removed"
                    if key not in now
                    else "changed"
                )
                found.append(f"{verb} os.environ[{key!r}]")
        new = [t for t in threading.enumerate() if t not in self._threads and t.is_alive()]
        if new:
            names = ", ".join(sorted(t.name for t in new))
            found.append(f"started {len(new)} thread(s) still running ({names})")
        return found
