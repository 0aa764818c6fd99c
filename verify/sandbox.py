"""The candidate's process: loads the candidate, runs the calls the checker asks for, answers
with data. It holds no reference model, no reference outputs and no tolerances: the checker
sends inputs and weights, and takes outputs back as bytes (``wire``).

Forked by the verification worker before that worker read its task (so nothing of the problem
or the harness's state is in this process's memory), with every inherited file descriptor but
its socket closed, in its own process group, dying with its parent. Harness markers are
removed from ``os.environ``; the worker's environment was already scrubbed of secrets.

The process structure is watched too, from before the candidate is imported: a process it
forks dies in the fork (an ``os.register_at_fork`` hook, which nothing in Python can remove,
exits the child before any of the candidate's code runs there) and the call that forked fails;
a child process left running, or (on the CPU, where the harness itself starts none) any child
that ran during a call, fails it; every Python thread started during a call runs under the
call's dispatch accounting; tensors handed to the host (numpy, DLPack) are foreign data.

What runs here is checked here *and* re-checked by the checker: the candidate's process could
in principle tamper with its own accounting (it is its own process), so everything the checker
can decide from data (values, structure, digests of inputs and weights) it decides itself.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import re
import socket
import sys
import tempfile
import threading
import time
import types
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import torch

from kernelopt_jupyter.verify import contract, perf, wire
from kernelopt_jupyter.verify.accounting import (
    Accounting,
    called_by_candidate,
    candidate_code,
    storage_key,
)
from kernelopt_jupyter.verify.launches import GlobalGuard, LaunchRecorder, program_order
from kernelopt_jupyter.verify.timing import Laps

#: Seconds after which a run of back-to-back calls (the schedule's ``late`` call) stops.
BURST_BUDGET_S = 10.0
#: Recent outputs kept alive and checked unchanged (one only when they would exceed the bytes).
KEEP_OUTPUTS, KEEP_BYTES = 4, 256 << 20
#: The largest message the checker sends (inputs and weights of one call).
MAX_IN = 1 << 40
DIGEST_CHUNK = 1 << 26


def digest(value: Any) -> str:
    """A fingerprint of a value's tensors' bytes, in chunks.

    SHA-256 on the host. A device tensor gets a position-weighted checksum computed on the
    device (copying gigabytes to the host to hash them would dominate a verification): exact
    integer arithmetic, the same on every process of one device type, and it changes with any
    single byte. It detects honest mutation; the candidate's process could fake either kind,
    so the checker never relies on it for values (those it compares itself).
    """
    h = hashlib.sha256()
    for t in _tensor_leaves(value):
        h.update(f"{t.dtype}{tuple(t.shape)}".encode())
        flat = t.detach().reshape(-1)
        if flat.numel() == 0:
            continue
        raw = (
            flat.view(torch.uint8) if flat.is_contiguous() else flat.contiguous().view(torch.uint8)
        )
        if raw.device.type != "cpu":
            h.update(_device_checksum(raw).encode())
            continue
        for start in range(0, raw.numel(), DIGEST_CHUNK):
            h.update(raw[start : start + DIGEST_CHUNK].numpy().tobytes())
    return h.hexdigest()


#: 32-bit words of a device tensor checksummed per step (8 MB of its bytes): the step's int64
#: copy and the weights are 16 MB each. Byte by byte the sum would take 2 MB a step (the same
#: temporaries: a byte widened to int64 is 8 of them): four times the steps and kernel
#: launches for the same bytes, in every fingerprint of every call. (At 16 MiB of bytes a
#: step the temporaries are 384 MiB, more than the whole footprint of a small problem:
#: measured on the H200, the candidate's peak was 4.3-5.3x a 0.3 GB footprint.)
CHECKSUM_STEP = 1 << 21
_CHECKSUM_K = 2654435761


def _int64(value: int) -> int:
    """``value`` modulo 2**64 as a signed 64-bit integer (a scalar torch multiplies by)."""
    value %= 1 << 64
    return value - (1 << 64) if value >= 1 << 63 else value


def _device_checksum(raw: torch.Tensor) -> str:
    """A position-weighted sum of ``raw``'s bytes, read as little-endian signed 32-bit words
    (the last ``numel % 4`` bytes one by one), modulo 2**61: word ``i`` is weighted by
    ``(2 i + 1) K``, an odd number, so any change of one word changes the sum. Every step's
    products wrap in int64 (deterministically), the total is taken on the host once; the
    figure does not depend on the step or on where ``raw`` starts in its allocation."""
    n = raw.numel()
    words = n // 4
    total = torch.zeros((), dtype=torch.int64, device=raw.device)
    base: torch.Tensor | None = None
    for start in range(0, words, CHECKSUM_STEP):
        count = min(CHECKSUM_STEP, words - start)
        data = raw[4 * start : 4 * (start + count)]
        if data.storage_offset() % 4:
            data = data.clone()  # a word view needs an aligned start: this step copied
        part = data.view(torch.int32).to(torch.int64)
        if base is None:  # (2 j + 1) K for j < count: the first step is the longest
            base = torch.arange(1, 2 * count, 2, dtype=torch.int64, device=raw.device)
            base.mul_(_CHECKSUM_K)
        # sum part_j (2 (start + j) + 1) K = sum part_j (2 j + 1) K + 2 start K sum part_j
        total += part.sum() * _int64(2 * start * _CHECKSUM_K)
        total += part.mul_(base[:count]).sum()
    for j in range(4 * words, n):  # at most three bytes
        total += raw[j].to(torch.int64) * _int64((2 * (j - 3 * words) + 1) * _CHECKSUM_K)
    return f"{n}:{int(total) % (1 << 61)}"


def _tensor_leaves(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, list | tuple):
        return [t for v in value for t in _tensor_leaves(v)]
    if isinstance(value, dict):
        return [t for k in sorted(value, key=str) for t in _tensor_leaves(value[k])]
    return []


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300] if text else ''}".rstrip(": ")


def oom_request(exc: BaseException) -> str:
    """What an out-of-memory asked for, as torch says it ("16.00 GiB"), or ""."""
    import re

    found = re.search(r"Tried to allocate ([0-9.]+ [KMGT]?i?B)", str(exc))
    return found.group(1) if found else ""


def _oom_detail(exc: BaseException) -> str:
    """A clean verdict for a candidate that ran out of device memory, with what it asked."""
    need = oom_request(exc)
    peak = torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else 0.0
    asked = f"needs {need} more" if need else "needs more device memory than was free"
    return (
        f"ran out of device memory: it {asked} after holding {peak:.1f} GiB (the reference's "
        "footprint, inputs refilled in place, is what the harness gives it)"
    )


class ProcessWatch:
    """What the candidate's code may not do to this process while it runs (``watching``):
    add an audit hook, fork or start a process, signal another one, call native code through
    ctypes on the CPU, write where it has no business, start threads outside its call's
    accounting or hand tensors to the host unseen. Refusals are kept until ``changes``."""

    def __init__(self, accounting: Accounting) -> None:
        self.accounting = accounting
        self.device = "cpu"  # the candidate's device, once loaded (``Sandbox.load``)
        self.watching = False  # the candidate's code may be running (import, build, forward)
        self.forks = 0
        self.refusals: list[str] = []  # what the audit hook refused since the last report
        self.hooks_at_start: dict[str, Any] = {}
        # one (Event, description) per thread a call started: the Event is set at its end
        self.call_threads: list[tuple[Any, str]] = []
        self.write_denied: tuple[str, ...] = ()  # where the candidate may not write (below)

    def install(self) -> None:
        """Before the candidate is imported: forks, threads and host exports, watched."""
        box = self

        def in_child() -> None:
            if box.watching:
                os._exit(70)  # before any of the candidate's code runs in the child

        def in_parent() -> None:
            if box.watching:
                box.forks += 1

        os.register_at_fork(after_in_child=in_child, after_in_parent=in_parent)
        self.write_denied = _write_denied_roots()
        sys.addaudithook(self._audit)  # cannot be removed; it refuses any later audit hook
        with suppress(ImportError):
            from kernelopt_jupyter.worker import become_subreaper

            become_subreaper()  # orphans of anything it starts come here, to be seen
        _watch_threads(self)
        _watch_host_exports(self)
        self.hooks_at_start = _hooks()

    @contextmanager
    def candidate_runs(self) -> Iterator[None]:
        """The candidate's code may run inside this block (import, build, forward)."""
        self.watching = True
        try:
            yield
        finally:
            self.watching = False

    def _audit(self, event: str, args: tuple[Any, ...]) -> None:
        """CPython's audit events while the candidate runs (outside Triton's own launch
        machinery, which compiles with a toolchain on the GPU): a new audit hook is refused,
        and so is any new process, and on the CPU any native call through ctypes."""
        if self.watching and event in _WRITE_EVENTS:
            target = _written_path(event, args)
            if target is not None:
                self._check_write(event, target)
            elif event == "open" and len(args) > 2 and args[1] is None:
                self._check_folder_open(args[0])
        interesting = (
            event == "sys.addaudithook"
            or event in _PROCESS_EVENTS
            or event in _SIGNAL_EVENTS
            or (event.startswith("ctypes.") and self.device == "cpu")
        )
        if not interesting or not self.watching:
            return  # (nothing here may raise an audited event itself: sys._getframe does)
        if self.accounting.suspended and not candidate_code():
            return
        refused = None
        if event == "sys.addaudithook":
            refused = "added an audit hook"
        elif event in ("os.fork", "os.forkpty"):
            refused = "forked a process"
        elif event in _PROCESS_EVENTS:
            program = _program(event, args)
            shell = event in ("os.system", "os.exec")  # a shell line or a new process image
            if self.device == "cpu" or shell or not _toolchain(program):
                refused = f"started a process ({event} {program[:80]!r})"
        elif event in _SIGNAL_EVENTS and args and args[0] not in (0, os.getpid()):
            refused = f"sent a signal to another process ({event} {args[0]})"
        elif event.startswith("ctypes.") and self.device == "cpu":
            refused = f"called native code through ctypes ({event})"
        if refused is not None:
            self.refusals.append(refused)
            raise RuntimeError(f"the verifier's sandbox refuses this: {refused}")

    def _check_write(self, event: str, target: str) -> None:
        """A write where the candidate has no business: the Python installation (a ``.pth``
        file or a module there runs in every later Python process of that environment: the
        next verification's harness included), this project's source, a startup file. It is
        refused (``PermissionError``: the import system's bytecode cache takes that quietly)
        and, unless it is a ``.pyc`` the import system would write, it fails the candidate."""
        try:
            path = os.path.realpath(target)
        except (OSError, ValueError):
            return
        name = os.path.basename(path)
        startup = name.endswith(".pth") or name in _STARTUP_FILES
        if not startup and not self._protected(path):
            return
        if not path.endswith(".pyc"):
            self.refusals.append(f"wrote to {path[-120:]} ({event}: outside its own folders)")
        raise PermissionError(f"the verifier's sandbox refuses writing to {path}")

    def _protected(self, path: str) -> bool:
        """``path`` (resolved) is one of the protected folders or below one."""
        return any(path + os.sep == root or path.startswith(root) for root in self.write_denied)

    def _check_folder_open(self, target: Any) -> None:
        """``os.open`` of a protected folder (a read: its mode is None). The descriptor it gives
        would let ``os.open(name, flags, dir_fd=fd)`` write there unseen: that event names the
        file, not the folder. Refused like a write."""
        if isinstance(target, bytes):
            target = os.fsdecode(target)
        if not isinstance(target, str):
            return
        try:
            path = os.path.realpath(target)
            if not os.path.isdir(path):
                return
        except (OSError, ValueError):
            return
        if self._protected(path):
            self.refusals.append(
                f"wrote to {path[-120:]} (os.open of a protected folder: writes relative to "
                "its descriptor could not be checked)"
            )
            raise PermissionError(f"the verifier's sandbox refuses opening {path}")

    def changes(self, forks_before: int, children_before: float | None) -> list[str]:
        """What the candidate did to the process structure since the marks were taken."""
        found = [
            r if r.startswith("wrote to") else f"{r} (work outside the accounting)"
            for r in self.refusals
        ]
        self.refusals = []
        if self.forks > forks_before:
            found.append(
                f"forked {self.forks - forks_before} process(es) (work in another process "
                "escapes the accounting; the child was stopped in the fork)"
            )
        live = _live_children()
        if live:
            found.append(f"left {len(live)} child process(es) running (pids {live[:4]})")
        if children_before is not None and self.device == "cpu":
            spent = _children_cpu() - children_before
            if spent > 0:
                found.append(
                    f"ran a child process during forward ({spent:.2f} s of its CPU time; work "
                    "in another process escapes the accounting)"
                )
        return found


