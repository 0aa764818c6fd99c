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


def _write_pid(folder: str, name: str) -> None:
    from pathlib import Path

    (Path(folder) / f"{name}.pid").write_text(str(os.getpid()))


def fork_tree(folder: str, hang: bool) -> str:
    """Fork a child that sleeps and a grandchild that leaves the process group (setsid) and
    sleeps: what a candidate's stray processes look like. Hang afterwards when asked."""
    if os.fork() == 0:  # the child
        _write_pid(folder, "child")
        if os.fork() == 0:  # the grandchild escapes the group
            os.setsid()
            _write_pid(folder, "grandchild")
            time.sleep(3600)
            os._exit(0)
        time.sleep(3600)
        os._exit(0)
    _write_pid(folder, "worker")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(os.listdir(folder)) < 3:
        time.sleep(0.05)
    if hang:
        time.sleep(3600)
    return "returned"


def secrets_seen(names: list[str]) -> dict[str, Any]:
    """What of the caller's secrets a worker can see in its own environment."""
    from pathlib import Path

    raw = Path("/proc/self/environ").read_bytes().decode(errors="replace")
    return {
        "environ": sorted(n for n in names if n in os.environ),
        "proc": sorted(n for n in names if n + "=" in raw),
        "values": sorted(v for v in os.environ.values() if v.startswith("sk-")),
    }


_LAST_PROGRAM = """
import triton
import triton.language as tl


@triton.jit
def last_writer(out_ptr):
    tl.store(out_ptr + tl.arange(0, 1), tl.zeros((1,), dtype=tl.int32) + tl.program_id(0))
"""


def launch_recording() -> dict[str, Any]:
    """Under the interpreter: a launch that raised is not counted; program order remaps."""
    import torch

    from kernelopt_jupyter.cpu_triton import install_interpreter_shims
    from kernelopt_jupyter.problem import load_source_module
    from kernelopt_jupyter.verify.launches import LaunchRecorder, program_order

    install_interpreter_shims()
    kernel = load_source_module(_LAST_PROGRAM, "last_program").last_writer
    recorder = LaunchRecorder("cpu")
    recorder.install()
    out = torch.zeros(1, dtype=torch.int32)
    orders = {}
    with recorder.recording():
        for mode in ("grid", "reverse", "shuffle"):
            with program_order(mode, seed=3):
                kernel[(16,)](out)
            orders[mode] = int(out[0])
        raised = ""
        try:
            kernel[(4,)](out, out)  # one argument too many: the launch raises
        except Exception as exc:
            raised = type(exc).__name__
    return {"total": recorder.total, "orders": orders, "raised": raised}


_BOUNDS = """
import triton
import triton.language as tl


@triton.jit
def copy_tile(x_ptr, out_ptr, n, BLOCK: tl.constexpr, MASKED: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if MASKED:
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    else:
        x = tl.load(x_ptr + offs)  # lanes past n read past the input
    tl.store(out_ptr + offs, x, mask=offs < n)


@triton.jit
def store_tile(out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32))


@triton.jit
def swap_at(flags_ptr, at):
    tl.atomic_cas(flags_ptr + at, 0, 1)
"""


def launch_memory_bounds() -> dict[str, Any]:
    """Under the interpreter: loads and stores outside every storage a launch was given are
    recorded (and not made); masked-off lanes and views into a larger storage are not."""
    import torch

    from kernelopt_jupyter.cpu_triton import install_interpreter_shims
    from kernelopt_jupyter.problem import load_source_module
    from kernelopt_jupyter.verify.launches import LaunchRecorder

    install_interpreter_shims()
    module = load_source_module(_BOUNDS, "bounds")
    recorder = LaunchRecorder("cpu")
    recorder.install()
    base = torch.arange(1100, dtype=torch.float32)
    x, out = base[:1000], torch.zeros(1000)
    found: dict[str, Any] = {}
    with recorder.recording():
        module.copy_tile[(4,)](x, out, 1000, BLOCK=256, MASKED=True)
        found["masked"] = list(recorder.memory_violations)
        # A view: the lanes past its 1000 elements are still inside its storage.
        module.copy_tile[(4,)](x, out, 1000, BLOCK=256, MASKED=False)
        found["inside_storage"] = list(recorder.memory_violations)
        tight = torch.arange(1000, dtype=torch.float32)
        module.copy_tile[(4,)](tight, out, 1000, BLOCK=256, MASKED=False)
        found["past_input"] = list(recorder.memory_violations)
        found["copied"] = bool(torch.equal(out, tight))
        guard = torch.ones(64)  # whatever sits after the small output must stay as it was
        small = torch.zeros(100)
        module.store_tile[(1,)](small, BLOCK=128)
        found["past_output"] = list(recorder.memory_violations)
        found["guard_intact"] = bool(torch.equal(guard, torch.ones(64)))
        flags = torch.zeros(4, dtype=torch.int32)
        module.swap_at[(1,)](flags, 3)
        found["swapped"] = flags.tolist()
        try:
            module.swap_at[(1,)](flags, 4)
            found["swap_past"] = ""
        except Exception as exc:
            found["swap_past"] = str(exc)
    module.store_tile[(1,)](torch.zeros(128), BLOCK=128)  # not recording: not checked
    found["total"] = len(recorder.memory_violations)
    return found


def echo_service(control: Any, prefix: str = "") -> None:
    """A service task: answers each request with ``prefix`` and the request, until None."""
    import pickle

    from kernelopt_jupyter.worker import recv_frame, send_frame

    while True:
        message = pickle.loads(recv_frame(control))
        if message is None:
            return
        send_frame(control, pickle.dumps(f"{prefix}{message}"))
