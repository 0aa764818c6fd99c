"""The checker: the trusted side of a verification, in the verification worker.

The worker (``kernelopt_jupyter.worker`` as a fork server) imports torch and the project once,
forks the reference's process and the candidate's process *before* it reads its task, then
runs ``verify_task`` here. The checker draws nothing itself (the schedule comes from the seed
the caller drew), asks the reference for each case, forwards only the case's *inputs* to the
candidate, takes the candidate's outputs back as bytes and hands both, as data, to the judge
(``verify.judge``), which decides: structure and values against the reference, inputs and
weights unchanged, the dispatch-level accounting of every call, the float64 referee. This
module is the process shell around it: the children's protocol, their deadlines and deaths,
the lending of tensors (``verify.lending``) and where the time and the memory went. The
candidate's process never holds the reference's outputs, the tolerances or this code's
state, and cannot reach this process except through its socket, whose messages are parsed
as data (never unpickled).
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
from functools import partial
from typing import Any

import torch

from kernelopt_jupyter.device import GpuLock
from kernelopt_jupyter.verify import contract, derived, wire
from kernelopt_jupyter.verify.judge import (
    CandidateFailure,
    DispatchJudge,
    ValueJudge,
    process_state,
)
from kernelopt_jupyter.verify.lending import Lender, drop_device_blobs
from kernelopt_jupyter.verify.schedule import Call, draw_schedule
from kernelopt_jupyter.worker import kill_tree, load_plain

#: The most a candidate may send back per call beyond its expected outputs (diagnostics).
REPLY_SLACK = 64 * 1024 * 1024

#: The time a call that is only reported (the derived shape) may take: this many times the
#: slowest checked call, and at least DERIVED_MIN_S seconds.
DERIVED_FACTOR = 10.0
DERIVED_MIN_S = 10.0


class ReferenceFailure(Exception):
    """The reference (the user's problem) could not run: a user error. ``died``: its process
    ended without an answer (a signal, a crash), which a candidate's process can cause, or
    ran out of device memory beside it (``oom``)."""

    def __init__(self, message: str, *, died: bool = False, oom: bool = False) -> None:
        super().__init__(message)
        self.died = died
        self.oom = oom  # it ran out of device memory (a derived shape's call reports it)


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


class Checker:
    """One verification's process shell: drives the schedule through the reference's and the
    candidate's processes and hands each reply to the judges (``verify.judge``)."""

    def __init__(self, kwargs: dict[str, Any], ref: Child, cand: Child) -> None:
        self.device: str = kwargs["device"]
        self.seed: int = kwargs["seed"]
        self.limit: float = kwargs["time_limit_s"]
        self.problem = kwargs["problem"]
        self.source: str = kwargs["candidate_source"]
        self.calls = draw_schedule(self.seed, kwargs["seeds"], self.device)
        self.ref = ref
        self.cand = cand
        self.record = Record()
        self.dispatch = DispatchJudge(
            dispatch_only=kwargs["dispatch_only"], cuda_graphs=kwargs["cuda_graphs"]
        )
        self.values = ValueJudge(
            calls=self.calls, seed=self.seed, device=self.device, factor=kwargs["fp64_factor"]
        )
        self.footprint = 0  # the reference's own device bytes (the memory ratio's base)
        # Inputs and outputs: the bytes any evaluation touches. Not the weights: a candidate
        # may derive what it needs from them at load (a fold, re-derived on every reload), and
        # on the H200 such a fold (a row sum after a Linear, 209x eager) read 256 MiB of input
        # a call and was refused for not also moving the 256 MiB weight.
        self.moved = 0
        #: Whether the candidate and the reference have run the same forwards since their
        #: weights were last loaded (a back-to-back run, or a forward only the reference made,
        #: ends it; a reload starts it again): only then are the parameters and buffers their
        #: forwards change compared (a BatchNorm's running statistics in training).
        self.state_synced = True
        self.synced_before_twin = True  # ``state_synced`` when a second instance took over
        #: State-dict entries a forward of the reference changed (running statistics): their
        #: values after the calls are the calls' business, not the state round trip's.
        self.forward_changed: set[str] = set()
        self.state_asked = False  # this call asks the candidate for them
        #: (specs, spec errors, peak bytes) from the candidate, once asked (``_launch_records``).
        self.taken: tuple[list[Any], dict[str, str], int] | None = None
        self.slowest_call = 0.0
        #: The first call's inputs (shapes only), output bytes and forward peak: what the
        #: derived call above the benchmark's batch is estimated from (``verify.derived``).
        self.first_call: tuple[Any, int, int] | None = None
        self.phase = "reference"
        # The performance gate's baselines (run in this worker after the value gates), or None.
        self.performance: list[str] | None = kwargs.get("performance")
        self.lending = Lender(self.device, self._ref_ask)

    # ------------------------------------------------------------------ driving

    def run(self) -> dict[str, dict[str, Any]]:
        """All phases; a candidate failure ends the run with that gate's verdict."""
        phases = self.record.phases
        peaks = partial(_device_peaks, self.device, self.ref, self.lending)
        self._clock = _Clock(self.ref, self.cand, memory=peaks if self.device == "cuda" else None)
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
                    phases["static"] = self.dispatch.static_pass()
            _state_round_trip(self)
            phases["correctness"] = self.values.correctness_verdict()
            phases["fp64"] = self.values.fp64_verdict()
            # The launch records and the peak memory are the checked calls' (taken before the
            # performance gate's input pool and before any call that may crash the process).
            if self.taken is None:
                self.taken = _launch_records(self.cand)
            if self.performance is not None and phases["fp64"].get("status") != "fail":
                phases["performance"] = self._performance(self.performance)
                self._clock.lap("performance")
            # A call only reported (the derived shape) comes last, after every gate: a kernel
            # specialised to the benchmark's shapes may hang or crash there, and on the GPU an
            # out-of-bounds access leaves the process's CUDA context unusable (the performance
            # gate after it would fail with 'illegal memory access' for every such candidate).
            reported = [(i, c) for i, c in enumerate(self.calls) if not c.checked]
            if reported and "performance" in phases:
                from kernelopt_jupyter.verify import perf

                perf.release(self)
            for index, call in reported:
                derived_call(self, index, call)
                self._clock.lap("reported calls")
            if reported:  # the verdict names what the derived shapes showed
                phases["correctness"] = self.values.correctness_verdict()
        except CandidateFailure as exc:
            gate = exc.gate
            if gate == "static" and "static" not in phases:
                phases["static"] = {"ok": False, "status": "fail", "detail": str(exc)}
            else:
                phases.setdefault("static", self.dispatch.static_pass())
                phases["correctness"] = {
                    "status": "fail",
                    "detail": str(exc),
                    **self.values.correctness_metrics(),
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
                        **self.values.correctness_metrics(),
                    }
        self._finish()
        phases["timings"] = self._clock.report()
        phases["timings"]["transfer"] = self.lending.transfer()
        self.lending.close()
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
                raise ReferenceFailure(str(reply.get("detail")), died=True, oom=True)
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
        self.dispatch.loaded(reply)

    def _one(self, index: int, call: Call) -> None:
        gate = "static" if index == 0 else "correctness"
        label = f"call {index + 1} ({call.kind}, seed {call.seed})"
        if call.reload_seed is not None:
            _reload(self, call, label, gate)
        if call.burst:
            self.state_synced = False  # the candidate's forwards before this call
        case, blobs = self._case(call)
        self.forward_changed.update(str(n) for n in case.get("state_changed_names") or [])
        if "skip" in case:
            if not case.get("nothing_to_vary"):
                self.state_synced = False  # the reference's forward ran (or began) alone
            self.values.skipped_case(call, case)
            return
        inputs, input_blobs = self.lending.lend_inputs(*wire.subset(case["inputs"], blobs))
        drop_device_blobs(case["inputs"], blobs)  # lent: this process needs only the digests
        ref_out = wire.decode(case["out"], blobs, trusted=True)
        out_bytes = wire.nbytes(case["out"])
        if index == 0:
            # The reference's own footprint: inputs, weights (at setup), and what its forward
            # held at most beyond them (outputs and workspace).
            forward = max(out_bytes, int(case.get("forward_peak") or 0))
            self.footprint += wire.nbytes(case["inputs"]) + forward
            self.moved += wire.nbytes(case["inputs"]) + out_bytes
            # What the derived call above the benchmark's batch is estimated from.
            self.first_call = (wire.map_leaves(case["inputs"], _shape_leaf), out_bytes, forward)
        mutated = [int(i) for i in case.get("mutated") or []]
        header = {
            "cmd": "call",
            "inputs": inputs,
            "order": call.order,
            "order_seed": call.order_seed,
            "poison": call.poison,
            "burst": call.burst,
            "return_inputs": mutated,
            "refill": call.refill,
            "context": call.context,
        }
        limit = 2 * out_bytes + wire.nbytes(case["inputs"]) + REPLY_SLACK
        self.state_asked = bool(
            case.get("state_changed_names") and self.state_synced and call.checked
        )
        if self.state_asked:
            header["return_state"] = list(case["state_changed_names"])
            limit += wire.nbytes(case["state_after"])
        header["slots"] = self.lending.out_slots(case["out"])
        try:
            reply, got = self._cand_ask(header, input_blobs, limit=limit)
            if reply.get("oom") and not call.checked:
                # Device memory, not the candidate's shapes: reported as not run.
                why = f"the candidate {reply.get('detail')}"
                self.values.derived_skipped(call, why, case.get("described"))
                return
            if reply.get("ipc_error") and self.lending.ipc:
                # The candidate's process could not map the buffers lent to it: this
                # verification goes the byte path from here on (the same call again).
                self.lending.turn_off(str(reply["ipc_error"]))
                # This attempt's device copies go before the retry takes its own.
                self.state_synced = False  # the reference's forward of this attempt
                del case, blobs, ref_out, inputs, input_blobs, header
                return self._one(index, call)
            self._judge(index, call, label, gate, case, blobs, ref_out, reply, got)
        except CandidateFailure as exc:
            if call.checked:
                raise
            self.values.derived_failed(call, case, str(exc))
            return
        if not call.checked:
            self.values.derived_passed(call, case)

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
            "referee": call.referee and self.values.fp64_reason is None,
        }
        while True:  # at most twice: a handle that cannot be opened turns IPC off
            case, blobs = self.lending.shared(
                {**header, "share": self.lending.ipc}, self._clock.add
            )
            if case is not None and case.pop("referee_pending", False):
                more, more_blobs = self.lending.shared({"cmd": "referee"}, self._clock.add)
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
        """Hand one call's replies to the judges, timing the checker's own parts."""
        self.dispatch.ran(index, label, gate, reply)
        process_state(label, gate, reply, case)
        # From here on the call ran under the rules: what is wrong now is a wrong answer.
        self._clock.add("candidate", reply.get("phases_s"))
        self._clock.add("reference", case.get("phases_s"))
        started = time.monotonic()
        try:
            out = wire.decode(reply["out"], got, bulk=self.lending.reply_bulk)
        except wire.WireError as exc:
            raise CandidateFailure(
                f"{label}: the output could not be taken as data ({exc})"
            ) from None
        decoded = time.monotonic()
        compared = self.values.compare(call, case, blobs, out, ref_out)
        self._clock.add(
            "checker", {"output copy": decoded - started, "compare": time.monotonic() - decoded}
        )
        self.values.check(
            index, call, label, case, blobs, reply, got, compared, state_asked=self.state_asked
        )
        started = time.monotonic()
        self.values.referee_call(index, call, case, compared, out, ref_out)
        if compared.ref64 is not None:
            self._clock.add("checker", {"referee": time.monotonic() - started})

    # ------------------------------------------------------------------ the end

    def _finish(self) -> None:
        """The memory and launch-record phases, from what the children report last."""
        now = _device_peaks(self.device, self.ref, self.lending)
        if self.taken is None and self.cand.sock.fileno() >= 0:
            self.taken = _launch_records(self.cand)
        phases = self.record.phases
        phases["memory"] = _memory_phase(self.footprint, self.device, now, self.taken)
        specs, spec_errors, _ = self.taken if self.taken is not None else ([], {}, 0)
        phases["specs"] = {"specs": specs, "errors": spec_errors}