class Sandbox:
    """The candidate under the harness's instruments, one command at a time."""

    def __init__(self, src_dir: str | None = None) -> None:
        self.src_dir = src_dir
        self.device = "cpu"
        self.model: Any = None
        #: How the candidate was built (shape, module, constructor arguments, as
        #: constructed), for a second instance (``_twin``); instances set aside meanwhile.
        self.build: tuple[Any, Any, Any, bool] | None = None
        self.others: list[Any] = []
        self.recorder: LaunchRecorder | None = None
        self.accounting = Accounting()
        self.guard: GlobalGuard | None = None
        self.buffers: dict[int, torch.Tensor] = {}
        self.kept: list[tuple[Any, str, set[int]]] = []  # recent outputs, digests, storages
        self.weight_storages: set[int] = set()
        self.graph_replays = 0
        self.watch = ProcessWatch(self.accounting)
        self.last_inputs: list[Any] | None = None
        self.last_host: list[Any] = []

    # ------------------------------------------------------------------ commands

    def load(self, header: dict[str, Any], blobs: list[Any]) -> dict[str, Any]:
        """Import the candidate, build it, load the reference's weights (sent as data)."""
        self.device = self.watch.device = header["device"]
        if self.device == "cpu":
            torch.set_num_threads(1)  # small checks on shared CPUs: threads only spin
            from kernelopt_jupyter.cpu_triton import install_interpreter_shims

            install_interpreter_shims()
        import kernelopt_jupyter.problem as problem_module
        from kernelopt_jupyter.problem import candidate_model, load_source_module

        # Inside the worker's own temporary folder, removed when the worker ends.
        problem_module._MODULE_DIR = Path(tempfile.mkdtemp(prefix="candidate-", dir=self.src_dir))
        init = wire.unwrap(wire.decode(header["init"], blobs, trusted=True))
        state = wire.unwrap(wire.decode(header["state"], blobs, trusted=True))
        if self.device == "cuda":
            _warm_triton_platform()
        self.recorder = LaunchRecorder(self.device)
        self.recorder.install()
        self._watch_graph_replays()
        _import_kernel_languages(header["source"])
        self.guard = GlobalGuard()
        self.accounting.registry = self.guard.registry
        shape = types.SimpleNamespace(kind=header["kind"], entry=header["entry"])
        forks_before = self.watch.forks
        self.watch.call_threads = []
        with self.recorder.recording(), self.watch.candidate_runs(), self.accounting.observing():
            try:
                module = load_source_module(header["source"], "candidate")
            except BaseException as exc:  # SystemExit from a candidate is its failure too
                return {"ok": False, "detail": f"importing the candidate raised {_one_line(exc)}"}
            try:
                model = candidate_model(shape, module, init)  # type: ignore[arg-type]
            except BaseException as exc:  # SystemExit from a candidate is its failure too
                return {"ok": False, "detail": f"building the candidate raised {_one_line(exc)}"}
        if not isinstance(model, torch.nn.Module):
            return {"ok": False, "detail": "ModelNew must be a torch.nn.Module"}
        # A thread started while importing or building (also one started through _thread,
        # which threading.enumerate does not list) would run beside every later call, outside
        # any call's accounting: it could read the inputs lent for the next call, or write the
        # output buffer lent for this one after the harness filled it.
        running = [what for done, what in self.watch.call_threads if not done.is_set()]
        if running:
            return {
                "ok": False,
                "detail": f"importing or building the candidate left {len(running)} thread(s) "
                f"running ({'; '.join(running)}: work beside the calls escapes the accounting; "
                "join every thread before __init__ returns)",
            }
        try:
            # nn.Module's own methods: a candidate cannot override its way out of the weights.
            model = torch.nn.Module.to(model, self.device)
            if not header.get("as_constructed"):
                # An inference problem: the candidate in eval mode, as the reference. Else it
                # stays as its constructor left it, as the reference does (always put in eval
                # mode, the reference's own code would fail a training-mode BatchNorm problem).
                torch.nn.Module.eval(model)
            loaded = {k: v.to(self.device) for k, v in state.items()}
            result = torch.nn.Module.load_state_dict(model, loaded, strict=False)
        except BaseException as exc:  # SystemExit from a candidate is its failure too
            return {
                "ok": False,
                "detail": f"the reference's weights do not load into ModelNew ({_one_line(exc)})",
            }
        self.model = model
        self.build = (shape, module, init, bool(header.get("as_constructed")))
        _know_model(self, model)
        return {
            "ok": True,
            "missing": list(result.missing_keys),
            "unexpected": list(result.unexpected_keys),
            "construction_launches": self.recorder.total,
            "changes": self.guard.changes(every_op=True)
            + self.watch.changes(forks_before, None)
            + _hook_changes(self.watch.hooks_at_start, _hooks()),
        }

    def reload(self, header: dict[str, Any], blobs: list[Any]) -> dict[str, Any]:
        """Load new weights into the model (in place, as ``load_state_dict`` does)."""
        state = wire.unwrap(wire.decode(header["state"], blobs, trusted=True))
        try:
            loaded = {k: v.to(self.device) for k, v in state.items()}
            torch.nn.Module.load_state_dict(self.model, loaded, strict=True)
        except BaseException as exc:
            return {"ok": False, "detail": f"reloading the weights failed ({_one_line(exc)})"}
        self.accounting.refresh_aliased(self._state_tensors())  # the harness wrote them
        return {"ok": True}

    def call(self, header: dict[str, Any], blobs: list[Any]) -> tuple[dict[str, Any], list[Any]]:
        """One checked call: inputs refilled in place, forward under the accounting."""
        assert self.recorder is not None and self.guard is not None
        burst = int(header.get("burst") or 0)
        if burst and self.last_inputs is not None:
            # A run of back-to-back calls on the previous call's inputs, each one under the
            # same instruments as a checked call: a candidate that changes its behaviour after
            # a number of calls meets the checked call that follows, on new inputs.
            started = time.monotonic()
            for k in range(burst):
                if time.monotonic() - started > BURST_BUDGET_S:
                    break  # a slow candidate gets fewer back-to-back calls, not a timeout
                try:
                    # The same prologue as a checked call (refill, fingerprint), so the gap
                    # between calls does not tell the run from the checked call after it.
                    for buf, again in zip(self.last_inputs, self.last_host):
                        if isinstance(buf, torch.Tensor) and isinstance(again, torch.Tensor):
                            buf.copy_(again)
                    digest(self._state_tensors())
                    # (in the checked call's program order: a run in grid order was a tell)
                    order = header.get("order", "grid")
                    seed = int(header.get("order_seed", 0)) + k + 1
                    self._forward(self.last_inputs, order, seed)
                except Refused as exc:
                    return {"ok": False, "detail": f"{exc} (call {k + 1} of a run of {burst})"}, []
                except BaseException as exc:  # SystemExit from a candidate is its failure too
                    return {
                        "ok": False,
                        "detail": f"forward raised {_one_line(exc)} on call {k + 1} of a run of "
                        f"{burst} back-to-back calls",
                    }, []
        laps = Laps()
        try:
            sent = receive_inputs(header, blobs)
        except wire.WireError as exc:
            if "device handle" not in str(exc):
                raise
            return {"ok": False, "ipc_error": str(exc), "detail": str(exc)}, []
        refill = str(header.get("refill") or "inplace")
        self.last_inputs = self._fill_inputs(sent, silent=refill == "silent")
        inputs = contract.handed_over(self.last_inputs, refill)
        self.last_host = [
            v.tensor if isinstance(v, wire.Sent) else None
            for v in (sent if isinstance(sent, list | tuple) else [sent])
        ]
        laps.lap("inputs")
        state_before = digest(self._state_tensors())
        laps.lap("fingerprints")
        launches_before = self.recorder.total
        kernels_before = dict(self.recorder.kernels)
        replays_before = self.graph_replays
        forks_before = self.watch.forks
        children_before = _children_cpu()
        rng_before = contract.rng_fingerprint()
        start = time.monotonic()
        try:
            out = self._forward(
                inputs,
                header.get("order", "grid"),
                int(header.get("order_seed", 0)),
                bool(header.get("poison")),
                inference=header.get("context") == "inference",
            )
        except Refused as exc:
            return {"ok": False, "detail": str(exc)}, []
        except torch.OutOfMemoryError as exc:
            return {"ok": False, "oom": True, "detail": _oom_detail(exc)}, []
        except BaseException as exc:  # SystemExit from a candidate is its failure too
            return {"ok": False, "detail": f"forward raised {_one_line(exc)}"}, []
        seconds = time.monotonic() - start
        rng_changed = contract.rng_fingerprint() != rng_before
        laps.lap("forward")
        launches = self.recorder.total - launches_before
        kernels = {
            k: v - kernels_before.get(k, 0)
            for k, v in self.recorder.kernels.items()
            if v - kernels_before.get(k, 0)
        }
        leaves = _tensor_leaves(out)
        # An output in host-shared memory the host wrote after the last op or launch did.
        self.accounting.check_aliased(leaves)
        input_storages = {k for k in (storage_key(t) for t in _tensor_leaves(inputs)) if k}
        storages = {k for k in (storage_key(t) for t in leaves) if k is not None}
        provenance = []
        for t in leaves:
            key = storage_key(t)
            provenance.append(
                {
                    "state": self.accounting.state_of(t),
                    "input": key in input_storages,
                    "weight": key in self.weight_storages,
                }
            )
        previous_changed = False
        shared_with_previous = False
        laps.lap("checks")
        for old_out, old_digest, old_storages in self.kept:
            previous_changed = previous_changed or digest(old_out) != old_digest
            shared = (storages & old_storages) - self.weight_storages
            shared_with_previous = shared_with_previous or bool(shared)
        laps.lap("fingerprints")
        encoded = encode_output(out, header.get("slots"), self.device)
        laps.lap("output")
        out_digest = digest(out)
        # Earlier outputs stay alive, as a caller's would: their memory cannot be reused, and
        # they must not change (a few of them, so alternating result buffers show too).
        size = sum(t.numel() * t.element_size() for t in leaves)
        keep = KEEP_OUTPUTS if size * KEEP_OUTPUTS <= KEEP_BYTES else 1
        self.kept = [(out, out_digest, storages), *self.kept][:keep]
        input_digests = [digest(v) for v in inputs]
        state_after = digest(self._state_tensors())
        laps.lap("fingerprints")
        reply = {
            "ok": True,
            "out": encoded.tree,
            "seconds": seconds,
            "launches": launches,
            "kernels": kernels,
            "compute_ops": self.accounting.compute_ops(),
            "vendor_ops": self.accounting.vendor_ops(),
            "op_classes": dict(self.accounting.classes),
            "provenance": provenance,
            "graph_replays": self.graph_replays - replays_before,
            "input_digests": input_digests,
            "inputs_after": self._mutated_inputs(header, inputs),
            "state_before": state_before,
            "state_after": state_after,
            "rng_changed": rng_changed,
            "previous_changed": previous_changed,
            "shared_with_previous": shared_with_previous,
            "stream_violations": list(self.recorder.stream_violations),
            "memory_violations": list(self.recorder.memory_violations),
            "changes": self.guard.changes()
            + self.accounting.take_registry_changes()
            + self.watch.changes(forks_before, children_before),
            # Where this call's time went in this process (reported, never judged on).
            "phases_s": laps.parts,
        }
        blobs_out = list(encoded.blobs)
        if reply["inputs_after"] is not None:
            fields, more = wire.pack([("inputs_after", reply["inputs_after"])])
            wire.shift(fields["inputs_after"], len(blobs_out))
            reply["inputs_after"] = fields["inputs_after"]
            blobs_out += more
        wanted = [str(name) for name in header.get("return_state") or []]
        if wanted:
            # The parameters and buffers the reference's forward changed, by their names in
            # the state dict, read as data (no hook of the candidate's runs).
            named = named_state(self.model)
            reply["state_missing"] = [name for name in wanted if name not in named]
            fields, more = wire.pack(
                [("state_values", {name: named[name] for name in wanted if name in named})]
            )
            wire.shift(fields["state_values"], len(blobs_out))
            reply["state_values"] = fields["state_values"]
            blobs_out += more
        return reply, blobs_out

    def stats(self) -> dict[str, Any]:
        """Peak device memory of this process, and the launch signatures for the compile check."""
        assert self.recorder is not None
        peak = torch.cuda.max_memory_allocated() if self.device == "cuda" else 0
        return {"peak_bytes": int(peak), "spec_errors": dict(self.recorder.spec_errors)}

    # ------------------------------------------------------------------ helpers

    def _forward(
        self, inputs: list[Any], order: str, order_seed: int, poison: bool = False, **kw: bool
    ) -> Any:
        """One forward under the instruments: launches, dispatch accounting, program order;
        under ``torch.inference_mode`` with ``inference=True``, else ``torch.no_grad``."""
        assert self.recorder is not None
        self.accounting.reset()
        self.accounting.poison = poison
        self.accounting.know(self._state_tensors())
        self.accounting.inputs(_tensor_leaves(inputs))
        # The harness refilled the inputs: their bytes, as it wrote them, are where an
        # address-followed input starts from.
        self.accounting.refresh_aliased(_tensor_leaves(inputs))
        self.recorder.accounting = self.accounting
        self.watch.call_threads = []
        hooks = _hooks()
        try:
            with (
                torch.inference_mode() if kw.get("inference") else torch.no_grad(),
                self.recorder.recording(),
                program_order(order, order_seed),
                self.watch.candidate_runs(),
                self.accounting,
            ):
                out = self.model(*inputs)
            # The collector stays off until the reply is sent (``serve``): no finaliser of the
            # candidate's garbage runs between forward and the reply, behind the accounting.
            gc.disable()
            if self.device == "cuda":
                torch.cuda.synchronize()  # every stream: work left anywhere is finished
        finally:
            self.recorder.accounting = None
        # Nothing of the candidate may run after forward returned, behind the accounting's
        # back: no thread it started still running, no hook, handler or timer left armed.
        running = [what for done, what in self.watch.call_threads if not done.is_set()]
        if running:
            raise Refused(
                f"forward returned while {len(running)} thread(s) it started were still running "
                f"({'; '.join(running)}: work after the call escapes the accounting; join every "
                "thread in forward)"
            )
        now = _hooks()
        left = _hook_changes(hooks, now) or _hook_changes(self.watch.hooks_at_start, now)
        if left:
            raise Refused(
                "forward left code armed to run after it returned: " + "; ".join(left[:4])
            )
        return out

    def _state_tensors(self) -> list[torch.Tensor]:
        """The model's parameters and persistent buffers (what ``state_dict`` holds)."""
        return list(named_state(self.model).values())

    def _fill_inputs(self, tree_value: Any, *, silent: bool = False) -> list[Any]:
        """The call's inputs: tensors copied into this process's buffers for that argument
        (the same memory call after call, refilled with new values; ``silent``: by a write
        that bumps no version counter), others as sent."""
        values = tree_value if isinstance(tree_value, list | tuple) else [tree_value]
        inputs: list[Any] = []
        for i, value in enumerate(values):
            if not isinstance(value, wire.Sent):
                inputs.append(wire.unwrap(value))
                continue
            host = value.tensor
            buf = self.buffers.get(i)
            fits = (
                buf is not None
                and buf.shape == host.shape
                and buf.dtype == host.dtype
                and tuple(buf.stride()) == value.stride
            )
            if not fits:
                try:
                    buf = torch.empty_strided(
                        host.shape, value.stride, dtype=host.dtype, device=self.device
                    )
                    buf.copy_(host)
                except RuntimeError:  # overlapping strides (an expanded input): contiguous
                    buf = host.to(self.device).clone()
                self.buffers[i] = buf
            else:
                assert buf is not None
                (contract.refill_silently if silent else torch.Tensor.copy_)(buf, host)
            inputs.append(buf)
        return inputs

    def _mutated_inputs(self, header: dict[str, Any], inputs: list[Any]) -> Any:
        wanted = header.get("return_inputs") or []
        if not wanted:
            return None
        return [inputs[i] if i < len(inputs) else None for i in wanted]

    def _watch_graph_replays(self) -> None:
        """Count CUDA-graph replays: a replay writes a graph's static outputs without any
        launch or ATen op the other instruments see."""
        graph = getattr(torch.cuda, "CUDAGraph", None)
        if graph is None or getattr(graph.replay, "_kernelopt_wrapped", False):
            return
        original = graph.replay
        sandbox = self

        def replay(self_graph: Any) -> Any:
            sandbox.graph_replays += 1
            return original(self_graph)

        replay._kernelopt_wrapped = True  # type: ignore[attr-defined]
        graph.replay = replay


