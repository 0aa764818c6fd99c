"""The candidate's process: loads the candidate, runs the calls the checker asks for, answers
with data. It holds no reference model, no reference outputs and no tolerances: the checker
sends inputs and weights, and takes outputs back as bytes (``wire``).

Forked by the verification worker before that worker read its task (so nothing of the problem
or the harness's state is in this process's memory), with every inherited file descriptor but
its socket closed, in its own process group, dying with its parent. Harness markers are
removed from ``os.environ``; the worker's environment was already scrubbed of secrets.

What runs here is checked here *and* re-checked by the checker: the candidate's process could
in principle tamper with its own accounting (it is its own process), so everything the checker
can decide from data (values, structure, digests of inputs and weights) it decides itself.
"""

from __future__ import annotations

import hashlib
import os
import socket
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

import torch

from kernelopt_jupyter.verify import wire
from kernelopt_jupyter.verify.accounting import Accounting, storage_key
from kernelopt_jupyter.verify.launches import GlobalGuard, LaunchRecorder, program_order

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


def _device_checksum(raw: torch.Tensor) -> str:
    total = 0
    step = 1 << 24
    for start in range(0, raw.numel(), step):
        part = raw[start : start + step].to(torch.int64)
        weights = torch.arange(start, start + part.numel(), device=raw.device, dtype=torch.int64)
        weights = weights * 2654435761 + 97
        total = (total + int((part * weights).sum())) % (1 << 61)
    return f"{raw.numel()}:{total}"


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


def _oom_detail(exc: BaseException) -> str:
    """A clean verdict for a candidate that ran out of device memory, with what it asked."""
    import re

    found = re.search(r"Tried to allocate ([0-9.]+ [KMGT]?i?B)", str(exc))
    need = found.group(1) if found else ""
    peak = torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else 0.0
    asked = f"needs {need} more" if need else "needs more device memory than was free"
    return (
        f"ran out of device memory: it {asked} after holding {peak:.1f} GiB (the reference's "
        "footprint, inputs refilled in place, is what the harness gives it)"
    )


