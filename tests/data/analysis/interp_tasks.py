"""Worker tasks for tests/test_cpu_triton.py: they run under TRITON_INTERPRET=1 in a child."""

from __future__ import annotations

from typing import Any

# Kernels look names up in module globals, so the imports live here (the child process already
# has TRITON_INTERPRET=1 when it imports this module).
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton.language.extra.cuda import libdevice as cuda_libdevice


def libdevice_and_bf16() -> dict[str, Any]:
    """Kernels calling libdevice (both modules) and doing bf16 arithmetic; errors vs torch."""
    from kernelopt_jupyter.cpu_triton import install_interpreter_shims

    first = install_interpreter_shims()
    second = install_interpreter_shims()

    @triton.jit
    def math_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = (
            libdevice.erf(x)
            + cuda_libdevice.tanh(x)
            + libdevice.pow(x, 2.0)
            + libdevice.isnan(x).to(tl.float32)
            + libdevice.atan2(x, 1.5)
        )
        tl.store(y_ptr + offs, y, mask=mask)

    @triton.jit
    def bf16_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        a = tl.load(a_ptr + offs, mask=mask)
        b = tl.load(b_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, tl.maximum(a * b + a, b - a), mask=mask)

    x = torch.randn(1000)
    y = torch.empty(1000)
    math_kernel[(triton.cdiv(1000, 256),)](x, y, 1000, BLOCK=256)
    want = torch.erf(x) + torch.tanh(x) + x * x + torch.atan2(x, torch.tensor(1.5))
    a = torch.randn(777).bfloat16()
    b = torch.randn(777).bfloat16()
    out = torch.empty_like(a)
    bf16_kernel[(4,)](a, b, out, 777, BLOCK=256)
    bf_want = torch.maximum(a * b + a, b - a)
    return {
        "first": first,
        "second": second,
        "math_err": float((y - want).abs().max()),
        "bf16_err": float((out.float() - bf_want.float()).abs().max()),
    }


def autotune_and_bench() -> dict[str, Any]:
    """triton.autotune with two configs and triton.testing.do_bench, which need a driver."""
    from kernelopt_jupyter.cpu_triton import install_interpreter_shims

    install_interpreter_shims()

    @triton.autotune(
        configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})], key=["n"]
    )
    @triton.jit
    def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3.0, mask=mask)

    x = torch.randn(1000)
    y = torch.empty(1000)

    def launch() -> None:
        scale[lambda meta: (triton.cdiv(1000, meta["BLOCK"]),)](x, y, 1000)

    launch()
    ms = triton.testing.do_bench(launch, warmup=1, rep=1)
    target = triton.runtime.driver.active.get_current_target()
    return {
        "err": float((y - 3 * x).abs().max()),
        "ms": float(ms),
        "target": [target.backend, target.arch, target.warp_size],
        "chosen": sorted(scale.best_config.kwargs.items()) if scale.best_config else None,
    }


def unmapped_libdevice() -> str:
    """A libdevice function with no interpreter implementation names itself when called."""
    from kernelopt_jupyter.cpu_triton import install_interpreter_shims

    install_interpreter_shims()

    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(x_ptr + offs, libdevice.byte_perm(x, x, x), mask=offs < n)

    x = torch.zeros(8, dtype=torch.int32)
    try:
        k[(1,)](x, 8, BLOCK=8)
    except Exception as exc:
        return str(exc)
    return "no error"


@triton.jit
def _first_nonzero(a, b):
    return tl.where(a != 0, a, b)  # associative, not commutative: order must be kept


@triton.jit
def _sum_and_count(s1, c1, s2, c2):
    return s1 + s2, c1 + c2


