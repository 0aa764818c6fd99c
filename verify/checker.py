"""The checker: the trusted side of a verification, in the verification worker.

The worker (``kernelopt_jupyter.worker`` as a fork server) imports torch and the project once,
forks the reference's process and the candidate's process *before* it reads its task, then
runs ``verify_task`` here. The checker draws nothing itself (the schedule comes from the seed
the caller drew), asks the reference for each case, forwards only the case's *inputs* to the
candidate, takes the candidate's outputs back as bytes and decides: structure and values
against the reference, inputs and weights unchanged, the dispatch-level accounting of every
call, the float64 referee. The candidate's process never holds the reference's outputs, the
tolerances or this code's state, and cannot reach this process except through its socket,
whose messages are parsed as data (never unpickled).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from kernelopt_jupyter.device import GpuLock
from kernelopt_jupyter.verify import wire
from kernelopt_jupyter.verify.compare import (
    Comparison,
    RefereeErrors,
    compare_and_referee,
    compare_outputs,
    leaf_floor,
    mid_floor,
    referee_sides,
    relative_floor,
    within_linear_bound,
)
from kernelopt_jupyter.verify.schedule import Call, draw_schedule, input_seeds
from kernelopt_jupyter.worker import kill_tree, load_plain

#: The most a candidate may send back per call beyond its expected outputs (diagnostics).
REPLY_SLACK = 64 * 1024 * 1024


class CandidateFailure(Exception):
    """The candidate failed; ``gate`` says which gate the failure belongs to."""

    def __init__(self, detail: str, gate: str = "correctness") -> None:
        super().__init__(detail)
        self.gate = gate


#: On a GPU, the largest output (bytes) whose answer key (the fp32 output, the float64 one,
#: a linear bound) and whose candidate's copy the checker holds in page-locked host memory:
#: it only reads them, in steps that go to the device one at a time (``compare._chunks``).
#: On the device they were 4-5 output-sized units, 4.2-5.1x the footprint of the small
#: problems where the output is most of it (twenty-second session). A larger output keeps
#: them on the device: its copies over the bus would cost more than a verification's checks.
HOST_KEY_BYTES = 1 << 30
#: The time a call that is only reported (the derived shape) may take: this many times the
#: slowest checked call, and at least DERIVED_MIN_S seconds.
DERIVED_FACTOR = 10.0
#: The smallest error (relative to the output's scale) a refereed call is taken to have
#: when unrefereed calls are held to it: a few fp32 roundings.
UNREFEREED_FLOOR = 1e-6
DERIVED_MIN_S = 10.0


class ReferenceFailure(Exception):
    """The reference (the user's problem) could not run: a user error. ``died``: its process
    ended without an answer (a signal, a crash), which a candidate's process can cause."""

    def __init__(self, message: str, *, died: bool = False) -> None:
        super().__init__(message)
        self.died = died


@dataclass
class Child:
    """One forked process and its socket."""

    name: str
    pid: int
    sock: socket.socket
    deadline: float = 0.0
    #: Where the time went: per command, [requests, seconds, bytes sent, bytes received].
    spent: dict[str, list[float]] = field(default_factory=dict)

    def ask(
        self, header: dict[str, Any], blobs: list[Any] | None = None, *, limit: int = 1 << 40
    ) -> tuple[dict[str, Any], list[bytearray]]:
        """Send a command and wait for the reply until this child's deadline."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        self.sock.settimeout(remaining)
        start = time.monotonic()
        wire.send(self.sock, header, blobs)
        reply = wire.recv(self.sock, limit)
        row = self.spent.setdefault(str(header.get("cmd")), [0, 0.0, 0, 0])
        row[0] += 1
        row[1] += time.monotonic() - start
        row[2] += sum(memoryview(b).nbytes for b in blobs or [])
        row[3] += sum(len(b) for b in reply[1])
        return reply

    def stop(self) -> str:
        """Kill the process and everything it forked; how it ended, in words."""
        with contextlib.suppress(OSError):
            self.sock.close()
        status = None
        with contextlib.suppress(OSError):
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == 0:
                status = None
        kill_tree(self.pid)
        if status is None:
            with contextlib.suppress(OSError):
                _, status = os.waitpid(self.pid, 0)
            return "killed"
        return _describe_status(status)

    def exit_status(self) -> str:
        """Wait briefly for a child whose socket closed; how it ended."""
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid:
                    return _describe_status(status)
            time.sleep(0.02)
        return "closed its connection"


def _describe_status(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return f"died with {name}"
    return f"exited with code {os.WEXITSTATUS(status)}"


@dataclass
class Record:
    """What the checker learnt, phase by phase (returned to the caller as plain data)."""

    phases: dict[str, dict[str, Any]] = field(default_factory=dict)


_STATE_WORDS = {
    "stale": "was not written during this call (a result kept from an earlier call, or an "
    "input returned as is)",
    "fresh": "was only allocated or filled with a constant during this call (no kernel wrote it)",
    "torch": "was written by PyTorch compute ops, not by the candidate's kernels",
    "foreign": "holds data that no ATen op or kernel of the candidate produced (host memory: "
    "numpy, DLPack, from_numpy, Tensor.apply_, a raw address taken with data_ptr on the CPU, "
    "or a kernel staging such data)",
    "unlinked": "was written from data that nothing of this call's inputs reached (a result "
    "kept or looked up, copied by a kernel, instead of one computed from the inputs)",
}


#: Parts of a call a serving process may report (``_Clock.add``).
PARTS_MAX = 12


class _Clock:
    """Where one verification's time went: wall seconds per stage, and per child and command
    the requests, seconds and bytes moved (the children's counters run across candidates, so
    the differences from the start are kept)."""

    def __init__(
        self, *children: Child, memory: Callable[[], dict[str, int]] | None = None
    ) -> None:
        self.children = children
        self.start = self.last = time.monotonic()
        self.before = {c.name: {k: list(v) for k, v in c.spent.items()} for c in children}
        self.stages: dict[str, float] = {}
        #: Device bytes at most so far, per process, as each stage ended (GPU only): the stage
        #: whose row first shows a process's peak is where that peak came from.
        self.memory = memory
        self.peaks: dict[str, dict[str, int]] = {}
        #: Seconds of the calls' parts (checked and reported), summed over the calls: the
        #: candidate's and the reference's as their processes report them (``phases_s``:
        #: figures only, for the report; nothing is decided on them) and the checker's own.
        self.parts: dict[str, float] = {}

    def add(self, side: str, phases: Any) -> None:
        """Fold a call's ``{part: seconds}`` into ``parts`` under ``side`` (bad entries left
        out: a candidate's process sends these)."""
        if not isinstance(phases, dict):
            return
        for name, seconds in list(phases.items())[:PARTS_MAX]:
            if isinstance(name, str) and isinstance(seconds, int | float) and 0 <= seconds < 1e6:
                key = f"{side} {name[:40]}"
                self.parts[key] = self.parts.get(key, 0.0) + float(seconds)

    def lap(self, stage: str) -> None:
        now = time.monotonic()
        self.stages[stage] = round(self.stages.get(stage, 0.0) + now - self.last, 3)
        if self.memory is not None:
            self.peaks[stage] = self.memory()
        self.last = time.monotonic()

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "seconds": round(time.monotonic() - self.start, 3),
            "stages": self.stages,
        }
        if self.peaks:
            out["peak_bytes_by_stage"] = self.peaks
        if self.parts:
            out["call_parts_s"] = {k: round(v, 3) for k, v in sorted(self.parts.items())}
        for child in self.children:
            was = self.before.get(child.name, {})
            rows = {}
            for cmd, row in child.spent.items():
                base = was.get(cmd, [0, 0.0, 0, 0])
                d = [row[i] - base[i] for i in range(4)]
                if d[0]:
                    rows[cmd] = {
                        "requests": int(d[0]),
                        "seconds": round(d[1], 3),
                        "sent_mb": round(d[2] / 2**20, 1),
                        "received_mb": round(d[3] / 2**20, 1),
                    }
            out[child.name] = rows
        return out