class Sandbox:
    """The candidate under the harness's instruments, one command at a time."""

    def __init__(self, src_dir: str | None = None) -> None:
        self.src_dir = src_dir
        self.device = "cpu"
        self.model: Any = None
        self.recorder: LaunchRecorder | None = None
        self.accounting = Accounting()
        self.guard: GlobalGuard | None = None
        self.buffers: dict[int, torch.Tensor] = {}
        self.previous: tuple[Any, str, set[int]] | None = None  # output, digest, storages
        self.weight_storages: set[int] = set()
        self.graph_replays = 0

    # ------------------------------------------------------------------ commands

    def load(self, header: dict[str, Any], blobs: list[Any]) -> dict[str, Any]:
        """Import the candidate, build it, load the reference's weights (sent as data)."""
        self.device = header["device"]
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
        self.recorder = LaunchRecorder(self.device)
        self.recorder.install()
        self._watch_graph_replays()
        _import_kernel_languages(header["source"])
        self.guard = GlobalGuard()
        shape = types.SimpleNamespace(kind=header["kind"], entry=header["entry"])
        with self.recorder.recording():
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
        try:
            # nn.Module's own methods: a candidate cannot override its way out of the weights.
            model = torch.nn.Module.to(model, self.device)
            torch.nn.Module.eval(model)
            loaded = {k: v.to(self.device) for k, v in state.items()}
            result = torch.nn.Module.load_state_dict(model, loaded, strict=False)
        except BaseException as exc:  # SystemExit from a candidate is its failure too
            return {
                "ok": False,
                "detail": f"the reference's weights do not load into ModelNew ({_one_line(exc)})",
            }
        self.model = model
        self.weight_storages = {
            k for k in (storage_key(t) for t in self._state_tensors()) if k is not None
        }
        return {
            "ok": True,
            "missing": list(result.missing_keys),
            "unexpected": list(result.unexpected_keys),
            "construction_launches": self.recorder.total,
            "changes": self.guard.changes(),
        }

    def reload(self, header: dict[str, Any], blobs: list[Any]) -> dict[str, Any]:
        """Load new weights into the model (in place, as ``load_state_dict`` does)."""
        state = wire.unwrap(wire.decode(header["state"], blobs, trusted=True))
        try:
            loaded = {k: v.to(self.device) for k, v in state.items()}
            torch.nn.Module.load_state_dict(self.model, loaded, strict=True)
        except BaseException as exc:
            return {"ok": False, "detail": f"reloading the weights failed ({_one_line(exc)})"}
        return {"ok": True}

    def call(self, header: dict[str, Any], blobs: list[Any]) -> tuple[dict[str, Any], list[Any]]:
        """One checked call: inputs refilled in place, forward under the accounting."""
        assert self.recorder is not None and self.guard is not None
        inputs = self._fill_inputs(wire.decode(header["inputs"], blobs, trusted=True))
        state_before = digest(self._state_tensors())
        self.accounting.reset()
        self.recorder.accounting = self.accounting
        launches_before = self.recorder.total
        kernels_before = dict(self.recorder.kernels)
        replays_before = self.graph_replays
        start = time.monotonic()
        try:
            with (
                torch.no_grad(),
                self.recorder.recording(),
                program_order(header.get("order", "grid"), int(header.get("order_seed", 0))),
                self.accounting,
            ):
                out = self.model(*inputs)
            if self.device == "cuda":
                torch.cuda.synchronize()  # every stream: work left anywhere is finished
        except torch.OutOfMemoryError as exc:
            return {"ok": False, "oom": True, "detail": _oom_detail(exc)}, []
        except BaseException as exc:  # SystemExit from a candidate is its failure too
            return {"ok": False, "detail": f"forward raised {_one_line(exc)}"}, []
        finally:
            self.recorder.accounting = None
        seconds = time.monotonic() - start
        launches = self.recorder.total - launches_before
        kernels = {
            k: v - kernels_before.get(k, 0)
            for k, v in self.recorder.kernels.items()
            if v - kernels_before.get(k, 0)
        }
        leaves = _tensor_leaves(out)
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
        if self.previous is not None:
            old_out, old_digest, old_storages = self.previous
            previous_changed = digest(old_out) != old_digest
            shared_with_previous = bool((storages & old_storages) - self.weight_storages)
        encoded = wire.encode(out)
        out_digest = digest(out)
        # The previous output stays alive, as a caller's would: its memory cannot be reused.
        self.previous = (out, out_digest, storages)
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
            "input_digests": [digest(v) for v in inputs],
            "inputs_after": self._mutated_inputs(header, inputs),
            "state_before": state_before,
            "state_after": digest(self._state_tensors()),
            "previous_changed": previous_changed,
            "shared_with_previous": shared_with_previous,
            "stream_violations": list(self.recorder.stream_violations),
            "changes": self.guard.changes(),
        }
        blobs_out = list(encoded.blobs)
        if reply["inputs_after"] is not None:
            fields, more = wire.pack([("inputs_after", reply["inputs_after"])])
            wire.shift(fields["inputs_after"], len(blobs_out))
            reply["inputs_after"] = fields["inputs_after"]
            blobs_out += more
        return reply, blobs_out

    def stats(self) -> dict[str, Any]:
        """Peak device memory of this process, and the launch signatures for the compile check."""
        assert self.recorder is not None
        peak = torch.cuda.max_memory_allocated() if self.device == "cuda" else 0
        return {"peak_bytes": int(peak), "spec_errors": dict(self.recorder.spec_errors)}

    # ------------------------------------------------------------------ helpers

    def _state_tensors(self) -> list[torch.Tensor]:
        if self.model is None:
            return []
        return list(torch.nn.Module.state_dict(self.model, keep_vars=True).values())

    def _fill_inputs(self, tree_value: Any) -> list[Any]:
        """The call's inputs: tensors copied into this process's buffers for that argument
        (the same memory call after call, refilled with new values), others as sent."""
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
                buf.copy_(host)
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


def _scrub_markers() -> None:
    """Harness markers out of the environment the candidate reads (the platform's stay)."""
    for name in list(os.environ):
        if name.startswith("KERNELOPT_"):
            del os.environ[name]


def serve(sock: socket.socket) -> None:
    """The candidate process's loop: one reply per command until ``exit`` or a closed socket."""
    src_dir = os.environ.get("KERNELOPT_SRC_DIR")
    if src_dir:
        Path(src_dir).mkdir(parents=True, exist_ok=True)
    _scrub_markers()
    box = Sandbox(src_dir)
    while True:
        try:
            header, blobs = wire.recv(sock, MAX_IN)
        except wire.WireError:
            return
        cmd = header.get("cmd")
        blobs_out: list[Any] = []
        if cmd == "load":
            reply = box.load(header, blobs)
        elif cmd == "call":
            reply, blobs_out = box.call(header, blobs)
        elif cmd == "reload":
            reply = box.reload(header, blobs)
        elif cmd == "stats":
            reply = box.stats()
            specs = box.recorder.specs if box.recorder is not None else []
            import pickle

            blobs_out = [pickle.dumps(specs)]
        elif cmd == "exit":
            sys.stderr.flush()
            return
        else:
            reply = {"ok": False, "detail": f"unknown command {cmd!r}"}
        del blobs
        wire.send(sock, reply, blobs_out)
