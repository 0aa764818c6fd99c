"""Make Triton (and Inductor's Triton code) run on a machine with no GPU, under the interpreter.

``TRITON_INTERPRET=1`` runs ``@triton.jit`` kernels on CPU tensors, but gaps remain:

* ``triton.language.extra.libdevice`` functions (erf, tanh, pow, ...) are empty stubs there
  and return ``None``; Inductor and Helion emit them. We map each to a NumPy/torch-on-CPU
  implementation that builds a proper interpreter tensor.
* bfloat16 values are held as raw ``uint16`` bits and arithmetic runs on those bits. We patch
  the interpreter's arithmetic to decode, compute in float32 and round back.
* a reduction with a combine function of its own (Inductor's Welford for every LayerNorm,
  BatchNorm and GroupNorm, a user's ``tl.reduce``) runs element by element in Python there:
  a 24x4097 LayerNorm took minutes. We reduce pairwise instead, a whole block per combine
  call (``tl.reduce`` asks for an associative combine function, and neighbours are combined
  in order, so a non-commutative one is still right). Scans with a combine function of their
  own (Inductor's cumsum helpers, ``tl.associative_scan``) likewise, by doubling strides.
* the interpreter widens every integer ``+``, ``-`` and ``*`` to check it for overflow and
  then drops the check (its assert is kept only with ``debug``, which is off): we skip it.
* a kernel's Python ``float`` argument reached the kernel as a plain number, where compiled
  code gets a float32 scalar tensor (``eps.to(tl.float32)`` works there, as Liger-Kernel's
  kernels use it): we wrap it as one.
* ``triton.autotune``, ``triton.testing.do_bench`` and Inductor's Triton codegen ask for an
  *active driver* and fail with "0 active drivers". A stub driver reporting an sm_90 target, a
  CPU benchmarker, device 0 and stream 0 satisfies them.

Everything here acts only when ``TRITON_INTERPRET`` is on and no CUDA device is visible: on a
GPU the real driver and libdevice must stay untouched. Written against Triton 3.6-3.7; attribute
lookups are defensive because the interpreter's internals move between releases.
"""

from __future__ import annotations

import importlib
import math
import os
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

_INSTALLED = False
_STUB_INSTALLED = False


def interpreter_requested() -> bool:
    """True when ``TRITON_INTERPRET`` asks for the interpreter (read when kernels are decorated)."""
    return os.environ.get("TRITON_INTERPRET", "0").strip().lower() in {"1", "true", "yes", "on"}


def _cuda_present() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def install_interpreter_shims() -> bool:
    """Install the libdevice mapping, the bf16 fix and the stub driver; idempotent.

    Returns True when the shims are in place, False when they do not apply here (interpreter off
    or a CUDA GPU present). Call it before loading any kernel source.
    """
    global _INSTALLED
    if _INSTALLED:
        return True
    if not interpreter_requested() or _cuda_present():
        return False
    map_libdevice()
    _patch_bf16_arithmetic()
    _patch_generic_reduce()
    _patch_builtin_lookup()
    _skip_discarded_overflow_checks()
    _vectorized_erf()
    _wrap_float_arguments()
    install_stub_driver()
    _INSTALLED = True
    return True


# --------------------------------------------------------------------------- libdevice


def _tl() -> Any:
    import triton.language as tl

    return tl


def _handle_cls() -> Any:
    from triton.runtime.interpreter import TensorHandle

    return TensorHandle


def _decode(arg: Any) -> tuple[Any, Any]:
    """An interpreter tensor (or Python scalar) as (numpy array or number, triton dtype or None)."""
    import numpy as np

    tl = _tl()
    if isinstance(arg, tl.constexpr):
        arg = arg.value
    if isinstance(arg, tl.tensor):
        data = arg.handle.data
        dtype = arg.dtype
        if dtype == tl.bfloat16:
            data = (data.astype(np.uint32) << 16).view(np.float32)
        return data, dtype
    return arg, None