def receive_inputs(header: dict[str, Any], blobs: list[Any], key: str = "inputs") -> Any:
    """The call's inputs (``header[key]``: the performance gate's pool too) as sent:
    bytes, or (on the GPU) the checker's staging buffers, mapped, copied into this process
    and unmapped."""
    if not wire.has_bulk(header.get(key)):
        return wire.decode(header[key], blobs, trusted=True)
    from kernelopt_jupyter.verify import ipc

    mappings = ipc.Mappings()
    try:
        return wire.decode(header[key], blobs, trusted=True, bulk=wire.Bulk(mappings))
    finally:
        with contextlib.suppress(ipc.IpcError, RuntimeError):
            mappings.close()


def encode_output(out: Any, slots: Any, device: str) -> wire.Encoded:
    """The output as data for the checker: its large tensors' bytes copied into the
    staging buffers the checker lent for them (``verify.ipc``), the rest as bytes."""
    if not isinstance(slots, list) or not slots or device != "cuda":
        return wire.encode(out)
    from kernelopt_jupyter.verify import ipc

    mappings = ipc.Mappings()
    leaf = [0]

    def share(t: torch.Tensor) -> dict[str, Any] | None:
        k = leaf[0]
        leaf[0] += 1
        slot = slots[k] if k < len(slots) else None
        nbytes = t.numel() * t.element_size()
        if not isinstance(slot, dict) or t.device.type != "cuda" or nbytes < ipc.MIN_BYTES:
            return None
        try:
            base, extent = mappings.base(str(slot.get("handle")))
        except ipc.IpcError:
            return None
        if nbytes > extent:
            return None
        try:
            src = t.detach().contiguous().reshape(-1).view(torch.uint8)
            ipc.bytes_at(base, nbytes).copy_(src)
        except RuntimeError:
            return None  # the byte path carries this one
        return {"slot": k}

    try:
        return wire.encode(out, share=share)
    finally:
        with contextlib.suppress(ipc.IpcError, RuntimeError):
            mappings.close()