def derived_call(checker: Checker, index: int, call: Call) -> None:
    """A derived shape's call (reported only, ``verify.derived``): not made, saying why,
    where its memory is estimated over the budget; an out-of-memory during it (the
    candidate's, the reference's or this process's) is reported, never failed."""
    checker.phase = "correctness"
    described: dict[str, Any] | None = None
    if call.transform.get("direction") == "above" and checker.first_call is not None:
        described, need = derived_need(call, *checker.first_call)
        why = derived.over_budget(need, free_memory(checker.device)) if described else None
        if why is not None:
            checker.values.derived_skipped(call, f"not run: {why}", described)
            return
    deadline = checker.cand.deadline
    # A bounded share of time: waiting out the whole limit cost every harvested
    # candidate 120 s on the CPU.
    share = max(DERIVED_MIN_S, DERIVED_FACTOR * checker.slowest_call)
    checker.cand.deadline = min(deadline, time.monotonic() + share)
    try:
        checker._one(index, call)
    except torch.OutOfMemoryError as exc:
        torch.cuda.empty_cache()
        why = f"the checker ran out of device memory ({str(exc).splitlines()[0][:200]})"
        checker.values.derived_skipped(call, why, described)
    except ReferenceFailure as exc:
        if not exc.oom:
            raise
        checker.values.derived_skipped(call, str(exc), described)
    finally:
        checker.cand.deadline = deadline