def _np_of(dtype: Any) -> Any:
    import numpy as np

    tl = _tl()
    table = {
        tl.float64: np.float64,
        tl.float32: np.float32,
        tl.float16: np.float16,
        tl.bfloat16: np.float32,  # computed in float32, re-encoded on the way out
        tl.int1: np.bool_,
        tl.int8: np.int8,
        tl.int16: np.int16,
        tl.int32: np.int32,
        tl.int64: np.int64,
        tl.uint8: np.uint8,
        tl.uint16: np.uint16,
        tl.uint32: np.uint32,
        tl.uint64: np.uint64,
    }
    return table[dtype]


def _encode(result: Any, dtype: Any, block: bool) -> Any:
    import numpy as np
    import torch

    tl = _tl()
    data = np.asarray(result)
    if dtype == tl.bfloat16:
        bits = torch.from_numpy(np.ascontiguousarray(data, dtype=np.float32)).to(torch.bfloat16)
        data = bits.view(torch.int16).numpy().view(np.uint16)
    else:
        data = data.astype(_np_of(dtype))
    if data.ndim == 0:
        data = data.reshape(1)
    handle = _handle_cls()(data, dtype)
    ty = tl.block_type(dtype, list(data.shape)) if block else dtype
    return tl.tensor(handle, ty)


def _result_dtype(dtypes: list[Any], fixed: Any) -> Any:
    tl = _tl()
    if fixed is not None:
        return fixed
    floats = [d for d in dtypes if d is not None and d.is_floating()]
    if any(d == tl.float64 for d in floats):
        return tl.float64
    if floats:
        return floats[0]
    known = [d for d in dtypes if d is not None]
    return known[0] if known else tl.float32


def _elementwise(fn: Callable[..., Any], out: str | None = None) -> Callable[..., Any]:
    """Wrap ``fn`` (torch ops on CPU tensors) as an interpreter-level libdevice function."""

    def apply(*args: Any, **kwargs: Any) -> Any:
        import numpy as np
        import torch

        tl = _tl()
        # The compiler path passes _semantic/_builder; the interpreter has no use for them.
        kwargs.pop("_semantic", None)
        kwargs.pop("_builder", None)
        decoded = [_decode(a) for a in args]
        dtypes = [d for _, d in decoded]
        fixed = getattr(tl, out) if out else None
        dtype = _result_dtype(dtypes, fixed)
        compute = torch.float64 if dtype == tl.float64 else torch.float32
        tensors = []
        for value, d in decoded:
            if d is not None and not d.is_floating() and fixed is None and dtype.is_floating():
                tensors.append(torch.from_numpy(np.ascontiguousarray(value)).to(compute))
            elif d is not None:
                arr = np.ascontiguousarray(value)
                t = torch.from_numpy(arr)
                tensors.append(t.to(compute) if t.is_floating_point() else t)
            else:
                tensors.append(torch.tensor(value, dtype=compute))
        result = fn(*tensors)
        block = any(
            isinstance(a, tl.tensor) and a.type.is_block()
            for a in (x.value if isinstance(x, tl.constexpr) else x for x in args)
        )
        return _encode(result.numpy(), dtype, block)

    apply.__name__ = getattr(fn, "__name__", "libdevice_fn")
    return apply


def _gamma(x: Any) -> Any:
    import torch

    return torch.exp(torch.lgamma(x)) * torch.where(
        (x < 0) & (torch.floor(x).remainder(2) == 0), -1.0, 1.0
    ).to(x.dtype)


def _round_away(x: Any) -> Any:
    import torch

    return torch.sign(x) * torch.floor(torch.abs(x) + 0.5)


def _ieee_remainder(x: Any, y: Any) -> Any:
    import torch

    return x - torch.round(x / y) * y  # torch.round rounds half to even, as IEEE remainder does