def named_state(model: Any) -> dict[str, torch.Tensor]:
    """The model's parameters and persistent buffers by their state-dict names
    (``block.bn.running_mean``), read from the modules' own dictionaries: ``state_dict``
    would run the candidate's state-dict hooks, here, after the call's inputs are in place
    and outside the accounting (a hook that computed the answer there passed), and
    ``named_modules`` can be overridden."""
    named: dict[str, torch.Tensor] = {}
    if model is None:
        return named
    # A module registered under two names (one BatchNorm applied twice) is named under
    # both, as ``state_dict`` names it; a module inside itself is not entered again, and
    # the walk stops after STATE_WALK_LIMIT modules (a candidate's graph of modules).
    todo: list[tuple[str, Any, frozenset[int]]] = [("", model, frozenset())]
    walked = 0
    while todo and walked < STATE_WALK_LIMIT:
        prefix, module, above = todo.pop()
        if id(module) in above or not isinstance(module, torch.nn.Module):
            continue
        walked += 1
        own = vars(module)
        skip = own.get("_non_persistent_buffers_set") or set()
        for table in ("_parameters", "_buffers"):
            for name, value in dict(own.get(table) or {}).items():
                if isinstance(value, torch.Tensor) and name not in skip:
                    named.setdefault(prefix + name, value)
        path = above | {id(module)}
        for name, child in dict(own.get("_modules") or {}).items():
            todo.append((f"{prefix}{name}.", child, path))
    return named


