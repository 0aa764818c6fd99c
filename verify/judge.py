"""The judge: a verification's decisions, on plain data (the checker's pure part).

The checker (``verify.checker``) is the process shell: it talks to the reference's and the
candidate's processes, lends inputs and outputs, and hands each reply here as data: the
reference's case (its outputs, the float64 referee's parts, the input digests) and the
candidate's reply (its outputs and its dispatch-level accounting). The judge decides each call
(a ``CandidateFailure`` names the gate it fails), keeps the records the gates' verdicts are
made from, and makes them: the static gate's run-time pass, correctness over the schedule,
the float64 referee. It starts no process, opens no socket or device handle and holds no
child: every rule here runs on dicts, lists and tensors, so each can be tested without a
worker.

* ``DispatchJudge``: the dispatch-level accounting of the load and of every call (Triton
  launches, PyTorch compute ops, where each output's memory was written);
* ``ValueJudge``: the values of every call against the reference (structure, tolerances,
  inputs and state left as the reference leaves them) and the float64 referee's records;
* ``fp64_verdict``: the float64 gate's decision from the referee's records alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kernelopt_jupyter.verify import derived, wire
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
from kernelopt_jupyter.verify.schedule import Call, input_seeds


class CandidateFailure(Exception):
    """The candidate failed; ``gate`` says which gate the failure belongs to."""

    def __init__(self, detail: str, gate: str = "correctness") -> None:
        super().__init__(detail)
        self.gate = gate


#: The smallest error (relative to the output's scale) a refereed call is taken to have
#: when unrefereed calls are held to it: a few fp32 roundings.
UNREFEREED_FLOOR = 1e-6
#: A call's values far below an output's scale are judged on their own from this many on;
#: fewer are pooled with the output's other such calls (``pooled_small_values``).
SMALL_VALUES_ALONE = 32

_STATE_WORDS = {
    "stale": "was not written during this call (a result kept from an earlier call, or an "
    "input returned as is)",
    "fresh": "was only allocated or filled with a constant during this call (no kernel wrote it)",
    "torch": "was written by PyTorch compute ops, not by the candidate's kernels",
    "foreign": "holds data that no ATen op or kernel of the candidate produced (host memory: "
    "numpy, DLPack, from_numpy, Tensor.apply_, a write through a raw address taken with "
    "data_ptr on the CPU, or a kernel staging such data)",
    "unlinked": "was written from data that nothing of this call's inputs reached (a result "
    "kept or looked up, copied by a kernel, instead of one computed from the inputs)",
}


def process_state(label: str, gate: str, reply: dict[str, Any], case: dict[str, Any]) -> None:
    """A forward that changed the process's global random generators where the reference's
    forward of the same call did not (``verify.contract.rng_fingerprint``) fails."""
    if reply.get("rng_changed") and not case.get("rng_changed"):
        raise CandidateFailure(
            f"{label}: forward changed the state of the process's random generators "
            "(torch.manual_seed, a random draw, random.seed), which the reference's forward "
            "leaves alone: a drop-in module must not alter its caller's random stream",
            gate,
        )


class DispatchJudge:
    """The static gate's run-time rules: what the candidate's process reported of its load
    and of each call (launches, PyTorch compute ops, graph replays, where each output's memory
    was last written) against what a candidate's ``forward`` may do."""

    def __init__(self, *, dispatch_only: bool, cuda_graphs: bool) -> None:
        self.dispatch_only = dispatch_only
        self.cuda_graphs = cuda_graphs
        self.construction_launches = 0
        #: Work launched (and so capturable by a CUDA graph) before the current call.
        self.launched_before = 0
        self.first_launches = 0
        self.kernels: dict[str, int] = {}

    def loaded(self, reply: dict[str, Any]) -> None:
        """The candidate's reply to its load: its model took the reference's weights and
        left the harness's environment as it was."""
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

    def ran(self, index: int, label: str, gate: str, reply: dict[str, Any]) -> None:
        """A call's reply: it ran, under the rules (``account``); the first call's kernels
        are kept for the static gate's detail."""
        if not reply.get("ok"):
            detail = str(reply.get("detail"))
            raise CandidateFailure(f"{detail} ({label})", gate)
        self.account(index, label, gate, reply)
        if index == 0:
            self.first_launches = int(reply.get("launches") or 0)
            self.kernels = {str(k): int(v) for k, v in (reply.get("kernels") or {}).items()}

    def account(self, index: int, label: str, gate: str, reply: dict[str, Any]) -> None:
        """One call's dispatch-level accounting against the rules."""
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
        if reply.get("memory_violations"):
            raise CandidateFailure(str(reply["memory_violations"][0]), gate)
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

    def static_pass(self) -> dict[str, Any]:
        """The static gate's passing result, from the first call's launches."""
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


