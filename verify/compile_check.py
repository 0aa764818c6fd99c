"""Does each launched kernel compile for the GPU target (sm_90, H100/H200)? Checked with no GPU.

On the CPU the candidate's kernels run in Triton's interpreter, which accepts code the real
compiler rejects (a non-power-of-two ``tl.arange``, too much shared memory...). The worker
recorded every distinct launch's signature and constexprs (``launches.launch_spec``); here a
second worker, *without* ``TRITON_INTERPRET`` (the choice is made when ``@triton.jit``
decorates), imports the candidate again and builds each launch with
``triton.compile(ASTSource(...), target=GPUTarget("cuda", 90, 32))`` down to a cubin.

Successful builds are cached on disk by Triton version, the candidate's kernel-relevant source
and the launch signature: the same kernel text compiles the same way every time.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

#: sm_90's largest shared-memory allocation per block (227 KiB, opt-in).
SM90_MAX_SHARED = 232448


def _find_kernel(module: Any, qualname: str) -> Any:
    from triton.runtime.jit import JITFunction

    if "<locals>" in qualname:
        raise LookupError("defined inside a function, so it cannot be found to compile")
    obj: Any = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise LookupError("not found at module level")
    for _ in range(8):  # autotune/heuristics wrappers keep the kernel in .fn
        if isinstance(obj, JITFunction):
            return obj
        obj = getattr(obj, "fn", None)
        if obj is None:
            break
    raise LookupError("is not a @triton.jit function outside the interpreter")


def compile_kernels(*, candidate_source: str, specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Worker task (run without TRITON_INTERPRET): compile each launch spec for sm_90."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from kernelopt_jupyter.problem import load_source_module

    try:
        module = load_source_module(candidate_source, "candidate_compile")
    except Exception as exc:
        reason = f"the candidate cannot be imported without the interpreter ({type(exc).__name__})"
        return [{"kernel": s["qualname"], "status": "unknown", "error": reason} for s in specs]
    results = []
    generated: dict[str, Any] = {}
    for spec in specs:
        name = spec["qualname"]
        try:
            home = module
            text = spec.get("module_source")
            if text is not None:  # a kernel a kernel language (Helion) generated
                if text not in generated:
                    generated[text] = load_source_module(text, "candidate_generated")
                home = generated[text]
            kernel = _find_kernel(home, name)
        except LookupError as exc:
            results.append({"kernel": name, "status": "unknown", "error": f"{name} {exc}"})
            continue
        except Exception as exc:  # the generated module does not import without the interpreter
            reason = f"its generated module cannot be imported ({type(exc).__name__}: {exc})"
            results.append({"kernel": name, "status": "unknown", "error": reason[:300]})
            continue
        start = time.monotonic()
        try:
            source = ASTSource(kernel, spec["signature"], spec["constexprs"], spec["attrs"])
            compiled = triton.compile(
                source, target=GPUTarget("cuda", 90, 32), options=dict(spec["options"])
            )
        except Exception as exc:
            lines = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
            message = " | ".join(lines[-3:])[:500] or type(exc).__name__
            results.append({"kernel": name, "status": "fail", "error": message})
            continue
        shared = int(getattr(compiled.metadata, "shared", 0) or 0)
        entry = {
            "kernel": name,
            "status": "pass",
            "seconds": round(time.monotonic() - start, 3),
            "shared": shared,
            "num_warps": int(getattr(compiled.metadata, "num_warps", 0) or 0),
        }
        if shared > SM90_MAX_SHARED:
            entry["status"] = "fail"
            entry["error"] = (
                f"needs {shared} bytes of shared memory; sm_90 allows {SM90_MAX_SHARED} per block"
            )
        results.append(entry)
    return results


# --------------------------------------------------------------------------- caller side


def _cache_dir() -> Path:
    root = os.environ.get("KERNELOPT_CACHE_DIR") or tempfile.gettempdir()
    path = Path(root) / "kernelopt-compile-check"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _cache_key(kernel_text: str, spec: dict[str, Any]) -> str:
    import triton

    blob = repr((triton.__version__, kernel_text, sorted(spec.items(), key=lambda kv: kv[0])))
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def check_compiles(
    candidate_source: str, specs: list[dict[str, Any]], *, time_limit_s: float
) -> list[dict[str, Any]]:
    """Compile every recorded launch for sm_90 in a worker without the interpreter; cached."""
    from kernelopt_jupyter.verify.static import kernel_text_key
    from kernelopt_jupyter.worker import run_task

    text = kernel_text_key(candidate_source)
    cache = _cache_dir()
    keys = [_cache_key(text, spec) for spec in specs]
    results: list[dict[str, Any] | None] = []
    for key in keys:
        hit = cache / f"{key}.json"
        results.append(json.loads(hit.read_text()) if hit.exists() else None)
    todo = [i for i, r in enumerate(results) if r is None]
    if todo:
        outcome = run_task(
            "kernelopt_jupyter.verify.compile_check:compile_kernels",
            {"candidate_source": candidate_source, "specs": [specs[i] for i in todo]},
            device="cuda",  # the environment of a GPU run: TRITON_INTERPRET unset
            time_limit_s=time_limit_s,
            untrusted=True,  # the candidate's module-level code ran there
        )
        if not outcome.ok:
            reason = f"the compile worker failed ({outcome.describe()})"
            for i in todo:
                results[i] = {"kernel": specs[i]["qualname"], "status": "unknown", "error": reason}
        else:
            for i, entry in zip(todo, outcome.value):
                results[i] = entry
                if entry["status"] == "pass":
                    (cache / f"{keys[i]}.json").write_text(json.dumps(entry))
    return [r for r in results if r is not None]
