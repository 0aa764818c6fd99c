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