def _libdevice_table() -> dict[str, Callable[..., Any]]:
    """Name -> implementation over torch CPU tensors; rounding-mode variants share one entry."""
    import torch

    sq2 = math.sqrt(2.0)
    unary: dict[str, Callable[..., Any]] = {
        "abs": torch.abs,
        "fabs": torch.abs,
        "floor": torch.floor,
        "ceil": torch.ceil,
        "trunc": torch.trunc,
        "exp": torch.exp,
        "exp2": torch.exp2,
        "exp10": lambda x: torch.pow(10.0, x),
        "expm1": torch.expm1,
        "log": torch.log,
        "log2": torch.log2,
        "log10": torch.log10,
        "log1p": torch.log1p,
        "sqrt": torch.sqrt,
        "rsqrt": torch.rsqrt,
        "sin": torch.sin,
        "cos": torch.cos,
        "tan": torch.tan,
        "sinpi": lambda x: torch.sin(math.pi * x),
        "cospi": lambda x: torch.cos(math.pi * x),
        "asin": torch.asin,
        "acos": torch.acos,
        "atan": torch.atan,
        "sinh": torch.sinh,
        "cosh": torch.cosh,
        "tanh": torch.tanh,
        "asinh": torch.asinh,
        "acosh": torch.acosh,
        "atanh": torch.atanh,
        "erf": torch.erf,
        "erfc": torch.erfc,
        "erfinv": torch.erfinv,
        "erfcinv": lambda x: torch.erfinv(1.0 - x),
        "erfcx": torch.special.erfcx,
        "normcdf": lambda x: 0.5 * torch.erfc(-x / sq2),
        "normcdfinv": lambda x: sq2 * torch.erfinv(2.0 * x - 1.0),
        "lgamma": torch.lgamma,
        "tgamma": _gamma,
        "rint": torch.round,
        "nearbyint": torch.round,
        "round": _round_away,
        "cbrt": lambda x: torch.sign(x) * torch.abs(x).pow(1.0 / 3.0),
        "rcbrt": lambda x: 1.0 / (torch.sign(x) * torch.abs(x).pow(1.0 / 3.0)),
        "saturatef": lambda x: torch.clamp(x, 0.0, 1.0),
        "rcp": torch.reciprocal,
        "logb": lambda x: torch.floor(torch.log2(torch.abs(x))),
        "j0": torch.special.bessel_j0,
        "j1": torch.special.bessel_j1,
        "y0": torch.special.bessel_y0,
        "y1": torch.special.bessel_y1,
        "cyl_bessel_i0": torch.special.i0,
        "cyl_bessel_i1": torch.special.i1,
        "fast_sinf": torch.sin,
        "fast_cosf": torch.cos,
        "fast_tanf": torch.tan,
        "fast_tanhf": torch.tanh,
        "fast_expf": torch.exp,
        "fast_exp10f": lambda x: torch.pow(10.0, x),
        "fast_logf": torch.log,
        "fast_log2f": torch.log2,
        "fast_log10f": torch.log10,
    }
    binary: dict[str, Callable[..., Any]] = {
        "pow": torch.pow,
        "powf": torch.pow,
        "fast_powf": torch.pow,
        "atan2": torch.atan2,
        "fmod": torch.fmod,
        "remainder": _ieee_remainder,
        "hypot": torch.hypot,
        "rhypot": lambda x, y: 1.0 / torch.hypot(x, y),
        "copysign": torch.copysign,
        "nextafter": torch.nextafter,
        "fdim": lambda x, y: torch.clamp(x - y, min=0.0),
        "fmin": torch.fmin,
        "fmax": torch.fmax,
        "div": torch.div,
        "fast_dividef": torch.div,
        "add": torch.add,
        "sub": torch.sub,
        "mul": torch.mul,
        "ldexp": lambda x, n: x * torch.pow(2.0, n.to(x.dtype)),
        "scalbn": lambda x, n: x * torch.pow(2.0, n.to(x.dtype)),
    }
    ternary: dict[str, Callable[..., Any]] = {
        "fma": lambda x, y, z: (x.double() * y.double() + z.double()).to(x.dtype),
        "norm3d": lambda x, y, z: torch.sqrt(x * x + y * y + z * z),
        "rnorm3d": lambda x, y, z: torch.rsqrt(x * x + y * y + z * z),
    }
    table: dict[str, Callable[..., Any]] = {}
    for group in (unary, binary, ternary):
        for name, fn in group.items():
            table[name] = _elementwise(fn)
    for base in ("sqrt", "rsqrt", "div", "add", "sub", "mul", "fma", "rcp"):
        for mode in ("rn", "rz", "rd", "ru"):
            table[f"{base}_{mode}"] = table[base]
    for name, torch_pred in {
        "isnan": torch.isnan,
        "isinf": torch.isinf,
        "isfinited": torch.isfinite,
        "finitef": torch.isfinite,
        "signbit": torch.signbit,
    }.items():
        # libdevice predicates return int32, as on the GPU (Inductor casts with .to(tl.int1)).
        table[name] = _elementwise(lambda x, p=torch_pred: p(x).to(torch.int32), out="int32")
    table["ilogb"] = _elementwise(
        lambda x: torch.floor(torch.log2(torch.abs(x))).to(torch.int32), out="int32"
    )
    table["llrint"] = _elementwise(lambda x: torch.round(x).to(torch.int64), out="int64")
    table["llround"] = _elementwise(lambda x: _round_away(x).to(torch.int64), out="int64")
    return table