#: A call's values far below an output's scale are judged on their own from this many on;
#: fewer are pooled with the output's other such calls (``_pooled_small_values``).
SMALL_VALUES_ALONE = 32


def _pooled_small_values(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The small-value figures the verdict judges: each call's own where it has at least
    ``SMALL_VALUES_ALONE`` values far below an output's scale, and per output leaf one pool
    of the calls with fewer (the candidate's and the reference's mean relative error over all
    their values). A mean over a handful of values is set by the one nearest zero: a 2x1500
    row normalisation has one to five per call, and an honest Inductor harvest, 0.14 ulps of
    the output's scale off, read 12x there on the stress call (three values) against a
    reference that sums its mean in double; its pool of calls reads 1.9x. A call with many
    small values keeps its own figure, so a cheat confined to one call (a tanh-form GELU on
    the stress call's hundreds) is not diluted by the others."""
    out: list[dict[str, Any]] = []
    # Per output leaf: its first pooled record and the candidate's and the reference's means,
    # folded as ``RefereeErrors.merge`` folds leaves (weighted by their counts).
    pooled: dict[int, tuple[dict[str, Any], RefereeErrors, RefereeErrors]] = {}
    for r in records:
        count = int(r["small_count"])
        if not count:
            continue
        if count >= SMALL_VALUES_ALONE:
            out.append(r)
            continue
        _, cand, ref = pooled.setdefault(r["leaf"], (r, RefereeErrors(), RefereeErrors()))
        cand.merge(RefereeErrors(small_rel=r["small_rel_candidate"], small_count=count))
        ref_count = int(r.get("small_count_reference", count))
        ref.merge(RefereeErrors(small_rel=r["small_rel_reference"], small_count=ref_count))
    for first, cand, ref in pooled.values():
        out.append(
            {
                **first,
                "small_rel_candidate": cand.small_rel,
                "small_count": cand.small_count,
                "small_rel_reference": ref.small_rel,
                "small_count_reference": ref.small_count,
            }
        )
    return out


class Checker:
    """One verification: the schedule, the gates' decisions, the metrics."""

    def __init__(self, kwargs: dict[str, Any], ref: Child, cand: Child) -> None:
        self.device: str = kwargs["device"]
        self.dispatch_only: bool = kwargs["dispatch_only"]
        self.cuda_graphs: bool = kwargs["cuda_graphs"]
        self.factor: float = kwargs["fp64_factor"]
        self.seed: int = kwargs["seed"]
        self.limit: float = kwargs["time_limit_s"]
        self.problem = kwargs["problem"]
        self.source: str = kwargs["candidate_source"]
        self.calls = draw_schedule(self.seed, kwargs["seeds"], self.device)
        self.ref = ref
        self.cand = cand
        self.record = Record()
        self.construction_launches = 0
        self.launched_before = 0
        self.out_bytes = 0
        self.footprint = 0  # the reference's own device bytes (the memory ratio's base)
        # Inputs and outputs: the bytes any evaluation touches. Not the weights: a candidate
        # may derive what it needs from them at load (a fold, re-derived on every reload), and
        # on the H200 such a fold (a row sum after a Linear, 209x eager) read 256 MiB of input
        # a call and was refused for not also moving the 256 MiB weight.
        self.moved = 0
        self.referee: list[dict[str, Any]] = []
        self.fp64_reason: str | None = None
        self.fp64_note = ""
        self.strict = True
        self.per_call: list[dict[str, Any]] = []
        self.total = Comparison()
        #: Whether any output was compared (``total`` holds an error only then).
        self.compared = False
        self.generalization: dict[str, Any] = {}
        self.skipped: list[str] = []  # checked calls the reference could not take, and why
        #: Whether the candidate and the reference have run the same forwards since their
        #: weights were last loaded (a back-to-back run, or a forward only the reference made,
        #: ends it; a reload starts it again): only then are the parameters and buffers their
        #: forwards change compared (a BatchNorm's running statistics in training).
        self.state_synced = True
        self.state_asked = False  # this call asks the candidate for them
        self.state_compared = 0
        self.shift_note = ""  # the shift call, left to the referee past the loose tolerance
        self.last_strict: tuple[bool, str] = (True, "")
        #: (specs, spec errors, peak bytes) from the candidate, once asked (``_take_records``).
        self.taken: tuple[list[Any], dict[str, str], int] | None = None
        self.slowest_call = 0.0
        self.static_detail = ""
        self.first_launches = 0
        self.kernels: dict[str, int] = {}
        self.phase = "reference"
        # The performance gate's baselines (run in this worker after the value gates), or None.
        self.performance: list[str] | None = kwargs.get("performance")
        # Bulk tensors device to device (verify.ipc) on the GPU; the byte path otherwise.
        self.ipc = self.device == "cuda" and os.environ.get("KERNELOPT_VERIFY_IPC", "1") != "0"
        self.staging: Any = None  # verify.ipc.Staging: the buffers lent to the candidate
        self.reply_bulk: wire.Bulk | None = None
        self.key_host = False  # whether this case's answer key is held in host memory
        self.ipc_note = ""

    # ------------------------------------------------------------------ driving

    def run(self) -> dict[str, dict[str, Any]]:
        """All phases; a candidate failure ends the run with that gate's verdict."""
        phases = self.record.phases
        self._clock = _Clock(
            self.ref, self.cand, memory=self._peaks_so_far if self.device == "cuda" else None
        )
        if self.device == "cuda" and torch.cuda.is_initialized():
            torch.cuda.reset_peak_memory_stats()  # a service's checker serves many candidates
        self.ref.deadline = time.monotonic() + self.limit
        try:
            setup, setup_blobs = self._ref_ask({"cmd": "setup", **self._problem_fields()})
        except ReferenceFailure as exc:
            phases["reference"] = {"problem_error": str(exc)}
            return phases
        phases["reference"] = {"ok": True}
        self._clock.lap("reference setup")
        self.cand.deadline = time.monotonic() + self.limit
        try:
            self.phase = "static"
            self._load(setup, setup_blobs)
            self._clock.lap("candidate load")
            for index, call in enumerate(self.calls):
                if not call.checked:
                    continue  # reported only: after the performance gate (below)
                self.phase = "static" if index == 0 else "correctness"
                started = time.monotonic()
                self._one(index, call)
                self.slowest_call = max(self.slowest_call, time.monotonic() - started)
                self._clock.lap("first call" if index == 0 else "value calls")
                if index == 0:
                    phases["static"] = self._static_pass()
            phases["correctness"] = self._correctness_verdict()
            phases["fp64"] = self._fp64_verdict()
            # The launch records and the peak memory are the checked calls' (taken before the
            # performance gate's input pool and before any call that may crash the process).
            if self.taken is None:
                self._take_records()
            if self.performance is not None and phases["fp64"].get("status") != "fail":
                phases["performance"] = self._performance(self.performance)
                self._clock.lap("performance")
            # A call only reported (the derived shape) comes last, after every gate: a kernel
            # specialised to the benchmark's shapes may hang or crash there, and on the GPU an
            # out-of-bounds access leaves the process's CUDA context unusable (before, the
            # performance gate that followed failed with 'illegal memory access' on the H200
            # for every such harvested candidate, so none was ever timed).
            reported = [(i, c) for i, c in enumerate(self.calls) if not c.checked]
            if reported and "performance" in phases:
                from kernelopt_jupyter.verify import perf

                perf.release(self)
            for index, call in reported:
                self.phase = "correctness"
                deadline = self.cand.deadline
                # A bounded share of time: waiting out the whole limit cost every harvested
                # candidate 120 s on the CPU.
                share = max(DERIVED_MIN_S, DERIVED_FACTOR * self.slowest_call)
                self.cand.deadline = min(deadline, time.monotonic() + share)
                self._one(index, call)
                self.cand.deadline = deadline
                self._clock.lap("reported calls")
            if reported:  # the verdict names what the derived shape showed
                phases["correctness"] = self._correctness_verdict()
        except CandidateFailure as exc:
            gate = exc.gate
            if gate == "static" and "static" not in phases:
                phases["static"] = {"ok": False, "status": "fail", "detail": str(exc)}
            else:
                phases.setdefault("static", self._static_pass())
                phases["correctness"] = {
                    "status": "fail",
                    "detail": str(exc),
                    **self._correctness_metrics(),
                }
        except ReferenceFailure as exc:
            if not exc.died:
                phases["reference"] = {"problem_error": str(exc)}
            else:
                # The reference had set up and answered; its process then died while this
                # candidate's process ran beside it (a sibling can signal it): the candidate
                # fails, the problem is not blamed and a search goes on.
                detail = f"{exc} while this candidate was being verified (the candidate fails)"
                if "static" not in phases:
                    phases["static"] = {"ok": False, "status": "fail", "detail": detail}
                else:
                    phases["correctness"] = {
                        "status": "fail",
                        "detail": detail,
                        **self._correctness_metrics(),
                    }
        self._finish()
        phases["timings"] = self._clock.report()
        phases["timings"]["transfer"] = (
            "device to device (CUDA IPC)"
            if self.ipc
            else "bytes" + (f" ({self.ipc_note})" if self.ipc_note else "")
        )
        if self.staging is not None:
            self.staging.close()
            self.staging = None
        return phases

    def _performance(self, baselines: list[str]) -> dict[str, Any]:
        """The performance gate (``verify.perf``): a failure there fails that gate only."""
        from kernelopt_jupyter.verify import perf

        try:
            return perf.run_gate(self, baselines)
        except CandidateFailure as exc:
            return {"status": "fail", "detail": str(exc)}

    def _problem_fields(self) -> dict[str, Any]:
        return {"device": self.device, "weights_seed": 0}

    def _ref_ask(
        self, header: dict[str, Any], blobs: list[Any] | None = None
    ) -> tuple[dict[str, Any], list[bytearray]]:
        if header.get("cmd") == "setup":
            fields, blobs = wire.pack([("problem", self.problem)], allow_pickle=True)
            header = {**header, **fields}
        try:
            reply, got = self.ref.ask(header, blobs)
        except TimeoutError:
            raise ReferenceFailure(
                f"{self.problem.path}: the reference could not run (timed out after "
                f"{self.limit:.0f} s; a longer time limit (--time-limit) may help)"
            ) from None
        except (OSError, wire.WireError):
            raise ReferenceFailure(
                f"{self.problem.path}: the reference's process {self.ref.exit_status()}",
                died=True,
            ) from None
        if not reply.get("ok"):
            if reply.get("oom"):
                # Device memory was short beside the candidate's process: not the problem's
                # fault; this candidate's verification fails and a search goes on.
                raise ReferenceFailure(str(reply.get("detail")), died=True)
            raise ReferenceFailure(str(reply.get("problem_error") or reply.get("detail")))
        return reply, got

    def _cand_ask(
        self, header: dict[str, Any], blobs: list[Any] | None = None, *, limit: int = 1 << 40
    ) -> tuple[dict[str, Any], list[bytearray]]:
        start = time.monotonic()
        try:
            return self.cand.ask(header, blobs, limit=limit)
        except TimeoutError:
            self.cand.stop()
            raise CandidateFailure(
                f"timed out after {time.monotonic() - start:.0f} s in the {self.phase} phase "
                "(hang or too slow)",
                self.phase,
            ) from None
        except wire.WireError as exc:
            how = self.cand.exit_status()
            if "closed" in str(exc):
                raise CandidateFailure(
                    f"the candidate's process {how} in the {self.phase} phase "
                    f"({time.monotonic() - start:.1f} s into the call)",
                    self.phase,
                ) from None
            self.cand.stop()
            raise CandidateFailure(
                f"the candidate's process sent a malformed reply ({exc})", self.phase
            ) from None
        except OSError:
            raise CandidateFailure(
                f"the candidate's process {self.cand.exit_status()} in the {self.phase} phase",
                self.phase,
            ) from None

    # ------------------------------------------------------------------ phases

    def _load(self, setup: dict[str, Any], blobs: list[bytearray]) -> None:
        init, init_blobs = wire.subset(setup["init"], blobs)
        state, state_blobs = wire.subset(setup["state"], blobs)
        wire.shift(state, len(init_blobs))
        self.footprint += wire.nbytes(setup["state"])
        reply, _ = self._cand_ask(
            {
                "cmd": "load",
                "device": self.device,
                "source": self.source,
                "kind": setup["kind"],
                "entry": setup["entry"],
                "as_constructed": bool(setup.get("as_constructed")),
                "init": init,
                "state": state,
            },
            init_blobs + state_blobs,
            limit=REPLY_SLACK,
        )
        if not reply.get("ok"):
            raise CandidateFailure(str(reply.get("detail")), "static")
        missing, unexpected = reply.get("missing") or [], reply.get("unexpected") or []
        if missing or unexpected:
            parts = []
            # Loading the reference's state into ModelNew: "missing" keys are ModelNew's own
            # tensors the reference does not have; "unexpected" ones the reference's it lacks.
            if missing:
                parts.append(f"it has its own {', '.join(map(str, missing[:6]))}")
            if unexpected:
                parts.append(f"it lacks the reference's {', '.join(map(str, unexpected[:6]))}")
            raise CandidateFailure(
                "ModelNew's parameters and buffers differ from the reference's ("
                + "; ".join(parts)
                + "): declare the same ones so the reference's weights load into it",
                "static",
            )
        changes = reply.get("changes") or []
        if changes:
            raise CandidateFailure(
                "the candidate changed the harness's environment while loading: "
                + "; ".join(map(str, changes[:4])),
                "static",
            )
        self.construction_launches = int(reply.get("construction_launches") or 0)
        self.launched_before = self.construction_launches

    def _one(self, index: int, call: Call) -> None:
        gate = "static" if index == 0 else "correctness"
        label = f"call {index + 1} ({call.kind}, seed {call.seed})"
        if call.reload_seed is not None:
            reloaded, rblobs = self._ref_ask({"cmd": "reload", "seed": call.reload_seed})
            state, sblobs = wire.subset(reloaded["state"], rblobs)
            reply, _ = self._cand_ask({"cmd": "reload", "state": state}, sblobs, limit=REPLY_SLACK)
            if not reply.get("ok"):
                raise CandidateFailure(f"{label}: {reply.get('detail')}", gate)
            self.state_synced = True
        if call.burst:
            self.state_synced = False  # the candidate's forwards before this call
        case, blobs = self._case(call)
        if "skip" in case:
            if not case.get("nothing_to_vary"):
                self.state_synced = False  # the reference's forward ran (or began) alone
            if not call.checked:  # the derived shape's call (reported only)
                self.generalization = {"shapes": "not checked", "reason": case["skip"]}
            elif not case.get("nothing_to_vary"):
                # a variation the reference cannot take (shift, zeros, permute); a call with
                # nothing to vary (no integer input to permute) is simply not made
                self.skipped.append(f"{call.kind}: {case['skip']}")
            return
        inputs, input_blobs = self._lend_inputs(*wire.subset(case["inputs"], blobs))
        _drop_device_blobs(case["inputs"], blobs)  # lent: this process needs only the digests
        ref_out = wire.decode(case["out"], blobs, trusted=True)
        out_bytes = wire.nbytes(case["out"])
        if index == 0:
            # The reference's own footprint: inputs, weights (at setup), and what its forward
            # held at most beyond them (outputs and workspace).
            forward = max(out_bytes, int(case.get("forward_peak") or 0))
            self.footprint += wire.nbytes(case["inputs"]) + forward
            self.moved += wire.nbytes(case["inputs"]) + out_bytes
        mutated = [int(i) for i in case.get("mutated") or []]
        header = {
            "cmd": "call",
            "inputs": inputs,
            "order": call.order,
            "order_seed": call.order_seed,
            "poison": call.poison,
            "burst": call.burst,
            "return_inputs": mutated,
        }
        limit = 2 * out_bytes + wire.nbytes(case["inputs"]) + REPLY_SLACK
        self.state_asked = bool(
            case.get("state_changed_names") and self.state_synced and call.checked
        )
        if self.state_asked:
            header["return_state"] = list(case["state_changed_names"])
            limit += wire.nbytes(case["state_after"])
        header["slots"] = self._out_slots(case["out"])
        try:
            reply, got = self._cand_ask(header, input_blobs, limit=limit)
            if reply.get("ipc_error") and self.ipc:
                # The candidate's process could not map the buffers lent to it: this
                # verification goes the byte path from here on (the same call again).
                self.ipc = False
                self.ipc_note = str(reply["ipc_error"])
                # This attempt's device copies go before the retry takes its own.
                self.state_synced = False  # the reference's forward of this attempt
                del case, blobs, ref_out, inputs, input_blobs, header
                return self._one(index, call)
            self._judge(index, call, label, gate, case, blobs, ref_out, reply, got)
        except CandidateFailure as exc:
            if call.checked:
                raise
            self.generalization = {
                "shapes": "specialized to the benchmark's shapes",
                "derived": case.get("described"),
                "reason": str(exc),
            }
            return
        if not call.checked:
            strict, worst = self.last_strict
            if strict:
                self.generalization = {"shapes": "generalizes", "derived": case.get("described")}
            else:
                # Within the loose tolerance only: not refereed, so not called general (a
                # tanh GELU at every other batch size was reported as generalizing).
                self.generalization = {
                    "shapes": "specialized to the benchmark's shapes",
                    "derived": case.get("described"),
                    "reason": f"at the derived shape the output misses the strict tolerance "
                    f"({worst})",
                }

    def _case(self, call: Call) -> tuple[dict[str, Any], list[Any]]:
        """The reference's case for a call. On the GPU its large tensors come by CUDA IPC
        from the reference's staging buffers: copied here at once, then the reference
        zero-fills its shared answer key (``scrub``) before the candidate is called. The
        float64 referee's parts come in a second reply (``referee_pending``), once the first
        reply's buffers are freed, so the reference never holds both."""
        header = {
            "cmd": "case",
            "seed": call.seed,
            "transform": call.transform,
            "referee": call.referee and self.fp64_reason is None,
        }
        while True:  # at most twice: a handle that cannot be opened turns IPC off
            case, blobs = self._shared({**header, "share": self.ipc})
            if case is not None and case.pop("referee_pending", False):
                more, more_blobs = self._shared({"cmd": "referee"})
                if more is None:
                    case = None
                else:
                    for name in ("out64", "bound64"):
                        if name in more:
                            wire.shift(more[name], len(blobs))
                            case[name] = more[name]
                    case["fp64_reason"] = more.get("fp64_reason")
                    case["fp64_note"] = more.get("fp64_note") or case.get("fp64_note")
                    if isinstance(case.get("phases_s"), dict) and isinstance(
                        more.get("phases_s"), dict
                    ):
                        case["phases_s"] = {**case["phases_s"], **more["phases_s"]}
                    blobs = blobs + more_blobs
            if case is not None:
                return case, blobs

    def _shared(self, header: dict[str, Any]) -> tuple[Any, list[Any]]:
        """A reference reply whose device-handle leaves are copied into this process and
        then scrubbed there; ``(None, [])`` where a handle could not be opened (this
        verification goes the byte path from then on)."""
        reply, blobs = self._ref_ask(header)
        if not self.ipc or not wire.has_bulk(reply):
            return reply, blobs
        from kernelopt_jupyter.verify import ipc

        mappings = ipc.Mappings()
        if isinstance(reply.get("out"), dict):
            self.key_host = _key_on_host(reply["out"])
        on_device = wire.Bulk(mappings=mappings)
        on_host = wire.Bulk(mappings=mappings, host=self.key_host)
        try:
            # The inputs (a case's, the timing pool) are lent to the candidate from the
            # device; the answer key is only read, in steps, so it waits in host memory
            # where it is not large.
            started = time.monotonic()
            local = {
                k: wire.localize(v, blobs, on_device if k in ("inputs", "pool") else on_host)
                for k, v in reply.items()
            }
            if header.get("cmd") in ("case", "referee"):
                self._clock.add("checker", {"key copy": time.monotonic() - started})
            return local, blobs
        except (wire.WireError, ipc.IpcError, RuntimeError) as exc:  # RuntimeError: torch, OOM
            self.ipc = False
            self.ipc_note = f"the reference's device handles could not be opened ({exc})"
            return None, []
        finally:
            try:
                mappings.close()
            finally:
                self._ref_ask({"cmd": "scrub"})

    def _lend_inputs(self, tree: Any, blobs: list[Any]) -> tuple[Any, list[Any]]:
        """The inputs as the candidate gets them: each local device tensor copied into a
        staging buffer of this process that the candidate maps (``verify.ipc``); the rest as
        bytes."""
        if not any(isinstance(b, torch.Tensor) for b in blobs):
            return tree, blobs
        from kernelopt_jupyter.verify import ipc

        if self.staging is None:
            self.staging = ipc.Staging()
        count = [0]

        def lend(leaf: dict[str, Any]) -> dict[str, Any]:
            blob = leaf.get("blob")
            if leaf.get("t") != "tensor" or not isinstance(blob, int):
                return leaf
            value = blobs[blob]
            if not isinstance(value, torch.Tensor):
                return leaf
            count[0] += 1
            try:
                return ipc.stage_input(self.staging, count[0] - 1, value)
            except (ipc.IpcError, RuntimeError):
                blobs[blob] = wire._tensor_bytes(value)
                return leaf

        return wire.subset(wire.map_leaves(tree, lend), blobs)

    def _out_slots(self, out_tree: Any) -> list[Any] | None:
        """Staging buffers of this process for the candidate's outputs, one per tensor leaf
        of the reference's output (``None`` for a small one): the candidate's harness copies
        its output's bytes there instead of sending them."""
        self.reply_bulk = None
        if not self.ipc:
            return None
        from kernelopt_jupyter.verify import ipc

        sizes: list[int] = []

        def size(leaf: dict[str, Any]) -> None:
            if leaf.get("t") == "tensor":
                sizes.append(wire.nbytes(leaf))

        wire.map_leaves(out_tree, size)
        if not any(n >= ipc.MIN_BYTES for n in sizes):
            return None
        if self.staging is None:
            self.staging = ipc.Staging()
        slots: list[Any] = []
        raws: list[torch.Tensor] = []
        for k, n in enumerate(sizes):
            if n < ipc.MIN_BYTES:
                slots.append(None)
                raws.append(torch.empty(0, dtype=torch.uint8))
                continue
            try:
                buf = self.staging.get("out", k, n)
            except (ipc.IpcError, RuntimeError):
                slots.append(None)
                raws.append(torch.empty(0, dtype=torch.uint8))
                continue
            buf.raw.zero_()  # nothing of an earlier output is left for this one to claim
            slots.append({"handle": buf.handle, "extent": buf.nbytes})
            raws.append(buf.raw)
        torch.cuda.synchronize()
        self.reply_bulk = wire.Bulk(slots=raws, host=_key_on_host(out_tree))
        return slots

    def _judge(
        self,
        index: int,
        call: Call,
        label: str,
        gate: str,
        case: dict[str, Any],
        blobs: list[bytearray],
        ref_out: Any,
        reply: dict[str, Any],
        got: list[bytearray],
    ) -> None:
        if not reply.get("ok"):
            detail = str(reply.get("detail"))
            raise CandidateFailure(f"{detail} ({label})", gate)
        self._accounting(index, label, gate, reply)
        if index == 0:
            self.first_launches = int(reply.get("launches") or 0)
            self.kernels = {str(k): int(v) for k, v in (reply.get("kernels") or {}).items()}
        # From here on the call ran under the rules: what is wrong now is a wrong answer.
        self._clock.add("candidate", reply.get("phases_s"))
        self._clock.add("reference", case.get("phases_s"))
        started = time.monotonic()
        try:
            out = wire.decode(reply["out"], got, bulk=self.reply_bulk)
        except wire.WireError as exc:
            raise CandidateFailure(
                f"{label}: the output could not be taken as data ({exc})"
            ) from None
        decoded = time.monotonic()
        stress = call.kind == "stress"
        ref64 = rows = bound64 = bound_ok = None
        if "out64" in case:
            # Compared and refereed in one walk (a linear problem's bound too): the
            # candidate's output and the key wait in host memory on a GPU, and each step
            # goes to the device once.
            ref64 = wire.decode(case["out64"], blobs, trusted=True)
            if "bound64" in case:
                bound64 = wire.decode(case["bound64"], blobs, trusted=True)
            cmp, rows, bound_ok = compare_and_referee(
                out, ref_out, ref64, bound64=bound64, magnitude=stress, device=self.device
            )
        else:
            cmp = compare_outputs(out, ref_out, magnitude=stress, device=self.device)
        self._clock.add(
            "checker", {"output copy": decoded - started, "compare": time.monotonic() - decoded}
        )
        self.last_strict = (cmp.strict_ok, cmp.worst)
        # The hints name a race between a kernel's programs: only for a call that launched one.
        # The hints name a race between a kernel's programs: only for a call that launched one.
        reordered = ""
        if int(reply.get("launches") or 0) > 0 and call.poison:
            reordered = (
                f" (this call ran every launch's programs in {call.order} order, with fresh "
                "allocations filled with NaN: a result that depends on the order programs run "
                "in, or that reads memory nothing wrote, is a race on a GPU)"
            )
        elif int(reply.get("launches") or 0) > 0 and call.order != "grid":
            reordered = (
                " (on the CPU each launch's programs run in a drawn order: if the result "
                "depends on that order, the kernel races on a GPU)"
            )
        if cmp.error:
            raise CandidateFailure(f"{label}: {cmp.error}{reordered}")
        self._inputs(label, case, blobs, reply, got)
        if not case.get("state_changed") and reply.get("state_before") != reply.get("state_after"):
            raise CandidateFailure(
                f"{label}: forward changed the model's parameters or buffers (the reference "
                "leaves them unchanged)"
            )
        if self.state_asked:
            self._state(label, case, blobs, reply, got)
        if reply.get("shared_with_previous"):
            raise CandidateFailure(
                f"{label}: the output shares memory with the previous call's output (a result "
                "buffer reused between calls; a later call would overwrite earlier results)"
            )
        if reply.get("previous_changed"):
            raise CandidateFailure(
                f"{label}: the output returned by the previous call changed when the candidate "
                "was called again (results must not be reused between calls)"
            )
        if not cmp.loose_ok:
            # Off zero a reference whose formula cancels (E[x^2] - E[x]^2) is itself far from
            # the exact answer, and a better candidate far from it: on the shift call the
            # float64 referee, which sees that call, decides (the strict tolerance then no
            # longer holds, so without a referee the candidate fails).
            if not (call.kind == "shift" and "out64" in case):
                self.total.merge(cmp)  # the failing call's error is the one to report
                self.compared = True
                raise CandidateFailure(f"{label}: {cmp.worst}{reordered}")
            self.shift_note = (
                f"{label} misses even the loose tolerance against the fp32 reference "
                f"({cmp.worst}): the float64 referee decides"
            )
        if call.checked:
            self.total.merge(cmp)
            self.compared = True
            refereed = "out64" in case
            # The error relative to the output's scale, where the referee will need it: on a
            # refereed call (what the referee saw) and on a call that missed the strict
            # tolerance without a referee (which may not be far worse than what it saw).
            norm = None
            if refereed or not cmp.strict_ok:
                norm = cmp.max_abs_err / max(cmp.scale, 1e-30)
            self.per_call.append(
                {
                    **call.describe(),
                    "call": index + 1,
                    "max_abs_err": cmp.max_abs_err,
                    "strict": cmp.strict_ok,
                    "refereed": refereed,
                    "scaled_err": norm,
                }
            )
        if ref64 is not None:
            started = time.monotonic()
            if bound_ok is None:  # not taken in the comparison's walk
                bound_ok = bound64 is not None and within_linear_bound(out, ref64, bound64)
            # One record per output leaf, each with its own floor (its magnitude, its dtype).
            # The candidate and the fp32 reference against the referee, in one walk (the
            # comparison's, where the leaves lined up simply).
            leaves = rows if rows is not None else referee_sides([out, ref_out], ref64, own=ref_out)
            for leaf, (cand_err, ref_err) in enumerate(leaves):
                if cand_err is None or ref_err is None:
                    continue
                dtypes = [ref_err.dtype] if ref_err.dtype is not None else []
                self.referee.append(
                    {
                        "call": index + 1,
                        "kind": call.kind,
                        "leaf": leaf,
                        "err_candidate": cand_err.max_abs,
                        "err_reference": ref_err.max_abs,
                        "floor": leaf_floor(ref_err.magnitude, dtypes),
                        "small_rel_candidate": cand_err.small_rel,
                        "small_rel_reference": ref_err.small_rel,
                        "small_count": cand_err.small_count,
                        "small_count_reference": ref_err.small_count,
                        "rel_floor": relative_floor(dtypes),
                        "mid_rel_candidate": cand_err.mid_rel_p99,
                        "mid_rel_reference": ref_err.mid_rel_p99,
                        "mid_floor": mid_floor(dtypes),
                        "bound_ok": bound_ok,
                    }
                )
            self._clock.add("checker", {"referee": time.monotonic() - started})
        elif case.get("fp64_reason") and self.fp64_reason is None:
            self.fp64_reason = str(case["fp64_reason"])
        if case.get("fp64_note"):
            self.fp64_note = str(case["fp64_note"])

    def _accounting(self, index: int, label: str, gate: str, reply: dict[str, Any]) -> None:
        launches = int(reply.get("launches") or 0)
        replays = int(reply.get("graph_replays") or 0)
        vendor = sum(int(v) for v in (reply.get("vendor_ops") or {}).values())
        # A CUDA graph replays work launched (and captured) earlier: Triton kernels or vendor
        # calls (cuBLAS, cuDNN: a dispatch-only candidate's graph), in __init__ or in an
        # earlier call; a replay goes through no Triton entry point and no ATen op. (Its
        # output is then "stale" to the dispatch accounting; the values are checked anyway,
        # on new inputs every call.) A dispatch-only candidate's work may be ATen's own
        # kernels (an average pool, a softmax): captured, those count as well.
        graph_replay = self.cuda_graphs and replays > 0 and self.launched_before > 0
        self.launched_before += launches + vendor
        if self.dispatch_only:
            self.launched_before += sum(int(v) for v in (reply.get("compute_ops") or {}).values())
        if reply.get("stream_violations"):
            raise CandidateFailure(str(reply["stream_violations"][0]), gate)
        changes = reply.get("changes") or []
        if changes:
            raise CandidateFailure(
                "the candidate changed the harness's environment: "
                + "; ".join(map(str, changes[:4])),
                gate,
            )
        if launches == 0 and not self.dispatch_only and not graph_replay:
            where = "forward" if index == 0 else f"{label}: forward"
            raise CandidateFailure(
                f"{where} launched no Triton kernel, so the work ran in PyTorch ops: launch at "
                "least one @triton.jit kernel in forward, or mark a candidate that only "
                "re-routes ops between libraries with KERNELOPT_DISPATCH_ONLY = True",
                gate,
            )
        compute = reply.get("compute_ops") or {}
        if compute and not self.dispatch_only:
            names = ", ".join(f"{k} x{v}" for k, v in sorted(compute.items())[:6])
            raise CandidateFailure(
                f"{label}: forward ran PyTorch compute ops besides its kernels ({names}): the "
                "work must come from the candidate's Triton kernels or vendor calls (matmul, "
                "convolution, attention); mark a candidate that only re-routes ops between "
                "libraries with KERNELOPT_DISPATCH_ONLY = True",
                gate,
            )
        allowed = {"kernel", "vendor"} | ({"torch"} if self.dispatch_only else set())
        for i, leaf in enumerate(reply.get("provenance") or []):
            state = str(leaf.get("state"))
            if state in allowed or (graph_replay and state == "stale"):
                continue
            name = "the output" if len(reply["provenance"]) == 1 else f"output[{i}]"
            words = _STATE_WORDS.get(state, f"has an unknown origin ({state})")
            raise CandidateFailure(f"{label}: the memory of {name} {words}", gate)

    def _inputs(
        self,
        label: str,
        case: dict[str, Any],
        blobs: list[bytearray],
        reply: dict[str, Any],
        got: list[bytearray],
    ) -> None:
        mutated = [int(i) for i in case.get("mutated") or []]
        want = case.get("input_digests") or []
        have = reply.get("input_digests") or []
        for i, digest in enumerate(want):
            if i in mutated:
                continue
            if i >= len(have) or have[i] != digest:
                raise CandidateFailure(
                    f"{label}: the candidate modified input {i} in place (the reference leaves "
                    "it unchanged)"
                )
        if mutated:
            ref_after = wire.decode(case["inputs_after"], blobs, trusted=True)
            try:
                cand_after = wire.decode(reply.get("inputs_after"), got)
            except wire.WireError:
                cand_after = None
            cmp = compare_outputs(cand_after, ref_after, device=self.device)
            which = ", ".join(str(i) for i in mutated)
            if cmp.error or not cmp.loose_ok:
                raise CandidateFailure(
                    f"{label}: the reference updates input {which} in place and the candidate "
                    "does not do the same"
                )
            if not cmp.strict_ok:
                # No referee rules on in-place updates, so the strict tolerance is their bar
                # (a residual updated through bf16, 7.8e-3 off, passed the loose one).
                raise CandidateFailure(
                    f"{label}: the reference updates input {which} in place and the candidate's "
                    f"update misses the strict tolerance ({cmp.worst})"
                )

    def _state(
        self,
        label: str,
        case: dict[str, Any],
        blobs: list[bytearray],
        reply: dict[str, Any],
        got: list[bytearray],
    ) -> None:
        """The parameters and buffers the reference's forward changed, against the
        candidate's after the same forwards (asked for with ``return_state``)."""
        names = [str(n) for n in case.get("state_changed_names") or []]
        if "state_values" not in reply:
            raise CandidateFailure(f"{label}: the reply holds no parameters or buffers")
        missing = [str(n) for n in reply.get("state_missing") or []]
        if missing:
            raise CandidateFailure(
                f"{label}: the reference's forward updates {', '.join(missing[:3])}, which the "
                "candidate's model does not have"
            )
        ref_state = wire.decode(case["state_after"], blobs, trusted=True)
        try:
            cand_state = wire.decode(reply["state_values"], got)
        except wire.WireError as exc:
            raise CandidateFailure(
                f"{label}: its state could not be taken as data ({exc})"
            ) from None
        if not isinstance(cand_state, dict):
            raise CandidateFailure(f"{label}: its state came back as no mapping of names")
        for name in names:
            cmp = compare_outputs(cand_state.get(name), ref_state.get(name), device=self.device)
            if cmp.error or not cmp.strict_ok:
                raise CandidateFailure(
                    f"{label}: the reference's forward updates {name} and the candidate's "
                    f"leaves it different ({(cmp.error or cmp.worst).removeprefix('output: ')}): "
                    "in training, forward "
                    "must update the running statistics the reference updates"
                )
        self.state_compared += 1

    def _static_pass(self) -> dict[str, Any]:
        if self.first_launches:
            names = ", ".join(f"{k} x{v}" for k, v in sorted(self.kernels.items()))
            detail = f"forward launched {self.first_launches} Triton kernel(s): {names}"
        elif self.dispatch_only:
            detail = "dispatch-only candidate: launches no Triton kernel (counted as dispatch-only)"
        else:
            detail = "Triton kernels launched while building a CUDA graph that forward replays"
        return {
            "ok": True,
            "detail": detail,
            "launches": self.first_launches,
            "construction_launches": self.construction_launches,
            "kernels": self.kernels,
            "dispatch_only": self.dispatch_only and self.first_launches == 0,
            "accounting": "dispatch-level on every call",
        }

    def _correctness_metrics(self) -> dict[str, Any]:
        return {
            "seeds": input_seeds(self.calls),
            "seed": self.seed,
            "schedule": [c.describe() for c in self.calls],
            "calls": len(self.per_call),
            # None until a call was compared: a candidate failing before any comparison has
            # no error to report (0.0 would read as a perfect match).
            "max_abs_err": self.total.max_abs_err if self.compared else None,
            "strict": self.total.strict_ok if self.compared else None,
            "per_seed": self.per_call,
            "tolerances": self.total.tolerances,
            **({"skipped_calls": self.skipped} if self.skipped else {}),
            **({"state_checked_calls": self.state_compared} if self.state_compared else {}),
            **self.generalization,
        }

    def _unrefereed_outlier(self) -> str | None:
        """A call the referee did not see that missed the strict tolerance by far more than
        any refereed call's error (both relative to their output's scale): the referee's
        acceptance covers the calls it saw, and an honest candidate's rounding is alike on
        every call. (A candidate exact wherever a referee looked and a cheaper approximation
        on the calls it could tell were not refereed passed the whole cascade.)"""
        # (the shift call's error may be its reference's cancellation, not the candidate's)
        seen = [
            c["scaled_err"] for c in self.per_call if c.get("refereed") and c.get("kind") != "shift"
        ]
        ceiling = self.factor * max(max(seen, default=0.0), UNREFEREED_FLOOR)
        for c in self.per_call:
            err = c.get("scaled_err")
            if c.get("refereed") or c.get("strict") or err is None or err <= ceiling:
                continue
            return (
                f"call {c.get('call', '?')} ({c.get('kind', '?')}, not refereed) misses the "
                f"strict tolerance with an error of {err:.3g} of the output's scale, more than "
                f"{self.factor:g}x the worst refereed call's ({max(seen, default=0.0):.3g}): "
                "a candidate must be as accurate on every call as on the calls the referee saw"
            )
        return None

    def _correctness_verdict(self) -> dict[str, Any]:
        metrics = self._correctness_metrics()
        self.strict = self.total.strict_ok
        n = len(self.per_call)
        seeds = ", ".join(str(s) for s in metrics["seeds"])
        shapes = self.generalization.get("shapes")
        tail = f"; {shapes}" if shapes else ""
        if self.total.strict_ok:
            detail = (
                f"{n} calls (input seeds {seeds}; schedule seed {self.seed}) match the reference "
                f"within the strict tolerance (max abs err {self.total.max_abs_err:.3g}){tail}"
            )
            return {"status": "pass", "detail": detail, **metrics}
        if self.fp64_reason is None:
            within = "match only within the loose tolerance"
            if self.shift_note:
                within = (
                    f"match within the loose tolerance except the shift call ({self.shift_note})"
                )
            detail = (
                f"{n} calls (schedule seed {self.seed}) {within} "
                f"({self.total.worst}); the fp64 referee decides whether that is honest "
                f"rounding{tail}"
            )
            return {"status": "pass", "detail": detail, **metrics}
        detail = (
            f"misses the strict tolerance ({self.total.worst}) and no fp64 referee can run "
            f"({self.fp64_reason}), so the strict tolerance applies"
        )
        return {"status": "fail", "detail": detail, **metrics}

    def _fp64_verdict(self) -> dict[str, Any]:
        if self.fp64_reason is not None or not self.referee:
            reason = self.fp64_reason or "no refereed call"
            return {"status": "skipped", "detail": f"no fp64 referee: {reason}"}
        unseen = self._unrefereed_outlier()
        if unseen is not None:
            return {"status": "fail", "detail": unseen}
        # A linear problem's call inside its float64 error bound is accepted (compare.py).
        calls = len({r["call"] for r in self.referee})
        bounded = sum(1 for r in self.referee if r.get("bound_ok"))
        refereed = [r for r in self.referee if not r.get("bound_ok")] or self.referee
        worst = max(
            refereed, key=lambda r: r["err_candidate"] / max(r["err_reference"], r["floor"])
        )
        ratio = worst["err_candidate"] / max(worst["err_reference"], worst["floor"])
        # The relative checks (values far below the scale, mid-range values) leave the shift
        # call out. Its inputs sit 16 RMS off zero, so an output that normalises them (x - mean)
        # is near zero only by cancelling operands 16 times its own scale: every honest fp32
        # evaluation carries an absolute error of their rounding there (up to 14 ulps of the
        # output's RMS for Inductor's Welford row statistics on the CPU). The fp32 reference's
        # share is one rounding of a mean it accumulated in double, nearly exact in some draws,
        # so its relative figures there are no measure of fp32's: an honest harvest failed
        # about 2% of the verifications by them. The shift call is there for formulas that
        # cancel catastrophically, which the absolute check sees (a one-pass variance: 32x).
        relative = [r for r in refereed if r.get("kind") != "shift"]
        rel_ratio = 0.0
        rel_worst: dict[str, Any] | None = None
        for r in _pooled_small_values(relative):
            value = r["small_rel_candidate"] / max(r["small_rel_reference"], r["rel_floor"])
            if value >= rel_ratio:
                rel_ratio, rel_worst = value, r
        mid_ratio = 0.0
        mid_worst: dict[str, Any] | None = None
        for r in relative:
            if "mid_rel_candidate" in r:
                value = r["mid_rel_candidate"] / max(r["mid_rel_reference"], r["mid_floor"])
                if value >= mid_ratio:
                    mid_ratio, mid_worst = value, r
        metrics = {
            "err_ratio": ratio,
            "err_candidate": worst["err_candidate"],
            "err_reference": worst["err_reference"],
            "floor": worst["floor"],
            "small_value_ratio": rel_ratio,
            "mid_value_ratio": mid_ratio,
            "refereed_calls": calls,
            "limit": self.factor,
        }
        if self.fp64_note:
            metrics["note"] = self.fp64_note
        if bounded == len(self.referee):  # (records: one per call and output leaf)
            return {
                "status": "pass",
                "detail": f"within the float64 error bound of a linear problem on all {calls} "
                "refereed calls (8 ulps of the result on absolute inputs)",
                **metrics,
                "linear_bound_calls": calls,
            }
        err_r, floor = worst["err_reference"], worst["floor"]
        own = f"{err_r:.3g}" if err_r >= floor else f"{err_r:.3g}, floored at {floor:.3g}"
        summary = (
            f"error vs float64 {worst['err_candidate']:.3g} is {ratio:.3g}x the fp32 reference's "
            f"own ({own}; limit {self.factor:g}x) over {calls} refereed calls"
        )
        if rel_worst is not None:
            summary += f"; values far below the output's scale: {rel_ratio:.3g}x"
        if ratio > self.factor:
            return {
                "status": "fail",
                "detail": f"far less accurate than the reference: {summary} (a silent precision "
                "loss?)",
                **metrics,
            }
        if mid_ratio > self.factor and mid_worst is not None:
            return {
                "status": "fail",
                "detail": "values are far less accurate than the reference's relative to their "
                f"own size: the 99th percentile of the relative error is "
                f"{mid_worst['mid_rel_candidate']:.3g} vs {mid_worst['mid_rel_reference']:.3g} "
                f"(output {mid_worst.get('leaf', 0)}; {summary})",
                **metrics,
            }
        if rel_ratio > self.factor and rel_worst is not None:
            return {
                "status": "fail",
                "detail": "values far below the output's scale are far less accurate than the "
                f"reference's: mean relative error {rel_worst['small_rel_candidate']:.3g} vs "
                f"{rel_worst['small_rel_reference']:.3g} over {rel_worst['small_count']} such "
                f"values of output {rel_worst.get('leaf', 0)} ({summary})",
                **metrics,
            }
        how = "strict tolerance met" if self.strict else "accepted by the referee"
        return {"status": "pass", "detail": f"{how}; {summary}", **metrics}

    # ------------------------------------------------------------------ the end

    def _take_records(self) -> None:
        """The candidate's launch records (for the compile check) and its peak memory, asked
        for before any unchecked call (the derived shape may hang or crash it, and a record
        lost with it would leave launched kernels unbuilt: that fails the static gate)."""
        specs: list[Any] = []
        spec_errors: dict[str, str] = {}
        peak = 0
        try:
            self.cand.deadline = max(self.cand.deadline, time.monotonic() + 10)
            stats, got = self.cand.ask({"cmd": "stats"}, limit=REPLY_SLACK)
            peak = int(stats.get("peak_bytes") or 0)
            spec_errors = {str(k): str(v) for k, v in (stats.get("spec_errors") or {}).items()}
            if got:
                specs = load_plain(bytes(got[0]))
        except (OSError, wire.WireError, TimeoutError, pickle.UnpicklingError, EOFError) as exc:
            # Fail closed: launches whose records cannot be read were not compile-checked.
            spec_errors["*"] = (
                f"the launch records could not be read ({type(exc).__name__}: {exc})"[:300]
            )
        self.taken = (specs if isinstance(specs, list) else [], spec_errors, peak)

    def _peaks_so_far(self) -> dict[str, int]:
        """This process's and the reference's device bytes at most since the verification
        began (staging buffers included), for the timings' ``peak_bytes_by_stage``."""
        out: dict[str, int] = {}
        if self.device == "cuda" and torch.cuda.is_initialized():
            staged = self.staging.nbytes() if self.staging is not None else 0
            out["checker"] = int(torch.cuda.max_memory_allocated()) + staged
        with contextlib.suppress(OSError, wire.WireError, TimeoutError):
            stats, _ = self.ref.ask({"cmd": "stats"})
            out["reference"] = int(stats.get("peak_bytes") or 0)
        return out

    def _finish(self) -> None:
        memory: dict[str, Any] = {"footprint_bytes": self.footprint}
        specs: list[Any] = []
        spec_errors: dict[str, str] = {}
        now = self._peaks_so_far()
        if "reference" in now:
            memory["reference_peak_bytes"] = now["reference"]
        if self.taken is None and self.cand.sock.fileno() >= 0:
            self._take_records()
        if self.taken is not None:
            specs, spec_errors, peak = self.taken
            if peak:
                memory["candidate_peak_bytes"] = peak
        if "checker" in now:
            memory["checker_peak_bytes"] = now["checker"]
        if self.footprint and self.device == "cuda":
            peaks = [memory.get("reference_peak_bytes", 0), memory.get("candidate_peak_bytes", 0)]
            memory["peak_over_footprint"] = max(peaks) / self.footprint
            if memory.get("checker_peak_bytes"):
                memory["checker_over_footprint"] = memory["checker_peak_bytes"] / self.footprint
        phases = self.record.phases
        phases["memory"] = memory
        phases["specs"] = {"specs": specs, "errors": spec_errors}


def _key_on_host(out_tree: Any) -> bool:
    """Whether an output of this tree's size, its answer key and the candidate's copy of it
    wait in this process's host memory (``HOST_KEY_BYTES``)."""
    return wire.nbytes(out_tree) <= HOST_KEY_BYTES


def _drop_device_blobs(tree: Any, blobs: list[Any]) -> None:
    """Release this process's device copies of a tree's tensors (their blobs become empty)."""

    def drop(leaf: dict[str, Any]) -> None:
        blob = leaf.get("blob")
        if isinstance(blob, int) and isinstance(blobs[blob], torch.Tensor):
            blobs[blob] = b""

    wire.map_leaves(tree, drop)


def _settings(
    problem: Any, device: str, seeds: int, fp64_factor: float, time_limit_s: float
) -> dict[str, Any]:
    """A verification worker's per-candidate settings; sets up the checker's own threads and
    work device (after the forks: CUDA here is its own)."""
    if device == "cpu":
        torch.set_num_threads(1)
    elif torch.cuda.is_available():
        from kernelopt_jupyter.verify import compare

        compare.WORK_DEVICE = "cuda"
    return {
        "problem": problem,
        "device": device,
        "seeds": seeds,
        "fp64_factor": fp64_factor,
        "time_limit_s": time_limit_s,
    }


def _check_one(
    spec: dict[str, Any], settings: dict[str, Any], ref: Child, fork: tuple[int, socket.socket]
) -> dict[str, dict[str, Any]]:
    """One candidate (``spec``: ``source``, ``seed``, ``dispatch_only``, ``cuda_graphs``,
    optionally ``performance``) in its own forked process; its phases as plain data."""
    pid, sock = fork
    cand = Child("candidate", pid, sock)
    kwargs = {
        **settings,
        "candidate_source": spec["source"],
        "seed": spec["seed"],
        "dispatch_only": spec["dispatch_only"],
        "cuda_graphs": spec["cuda_graphs"],
        "performance": spec.get("performance", settings.get("performance")),
    }
    # On the GPU the whole verification holds the device's timing lock: a search's analysis
    # profiling beside its first gate (``session.optimization``) waits for it, and the reverse.
    lock = GpuLock()
    try:
        if settings["device"] == "cuda":
            lock.acquire()
        phases = Checker(kwargs, ref, cand).run()
    finally:
        lock.release()
        cand.stop()
    if settings["device"] == "cuda" and isinstance(phases.get("timings"), dict):
        phases["timings"]["gpu_lock"] = {
            "waited_s": round(lock.waited_s, 3),
            "shared": lock.shared,
        }
    # Which processes judged it (a search's candidates share the reference's, never their own).
    phases["processes"] = {"candidate_pid": pid, "reference_pid": ref.pid}
    return phases


def verify_task(
    *,
    problem: Any,
    candidates: list[dict[str, Any]],
    device: str,
    seeds: int,
    fp64_factor: float,
    time_limit_s: float,
    children: list[tuple[int, socket.socket]],
    performance: list[str] | None = None,
) -> list[dict[str, dict[str, Any]]]:
    """Worker task: verify each candidate (``source``, ``seed``, ``dispatch_only``,
    ``cuda_graphs``) in its own forked process against one reference process; the phases of
    each as plain data. A candidate's process serves that candidate only and is gone before
    the next one starts."""
    (ref_pid, ref_sock), *forks = children
    ref = Child("reference", ref_pid, ref_sock)
    settings = _settings(problem, device, seeds, fp64_factor, time_limit_s)
    settings["performance"] = performance
    results: list[dict[str, dict[str, Any]]] = []
    try:
        for spec, fork in zip(candidates, forks):
            results.append(_check_one(spec, settings, ref, fork))
            if "problem_error" in results[-1].get("reference", {}):
                break  # the reference cannot run: no later candidate can be judged either
    finally:
        for pid, sock in forks[len(results) :]:
            Child("candidate", pid, sock).stop()
        ref.stop()
    return results


def verify_service(
    *,
    problem: Any,
    device: str,
    seeds: int,
    fp64_factor: float,
    time_limit_s: float,
    children: list[tuple[int, socket.socket]],
    control: socket.socket,
) -> None:
    """Service task (``worker.start_service``): the verification worker kept for a whole
    search. Each request is one candidate's spec; it is checked in the next of the processes
    forked before this task read anything, against the one reference process, and its phases
    are the reply. A ``None`` request, or no candidate process left, ends the service."""
    from kernelopt_jupyter.worker import ServiceError, recv_frame, send_frame

    (ref_pid, ref_sock), *forks = children
    ref = Child("reference", ref_pid, ref_sock)
    settings = _settings(problem, device, seeds, fp64_factor, time_limit_s)
    used = 0
    try:
        while used < len(forks):
            try:
                spec = pickle.loads(recv_frame(control))
            except ServiceError:
                return
            if spec is None:
                return
            phases = _check_one(spec, settings, ref, forks[used])
            used += 1
            send_frame(control, pickle.dumps(phases))
    finally:
        for pid, sock in forks[used:]:
            Child("candidate", pid, sock).stop()
        ref.stop()