def _warm_triton_platform() -> None:
    """Triton's platform key (``platform.architecture()``, which starts ``file`` once), taken
    before the candidate runs: the first ``triton.autotune`` launch would otherwise start that
    process inside the candidate's call, as Triton's act, not the candidate's."""
    with suppress(Exception):
        from triton.runtime.build import platform_key

        platform_key()


#: Kernel languages a candidate may import whose own import changes the process (Helion
#: patches Triton and sets OpenMP variables): imported before the snapshot, as the platform.
KERNEL_LANGUAGES = ("helion",)


def _import_kernel_languages(source: str) -> None:
    import ast
    import importlib

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    for name in KERNEL_LANGUAGES:
        if name in names:
            importlib.import_module(name)
    # tqdm (Helion's compile shows a progress bar) starts a monitor thread on a bar's first use
    # that outlives the call, which the run-time rule against threads left running refuses (seen
    # on the H200). Off as platform configuration, before the snapshot: a bar works without it.
    with suppress(ImportError, AttributeError):
        importlib.import_module("tqdm").tqdm.monitor_interval = 0


#: Audit events that write, create, move or remove a file: (event, index of the target path).
_WRITE_EVENTS = {
    "open": 0,
    "os.rename": 1,
    "os.remove": 0,
    "os.rmdir": 0,
    "os.mkdir": 0,
    "os.symlink": 1,
    "os.link": 1,
    "os.truncate": 0,
    "os.chmod": 0,
    "os.chown": 0,
    "os.utime": 0,
    "shutil.copyfile": 1,
    "shutil.copytree": 1,
    "shutil.rmtree": 0,
    "shutil.move": 1,
}
#: Where the event gives the folder descriptor its relative target is relative to (CPython's
#: ``dir_fd`` / ``dst_dir_fd`` argument; -1 or None for the working directory). shutil.rmtree
#: removes a tree through these (``os.unlink(name, dir_fd=...)``): Triton's build of its
#: launcher in a temporary folder does, on the GPU. ``open`` gives none: see _written_path.
_DIR_FD_INDEX = {
    "os.rename": 3,
    "os.remove": 1,
    "os.rmdir": 1,
    "os.mkdir": 2,
    "os.symlink": 2,
    "os.link": 3,
    "os.chmod": 2,
    "os.chown": 3,
    "os.utime": 3,
}
#: Modules the walk of a model's state visits at most (``named_state``).
STATE_WALK_LIMIT = 100_000
#: Files Python runs at start-up wherever they are on the path.
_STARTUP_FILES = frozenset({"sitecustomize.py", "usercustomize.py"})
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _written_path(event: str, args: tuple[Any, ...]) -> str | None:
    """The path an audited file event writes, or None (a read, a file descriptor)."""
    index = _WRITE_EVENTS[event]
    if len(args) <= index:
        return None
    if event == "open":  # (path, mode, flags): builtins.open gives a mode, os.open flags only
        mode, flags = (*args, None, None)[1:3]
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & _WRITE_FLAGS
        )
        if not writes:
            return None
    target = args[index]
    if isinstance(target, bytes):
        target = os.fsdecode(target)
    if not isinstance(target, str):
        return None  # a file descriptor: the file was opened (and checked) before
    folder = args[_DIR_FD_INDEX[event]] if len(args) > _DIR_FD_INDEX.get(event, 99) else None
    if isinstance(folder, int) and folder >= 0 and not os.path.isabs(target):
        # relative to an open folder, not to the working directory: the folder's own path
        # (os.readlink raises no audit event). Unknown: checked as named, relative to nothing.
        try:
            return os.path.join(os.readlink(f"/proc/self/fd/{folder}"), target)
        except OSError:
            return os.path.join(os.sep, "<unknown folder>", target)
    # os.open(name, flags, dir_fd=fd) is audited as ("open", name, None, flags): its folder is
    # not in the event. A protected folder's descriptor is refused where it is opened
    # (ProcessWatch._check_folder_open), and the name rule (.pth, sitecustomize) holds anyway.
    return target