def _unsupported(name: str) -> Callable[..., Any]:
    def missing(*_args: Any, **_kwargs: Any) -> Any:
        raise NotImplementedError(
            f"libdevice.{name} has no implementation under the Triton interpreter "
            "(kernelopt_jupyter.cpu_triton); run this kernel on a GPU"
        )

    missing.__name__ = name
    return missing


#: Libdevice modules whose functions kernels may call: the backend-neutral one Inductor imports
#: and the CUDA one that older Inductor and hand-written kernels import directly.
LIBDEVICE_MODULES = ("triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice")


def map_libdevice() -> list[str]:
    """Replace libdevice functions with interpreter implementations; returns the modules patched.

    A function with no implementation raises NotImplementedError naming itself instead of
    silently returning None.
    """
    table = _libdevice_table()
    patched = []
    for mod_name in LIBDEVICE_MODULES:
        try:
            module = importlib.import_module(mod_name)
        except ImportError:
            continue
        for name in dir(module):
            if name.startswith("_") or not callable(getattr(module, name)):
                continue
            value = getattr(module, name)
            if getattr(value, "__module__", None) not in {mod_name, "triton.language.core"}:
                continue  # imported helpers (core, dtype classes), not libdevice functions
            if isinstance(value, type):
                continue
            setattr(module, name, table.get(name) or _unsupported(name))
        patched.append(mod_name)
    return patched


# --------------------------------------------------------------------------- bfloat16


def _skip_discarded_overflow_checks() -> None:
    """The interpreter's options ask for integer-overflow checks (``sanitize_overflow``) but
    not for ``debug``, and without ``debug`` a device assert is dropped: every integer ``+``,
    ``-`` and ``*`` still widened both operands to int64, compared the result with the type's
    bounds and threw the verdict away, a third of an indexing-heavy kernel's time. Turning the
    check off where ``debug`` is off changes no result and no error: the assert it builds
    was never kept. (With ``debug`` on, as a user may set it, the check stays.)"""
    import dataclasses

    try:
        from triton.runtime import interpreter
    except ImportError:  # pragma: no cover - every supported Triton has the interpreter
        return
    builder: Any = getattr(interpreter, "interpreter_builder", None)
    options: Any = getattr(builder, "options", None)
    # A dataclass instance (not the class): what ``dataclasses.replace`` takes.
    if builder is None or isinstance(options, type) or not hasattr(options, "__dataclass_fields__"):
        return
    if getattr(options, "debug", True) or not getattr(options, "sanitize_overflow", False):
        return
    builder.options = dataclasses.replace(options, sanitize_overflow=False)


