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

import contextlib
import hashlib
import hmac
import json
import os
import pickle
import secrets
import socket
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


def _same_kernel(kernel: Any, spec: dict[str, Any]) -> None:
    """``LookupError`` unless the kernel found under the launch's name is the function that
    was launched (its first line): a name rebound after launch would compile another body."""
    line = spec.get("firstline")
    code = getattr(getattr(kernel, "fn", None), "__code__", None)
    if line is not None and (code is None or code.co_firstlineno != line):
        found = getattr(code, "co_firstlineno", "?")
        raise LookupError(
            f"is bound at module level to another function (line {found}) than the one "
            f"launched (line {line})"
        )


def compile_kernels(*, candidate_source: str, specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Worker task (run without TRITON_INTERPRET): compile each launch spec for sm_90."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from kernelopt_jupyter.problem import load_source_module
    from kernelopt_jupyter.verify.launches import unplain

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
            _same_kernel(kernel, spec)
        except LookupError as exc:
            results.append({"kernel": name, "status": "unknown", "error": f"{name} {exc}"})
            continue
        except Exception as exc:  # the generated module does not import without the interpreter
            reason = f"its generated module cannot be imported ({type(exc).__name__}: {exc})"
            results.append({"kernel": name, "status": "unknown", "error": reason[:300]})
            continue
        start = time.monotonic()
        try:
            constexprs = {k: unplain(v) for k, v in spec["constexprs"].items()}
            source = ASTSource(kernel, spec["signature"], constexprs, spec["attrs"])
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
        elif "tt.int_to_ptr" in str((getattr(compiled, "asm", None) or {}).get("ttir", "")):
            # An address made from an integer reaches memory no tensor argument names (host
            # memory under the interpreter, pinned host memory on the GPU): the accounting
            # follows tensors, so a kernel may only address memory through its pointer args.
            entry["status"] = "fail"
            entry["error"] = (
                "builds a pointer from an integer (tt.int_to_ptr): a kernel may address memory "
                "only through its pointer arguments"
            )
        results.append(entry)
    return results


# --------------------------------------------------------------------------- caller side


def _cache_dir() -> Path:
    root = os.environ.get("KERNELOPT_CACHE_DIR") or tempfile.gettempdir()
    path = Path(root) / "kernelopt-compile-check"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _cache_key(source: str, spec: dict[str, Any]) -> str:
    """Keyed on the candidate's whole source: a kernel's body can come from anywhere in it (a
    plain ``def`` later wrapped by ``triton.jit(...)``, a class, a global computed from one), so
    no part of it may be left out (a key of the decorated functions alone let a cheat reuse an
    honest kernel's signed pass)."""
    import triton

    blob = repr((triton.__version__, source, sorted(spec.items(), key=lambda kv: kv[0])))
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


_KEY: bytes | None = None


def _cache_key_bytes() -> bytes:
    """The key that signs cache entries, kept in the cache folder with mode 0600.

    An entry a candidate wrote into the shared cache folder without the key is not taken for
    a passed check. A candidate running as the same user *can* read the key file (see
    docs/verification.md): the cache is trusted as far as that user's files are, and what a
    forged entry could win is a CPU-only "compiles for sm_90" that the GPU run re-decides.
    """
    global _KEY
    if _KEY is None:
        path = _cache_dir() / "signing.key"
        key = secrets.token_bytes(32)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process made it first (or long ago)
            key = path.read_bytes()
        else:
            with os.fdopen(fd, "wb") as fh:
                fh.write(key)
        _KEY = key
    return _KEY


def _sign(entry: dict[str, Any]) -> str:
    body = json.dumps(entry, sort_keys=True)
    return hmac.new(_cache_key_bytes(), body.encode(), hashlib.sha256).hexdigest()


def _cached(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
        entry, mac = data["entry"], data["mac"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return entry if isinstance(entry, dict) and hmac.compare_digest(mac, _sign(entry)) else None


def serve(sock: socket.socket) -> None:
    """A compile child of the fork server: one candidate's launches, then it exits."""
    from kernelopt_jupyter.verify import wire

    try:
        header, blobs = wire.recv(sock, 1 << 30)
    except wire.WireError:
        return
    specs = pickle.loads(bytes(blobs[0]))
    results = compile_kernels(candidate_source=header["source"], specs=specs)
    wire.send(sock, {"results": results})


def compile_many_task(
    *, jobs: list[dict[str, Any]], time_limit_s: float, children: list[tuple[int, Any]]
) -> list[list[dict[str, Any]]]:
    """Worker task (no interpreter): each job's launches compiled in its own forked child, so
    one candidate's module-level code never touches another's check. Replies are JSON."""
    import time as _time

    from kernelopt_jupyter.verify import wire
    from kernelopt_jupyter.worker import kill_tree

    out: list[list[dict[str, Any]]] = []
    for job, (pid, sock) in zip(jobs, children):
        names = [s["qualname"] for s in job["specs"]]
        try:
            sock.settimeout(time_limit_s)
            start = _time.monotonic()
            wire.send(sock, {"source": job["source"]}, [pickle.dumps(job["specs"])])
            header, _ = wire.recv(sock, 0)
            results = header.get("results")
            if not isinstance(results, list) or len(results) != len(names):
                raise wire.WireError("a malformed reply")
            out.append([_plain_result(r, n) for r, n in zip(results, names)])
        except (OSError, wire.WireError) as exc:
            why = "timed out" if _time.monotonic() - start >= time_limit_s else str(exc)
            reason = f"the compile process failed ({why})"
            out.append([{"kernel": n, "status": "unknown", "error": reason} for n in names])
        finally:
            sock.close()
            kill_tree(pid)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
    return out


def _plain_result(raw: Any, name: str) -> dict[str, Any]:
    if not isinstance(raw, dict) or raw.get("status") not in ("pass", "fail", "unknown"):
        return {"kernel": name, "status": "unknown", "error": "a malformed compile result"}
    keep = ("kernel", "status", "error", "seconds", "shared", "num_warps")
    return {k: raw[k] for k in keep if k in raw and isinstance(raw[k], str | int | float)}


def check_compiles(
    candidate_source: str, specs: list[dict[str, Any]], *, time_limit_s: float
) -> list[dict[str, Any]]:
    """Compile every recorded launch for sm_90 without the interpreter; cached."""
    return check_compiles_many([(candidate_source, specs)], time_limit_s=time_limit_s)[0]


def check_compiles_many(
    jobs: list[tuple[str, list[dict[str, Any]]]], *, time_limit_s: float
) -> list[list[dict[str, Any]]]:
    """``check_compiles`` for several candidates with one fork server (one child each)."""
    from kernelopt_jupyter.worker import run_task

    cache = _cache_dir()
    results: list[list[dict[str, Any] | None]] = []
    keys: list[list[str]] = []
    todo: list[tuple[int, list[int]]] = []
    for j, (source, specs) in enumerate(jobs):
        keys.append([_cache_key(source, spec) for spec in specs])
        results.append([_cached(cache / f"{key}.json") for key in keys[j]])
        missing = [i for i, r in enumerate(results[j]) if r is None]
        if missing:
            todo.append((j, missing))
    if todo:
        outcome = run_task(
            "kernelopt_jupyter.verify.compile_check:compile_many_task",
            {
                "jobs": [
                    {"source": jobs[j][0], "specs": [jobs[j][1][i] for i in missing]}
                    for j, missing in todo
                ],
                "time_limit_s": time_limit_s,
            },
            device="cuda",  # the environment of a GPU run: TRITON_INTERPRET unset
            time_limit_s=time_limit_s * len(todo) + 60,
            untrusted=True,
            preload=("torch", "triton", "kernelopt_jupyter.verify.compile_check"),
            children=("kernelopt_jupyter.verify.compile_check:serve",) * len(todo),
        )
        for n, (j, missing) in enumerate(todo):
            specs = jobs[j][1]
            if not outcome.ok:
                reason = f"the compile worker failed ({outcome.describe()})"
                got = [
                    {"kernel": specs[i]["qualname"], "status": "unknown", "error": reason}
                    for i in missing
                ]
            else:
                got = outcome.value[n]
            for i, entry in zip(missing, got):
                results[j][i] = entry
                if entry["status"] == "pass":
                    signed = {"entry": entry, "mac": _sign(entry)}
                    (cache / f"{keys[j][i]}.json").write_text(json.dumps(signed))
    return [[r for r in row if r is not None] for row in results]