def _write_denied_roots() -> tuple[str, ...]:
    """The folders a candidate may never write below, each ending with a separator: the Python
    installation (prefixes, site-packages, the user's site folder), this project's source,
    and the user's start-up and configuration files. Caches (Triton's, Inductor's) and
    temporary folders are elsewhere and stay writable."""
    import site

    roots = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix}
    with suppress(AttributeError):
        roots.update(site.getsitepackages())
    with suppress(AttributeError):
        roots.add(site.getusersitepackages())
    # This project: the package folder when installed; the checkout in a development install
    # (agents/ and verify/ are top-level folders mapped into the package).
    import kernelopt_jupyter

    roots.add(str(Path(kernelopt_jupyter.__file__).resolve().parent))
    roots.add(str(Path(__file__).resolve().parents[1]))
    home = Path.home()
    for name in (
        ".bashrc",
        ".profile",
        ".bash_profile",
        ".zshrc",
        ".config",
        ".local",
        ".ipython",
        ".jupyter",
        ".ssh",
        ".pythonrc",
        ".pythonrc.py",
    ):
        roots.add(str(home / name))
    roots.add("/etc")
    out = []
    for root in roots:
        with suppress(OSError, ValueError):
            out.append(os.path.realpath(root).rstrip(os.sep) + os.sep)
    return tuple(sorted(set(out)))


class Refused(Exception):
    """The candidate did something after which its call cannot be taken (said in words)."""


def _hooks() -> dict[str, Any]:
    """What can run code later without being called: trace and profile hooks, dispatch and
    function modes, signal handlers and interval timers."""
    import signal
    import threading

    from torch.overrides import _get_current_function_mode_stack

    found: dict[str, Any] = {
        "sys.settrace": sys.gettrace(),
        "sys.setprofile": sys.getprofile(),
        "threading.settrace": getattr(threading, "_trace_hook", None),
        "threading.setprofile": getattr(threading, "_profile_hook", None),
        "TorchDispatchMode stack": torch._C._len_torch_dispatch_stack(),
        "TorchFunctionMode stack": len(_get_current_function_mode_stack()),
    }
    with suppress(ImportError, AttributeError):
        import triton.knobs as knobs

        for name in _TRITON_HOOKS:
            value = getattr(knobs.runtime, name, None)
            calls = getattr(value, "calls", None)
            found[f"triton.knobs.runtime.{name}"] = tuple(calls) if calls is not None else value
    for sig in signal.valid_signals():
        with suppress(ValueError, OSError, RuntimeError):
            found[f"handler of {signal.Signals(sig).name}"] = signal.getsignal(sig)
    for name in ("ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF"):
        found[f"signal.setitimer({name})"] = signal.getitimer(getattr(signal, name)) != (0.0, 0.0)
    return found


#: Process-creating audit events.
#: Audit events that signal a process (the pid first): another process is the reference's
#: or the harness's; a candidate has no business signalling either.
_SIGNAL_EVENTS = frozenset({"os.kill", "os.killpg"})
_PROCESS_EVENTS = frozenset(
    {
        "os.fork",
        "os.forkpty",
        "os.posix_spawn",
        "os.exec",
        "os.spawn",
        "os.system",
        "subprocess.Popen",
    }
)