def _vectorized_erf() -> None:
    """The interpreter's ``erf`` calls Python's ``math.erf`` once per element (``np.vectorize``),
    most of an interpreted GELU's time. For float32 blocks, the same function on the whole
    block: torch's erf in float64 rounded to float32, bit for bit what the interpreter's
    rounding of ``math.erf`` gives (float64 blocks keep ``math.erf``: the two differ by an
    ulp there)."""
    try:
        from triton.runtime import interpreter
    except ImportError:  # pragma: no cover - every supported Triton has the interpreter
        return
    builder_cls: Any = getattr(interpreter, "InterpreterBuilder", None)
    handle: Any = getattr(interpreter, "TensorHandle", None)
    if builder_cls is None or handle is None or not hasattr(builder_cls, "create_erf"):
        return

    def create_erf(self: Any, arg: Any) -> Any:
        import numpy as np
        import torch

        data = np.asarray(arg.data)
        if data.dtype != np.float32:
            return original(self, arg)
        wide = torch.special.erf(torch.from_numpy(data.astype(np.float64)))
        return handle(wide.numpy().astype(np.float32), arg.dtype.scalar)

    original = builder_cls.create_erf
    builder_cls.create_erf = create_erf


def _wrap_float_arguments() -> None:
    """Compiled, a kernel's Python ``float`` argument arrives as a float32 scalar tensor, so a
    kernel may call ``eps.to(tl.float32)`` on it (Liger-Kernel's norms and losses do); the
    interpreter wrapped integers and pointers but passed floats through as Python numbers,
    which have no ``.to``. Wrapped as float32 interpreter tensors they behave as compiled."""
    import numpy as np

    try:
        from triton.runtime import interpreter
        from triton.runtime.jit import mangle_type
    except ImportError:  # pragma: no cover - every supported Triton has the interpreter
        return
    original = getattr(interpreter, "_implicit_cvt", None)
    handle = getattr(interpreter, "TensorHandle", None)
    if original is None or handle is None or getattr(original, "_wraps_floats", False):
        return
    tl = _tl()

    def implicit_cvt(arg: Any) -> Any:
        if isinstance(arg, float):
            ty = tl.str_to_ty(mangle_type(arg), None)
            return tl.tensor(handle(np.array([arg], dtype=np.float32), ty), ty)
        return original(arg)

    implicit_cvt._wraps_floats = True  # type: ignore[attr-defined]
    interpreter._implicit_cvt = implicit_cvt


def _patch_builtin_lookup() -> None:
    """The interpreter patches the language again at every device-function call (``tl.sum``,
    ``tl.max``, ``tl.cdiv``: each a @jit function, so once or more per program), each time
    walking every member of four namespaces (``inspect.getmembers``, then ``is_builtin`` on
    each): 40% of a reduction kernel's time. The names that can need it are found once per
    namespace (and again if its size changes): members that are builtins, and builtins the
    interpreter has wrapped already (a scope may restore them). Each call then patches those
    of them that are builtins now, in the same order, as the walk would."""
    import inspect

    try:
        from triton.language import core
        from triton.runtime import interpreter
    except ImportError:  # pragma: no cover - every supported Triton has the interpreter
        return
    original = getattr(interpreter, "_patch_builtin", None)
    patch_attr = getattr(interpreter, "_patch_attr", None)
    is_builtin = getattr(core, "is_builtin", None)
    if original is None or patch_attr is None or is_builtin is None:
        return
    if getattr(original, "_kernelopt_wrapped", False):
        return
    found: dict[tuple[int, int], list[str]] = {}

    def wrapped(member: Any) -> bool:
        inner = (getattr(member, "__kwdefaults__", None) or {}).get("member")
        return inner is not None and bool(is_builtin(inner))

    def names(pkg: Any) -> list[str]:
        key = (id(pkg), len(vars(pkg)))
        known = found.get(key)
        if known is None:
            known = found[key] = [
                name
                for name, member in inspect.getmembers(pkg)
                if is_builtin(member) or wrapped(member)
            ]
        return known

    def patch_builtin(pkg: Any, builder: Any, scope: Any) -> None:
        for name in names(pkg):
            member = getattr(pkg, name, None)
            if member is not None and is_builtin(member):
                patch_attr(pkg, name, member, builder, scope)

    patch_builtin._kernelopt_wrapped = True  # type: ignore[attr-defined]
    patch_builtin._kernelopt_original = original  # type: ignore[attr-defined]
    interpreter._patch_builtin = patch_builtin