@dataclass
class Compared:
    """One call's output against the reference's, and the float64 referee's parts where the
    call is refereed (``rows`` and ``bound_ok`` where the comparison's walk took them)."""

    cmp: Comparison
    ref64: Any = None
    bound64: Any = None
    rows: list[Any] | None = None
    bound_ok: bool | None = None


class ValueJudge:
    """The correctness and float64 gates' rules: each call's values against the reference's
    case, and the records their verdicts are made from."""

    def __init__(self, *, calls: list[Call], seed: int, device: str, factor: float) -> None:
        self.calls = calls
        self.seed = seed
        self.device = device
        self.factor = factor
        self.referee: list[dict[str, Any]] = []  # one record per refereed call and output leaf
        self.fp64_reason: str | None = None
        self.fp64_note = ""
        self.strict = True
        self.per_call: list[dict[str, Any]] = []
        self.total = Comparison()
        #: Whether any output was compared (``total`` holds an error only then).
        self.compared = False
        self.generalization: dict[str, Any] = {}
        #: The derived shapes' calls (``verify.derived``): direction, shape, outcome, reason.
        self.derived: list[dict[str, Any]] = []
        self.skipped: list[str] = []  # checked calls the reference could not take, and why
        self.state_compared = 0
        self.shift_note = ""  # the shift call, left to the referee past the loose tolerance
        self.last_strict: tuple[bool, str] = (True, "")

    # ------------------------------------------------------------------ one call

    def compare(
        self, call: Call, case: dict[str, Any], blobs: list[Any], out: Any, ref_out: Any
    ) -> Compared:
        """The candidate's output against the reference's (and the float64 referee's, where
        the case holds it)."""
        stress = call.kind == "stress"
        if "out64" in case:
            # Compared and refereed in one walk (a linear problem's bound too): the
            # candidate's output and the key wait in host memory on a GPU, and each step
            # goes to the device once.
            ref64 = wire.decode(case["out64"], blobs, trusted=True)
            bound64 = None
            if "bound64" in case:
                bound64 = wire.decode(case["bound64"], blobs, trusted=True)
            cmp, rows, bound_ok = compare_and_referee(
                out, ref_out, ref64, bound64=bound64, magnitude=stress, device=self.device
            )
            compared = Compared(cmp, ref64, bound64, rows, bound_ok)
        else:
            compared = Compared(compare_outputs(out, ref_out, magnitude=stress, device=self.device))
        self.last_strict = (compared.cmp.strict_ok, compared.cmp.worst)
        return compared

    def check(
        self,
        index: int,
        call: Call,
        label: str,
        case: dict[str, Any],
        blobs: list[Any],
        reply: dict[str, Any],
        got: list[bytearray],
        compared: Compared,
        *,
        state_asked: bool,
    ) -> None:
        """One call's verdict on its values, its inputs and its state; a checked call's
        figures join the correctness gate's."""
        cmp = compared.cmp
        # The hints name a race between a kernel's programs: only for a call that launched one.
        launched = int(reply.get("launches") or 0) > 0
        reordered = ""
        if launched and call.poison:
            reordered = (
                f" (this call ran every launch's programs in {call.order} order, with fresh "
                "allocations filled with NaN: a result that depends on the order programs run "
                "in, or that reads memory nothing wrote, is a race on a GPU)"
            )
        elif launched and call.order != "grid" and call.checked:
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
        if state_asked:
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
                if call.checked:  # a derived shape's miss is reported on its own
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

    def referee_call(
        self,
        index: int,
        call: Call,
        case: dict[str, Any],
        compared: Compared,
        out: Any,
        ref_out: Any,
    ) -> None:
        """A refereed call's records (the candidate's and the fp32 reference's errors against
        float64, per output leaf); an unrefereed one may say why no referee can run."""
        ref64, bound64, bound_ok = compared.ref64, compared.bound64, compared.bound_ok
        if ref64 is not None:
            if bound_ok is None:  # not taken in the comparison's walk
                bound_ok = bound64 is not None and within_linear_bound(out, ref64, bound64)
            # One record per output leaf, each with its own floor (its magnitude, its dtype).
            # The candidate and the fp32 reference against the referee, in one walk (the
            # comparison's, where the leaves lined up simply).
            rows = compared.rows
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
        elif case.get("fp64_reason") and self.fp64_reason is None:
            self.fp64_reason = str(case["fp64_reason"])
        if case.get("fp64_note"):
            self.fp64_note = str(case["fp64_note"])

    def _inputs(
        self,
        label: str,
        case: dict[str, Any],
        blobs: list[Any],
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
        blobs: list[Any],
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

    # ------------------------------------------------------------------ calls not judged

    def skipped_case(self, call: Call, case: dict[str, Any]) -> None:
        """A call whose case the reference could not make (``case["skip"]`` says why)."""
        if not call.checked:  # a derived shape's call (reported only)
            # Out of memory in the reference's forward says nothing of the problem's shapes;
            # no such shape (a batch of 1 has none below) or one it rejects is no shape at all.
            applies = bool(case.get("oom"))
            self._derived(call, case.get("described"), "skipped", str(case["skip"]), applies)
        elif not case.get("nothing_to_vary"):
            # a variation the reference cannot take (shift, zeros, permute); a call with
            # nothing to vary (no integer input to permute) is simply not made
            self.skipped.append(f"{call.kind}: {case['skip']}")

    def derived_skipped(self, call: Call, reason: str, described: Any = None) -> None:
        """A derived shape's call (reported only) was not made or not finished for a reason
        that says nothing of the candidate (memory, a shape the reference rejects)."""
        self._derived(call, described, "skipped", reason)

    def derived_failed(self, call: Call, case: dict[str, Any], reason: str) -> None:
        """A derived shape's call (reported only) failed: the candidate is specialised."""
        self._derived(call, case.get("described"), "fail", reason)

    def derived_passed(self, call: Call, case: dict[str, Any]) -> None:
        """A derived shape's call (reported only) passed its checks: it generalizes there only
        within the strict tolerance (the call is not refereed: a tanh GELU at every other
        batch size was reported as generalizing)."""
        strict, worst = self.last_strict
        if strict:
            self._derived(call, case.get("described"), "pass")
        else:
            reason = f"the output misses the strict tolerance ({worst})"
            self._derived(call, case.get("described"), "fail", reason)

    def _derived(
        self, call: Call, described: Any, outcome: str, reason: str = "", applies: bool = True
    ) -> None:
        direction = str(call.transform.get("direction", "below"))
        row = derived.entry(direction, described, outcome, reason, applies=applies)
        self.derived.append(row)
        self.generalization = derived.generalization(self.derived)

    # ------------------------------------------------------------------ verdicts

    def correctness_metrics(self) -> dict[str, Any]:
        """The correctness gate's figures so far (its result's metrics, pass or fail)."""
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
            **({"derived_shapes": self.derived} if self.derived else {}),
        }

    def correctness_verdict(self) -> dict[str, Any]:
        """The correctness gate's result over the calls judged."""
        metrics = self.correctness_metrics()
        self.strict = self.total.strict_ok
        n = len(self.per_call)
        seeds = ", ".join(str(s) for s in metrics["seeds"])
        shapes = self.generalization.get("shapes")
        tail = f"; {shapes}" if shapes else ""
        if self.derived:
            tail += f" ({derived.shape_rule(self.derived)})"
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

    def fp64_verdict(self) -> dict[str, Any]:
        """The float64 gate's result from this verification's records (``fp64_verdict``)."""
        return fp64_verdict(
            self.referee,
            self.per_call,
            factor=self.factor,
            fp64_reason=self.fp64_reason,
            fp64_note=self.fp64_note,
            strict=self.strict,
        )