def custom_combine_reduce() -> dict[str, Any]:
    """``tl.reduce`` with combine functions of its own (the interpreter's slow path, which the
    shims make pairwise): an order-sensitive one, a tuple one over a ragged row, axis=None."""
    from kernelopt_jupyter.cpu_triton import install_interpreter_shims

    install_interpreter_shims()

    @triton.jit
    def rows(x_ptr, first_ptr, mean_ptr, total_ptr, n, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + row * n + offs, mask=mask, other=0.0)
        tl.store(first_ptr + row, tl.reduce(x, 0, _first_nonzero))
        s, c = tl.reduce((x, mask.to(tl.float32)), 0, _sum_and_count)
        tl.store(mean_ptr + row, s / c)
        both = tl.reshape(x, (BLOCK // 8, 8))
        tl.store(total_ptr + row, tl.reduce(both, None, _sum_and_count_one))

    torch.manual_seed(0)
    n, nrows = 4097, 3
    x = torch.randn(nrows, n)
    x[:, :1000] = 0.0  # the first non-zero is element 1000, the last non-zero far after it
    x[1, :2500] = 0.0
    first, mean, total = torch.empty(nrows), torch.empty(nrows), torch.empty(nrows)
    ops = triton.runtime.interpreter.ReduceOps
    made = [0]
    to_tensor = ops.to_tensor

    def counted(self: Any, *args: Any) -> Any:
        made[0] += 1
        return to_tensor(self, *args)

    ops.to_tensor = counted  # interpreter tensors the reductions build (per element or block)
    try:
        rows[(nrows,)](x, first, mean, total, n, BLOCK=8192)
    finally:
        ops.to_tensor = to_tensor
    want_first = torch.stack([r[r != 0][0] for r in x])
    return {
        "first_err": float((first - want_first).abs().max()),
        "mean_err": float((mean - x.mean(dim=1)).abs().max()),
        "total_err": float((total - x.sum(dim=1)).abs().max()),
        "tensors_made": made[0],
        "wrapped": bool(
            getattr(triton.runtime.interpreter.ReduceOps.generic_reduce, "_kernelopt_wrapped", 0)
        ),
    }


@triton.jit
def _sum_and_count_one(a, b):
    return a + b


@triton.jit
def _last_nonzero(a, b):
    return tl.where(b != 0, b, a)  # associative, not commutative


def custom_combine_scan() -> dict[str, Any]:
    """``tl.associative_scan`` with combine functions of its own, forward and reverse, one of
    them on a tuple; compared with the same scans done sequentially in torch."""
    from kernelopt_jupyter.cpu_triton import install_interpreter_shims

    install_interpreter_shims()

    @triton.jit
    def scans(x_ptr, last_ptr, back_ptr, sum_ptr, cnt_ptr, n, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + row * n + offs, mask=mask, other=0.0)
        tl.store(last_ptr + row * n + offs, tl.associative_scan(x, 0, _last_nonzero), mask=mask)
        back = tl.associative_scan(x, 0, _last_nonzero, reverse=True)
        tl.store(back_ptr + row * n + offs, back, mask=mask)
        s, c = tl.associative_scan((x, mask.to(tl.float32)), 0, _sum_and_count)
        tl.store(sum_ptr + row * n + offs, s, mask=mask)
        tl.store(cnt_ptr + row * n + offs, c, mask=mask)

    torch.manual_seed(1)
    nrows, n = 2, 1000
    x = torch.randn(nrows, n)
    x[torch.rand(nrows, n) < 0.7] = 0.0
    last, back, total, count = (torch.empty(nrows, n) for _ in range(4))
    scans[(nrows,)](x, last, back, total, count, n, BLOCK=1024)

    def sequential(row: torch.Tensor, pick: Any) -> torch.Tensor:
        out, acc = torch.empty_like(row), row[0]
        for i, v in enumerate(row):
            acc = v if i == 0 else pick(acc, v)
            out[i] = acc
        return out

    def later_first(a: Any, b: Any) -> Any:
        return b if b != 0 else a

    want_last = torch.stack([sequential(r, later_first) for r in x])
    # The interpreter scans a reversed row forward with combine(acc, element).
    want_back = torch.stack([sequential(r.flip(0), later_first).flip(0) for r in x])
    return {
        "last_err": float((last - want_last).abs().max()),
        "back_err": float((back - want_back).abs().max()),
        "sum_err": float((total - x.cumsum(dim=1)).abs().max()),
        "count_err": float((count - torch.arange(1, n + 1).float()).abs().max()),
        "wrapped": bool(
            getattr(triton.runtime.interpreter.ScanOps.generic_scan, "_kernelopt_wrapped", 0)
        ),
    }


@triton.jit
def _halve(v):
    return v * 0.5


@triton.jit
def _row_stats(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * cols + offs, mask=offs < cols, other=0.0)
    total = tl.sum(v, axis=0) + tl.max(tl.abs(v), axis=0) + tl.cdiv(cols, 7)
    tl.store(out_ptr + row, _halve(total))


def builtin_lookup() -> dict[str, Any]:
    """The cached builtin lookup patches, per namespace, what the interpreter's walk patches
    (from the unpatched state, and again after a scope restored it); kernels with device
    functions (tl.sum, tl.max, tl.cdiv, a @jit helper) give torch's answer."""
    from triton.runtime import interpreter

    from kernelopt_jupyter.cpu_triton import install_interpreter_shims

    install_interpreter_shims()
    ours = interpreter._patch_builtin
    original = ours._kernelopt_original
    builder = interpreter.interpreter_builder

    def patched(patch: Any, pkg: Any) -> list[str]:
        scope = interpreter._LangPatchScope()
        patch(pkg, builder, scope)
        names = [name for _, name, _ in scope._changes]
        scope.restore()
        return names

    same, counts = [], []
    for pkg in (tl, tl.math, tl.tensor, tl.core.tensor_descriptor_base):
        walk = patched(original, pkg)
        same.append(walk == patched(ours, pkg) == patched(ours, pkg))
        counts.append(len(walk))
    x = torch.randn(37, 100)
    out = torch.empty(37)
    _row_stats[(37,)](x, out, 100, BLOCK=128)
    want = 0.5 * (x.sum(1) + x.abs().amax(1) + 15)
    return {
        "same": same,
        "counts": counts,
        "err": float((out - want).abs().max()),
        "wrapped": bool(getattr(ours, "_kernelopt_wrapped", False)),
    }


@triton.jit
def _wrapping_index(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    big = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, big * 3 + 2147483000, mask=mask)


def overflow_checks() -> dict[str, Any]:
    """After the shims the interpreter builds no integer-overflow check (its assert would be
    dropped anyway: ``debug`` is off), and int32 arithmetic that wraps still wraps as on a GPU."""
    from triton.runtime import interpreter

    from kernelopt_jupyter.cpu_triton import install_interpreter_shims

    install_interpreter_shims()
    options = interpreter.interpreter_builder.options
    x = torch.arange(0, 1000, dtype=torch.int32) * 1000
    out = torch.empty_like(x)
    _wrapping_index[(triton.cdiv(1000, 128),)](x, out, 1000, BLOCK=128)
    want = ((x.long() * 3 + 2147483000 + 2**31) % 2**32 - 2**31).int()
    return {
        "sanitize": bool(options.sanitize_overflow),
        "debug": bool(options.debug),
        "wrapped": int((out != want).sum()),
        "overflowed": int((x.long() * 3 + 2147483000 > 2**31 - 1).sum()),
    }


@triton.jit
def _scale_by_float(x_ptr, out_ptr, n, eps, scale, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    # Compiled, ``eps`` and ``scale`` are float32 scalars with tensor methods (Liger calls them).
    tl.store(out_ptr + offs, x * scale.to(tl.float32) + eps.to(x.dtype), mask=mask)


def float_arguments() -> dict[str, Any]:
    """A kernel's float arguments are float32 scalar tensors under the interpreter, as they are
    compiled: ``.to()`` works on them and the arithmetic is float32's."""
    from kernelopt_jupyter.cpu_triton import install_interpreter_shims

    install_interpreter_shims()
    x = torch.randn(100)
    out = torch.empty_like(x)
    _scale_by_float[(1,)](x, out, 100, 1e-3, 0.1, BLOCK=128)
    want = x * torch.tensor(0.1, dtype=torch.float32) + torch.tensor(1e-3, dtype=torch.float32)
    return {"err": float((out - want).abs().max())}


@triton.jit
def _erf_block(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, tl.math.erf(x), mask=mask)


def erf_blocks() -> dict[str, Any]:
    """``tl.math.erf`` on float32 and float64 blocks after the shims, against ``math.erf``
    rounded to each type (what the interpreter's own element-by-element erf gives)."""
    import math

    from kernelopt_jupyter.cpu_triton import install_interpreter_shims

    install_interpreter_shims()
    values = [0.0, -0.0, 1e-30, -1e-30, 1e-8, 0.5, -0.5, 3.9, -3.9, 6.0, -6.0, 40.0]
    values += [float("inf"), float("-inf"), float("nan")]
    out: dict[str, Any] = {}
    for dtype in (torch.float32, torch.float64):
        x = torch.cat([torch.tensor(values, dtype=dtype), torch.randn(3001, dtype=dtype) * 3])
        y = torch.empty_like(x)
        _erf_block[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        want = torch.tensor([math.erf(v) for v in x.tolist()], dtype=torch.float64).to(dtype)
        same = (y == want) | (y.isnan() & want.isnan())
        out[str(dtype)] = int((~same).sum())
    from triton.runtime.interpreter import InterpreterBuilder

    out["whole_block"] = "_vectorized_erf" in InterpreterBuilder.create_erf.__qualname__
    return out