def _program(event: str, args: tuple[Any, ...]) -> str:
    """The program an audited process-starting event runs, as far as its arguments say."""
    try:
        if event == "subprocess.Popen":  # (executable, args, cwd, env)
            argv = args[1]
            first = argv if isinstance(argv, str | bytes) else next(iter(argv), "")
            return os.fsdecode(args[0] or first)
        if event == "os.spawn":  # (mode, path, args, env)
            return os.fsdecode(args[1])
        return os.fsdecode(args[0]) if args else ""
    except Exception:
        return ""


def _toolchain(program: str) -> bool:
    """Whether ``program`` is one of the tools Triton's machinery runs on the GPU."""
    words = program.split()
    name = os.path.basename(words[0]) if words else ""
    return name in TOOLCHAIN or bool(_COMPILER.search(name))


_COMPILER = re.compile(r"(^|-)(gcc|g\+\+|cc|c\+\+|clang|clang\+\+)(-[0-9.]+)?$")
#: Programs Triton's own machinery runs on the GPU (compilers, assemblers, library lookup).
TOOLCHAIN = frozenset(
    {
        "cc",
        "gcc",
        "g++",
        "c++",
        "clang",
        "clang++",
        "ptxas",
        "nvdisasm",
        "cuobjdump",
        "ldconfig",
        "nvcc",
        # platform.architecture() runs `file` on the interpreter: Triton keys its compiled
        # launchers by it (triton.runtime.build.platform_key), first in an autotuner's run.
        "file",
    }
)
#: Triton's hook points that run inside a launch (the accounting counts the candidate's code
#: there anyway: ``Accounting.record``); one left set after forward is refused.
_TRITON_HOOKS = (
    "launch_enter_hook",
    "launch_exit_hook",
    "kernel_load_start_hook",
    "kernel_load_end_hook",
    "jit_cache_hook",
    "jit_post_compile_hook",
    "add_stages_inspection_hook",
)


def _hook_changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    return [
        f"changed {k}"
        for k in sorted(set(before) | set(after))
        if before.get(k) is not after.get(k) and before.get(k) != after.get(k)
    ]


def _describe_thread(function: Any) -> str:
    """What a started thread runs, for a verdict: the Thread's name and target when it is a
    ``threading.Thread`` (``_bootstrap`` bound to it), else the function's own name."""
    owner = getattr(function, "__self__", None)
    target = getattr(owner, "_target", None) or getattr(owner, "run", None) or function
    where = f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', '?')}"
    name = getattr(owner, "name", None)
    return f"thread {name!r} running {where}" if name else f"a thread running {where}"


def _watch_threads(box: ProcessWatch) -> None:
    """Every Python thread started while the candidate runs runs under its call's accounting
    (the dispatch mode stack is per thread, so a helper thread's ops were invisible)."""
    import _thread
    import threading

    for name in ("start_new_thread", "start_joinable_thread"):
        original = getattr(_thread, name, None)
        if original is None or getattr(original, "_kernelopt_wrapped", False):
            continue

        def start(function: Any, *rest: Any, _original: Any = original, **kw: Any) -> Any:
            if box.watching:
                mode = box.accounting.thread_mode()
                inner = function
                done = threading.Event()
                box.call_threads.append((done, _describe_thread(function)))

                def function(*a: Any, **k: Any) -> Any:
                    try:
                        with mode:
                            return inner(*a, **k)
                    finally:
                        done.set()

            return _original(function, *rest, **kw)

        start._kernelopt_wrapped = True  # type: ignore[attr-defined]
        setattr(_thread, name, start)
        if name == "start_new_thread":
            _thread.start_new = start  # type: ignore[attr-defined]
            threading._start_new_thread = start  # type: ignore[attr-defined]
        elif hasattr(threading, "_start_joinable_thread"):
            threading._start_joinable_thread = start  # type: ignore[attr-defined]


def _watch_host_exports(box: ProcessWatch) -> None:
    """A tensor handed to the host (numpy, DLPack) while the candidate runs is foreign data:
    the host may compute into it where the dispatcher cannot see."""

    def wrap(owner: Any, name: str) -> None:
        original = getattr(owner, name, None)
        if original is None or getattr(original, "_kernelopt_wrapped", False):
            return

        def exported(t: Any, *args: Any, **kwargs: Any) -> Any:
            if box.watching and isinstance(t, torch.Tensor | torch.UntypedStorage):
                box.accounting.exported_to_host(t)
            return original(t, *args, **kwargs)

        exported._kernelopt_wrapped = True  # type: ignore[attr-defined]
        setattr(owner, name, exported)

    wrap(torch.Tensor, "numpy")  # (tolist and item copy: the host cannot write through them)
    wrap(torch.Tensor, "__dlpack__")
    wrap(torch, "to_dlpack")
    import torch.utils.dlpack as dlpack

    wrap(dlpack, "to_dlpack")
    # Python callables run over the elements on the host, below the dispatcher (no ATen op):
    # whatever they write is host data.
    for name in ("apply_", "map_", "map2_"):
        wrap(torch.Tensor, name)
    # Memory shared with a host object from the start (the candidate's own, so not foreign):
    # followed by content, since the host can write it without an op (see Accounting.aliased).
    for name in ("from_numpy", "frombuffer", "as_tensor", "asarray", "from_dlpack"):
        _wrap_alias(box, torch, name)
    _wrap_alias(box, dlpack, "from_dlpack")
    # A raw address of host memory in the candidate's hands makes it writable from the host
    # (a numpy array over it through ``__array_interface__``). A device address is device
    # memory, which the host reaches only through native code: the CUDA-graph wrapper and
    # honest Triton code read addresses of CUDA tensors. (The process's device is not known
    # yet here, before the first load: each tensor's own device decides.)
    _wrap_address(box, torch.Tensor)
    _wrap_address(box, torch.UntypedStorage)


def _wrap_alias(box: ProcessWatch, owner: Any, name: str) -> None:
    """``<owner>.<name>(host, ...)`` called by the candidate (at import, in ``__init__`` or in
    forward): a CPU result sharing memory with ``host`` is followed by content."""
    original = getattr(owner, name, None)
    if original is None or getattr(original, "_kernelopt_wrapped", False):
        return

    def aliasing(host: Any, *args: Any, **kwargs: Any) -> Any:
        out = original(host, *args, **kwargs)
        if (
            isinstance(out, torch.Tensor)
            and out.device.type == "cpu"
            and not isinstance(host, torch.Tensor | list | tuple | int | float | bool)
            and called_by_candidate()
        ):
            with suppress(Exception):
                box.accounting.host_alias(out, host)
        return out

    aliasing._kernelopt_wrapped = True  # type: ignore[attr-defined]
    setattr(owner, name, aliasing)


