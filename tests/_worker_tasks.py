"""Tasks the worker tests run in a child process."""

from __future__ import annotations

import os
import threading
import time
from typing import Any


def echo(value: Any) -> dict[str, Any]:
    """Return the value and whether the Triton interpreter was switched on."""
    return {"value": value, "interpret": os.environ.get("TRITON_INTERPRET")}


def hang() -> None:
    """Never return, with a non-daemon thread that would also block a normal exit."""
    threading.Thread(target=time.sleep, args=(3600,)).start()
    time.sleep(3600)


def fail() -> None:
    """Raise like a broken candidate."""
    raise RuntimeError("candidate exploded")


def run_kernel_problem(path: str) -> dict[str, Any]:
    """Run a Triton/Helion problem's entry under the interpreter against its torch reference.

    In a fresh process, so the interpreter is on before Triton is first imported (a Triton
    imported without it keeps real JIT functions, which the interpreter cannot call).
    """
    import torch

    from kernelopt_jupyter.cpu_triton import install_interpreter_shims
    from kernelopt_jupyter.problem import load_problem, materialize

    install_interpreter_shims()
    loaded = materialize(load_problem(path))
    inputs = loaded.make_inputs(seed=0)
    out = loaded.make_model(seed=0)(*inputs)
    reference = loaded.reference_fn()
    assert reference is not None, "a kernel problem in the catalogue must define reference()"
    want = reference(*[t.double() for t in inputs])
    return {
        "finite": bool(torch.isfinite(out).all()),
        "max_abs_err": float((out.double() - want).abs().max()),
    }
