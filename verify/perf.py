"""The performance gate, inside the verification worker: the candidate timed in its own process
against the reference timed in the reference's, interleaved, with the checker holding the clock.

The candidate's process has already loaded and compiled the candidate for the correctness
gate, and the reference's process holds the reference model: the gate costs no new process,
no second compile of the candidate and no torch.compile of the reference per candidate (the
final side-by-side run asks for that baseline once). The candidate never shares a process with
a baseline, so it cannot slow one down from inside.

Each timed call is one request from the checker: the serving process flushes the L2 cache,
copies and salts its pool input (untimed), times one forward with CUDA events and synchronises
every stream before it answers. A call under ``WARM_MS`` follows an untimed warm request on a
differently salted input, on every side alike. The checker records the wall clock of every
request as well:

* the reference's requests give the protocol's own overhead (wall minus CUDA-event time);
* the candidate's own times are raised by whatever its wall-clock median, less that overhead,
  exceeds their median (``bounded_by_wall``), so a candidate that lies about its time, or
  leaves work on a side stream that its events do not cover, is timed by the wall clock;
* while one side is timed, the other side's process is stopped (SIGSTOP): the candidate
  cannot run host code that competes with the reference, and both wake alike for their
  calls; the reference's times are also compared with its first ones, and a reference that
  slowed down while the candidate was alive is reported.

The output of the candidate's last timed call comes back as data and is compared with the
reference's output for the same input: a candidate that only computes when it is checked is
caught here. The pool inputs are drawn under seeds derived from the verification's schedule
seed, which the candidate never sees.
"""

from __future__ import annotations

import contextlib
import gc
import os
import random
import signal
import time
from typing import Any

import torch

from kernelopt_jupyter.verify import wire
from kernelopt_jupyter.verify.timing import _median, _nbytes, _Timer, salted, warm_ms

#: Commands the two serving processes answer for this gate.
COMMANDS = ("perf_setup", "perf_warm", "perf_time", "perf_last", "perf_done")
#: Seconds of timed rounds the gate aims at (rounds are clamped to 10..80).
BUDGET_S = 3.0
MIN_ROUNDS, MAX_ROUNDS = 10, 80
#: The last timed call (whose output is checked as data) is at least the candidate's
#: forward call number LATE_CHECK: a candidate that turns wrong after fewer calls than that
#: is caught however few rounds the time budget allows (a loaded machine, a slow candidate).
LATE_CHECK = 64
#: Calls under ``WARM_MS`` (``verify/timing.py``) follow an untimed warm request: here the
#: gate also stops the candidate while the reference is timed, and the reverse, so both
#: processes are resumed cold for every call. The warm call is a separate request.


#: The timing pool's inputs in all, at most (at least one input set): every process of the
#: gate (reference, checker, candidate) holds the pool, and each timed call salts a fresh copy
#: of its entry anyway. The limit is on the pool, not on one input set: per set, a problem
#: with 200 MB of inputs would hold two sets (400 MB) in each of them. Not 256 MiB: on the
#: H200 such a pool was most of the reference process's peak on small problems (4.2x a
#: 0.13 GB footprint with eight 30 MB sets); every timed call's input is a new salted copy,
#: so more sets add little.
POOL_BYTES = 64 * 1024 * 1024
#: Seconds the reference's process may spend compiling the torch.compile baseline.
COMPILE_ALLOWANCE_S = 240.0
#: A reference more than this much slower in the last rounds than in the first is reported.
DRIFT = 1.25