def _shape_leaf(leaf: dict[str, Any]) -> dict[str, Any]:
    """A wire leaf's shape and dtype only (``wire.map_leaves``: no blob, no handle)."""
    return {"t": leaf.get("t"), "shape": leaf.get("shape"), "dtype": leaf.get("dtype")}


def derived_need(
    call: Call, inputs: Any, out_bytes: int, forward_peak: int
) -> tuple[dict[str, Any] | None, int]:
    """A derived call's shape (as the reference will describe it) and its estimated bytes
    (``verify.derived.estimate_bytes``), from the first call's inputs (shapes only), output
    bytes and forward peak; no shape where the inputs have no batch to change."""
    batch = derived.batch_of(inputs)
    size = derived.derived_batch(batch, call.transform) if batch is not None else None
    if batch is None or size is None:
        return None, 0
    direction = call.transform.get("direction")
    described = {"kind": "batch", "direction": direction, "from": batch, "to": size}
    return described, derived.estimate_bytes(inputs, out_bytes, forward_peak, size)


def free_memory(device: str) -> int | None:
    """The memory free for a derived call: on the GPU the device's (``mem_get_info``), on the
    CPU the RAM the kernel says is available; None where neither can be read."""
    if device == "cuda":
        if not torch.cuda.is_available():
            return None
        return int(torch.cuda.mem_get_info()[0])
    with contextlib.suppress(OSError, ValueError), open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    with contextlib.suppress(OSError, ValueError, AttributeError):
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    return None