def _patch_generic_reduce() -> None:
    """The interpreter's reduction with a combine function of its own, pairwise over blocks:
    log2(n) combine calls on whole arrays instead of n calls on single elements."""
    try:
        from triton.runtime import interpreter
    except ImportError:  # pragma: no cover - every supported Triton has the interpreter
        return
    ops = getattr(interpreter, "ReduceOps", None)
    original = getattr(ops, "generic_reduce", None)
    if ops is None or original is None or getattr(original, "_kernelopt_wrapped", False):
        return
    import numpy as np

    def pairwise(self: Any, input: Any) -> Any:
        original_axis = self.axis
        tensors, axis = self.unravel(input, self.axis)
        dtypes = [t.dtype for t in tensors]
        data = [t.handle.data for t in tensors]
        input_shape = data[0].shape
        while data[0].shape[axis] > 1:
            n = data[0].shape[axis]
            even = n - n % 2
            left = [
                self.to_tensor(np.take(d, range(0, even, 2), axis=axis), t)
                for d, t in zip(data, dtypes)
            ]
            right = [
                self.to_tensor(np.take(d, range(1, even, 2), axis=axis), t)
                for d, t in zip(data, dtypes)
            ]
            got = self.combine_fn.fn(*left, *right)
            got = got if isinstance(got, tuple) else (got,)
            merged = []
            for j, value in enumerate(got):
                block = _block(np, value, data[j].dtype, left[j].shape)
                if n % 2:  # the odd last element stays last
                    block = np.concatenate([block, np.take(data[j], [n - 1], axis=axis)], axis)
                merged.append(np.ascontiguousarray(block))
            data = merged
        ret = []
        for d, dtype in zip(data, dtypes):
            if self.keep_dims:
                if original_axis is None:
                    d = d.reshape((1,) * len(input_shape))
            else:
                d = np.squeeze(d, axis=axis)
                if original_axis is None:
                    d = d.item()
            ret.append(self.to_tensor(d, dtype))
        return ret

    pairwise._kernelopt_wrapped = True  # type: ignore[attr-defined]
    ops.generic_reduce = pairwise
    scans = getattr(interpreter, "ScanOps", None)
    if scans is not None and hasattr(scans, "generic_scan"):
        scans.generic_scan = _doubling_scan(np)


def _block(np: Any, value: Any, dtype: Any, shape: Any) -> Any:
    """A combine function's result as an array of ``dtype`` and ``shape`` (it may return an
    interpreter tensor, a NumPy value or a Python scalar)."""
    data = value.handle.data if hasattr(value, "handle") else value
    return np.broadcast_to(np.asarray(data, dtype=dtype), shape)