def _wrap_address(box: ProcessWatch, owner: Any) -> None:
    """``data_ptr`` of host memory asked for by the candidate's own code (not Triton's, not
    the harness's) while it runs: the memory's bytes are followed from then on (a host
    write through the address makes it host data; an alignment check changes nothing)."""
    original = getattr(owner, "data_ptr", None)
    if original is None or getattr(original, "_kernelopt_wrapped", False):
        return

    busy = threading.local()

    def data_ptr(t: Any) -> Any:
        address = original(t)
        if (
            box.watching
            and not getattr(busy, "on", False)
            and t.device.type == "cpu"
            and called_by_candidate()
        ):
            busy.on = True  # address_taken reads addresses itself
            try:
                box.accounting.address_taken(t)
            finally:
                busy.on = False
        return address

    data_ptr._kernelopt_wrapped = True  # type: ignore[attr-defined]
    owner.data_ptr = data_ptr


def _module_tree(model: Any) -> list[Any]:
    """``model`` and every submodule, from the modules' own ``_modules`` dictionaries (no
    method of the candidate's classes runs)."""
    found: list[Any] = []
    seen: set[int] = set()
    todo = [model]
    while todo:
        module = todo.pop()
        if id(module) in seen or not isinstance(module, torch.nn.Module):
            continue
        seen.add(id(module))
        found.append(module)
        todo.extend(reversed(list(dict(vars(module).get("_modules") or {}).values())))
    return found


def _attribute_tensors(model: Any) -> list[torch.Tensor]:
    """Tensors the candidate keeps on its modules (scratch buffers, constants, graphs' static
    outputs), one container level deep: its own memory from construction."""
    found: list[torch.Tensor] = []
    for module in _module_tree(model):
        for value in vars(module).values():
            if isinstance(value, dict):
                value = list(value.values())
            found += _tensor_leaves(value)
    return found


def _live_children() -> list[int]:
    """Processes whose parent is this one (zombies included)."""
    pids: list[int] = []
    with suppress(OSError):
        for task in os.listdir("/proc/self/task"):
            with suppress(OSError), open(f"/proc/self/task/{task}/children") as fh:
                pids += [int(p) for p in fh.read().split()]
    return pids


def _children_cpu() -> float:
    """CPU seconds of every child process this one has waited for."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return float(usage.ru_utime + usage.ru_stime)


def _scrub_markers() -> None:
    """Harness markers out of the environment the candidate reads (the platform's stay)."""
    for name in list(os.environ):
        if name.startswith("KERNELOPT_"):
            del os.environ[name]


def _know_model(box: Sandbox, model: Any) -> None:
    """Tell the accounting a model's weights and attributes (its own data, not foreign)."""
    box.weight_storages |= {
        k for k in (storage_key(t) for t in box._state_tensors()) if k is not None
    }
    box.accounting.know(box._state_tensors() + _attribute_tensors(model))
    box.accounting.refresh_aliased()  # what construction wrote into host-shared memory


def _twin(box: Sandbox, header: dict[str, Any], blobs: list[Any]) -> dict[str, Any]:
    """A second instance of the candidate, built as the first was and loaded with other
    weights, runs the next calls; ``back`` returns to the first (which must be unaffected:
    state shared between instances, a table keyed by shape, shows there)."""
    from kernelopt_jupyter.problem import candidate_model

    assert box.build is not None and box.recorder is not None
    shape, module, init, as_constructed = box.build
    state = wire.unwrap(wire.decode(header["state"], blobs, trusted=True))
    box.watch.call_threads = []
    with box.recorder.recording(), box.watch.candidate_runs(), box.accounting.observing():
        try:
            model = torch.nn.Module.to(candidate_model(shape, module, init), box.device)
            if not as_constructed:
                torch.nn.Module.eval(model)
            loaded = {k: v.to(box.device) for k, v in state.items()}
            torch.nn.Module.load_state_dict(model, loaded, strict=True)
        except BaseException as exc:  # SystemExit from a candidate is its failure too
            return {"ok": False, "detail": f"building a second instance raised {_one_line(exc)}"}
    box.others.append(box.model)
    box.model = model
    _know_model(box, model)
    return {"ok": True}


def _command(
    box: Sandbox, cmd: Any, header: dict[str, Any], blobs: list[Any]
) -> tuple[dict[str, Any], list[Any]]:
    if cmd == "load":
        return box.load(header, blobs), []
    if cmd == "call":
        return box.call(header, blobs)
    if cmd == "reload":
        return box.reload(header, blobs), []
    if cmd == "state":
        return {"ok": True, "state": contract.summarize_state(named_state(box.model))}, []
    if cmd == "twin":
        return _twin(box, header, blobs), []
    if cmd == "back":
        if not box.others:
            return {"ok": False, "detail": "no first instance to return to"}, []
        box.model = box.others.pop()
        return {"ok": True}, []
    if cmd == "stats":
        import pickle

        specs = box.recorder.specs if box.recorder is not None else []
        return box.stats(), [pickle.dumps(specs)]
    if cmd in perf.COMMANDS:
        return perf.sandbox_command(box, header, blobs)
    return {"ok": False, "detail": f"unknown command {cmd!r}"}, []


def _where(exc: BaseException) -> str:
    """`` at file:line`` of the innermost frame an exception passed through (for a verdict)."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" at {Path(last.filename).name}:{last.lineno} in {last.name}"


def serve(sock: socket.socket) -> None:
    """The candidate process's loop: one reply per command until ``exit`` or a closed socket."""
    src_dir = os.environ.get("KERNELOPT_SRC_DIR")
    if src_dir:
        Path(src_dir).mkdir(parents=True, exist_ok=True)
    _scrub_markers()
    box = Sandbox(src_dir)
    box.watch.install()
    while True:
        try:
            header, blobs = wire.recv(sock, MAX_IN)
        except wire.WireError:
            return
        cmd = header.get("cmd")
        blobs_out: list[Any] = []
        if cmd == "exit":
            sys.stderr.flush()
            return
        try:
            reply, blobs_out = _command(box, cmd, header, blobs)
        except torch.OutOfMemoryError as exc:  # the candidate's share of the device is used
            torch.cuda.empty_cache()
            reply, blobs_out = {"ok": False, "oom": True, "detail": _oom_detail(exc)}, []
        except Exception as exc:  # harness code on state the candidate shaped (its modules)
            reply, blobs_out = (
                {
                    "ok": False,
                    "detail": f"the harness could not handle the candidate's state in '{cmd}' "
                    f"({_one_line(exc)}{_where(exc)})",
                },
                [],
            )
        del blobs
        wire.send(sock, reply, blobs_out)
        gc.enable()