def _reload(checker: Checker, call: Call, label: str, gate: str) -> None:
    """New weights for both sides before a call (``verify.contract.reload_state``): loaded in
    place, or into a second instance of the candidate (``twin``) until ``back``."""
    reloaded, rblobs = checker._ref_ask(
        {"cmd": "reload", "seed": call.reload_seed, "kind": call.reload_kind}
    )
    state, sblobs = wire.subset(reloaded["state"], rblobs)
    command = call.reload_kind if call.reload_kind in ("twin", "back") else "reload"
    reply, _ = checker._cand_ask({"cmd": command, "state": state}, sblobs, limit=REPLY_SLACK)
    if not reply.get("ok"):
        raise CandidateFailure(f"{label}: {reply.get('detail')}", gate)
    if call.reload_kind == "twin":
        checker.synced_before_twin = checker.state_synced
    # Both hold the weights just loaded; back at the first instance, both hold what they held
    # before the twin (in step only if they were then).
    back = call.reload_kind == "back"
    checker.state_synced = checker.synced_before_twin if back else True


def _state_round_trip(checker: Checker) -> None:
    """After the checked calls, the candidate's parameters and buffers are what was loaded
    into it (``verify.contract.state_differences``): a module whose state no longer round-trips
    breaks every save and reload of a model it is part of."""
    ref, _ = checker._ref_ask({"cmd": "state"})
    mine, _ = checker._cand_ask({"cmd": "state"}, limit=REPLY_SLACK)
    if not mine.get("ok"):
        raise CandidateFailure(f"reading its state failed ({mine.get('detail')})")
    found = contract.state_differences(ref["state"], mine["state"], checker.forward_changed)
    if found:
        raise CandidateFailure(
            "after the calls, the module's state is not what was loaded into it: "
            + "; ".join(found[:3])
            + " (state_dict() must return the weights it was given)"
        )