def pool_sets(set_bytes: int, seeds: int) -> int:
    """How many input sets the timing pool holds: as many as fit in ``POOL_BYTES`` in all,
    at least one, at most one per seed."""
    return max(1, min(seeds, POOL_BYTES // max(1, set_bytes)))


# --------------------------------------------------------------------------- serving side


def _clone(values: list[Any]) -> list[Any]:
    return [v.clone() if isinstance(v, torch.Tensor) else v for v in values]


class _Side:
    """The timing state of one serving process: its pool, its timer, what it times."""

    def __init__(self, device: str, pool: list[list[Any]], fns: dict[str, Any]) -> None:
        self.timer = _Timer(device)
        self.device = device
        self.pool = pool
        self.fns = fns
        self.last: tuple[int, int, Any] | None = None

    def inputs(self, index: int, salt: int) -> list[Any]:
        """Pool input ``index``, salted by ``salt`` (``timing.salted``)."""
        return salted(self.pool[index % len(self.pool)], salt, self.device)

    def warm(self, name: str, index: int, salt: int) -> None:
        """One untimed call (the timed call after it finds the process warm); its output is
        dropped and is not the last timed one."""
        inputs = self.inputs(index, salt)
        with torch.no_grad():
            self.fns[name](*inputs)
        if self.device == "cuda":
            torch.cuda.synchronize()

    def time(self, name: str, index: int, salt: int) -> float:
        self.last = None  # the previous timed output is not held beside this call's
        inputs = self.inputs(index, salt)
        self.timer.flush()
        with torch.no_grad():
            ms, out = self.timer.time(self.fns[name], inputs)
        self.last = (index, salt, out)
        return ms


def reference_command(ref: Any, header: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    """The reference process's side (``ref`` is its ``Reference``)."""
    cmd = header["cmd"]
    if cmd == "perf_setup":
        assert ref.loaded is not None
        pool: list[list[Any]] = []
        seeds = [int(seed) for seed in header["seeds"]]
        pool.append(ref.loaded.make_inputs(seeds[0], ref.device))
        for seed in seeds[1 : pool_sets(_nbytes(pool[0]), len(seeds))]:
            pool.append(ref.loaded.make_inputs(seed, ref.device))
        fns: dict[str, Any] = {"eager": ref.model}
        notes: list[str] = []
        compile_s = None
        if "compile" in header.get("baselines", []):
            started = time.perf_counter()
            try:
                fn = torch.compile(ref.model)
                with torch.no_grad():
                    fn(*_clone(pool[0]))
                if ref.device == "cuda":
                    torch.cuda.synchronize()
                fns["compile"] = fn
                compile_s = time.perf_counter() - started
            except Exception as exc:
                notes.append(f"torch.compile baseline unavailable ({type(exc).__name__})")
        ref.perf = _Side(ref.device, pool, fns)
        # The timed inputs are no secret (the candidate gets them); on the GPU they go by
        # CUDA IPC from staging buffers, like a case's (``Reference.case``).
        message = _message(ref, header)
        message.add("pool", [list(p) for p in pool], secret=False)
        reply = {"ok": True, "names": list(fns), "notes": notes, "compile_s": compile_s}
        return {**reply, **message.fields}, message.blobs
    if cmd == "perf_done":  # the pool and the compiled baseline go before any later call
        ref.perf = None
        _release(ref.device, collect=True)
        return {"ok": True}, []
    side: _Side = ref.perf
    if cmd == "perf_warm":
        side.warm(str(header["name"]), int(header["index"]), int(header["salt"]))
        return {"ok": True}, []
    if cmd == "perf_time":
        ms = side.time(str(header["name"]), int(header["index"]), int(header["salt"]))
        return {"ok": True, "ms": ms}, []
    # perf_last: the reference's output for a pool input and salt (trusted, for the checker)
    with torch.no_grad():
        out = ref.model(*side.inputs(int(header["index"]), int(header["salt"])))
    message = _message(ref, header)
    message.add("out", out, secret=True)  # zero-filled at ``scrub``, as a case's answer
    del out
    return {"ok": True, **message.fields}, message.blobs


def _release(device: str, *, collect: bool) -> None:
    """The timing state's device memory back to the device (it is dropped by then). Never a
    collection in the candidate's process: it would run the candidate's finalisers between
    calls, outside any call's accounting; its pool is freed by reference counting anyway."""
    if collect:
        gc.collect()
    if device == "cuda" and torch.cuda.is_initialized():
        torch.cuda.empty_cache()


def _message(ref: Any, header: dict[str, Any]) -> Any:
    """A reference reply packed as ``Reference.case`` packs one: large device tensors staged
    for the checker when ``header["share"]`` asks for it and CUDA IPC works, else bytes."""
    from kernelopt_jupyter.verify.reference import _Message

    sharing = bool(header.get("share")) and ref._sharing()
    return _Message(ref._sharer if sharing else None)


def sandbox_command(
    box: Any, header: dict[str, Any], blobs: list[Any]
) -> tuple[dict[str, Any], list[Any]]:
    """The candidate process's side (``box`` is its ``Sandbox``, the candidate loaded)."""
    from kernelopt_jupyter.verify.sandbox import encode_output, receive_inputs

    cmd = header["cmd"]
    if box.model is None:
        return {"ok": False, "detail": "no candidate loaded"}, []
    if cmd == "perf_setup":
        try:
            pool = wire.unwrap(receive_inputs(header, blobs, key="pool"))
        except wire.WireError as exc:
            if "device handle" not in str(exc):
                raise
            return {"ok": False, "ipc_error": str(exc), "detail": str(exc)}, []
        pool = [[v.to(box.device) if isinstance(v, torch.Tensor) else v for v in p] for p in pool]

        def forward(*inputs: Any) -> Any:
            with box.watch.candidate_runs():
                return box.model(*inputs)

        box.perf = _Side(box.device, pool, {"candidate": forward})
        return {"ok": True}, []
    if cmd == "perf_done":
        box.perf = None
        _release(box.device, collect=False)
        return {"ok": True}, []
    side: _Side = box.perf
    if cmd == "perf_warm":
        try:
            side.warm("candidate", int(header["index"]), int(header["salt"]))
        except BaseException as exc:  # SystemExit from a candidate is its failure too
            return {"ok": False, "detail": f"forward raised while timed: {exc}"[:300]}, []
        return {"ok": True}, []
    if cmd == "perf_time":
        try:
            ms = side.time("candidate", int(header["index"]), int(header["salt"]))
        except BaseException as exc:  # SystemExit from a candidate is its failure too
            return {"ok": False, "detail": f"forward raised while timed: {exc}"[:300]}, []
        return {"ok": True, "ms": ms}, []
    # perf_last: the output of the last timed call, as data
    assert side.last is not None
    index, salt, out = side.last
    encoded = encode_output(out, header.get("slots"), box.device)  # the checker's slots, or bytes
    changes = box.guard.changes() if box.guard is not None else []
    reply = {"ok": True, "index": index, "salt": salt, "out": encoded.tree, "changes": changes}
    # (index and salt are diagnostics: the checker compares against what it asked for last)
    return reply, list(encoded.blobs)


# --------------------------------------------------------------------------- checker side


def perf_ipc() -> bool:
    """Whether the performance gate moves its tensors by CUDA IPC (the default since its GPU
    test passed on the H200; ``KERNELOPT_PERF_IPC=0`` sends them as bytes)."""
    return os.environ.get("KERNELOPT_PERF_IPC", "1") != "0"


def _reference_answer(
    checker: Any, header: dict[str, Any], *, stop: bool = True
) -> tuple[dict[str, Any], list[Any]]:
    """A reference reply with its large tensors copied into this process device to device
    (``Lender.shared``: mapped, copied, then scrubbed in the reference), or as bytes where
    CUDA IPC is off or a handle could not be opened (asked again, once, as bytes). With
    ``stop`` the candidate's process is stopped meanwhile: nothing of it runs while an answer
    is staged."""
    for share in (checker.lending.ipc and perf_ipc(), False):
        with _Stopped(checker.cand.pid) if stop else contextlib.nullcontext():
            reply, blobs = checker.lending.shared({**header, "share": share})
        if reply is not None:
            return reply, blobs
    raise RuntimeError("the reference's reply could not be taken")  # bytes never return None


def _setup_pool(checker: Any, header: dict[str, Any]) -> dict[str, Any]:
    """The timed inputs: drawn by the reference (which compiles its baselines meanwhile), then
    lent to the candidate, device to device on the GPU (``Lender.lend_inputs``, as a checked
    call's inputs) and this process's copies dropped; the reference's setup reply (its
    ``ok`` False with the candidate's ``detail`` when the candidate's setup failed)."""
    from kernelopt_jupyter.verify.lending import drop_device_blobs

    setup, blobs = _reference_answer(checker, header, stop=False)  # inputs: no secret
    tree, pool_blobs = checker.lending.lend_inputs(*wire.subset(setup["pool"], blobs))
    drop_device_blobs(setup["pool"], blobs)
    del blobs
    reply, _ = checker._cand_ask({"cmd": "perf_setup", "pool": tree}, pool_blobs)
    del pool_blobs
    if reply.get("ipc_error") and checker.lending.ipc:
        # The candidate could not map the lent pool: this verification goes bytes from here.
        checker.lending.turn_off(str(reply["ipc_error"]))
        return _setup_pool(checker, header)
    if not reply.get("ok"):
        return {**setup, "ok": False, "detail": reply.get("detail")}
    return setup


class _Stopped:
    """The candidate's process stopped (SIGSTOP) for the duration of a ``with`` block."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def __enter__(self) -> None:
        try:
            os.kill(self.pid, signal.SIGSTOP)
        except OSError:
            pass

    def __exit__(self, *exc: Any) -> None:
        try:
            os.kill(self.pid, signal.SIGCONT)
        except OSError:
            pass


def bounded_by_wall(
    own: list[float], wall: list[float], ref_own: list[float], ref_wall: list[float]
) -> tuple[list[float], float, float]:
    """The candidate's per-round times (ms) as the gate counts them, the protocol overhead,
    and the gap the wall clock found.

    The candidate's own clock runs in its process, so the checker's wall clock bounds it: the
    protocol's overhead (wall less own time) is the reference's, and where the candidate's
    wall median less that overhead exceeds its own median, every own time is raised by the
    gap. Median to median: a per-round maximum of two noisy clocks charged an honest candidate
    half the noise (the reference's own code, as a candidate, timed 0.88x on the H200)."""
    overheads = [w - o for w, o in zip(ref_wall, ref_own)]
    overhead = _median(overheads) if overheads else 0.0
    gap = max(0.0, _median(wall) - overhead - _median(own)) if own else 0.0
    return [o + gap for o in own], overhead, gap


def release(checker: Any) -> None:
    """Both sides drop the timing pool and the compiled baseline (``perf_done``) before a
    call that follows the gate (the derived shape's): best effort, a failure changes nothing
    that was decided."""
    from kernelopt_jupyter.verify.checker import CandidateFailure, ReferenceFailure

    for ask in (checker._ref_ask, checker._cand_ask):
        with contextlib.suppress(CandidateFailure, ReferenceFailure, OSError, wire.WireError):
            ask({"cmd": "perf_done"})


def run_gate(checker: Any, baselines: list[str], budget_s: float = BUDGET_S) -> dict[str, Any]:
    """The performance phase, driven by the checker; its phase dict (``status``, ``detail``
    and the metrics ``timing.judge`` returns)."""
    from kernelopt_jupyter.verify.checker import CandidateFailure
    from kernelopt_jupyter.verify.compare import compare_outputs
    from kernelopt_jupyter.verify.timing import judge

    ref, cand = checker.ref, checker.cand
    started = time.monotonic()
    rng = random.Random(checker.seed ^ 0x7E5F)
    seeds = [rng.randrange(1 << 31) for _ in range(2)]
    ref.deadline = cand.deadline = time.monotonic() + checker.limit
    if "compile" in baselines:  # the reference's torch.compile happens in this phase
        ref.deadline += COMPILE_ALLOWANCE_S
    checker.phase = "performance"
    setup = _setup_pool(checker, {"cmd": "perf_setup", "seeds": seeds, "baselines": baselines})
    if not setup.get("ok"):
        raise CandidateFailure(str(setup.get("detail")), "performance")
    pool_size = len(setup["pool"].get("items") or [None]) if isinstance(setup["pool"], dict) else 1
    names = [("reference", n) for n in setup["names"]] + [("candidate", "candidate")]
    own: dict[str, list[float]] = {n: [] for _, n in names}
    wall: dict[str, list[float]] = {n: [] for _, n in names}

    sent: dict[str, dict[str, Any]] = {}

    warm = False

    def one(side: str, name: str, index: int) -> None:
        ask = {"cmd": "perf_time", "name": name, "index": index % pool_size}
        ask["salt"] = rng.randrange(1 << 30)
        warm_ask = {**ask, "cmd": "perf_warm", "salt": rng.randrange(1 << 30)} if warm else None
        if side == "reference":
            with _Stopped(cand.pid):
                if warm_ask is not None:
                    checker._ref_ask(warm_ask)
                t0 = time.perf_counter()
                answer, _ = checker._ref_ask(ask)
                wall[name].append((time.perf_counter() - t0) * 1e3)
        else:
            if warm_ask is not None:
                answer, _ = checker._cand_ask(warm_ask)
                if not answer.get("ok"):
                    raise CandidateFailure(str(answer.get("detail")), "performance")
            sent["candidate"] = ask  # what the last timed output must answer (the checker's)
            # The reference's process sits stopped while the candidate is timed, as the
            # candidate's does while the reference is: both sides wake alike for their calls.
            with _Stopped(ref.pid):
                t0 = time.perf_counter()
                answer, _ = checker._cand_ask(ask)
                wall[name].append((time.perf_counter() - t0) * 1e3)
            if not answer.get("ok"):
                raise CandidateFailure(str(answer.get("detail")), "performance")
        ms = answer.get("ms")
        if not isinstance(ms, int | float) or ms != ms or ms < 0:
            raise CandidateFailure(f"the candidate's timer sent {ms!r}", "performance")
        own[name].append(float(ms))

    for _ in range(2):  # warm-up, untimed
        for side, name in names:
            one(side, name, 0)
    warm = min(_median(own[n]) for _, n in names) < warm_ms()
    per_round = sum(_median(wall[n]) for _, n in names) * (2 if warm else 1) / 1e3
    rounds = int(min(MAX_ROUNDS, max(MIN_ROUNDS, budget_s / max(per_round, 1e-6))))
    made = sum(1 + c.burst for c in checker.calls) + 2  # the checks' calls and the warm-up
    rounds = max(rounds, LATE_CHECK - made)
    for values in (*own.values(), *wall.values()):
        values.clear()
    order = list(names)
    for r in range(rounds):
        rng.shuffle(order)
        for side, name in order:
            one(side, name, r)
    asked = sent["candidate"]
    expected, exp_blobs = _reference_answer(
        checker, {"cmd": "perf_last", "index": asked["index"], "salt": asked["salt"]}
    )
    # The candidate's last timed output: into output slots this process lends (as a checked
    # call's output goes), else as bytes.
    slots = checker.lending.out_slots(expected["out"]) if perf_ipc() else None
    if slots is None:
        checker.lending.reply_bulk = None
    last, last_blobs = checker._cand_ask({"cmd": "perf_last", "slots": slots}, limit=1 << 40)
    changes = last.get("changes") or []
    if changes:
        raise CandidateFailure(
            "the candidate changed the harness while timed: " + str(changes[0]), "performance"
        )
    try:
        got = wire.decode(last["out"], last_blobs, bulk=checker.lending.reply_bulk)
    except wire.WireError as exc:
        raise CandidateFailure(f"a timed output could not be taken as data ({exc})") from None
    cmp = compare_outputs(
        got, wire.decode(expected["out"], exp_blobs, trusted=True), device=checker.device
    )
    if cmp.error or not cmp.loose_ok:
        raise CandidateFailure(
            "a timed call returned a wrong result (it computes only when checked?): "
            + (cmp.error or cmp.worst),
            "performance",
        )
    candidate, overhead, gap = bounded_by_wall(
        own["candidate"], wall["candidate"], own["eager"], wall["eager"]
    )
    notes = list(setup.get("notes") or [])
    if gap > 0.05 * _median(own["candidate"]) + 0.01:
        notes.append(
            f"the candidate's own timer fell short of the wall clock by {gap:.3g} ms (median, "
            f"after the protocol overhead of {overhead:.3g} ms): its times were raised by that"
        )
    eager = own["eager"]
    half = max(1, len(eager) // 4)
    first, latest = _median(eager[:half]), _median(eager[-half:])
    if latest > DRIFT * first:
        notes.append(
            f"the reference slowed down during the rounds ({first:.4g} ms -> {latest:.4g} ms): "
            "the GPU was contended"
        )
    times = {"candidate": candidate, **{n: own[n] for _, n in names if n != "candidate"}}
    moved = int(checker.moved)  # not the footprint: a workspace is no traffic a candidate owes
    result = judge(times, moved, checker.device, notes, own_ms=_median(own["candidate"]))
    result.update(
        overhead_ms=overhead,
        wall_gap_ms=gap,
        own_median_ms={n: _median(v) for n, v in own.items() if v},
        wall_median_ms={n: _median(v) for n, v in wall.items() if v},
        pool=pool_size,
        warm_calls=warm,
        seconds=round(time.monotonic() - started, 3),
        compile_baseline_s=setup.get("compile_s"),
    )
    return result
