"""Triton's interpreter in a notebook kernel that imported Triton before switching it on.

Triton reads ``TRITON_INTERPRET`` when ``@triton.jit`` decorates a function. A search run from
the notebook imports Triton in the kernel first, so its standard library (``tl.sum``,
``tl.max``, ``tl.softmax``...) and any kernel the person defined earlier are compiled-mode
``JITFunction`` objects; an accepted candidate defined afterwards under the interpreter then
fails on its first reduction with "Cannot call @triton.jit'd outside of the scope of a kernel".

:func:`use_cpu_interpreter` switches the interpreter on for everything defined from now on and
routes those earlier ``JITFunction`` objects through the interpreter as well: a call from inside
an interpreted kernel (compiled mode always refuses it) and a launch (which could only fail
without a GPU) run the function's Python source in the interpreter. Nothing changes where a
CUDA GPU is visible.
"""

from __future__ import annotations

import os
from typing import Any

_PATCHED = False


def _interpreted(jit_fn: Any) -> Any:
    """The interpreter's twin of a compiled-mode ``JITFunction`` (made once, then kept)."""
    twin = jit_fn.__dict__.get("_kernelopt_interpreted")
    if twin is None:
        from triton.runtime.interpreter import InterpretedFunction

        twin = InterpretedFunction(jit_fn.fn)
        jit_fn.__dict__["_kernelopt_interpreted"] = twin
    return twin


def route_jit_functions_to_interpreter() -> bool:
    """Make compiled-mode ``JITFunction`` calls and launches use the interpreter while
    ``TRITON_INTERPRET`` is on; idempotent. Returns True once the routing is in place."""
    global _PATCHED
    if _PATCHED:
        return True
    from triton.runtime.jit import JITFunction

    from kernelopt_jupyter.cpu_triton import interpreter_requested

    compiled_call = JITFunction.__call__
    compiled_run = JITFunction.run

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if interpreter_requested():
            return _interpreted(self)(*args, **kwargs)
        return compiled_call(self, *args, **kwargs)

    def run(self: Any, *args: Any, grid: Any, warmup: Any, **kwargs: Any) -> Any:
        if interpreter_requested():
            return _interpreted(self).run(*args, grid=grid, warmup=warmup, **kwargs)
        return compiled_run(self, *args, grid=grid, warmup=warmup, **kwargs)

    JITFunction.__call__ = call  # type: ignore[method-assign]
    JITFunction.run = run  # type: ignore[method-assign]
    _PATCHED = True
    return True


def use_cpu_interpreter() -> bool:
    """Without a CUDA GPU: Triton's interpreter and the CPU shims for this process, including
    Triton functions defined before this call. Returns False (and changes nothing) on a GPU."""
    import torch

    if torch.cuda.is_available():
        return False
    os.environ["TRITON_INTERPRET"] = "1"
    from kernelopt_jupyter.cpu_triton import install_interpreter_shims

    install_interpreter_shims()
    route_jit_functions_to_interpreter()
    return True