def _launch_records(cand: Child) -> tuple[list[Any], dict[str, str], int]:
    """The candidate's launch records (for the compile check), their errors and its peak
    memory, asked for before any unchecked call (the derived shape may hang or crash it, and
    a record lost with it would leave launched kernels unbuilt: that fails the static gate)."""
    specs: list[Any] = []
    spec_errors: dict[str, str] = {}
    peak = 0
    try:
        cand.deadline = max(cand.deadline, time.monotonic() + 10)
        stats, got = cand.ask({"cmd": "stats"}, limit=REPLY_SLACK)
        peak = int(stats.get("peak_bytes") or 0)
        spec_errors = {str(k): str(v) for k, v in (stats.get("spec_errors") or {}).items()}
        if got:
            specs = load_plain(bytes(got[0]))
    except (OSError, wire.WireError, TimeoutError, pickle.UnpicklingError, EOFError) as exc:
        # Fail closed: launches whose records cannot be read were not compile-checked.
        spec_errors["*"] = f"the launch records could not be read ({type(exc).__name__}: {exc})"[
            :300
        ]
    return (specs if isinstance(specs, list) else [], spec_errors, peak)


def _device_peaks(device: str, ref: Child, lending: Lender) -> dict[str, int]:
    """This process's and the reference's device bytes at most since the verification
    began (staging buffers included), for the timings' ``peak_bytes_by_stage``."""
    out: dict[str, int] = {}
    if device == "cuda" and torch.cuda.is_initialized():
        staged = lending.staged_bytes()
        out["checker"] = int(torch.cuda.max_memory_allocated()) + staged
    with contextlib.suppress(OSError, wire.WireError, TimeoutError):
        stats, _ = ref.ask({"cmd": "stats"})
        out["reference"] = int(stats.get("peak_bytes") or 0)
    return out


def _memory_phase(
    footprint: int,
    device: str,
    now: dict[str, int],
    taken: tuple[list[Any], dict[str, str], int] | None,
) -> dict[str, Any]:
    """The memory phase: the reference's footprint and each process's peak (``now``:
    ``_device_peaks``; ``taken``: ``_launch_records``), and on the GPU their ratios."""
    memory: dict[str, Any] = {"footprint_bytes": footprint}
    if "reference" in now:
        memory["reference_peak_bytes"] = now["reference"]
    if taken is not None and taken[2]:
        memory["candidate_peak_bytes"] = taken[2]
    if "checker" in now:
        memory["checker_peak_bytes"] = now["checker"]
    if footprint and device == "cuda":
        peaks = [memory.get("reference_peak_bytes", 0), memory.get("candidate_peak_bytes", 0)]
        memory["peak_over_footprint"] = max(peaks) / footprint
        if memory.get("checker_peak_bytes"):
            memory["checker_over_footprint"] = memory["checker_peak_bytes"] / footprint
    return memory


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