def _doubling_scan(np: Any) -> Callable[..., Any]:
    """An inclusive scan in log2(n) block-wide combine calls (strides 1, 2, 4, ...: element i
    takes combine(element i - stride, element i)), in the interpreter's own order (it flips a
    reverse scan around this)."""

    def scan(self: Any, input: Any) -> Any:
        dtypes = [t.dtype for t in input]
        data = [t.handle.data for t in input]
        axis, n, stride = self.axis, data[0].shape[self.axis], 1
        shape = [1] * data[0].ndim
        shape[axis] = n
        position = np.arange(n).reshape(shape)
        while stride < n:
            # Whole blocks (the interpreter's tensors are powers of 2 long): each element's
            # predecessor at ``stride``, the first ``stride`` ones combined but discarded.
            prev = [np.roll(d, stride, axis=axis) for d in data]
            with np.errstate(all="ignore"):  # (the discarded head may overflow)
                got = self.combine_fn.fn(
                    *[self.to_tensor(d, t) for d, t in zip(prev, dtypes)],
                    *[self.to_tensor(d, t) for d, t in zip(data, dtypes)],
                )
            got = got if isinstance(got, tuple) else (got,)
            merged = []
            for j, value in enumerate(got):
                block = _block(np, value, data[j].dtype, data[j].shape)
                merged.append(np.where(position < stride, data[j], block))
            data, stride = merged, stride * 2
        return [self.to_tensor(d, t) for d, t in zip(data, dtypes)]

    scan._kernelopt_wrapped = True  # type: ignore[attr-defined]
    return scan


def _patch_bf16_arithmetic() -> None:
    """Make the interpreter's arithmetic decode bf16 bits, compute in float32 and round back.

    The stock interpreter stores bf16 as uint16 and applies NumPy ops to the raw bits, which gives
    garbage. Only the shared ``binary_op``/``unary_op`` helpers (arithmetic, comparisons, min/max
    and the unary math ops go through them) and ``create_dot`` are wrapped; a release that renames
    them simply keeps its own behaviour. Reductions on bf16 are not fixed: Inductor upcasts first.
    """
    import numpy as np
    import torch

    try:
        from triton.runtime import interpreter as interp
    except ImportError:
        return
    tl = _tl()
    builder_cls = getattr(interp, "InterpreterBuilder", None)
    handle_cls = getattr(interp, "TensorHandle", None)
    if builder_cls is None or handle_cls is None or getattr(builder_cls, "_kernelopt_bf16", False):
        return

    def to_f32(h: Any) -> Any:
        return handle_cls((h.data.astype(np.uint32) << 16).view(np.float32), tl.float32)

    def to_bf16(data: Any) -> Any:
        t = torch.from_numpy(np.ascontiguousarray(data, dtype=np.float32)).to(torch.bfloat16)
        return handle_cls(t.view(torch.int16).numpy().view(np.uint16), tl.bfloat16)

    def is_bf16(h: Any) -> bool:
        return getattr(h, "dtype", None) is not None and h.get_element_ty() == tl.bfloat16

    original_binary = getattr(builder_cls, "binary_op", None)
    if original_binary is not None:

        def binary_op(self: Any, lhs: Any, rhs: Any, op: Any) -> Any:
            if is_bf16(lhs) and is_bf16(rhs):
                out = original_binary(self, to_f32(lhs), to_f32(rhs), op)
                if out.data.dtype == np.float32:
                    return to_bf16(out.data)
                return out
            return original_binary(self, lhs, rhs, op)

        builder_cls.binary_op = binary_op

    original_unary = getattr(builder_cls, "unary_op", None)
    if original_unary is not None:

        def unary_op(self: Any, arg: Any, op: Any) -> Any:
            if is_bf16(arg):
                out = original_unary(self, to_f32(arg), op)
                return to_bf16(out.data) if out.data.dtype == np.float32 else out
            return original_unary(self, arg, op)

        builder_cls.unary_op = unary_op

    original_dot = getattr(builder_cls, "create_dot", None)
    if original_dot is not None:

        def create_dot(self: Any, a: Any, b: Any, *rest: Any, **kw: Any) -> Any:
            a = to_f32(a) if is_bf16(a) else a
            b = to_f32(b) if is_bf16(b) else b
            return original_dot(self, a, b, *rest, **kw)

        builder_cls.create_dot = create_dot
    builder_cls._kernelopt_bf16 = True


# --------------------------------------------------------------------------- stub driver