def pooled_small_values(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
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


def unrefereed_outlier(per_call: list[dict[str, Any]], factor: float) -> str | None:
    """A call the referee did not see that missed the strict tolerance by far more than
    any refereed call's error (both relative to their output's scale): the referee's
    acceptance covers the calls it saw, and an honest candidate's rounding is alike on
    every call. (A candidate exact wherever a referee looked and a cheaper approximation
    on the calls it could tell were not refereed passed the whole cascade.)"""
    # (the shift call's error may be its reference's cancellation, not the candidate's)
    seen = [c["scaled_err"] for c in per_call if c.get("refereed") and c.get("kind") != "shift"]
    ceiling = factor * max(max(seen, default=0.0), UNREFEREED_FLOOR)
    for c in per_call:
        err = c.get("scaled_err")
        if c.get("refereed") or c.get("strict") or err is None or err <= ceiling:
            continue
        return (
            f"call {c.get('call', '?')} ({c.get('kind', '?')}, not refereed) misses the "
            f"strict tolerance with an error of {err:.3g} of the output's scale, more than "
            f"{factor:g}x the worst refereed call's ({max(seen, default=0.0):.3g}): "
            "a candidate must be as accurate on every call as on the calls the referee saw"
        )
    return None


def fp64_verdict(
    referee: list[dict[str, Any]],
    per_call: list[dict[str, Any]],
    *,
    factor: float,
    fp64_reason: str | None = None,
    fp64_note: str = "",
    strict: bool = True,
) -> dict[str, Any]:
    """The float64 gate's result: the referee's records (one per refereed call and output
    leaf, ``ValueJudge.referee_call``) and the correctness gate's per-call figures in;
    ``fp64_reason`` says why no referee could run, ``strict`` whether every call met the
    strict tolerance."""
    if fp64_reason is not None or not referee:
        reason = fp64_reason or "no refereed call"
        return {"status": "skipped", "detail": f"no fp64 referee: {reason}"}
    unseen = unrefereed_outlier(per_call, factor)
    if unseen is not None:
        return {"status": "fail", "detail": unseen}
    # A linear problem's call inside its float64 error bound is accepted (compare.py).
    calls = len({r["call"] for r in referee})
    bounded = sum(1 for r in referee if r.get("bound_ok"))
    refereed = [r for r in referee if not r.get("bound_ok")] or referee
    worst = max(refereed, key=lambda r: r["err_candidate"] / max(r["err_reference"], r["floor"]))
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
    for r in pooled_small_values(relative):
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
        "limit": factor,
    }
    if fp64_note:
        metrics["note"] = fp64_note
    if bounded == len(referee):  # (records: one per call and output leaf)
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
        f"own ({own}; limit {factor:g}x) over {calls} refereed calls"
    )
    if rel_worst is not None:
        summary += f"; values far below the output's scale: {rel_ratio:.3g}x"
    if ratio > factor:
        return {
            "status": "fail",
            "detail": f"far less accurate than the reference: {summary} (a silent precision loss?)",
            **metrics,
        }
    if mid_ratio > factor and mid_worst is not None:
        return {
            "status": "fail",
            "detail": "values are far less accurate than the reference's relative to their "
            f"own size: the 99th percentile of the relative error is "
            f"{mid_worst['mid_rel_candidate']:.3g} vs {mid_worst['mid_rel_reference']:.3g} "
            f"(output {mid_worst.get('leaf', 0)}; {summary})",
            **metrics,
        }
    if rel_ratio > factor and rel_worst is not None:
        return {
            "status": "fail",
            "detail": "values far below the output's scale are far less accurate than the "
            f"reference's: mean relative error {rel_worst['small_rel_candidate']:.3g} vs "
            f"{rel_worst['small_rel_reference']:.3g} over {rel_worst['small_count']} such "
            f"values of output {rel_worst.get('leaf', 0)} ({summary})",
            **metrics,
        }
    how = "strict tolerance met" if strict else "accepted by the referee"
    return {"status": "pass", "detail": f"{how}; {summary}", **metrics}