class _CpuEvent:
    """Stands in for a CUDA event in ``triton.testing.do_bench``: host wall-clock time."""

    def __init__(self, enable_timing: bool = True) -> None:
        self.t = 0.0

    def record(self, *_args: Any) -> None:
        self.t = time.perf_counter()

    def elapsed_time(self, end: _CpuEvent) -> float:
        return (end.t - self.t) * 1e3

    def synchronize(self) -> None:
        pass


class _CpuDeviceInterface:
    """The slice of ``torch.cuda`` that Triton's benchmarking touches, answered on the host."""

    Event = _CpuEvent

    @staticmethod
    def synchronize(*_args: Any) -> None:
        pass

    @staticmethod
    def current_device() -> int:
        return 0

    @staticmethod
    def current_stream(*_args: Any) -> Any:
        return None


def _cpu_benchmark(fn: Callable[[], Any], *args: Any, quantiles: Any = None, **_kw: Any) -> Any:
    """Time ``fn`` once after one warm call; interpreter times are only for ranking configs."""
    fn()
    start = time.perf_counter()
    fn()
    ms = (time.perf_counter() - start) * 1e3
    if quantiles:
        return [ms for _ in quantiles]
    return ms


def _stub_driver_class() -> type:
    from triton.backends.driver import DriverBase

    try:
        from triton.backends.compiler import GPUTarget
    except ImportError:  # older layouts
        from triton.compiler.compiler import GPUTarget  # type: ignore[no-redef]

    class InterpreterStubDriver(DriverBase):  # type: ignore[misc, valid-type]
        """A driver that lets Triton's host-side machinery run with no GPU (sm_90 target)."""

        @classmethod
        def is_active(cls) -> bool:
            return False  # never chosen by Triton itself; installed explicitly

        def __init__(self) -> None:
            self.utils = None

        def map_python_to_cpp_type(self, ty: str) -> str:
            return ty

        def get_current_target(self) -> Any:
            return GPUTarget("cuda", 90, 32)

        def get_active_torch_device(self) -> Any:
            import torch

            return torch.device("cpu")

        def get_benchmarker(self) -> Any:
            return _cpu_benchmark

        def get_current_device(self) -> int:
            return 0

        def set_current_device(self, _device: int) -> None:
            pass

        def get_current_stream(self, _device: int | None = None) -> int:
            return 0

        def get_device_capability(self, _device: int | None = None) -> tuple[int, int]:
            return (9, 0)

        def get_device_interface(self) -> Any:
            return _CpuDeviceInterface

        def get_empty_cache_for_benchmark(self) -> Any:
            import torch

            return torch.empty(1 << 16, dtype=torch.int8)

        def clear_cache(self, cache: Any) -> None:
            cache.zero_()

    # Fill abstract methods a different Triton release may add, so instantiation never fails.
    missing: frozenset[str] = getattr(InterpreterStubDriver, "__abstractmethods__", frozenset())
    for name in missing:

        def not_here(self: Any, *_a: Any, _name: str = name, **_k: Any) -> Any:
            raise NotImplementedError(f"{_name} is not available in the interpreter stub driver")

        setattr(InterpreterStubDriver, name, not_here)
    if missing:
        InterpreterStubDriver.__abstractmethods__ = frozenset()
    return InterpreterStubDriver


def _driver_config() -> Any:
    """Triton's ``DriverConfig`` singleton (``triton.runtime.driver`` names the object itself)."""
    importlib.import_module("triton.runtime.driver")
    module = sys.modules["triton.runtime.driver"]
    return module.driver


def install_stub_driver() -> bool:
    """Make the stub driver active; refuses (returns False) where a CUDA GPU is visible."""
    global _STUB_INSTALLED
    if _cuda_present():
        return False
    if _STUB_INSTALLED:
        return True
    config = _driver_config()
    config.set_active(_stub_driver_class()())
    # Inductor warns that no triton-cpu backend exists, then uses whichever driver is active.
    warnings.filterwarnings("ignore", message="Could not find an active CPU backend")
    _STUB_INSTALLED = True
    return True
