"""The reference's process: the problem's model, its inputs and its outputs, case by case.

Trusted code (the user's problem) in its own process, forked from the verification worker
like the candidate's but never connected to it. The checker asks for one case at a time (the
inputs of a seed, possibly perturbed, scaled or re-batched; the fp32 outputs; the float64
referee's), so the reference's outputs of the whole schedule never sit in memory at once.
"""

from __future__ import annotations

import copy
import math
import random
import socket
from collections.abc import Callable
from typing import Any

import torch

from kernelopt_jupyter.problem import LoadedProblem, Problem, ProblemError, materialize
from kernelopt_jupyter.verify import contract, perf, wire
from kernelopt_jupyter.verify.compare import (
    _chunks,
    all_finite,
    float_dtypes,
    output_scale,
    tensors_equal,
)
from kernelopt_jupyter.verify.derived import derived_batch
from kernelopt_jupyter.verify.sandbox import digest, oom_request
from kernelopt_jupyter.verify.timing import Laps

#: Floating inputs of the stress case are multiplied by this (large magnitudes).
STRESS_SCALE = 1000.0
#: Cases whose inputs leave the problem's own distribution (schedule.py): skipped, not failed,
#: where the reference rejects them or returns non-finite values on them.
VARIATIONS = ("shift", "zeros", "permute", "signs", "tiny")
#: Why a call that changes nothing is not made (its transform found no input to change).
NOTHING_TO_VARY = {
    "batch": "no input has a batch dimension to change",
    "batch below": "no input has a batch dimension above 1 to shrink",
    "permute": "no integer or boolean input to permute",
    "signs": "no floating input to change the signs of",
}
#: Floating inputs of the shift case are moved by this many times their root mean square.
SHIFT_RMS = 16.0
#: The linear-problem error bound is computed for inputs of at most this many elements.
LINEAR_BOUND_MAX = 1 << 24
#: The elements of each step of the linearity check.
LINEAR_CHECK_CHUNK = 1 << 20


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, dict):
        return [leaf for k in sorted(value, key=str) for leaf in _leaves(value[k])]
    return [value]


class _KeepFloat64(torch.overrides.TorchFunctionMode):
    """In the float64 referee's forward, casts of a float64 tensor down to a lower floating
    precision keep float64: a reference that upcasts explicitly (`x.float()`, the Llama
    RMSNorm idiom) would otherwise cast the referee's inputs back to fp32, leaving no referee
    ("does not compute in float64") and only the strict tolerance (an RMSNorm whose sum of
    squares came from scaled fp16 passed)."""

    _LOWER = (torch.float32, torch.float16, torch.bfloat16)

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        first = args[0] if args else None
        if isinstance(first, torch.Tensor) and first.dtype == torch.float64:
            if func in (torch.Tensor.float, torch.Tensor.half, torch.Tensor.bfloat16):
                return first
            if func in (torch.Tensor.to, torch.Tensor.type):
                wanted = kwargs.get("dtype")
                wanted = (
                    wanted
                    if wanted is not None
                    else next((a for a in args[1:] if isinstance(a, torch.dtype)), None)
                )
                if wanted in self._LOWER:
                    rest = {k: v for k, v in kwargs.items() if k != "dtype"}
                    device = next((a for a in args[1:] if not isinstance(a, torch.dtype)), None)
                    if device is None and "device" not in rest:
                        return first
                    return func(first, *([device] if device is not None else []), **rest)
        return func(*args, **kwargs)


class _InFloat64:
    """The reference model itself in float64 for the referee, and back exactly afterwards.

    A float64 copy kept beside the float32 model (the way before) held three times the
    weights on the device for the whole search, and the referee ran beside all three: on a
    problem whose weights are most of its footprint (an MLP, an LSTM) that alone was two
    footprints. Here each floating parameter's data is converted in place and converted
    back (float32, float16 and bfloat16 go to float64 and back exactly); each buffer is
    replaced by a copy (floating ones in float64) and the original tensor itself put back, so
    what the referee's forward writes into a buffer (a BatchNorm's running statistics and
    its count of batches, in training) never reaches the float32 model. ``restore`` may be
    called early (the host fallback); it undoes the conversion once."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.params: list[tuple[torch.nn.Parameter, torch.dtype]] = []
        self.buffers: list[tuple[torch.nn.Module, str, torch.Tensor]] = []
        self.modules = list(model.modules())
        try:
            for module in self.modules:
                for p in module._parameters.values():
                    if p is not None and p.is_floating_point() and p.dtype != torch.float64:
                        self.params.append((p, p.dtype))
                        p.data = p.data.to(torch.float64)
                for name, b in module._buffers.items():
                    if b is not None:  # a counter too (a BatchNorm's batches seen)
                        self.buffers.append((module, name, b))
                        floating = b.is_floating_point()
                        module._buffers[name] = (
                            b.to(torch.float64, copy=True) if floating else b.clone()
                        )
            self._reflatten()
        except BaseException:
            self.restore()
            raise

    def _reflatten(self) -> None:
        # What ``Module._apply`` does after converting an RNN's weights (its flat view).
        for module in self.modules:
            init = getattr(module, "_init_flat_weights", None)
            if callable(init):
                init()

    def restore(self) -> None:
        params, buffers, self.params, self.buffers = self.params, self.buffers, [], []
        for p, dtype in params:
            p.data = p.data.to(dtype)
        for module, name, b in buffers:
            module._buffers[name] = b
        if params or buffers:
            self._reflatten()


def _linear_parts(out: Any, pos: Any, neg: Any) -> bool:
    """``out == pos - neg`` to float64 rounding, on every floating leaf (and there is one)."""
    a, b, c = _leaves(out), _leaves(pos), _leaves(neg)
    if not (len(a) == len(b) == len(c)):
        return False
    seen = False
    for o, p, n in zip(a, b, c):
        if not isinstance(o, torch.Tensor) or not o.is_floating_point():
            continue
        if not (isinstance(p, torch.Tensor) and isinstance(n, torch.Tensor)):
            return False
        if o.shape != p.shape or o.shape != n.shape:
            return False
        # Walked in chunks, ending at the first one that shows it (a nonlinear problem, the
        # usual case, shows it in the first): the same answer as the whole tensors give.
        walks = (_chunks(t, LINEAR_CHECK_CHUNK) for t in (o, p, n))
        for (_, oc), (_, pc), (_, nc) in zip(*walks):
            if not all(bool(torch.isfinite(t).all()) for t in (oc, pc, nc)):
                return False
            scale = pc.abs() + nc.abs()
            if bool(((oc - (pc - nc)).abs() > 1e-9 * scale + 1e-300).any()):
                return False
        seen = True
    return seen


def _float32_up(value: Any, step: int = LINEAR_CHECK_CHUNK) -> Any:
    """Every float64 tensor of ``value`` as float32 rounded up (never below it): a linear
    problem's error bound, carried in half the bytes (the checker holds it, and the staging
    that carries it, beside the float64 output). Converted in steps of ``step`` elements, so
    the float64 temporaries stay small; a bound beyond float32's range becomes infinite, which
    ``compare.within_linear_bound`` refuses (the referee's ratio then judges, as without a
    bound)."""
    if isinstance(value, torch.Tensor):
        if value.dtype != torch.float64:
            return value
        out = torch.empty(value.numel(), dtype=torch.float32, device=value.device)
        for start, part in _chunks(value, step, value.device.type):
            low = part.to(torch.float32)
            up = torch.nextafter(low, torch.full_like(low, math.inf))
            out[start : start + step] = torch.where(low.to(torch.float64) < part, up, low)
        return out.reshape(value.shape)
    if isinstance(value, list | tuple):
        return type(value)(_float32_up(v, step) for v in value)
    if isinstance(value, dict):
        return {k: _float32_up(v, step) for k, v in value.items()}
    return value


def _add(a: Any, b: Any, *, into: bool = False) -> Any:
    """``a + b`` leaf by leaf; ``into``: into ``a``'s tensors (no third copy held)."""
    if isinstance(a, torch.Tensor):
        return a.add_(b) if into else a + b
    if isinstance(a, list | tuple):
        return type(a)(_add(x, y, into=into) for x, y in zip(a, b))
    if isinstance(a, dict):
        return {k: _add(a[k], b[k], into=into) for k in a}
    return a


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300] if text else ''}".rstrip(": ")


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def _clone(values: list[Any]) -> list[Any]:
    return [v.clone() if isinstance(v, torch.Tensor) else copy.deepcopy(v) for v in values]


def _copy_non_tensors(values: list[Any]) -> list[Any]:
    return [v if isinstance(v, torch.Tensor) else copy.deepcopy(v) for v in values]


def _to_fp64(values: list[Any], device: str | None = None) -> list[Any]:
    out = []
    for v in values:
        if isinstance(v, torch.Tensor):
            v = v.to(device) if device is not None else v
            v = v.to(torch.float64) if v.is_floating_point() else v
        out.append(v)
    return out


#: The share of the device memory free to this process (free on the card, and cached by its
#: own allocator) the referee's float64 inputs may take; beyond it they and the referee go
#: to the host. The host referee is slow (an 8 GiB max-reduction's calls took over 60 s on
#: the H100 with a share of 0.5): the device's is preferred wherever the copies fit.
REFEREE_DEVICE_SHARE = 0.9
HOST_REFEREE_NOTE = "the float64 referee ran on the host (device memory was short)"


def oom_detail(exc: BaseException) -> str:
    """The harness's own out-of-memory, said in one line with what it asked for."""
    need = oom_request(exc)
    asked = f"asked for {need} more" if need else "asked for more than was free"
    free, total = torch.cuda.mem_get_info() if torch.cuda.is_available() else (0, 0)
    return (
        f"the reference's process ran out of device memory: it {asked} with "
        f"{free / 2**30:.1f} of {total / 2**30:.1f} GiB free"
    )


def referee_on_host(inputs: list[Any]) -> bool:
    """Whether the float64 copies of ``inputs`` (CUDA tensors) would take more than
    ``REFEREE_DEVICE_SHARE`` of the device memory free to this process now."""
    need = sum(
        v.numel() * 8 for v in inputs if isinstance(v, torch.Tensor) and v.is_floating_point()
    )
    if not need or not any(isinstance(v, torch.Tensor) and v.is_cuda for v in inputs):
        return False
    free, _total = torch.cuda.mem_get_info()
    free += torch.cuda.memory_reserved() - torch.cuda.memory_allocated()
    return need > REFEREE_DEVICE_SHARE * free


def _clone_float64(values: list[Any]) -> list[Any]:
    """Copies only of what ``_to_fp64`` would pass through unchanged (float64 tensors, other
    values): the referee may mutate its inputs without touching this process's pristine ones."""
    return [
        v
        if isinstance(v, torch.Tensor) and v.is_floating_point() and v.dtype != torch.float64
        else (v.clone() if isinstance(v, torch.Tensor) else copy.deepcopy(v))
        for v in values
    ]


def _to_host(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, list | tuple):
        return type(value)(_to_host(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_host(v) for k, v in value.items()}
    return value


def _detached(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, list | tuple):
        return type(value)(_detached(v) for v in value)
    if isinstance(value, dict):
        return {k: _detached(v) for k, v in value.items()}
    return value


def _float_inputs(inputs: list[Any]) -> list[int]:
    return [
        i
        for i, v in enumerate(inputs)
        if isinstance(v, torch.Tensor) and v.is_floating_point() and v.numel() > 0
    ]


def _allocated(device: str) -> int:
    return int(torch.cuda.memory_allocated()) if device == "cuda" else 0


def _peak(device: str) -> int:
    return int(torch.cuda.max_memory_allocated()) if device == "cuda" else 0


class _Message:
    """A reply's parts, each packed as soon as it exists (so this process can drop its copy):
    staged device to device by ``sharer(secret)`` where it can be, else as host bytes."""

    def __init__(self, sharer: Any) -> None:
        self.sharer = sharer
        self.fields: dict[str, Any] = {}
        self.blobs: list[Any] = []

    def add(self, name: str, value: Any, *, secret: bool, host: bool = False) -> None:
        share = self.sharer(secret) if self.sharer is not None and not host else None
        fields, blobs = wire.pack(
            [(name, _detached(value) if share is not None else _to_host(value))],
            allow_pickle=True,
            share=share,
        )
        wire.shift(fields, len(self.blobs))
        self.fields.update(fields)
        self.blobs += blobs


class Reference:
    """The reference model and the cases the checker asks for."""

    def __init__(self) -> None:
        self.device = "cpu"
        self.loaded: LoadedProblem | None = None
        self.model: Any = None
        self.model64: Any = None  # the float64 model on the host (device memory was short)
        self.in64: _InFloat64 | None = None  # the model converted for the referee, if it is
        #: A parameter the forward changed in place (a case said so): the referee then runs a
        #: float64 copy (``_model64``), since converting back would carry the change over.
        self.params_change = False
        self.fp64_note = ""
        self.perf: Any = None  # the performance gate's timing state (verify.perf)
        self.staging: Any = None  # verify.ipc.Staging: what this process shares, and only that
        self.exported: list[tuple[str, int]] = []  # (staging kind, bytes) until ``scrub``
        self.peak = 0  # device bytes at most, this candidate's checks (``stats``)
        self.pending: Any = None  # the last case's referee inputs, until ``referee``
        self.saved_state: dict[str, Any] | None = None  # the first instance's, during a twin
        #: The first forward's own peak at the problem's shape in this process: the library
        #: workspaces it allocated (cuBLAS's) stay allocated, so a later candidate's forward
        #: no longer sees them, while this process's peak still holds them. Reported for
        #: every such forward, the footprint is the same for every candidate of a search
        #: (it was 53 MB for the first and 19 MB for the rest on ``tabular_mlp_tower``).
        self.cold_forward_peak = 0
        self.cold_for: Any = None  # the problem (source, mode, device) it was measured for

    def setup(self, header: dict[str, Any], blobs: list[Any]) -> tuple[dict[str, Any], list[Any]]:
        """Build the reference; answer with the constructor arguments and weights. A process
        that serves a whole search is set up again per candidate: what the previous
        candidate's checks kept (the timing pool, a compiled baseline, the model) goes first,
        so it does not add to this candidate's peak memory."""
        self.perf = None
        self.model = self.model64 = None
        self.in64 = None  # (restored after every referee: a model of the last setup, if any)
        self.params_change = False
        self.scrub()
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        self.peak = 0
        self.pending = None
        problem = wire.decode(header["problem"], blobs, trusted=True)
        if not isinstance(problem, Problem):  # typed from here on (the checker sends one)
            raise ProblemError(f"setup sent {type(problem).__name__}, not a Problem")
        self.device = header["device"]
        if self.device == "cpu":
            torch.set_num_threads(1)
            from kernelopt_jupyter.cpu_triton import install_interpreter_shims

            install_interpreter_shims()
        self.loaded = materialize(problem)
        problem_key = (problem.digest, problem.mode, header.get("device"))
        if problem_key != self.cold_for:  # another problem: its own first forward
            self.cold_for, self.cold_forward_peak = problem_key, 0
        self.model = self.loaded.make_model(self.device, seed=int(header.get("weights_seed", 0)))
        fields, blobs_out = wire.pack(
            [("init", self.loaded.init_inputs()), ("state", dict(self.model.state_dict()))],
            allow_pickle=True,
        )
        # The candidate runs in the reference's mode: inference (``.eval()``) where the
        # problem asks for it, else as constructed (a BatchNorm in training uses the batch's
        # statistics, as KernelBench runs it).
        as_constructed = problem.kind == "module" and problem.mode != "eval"
        return {
            "ok": True,
            "kind": problem.kind,
            "entry": problem.entry,
            "as_constructed": as_constructed,
            **fields,
        }, blobs_out

    def reload(self, header: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
        """New weights loaded into the reference in place (``verify.contract.reload_state``:
        drawn, jittered, nudged, a second instance's, or the first's again)."""
        assert self.loaded is not None
        state, self.saved_state = contract.reload_state(
            self.model, self.loaded, self.device, header, self.saved_state
        )
        self.model.load_state_dict(state)
        self.model64 = None
        encoded = wire.encode(dict(self.model.state_dict()))
        return {"ok": True, "state": encoded.tree}, encoded.blobs

    def case(self, header: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
        """One case: inputs (transformed), fp32 outputs, float64 outputs, what changed.

        Bounded device memory: every part leaves as soon as it exists (staged for the
        checker, or copied to the host) and this process's copy is dropped, so the float64
        referee runs beside the staged parts and its own inputs only. On a device the packed
        copy of the inputs is the pristine one: forward runs on the inputs themselves (no
        working copy), and inputs the reference changes in place are drawn again for the
        referee (the schedule is seeded).
        """
        assert self.loaded is not None
        self.pending = None  # an earlier case's referee inputs, never asked for, go first
        laps = Laps()
        seed, spec = int(header["seed"]), header.get("transform") or {}
        inputs: list[Any] | None
        inputs, described = transform_inputs(
            self.loaded.make_inputs(seed, self.device), spec, self._draw
        )
        if described is None:
            kind = str(spec.get("kind"))
            if kind == "batch" and spec.get("direction") == "below":
                kind = "batch below"
            why = NOTHING_TO_VARY.get(kind, "nothing to change")
            return {"ok": True, "skip": why, "nothing_to_vary": True}, []
        sharing = bool(header.get("share")) and self._sharing()
        message = _Message(self._sharer if sharing else None)
        laps.lap("inputs")
        digests = [digest(v) for v in inputs]
        state_before = {k: digest(v) for k, v in self.model.state_dict().items()}
        laps.lap("fingerprints")
        # Inputs are no secret (the candidate gets them); everything after is the answer key.
        message.add("inputs", inputs, secret=False)
        # A host tensor's bytes are packed by reference: forward gets a working copy there.
        work = _clone(inputs) if self.device == "cpu" else _copy_non_tensors(inputs)
        self._mark()
        resident = _allocated(self.device)
        laps.lap("staging")
        try:
            rng_before = contract.rng_fingerprint()
            with torch.no_grad():
                out = self.model(*work)
            _sync(self.device)
        except Exception as exc:
            if isinstance(exc, torch.OutOfMemoryError) and spec.get("kind") == "batch":
                # A derived shape too large for the device here: said, not failed.
                return {"ok": True, "skip": oom_detail(exc), "oom": True}, []
            if spec.get("kind") == "batch" or spec.get("kind") in VARIATIONS:
                return {"ok": True, "skip": f"the reference rejects it ({_one_line(exc)})"}, []
            raise ProblemError(
                f"{self.loaded.problem.path}: the reference's forward raised {_one_line(exc)}"
            ) from None
        rng_changed = contract.rng_fingerprint() != rng_before
        forward_peak = max(_peak(self.device) - resident, 0)
        laps.lap("forward")
        if spec.get("kind", "fresh") == "fresh":
            self.cold_forward_peak = self.cold_forward_peak or forward_peak
            forward_peak = max(forward_peak, self.cold_forward_peak)
        if spec.get("kind") in VARIATIONS and not all_finite(out):
            # Off its inputs' usual range the reference overflows: a candidate that does not
            # (a stable formula) would be called wrong against it. Not checked, said so.
            return {"ok": True, "skip": "the reference's output is not finite there"}, []
        mutated = [
            i
            for i, (a, b) in enumerate(zip(inputs, work))
            if (digest(b) != digests[i] if isinstance(b, torch.Tensor) else not tensors_equal(a, b))
        ]
        state = self.model.state_dict()
        state_after = {k: digest(v) for k, v in state.items()}
        dtypes = float_dtypes(out)
        laps.lap("fingerprints")
        message.add("out", out, secret=True)
        del out
        if mutated:
            message.add("inputs_after", [work[i] for i in mutated], secret=True)
            if any(work[i] is inputs[i] for i in mutated):
                inputs = None  # changed in place: drawn again below if the referee needs them
        del work
        # What forward changed (a BatchNorm's running statistics in training), by name: the
        # checker holds the candidate's to these where both ran the same calls.
        changed = [k for k, v in state_after.items() if state_before.get(k) != v]
        if changed and not self.params_change:
            names = {name for name, _ in self.model.named_parameters()}
            self.params_change = any(k in names for k in changed)
        if changed:
            message.add("state_after", {k: state[k] for k in changed}, secret=True, host=True)
        reply: dict[str, Any] = {
            "ok": True,
            "described": described,
            "mutated": mutated,
            "input_digests": digests,
            "state_changed": state_after != state_before,
            "state_changed_names": changed,
            "rng_changed": rng_changed,
            "fp64_reason": None,
            "fp64_note": self.fp64_note,
            "forward_peak": int(forward_peak),
        }
        laps.lap("staging")
        if header.get("referee"):
            # Its own command, once the checker has copied this one's parts and they are
            # freed (``scrub``): the float64 referee then runs beside nothing staged.
            self.pending = (sharing, inputs, seed, spec, dtypes)
            reply["referee_pending"] = True
        del inputs
        self._mark()
        reply["phases_s"] = laps.parts  # where this case's time went (reported, never judged on)
        return {**reply, **message.fields}, message.blobs

    def referee(self) -> tuple[dict[str, Any], list[Any]]:
        """The float64 parts of the last case (its ``referee_pending``), staged on their own."""
        pending, self.pending = self.pending, None
        if pending is None:
            return {"ok": False, "detail": "no case waits for its float64 referee"}, []
        sharing, inputs, seed, spec, dtypes = pending  # the case's way: bytes if it went so
        del pending
        message = _Message(self._sharer if sharing and self._sharing() else None)
        box = [inputs]  # handed over, so the referee can drop the fp32 inputs it no longer needs
        del inputs
        laps = Laps()
        reason = self._referee_parts(message, box, seed, spec, dtypes)
        self._mark()
        laps.lap("float64 referee")
        reply = {
            "ok": True,
            "fp64_reason": reason,
            "fp64_note": self.fp64_note,
            "phases_s": laps.parts,
        }
        return {**reply, **message.fields}, message.blobs

    def _referee_parts(
        self, message: _Message, box: list[Any], seed: int, spec: dict[str, Any], dtypes: list[Any]
    ) -> str | None:
        """Add the float64 outputs (and the linear bound) to ``message``; the reason if none.
        ``box`` holds the case's pristine inputs (taken out of it: this frame holds the last
        reference), or None where the reference changed them in place (drawn again: the
        schedule is seeded)."""
        assert self.loaded is not None
        inputs = box.pop()
        if inputs is None:
            inputs, _ = transform_inputs(
                self.loaded.make_inputs(seed, self.device), spec, self._draw
            )
        small = sum(inputs[i].numel() for i in _float_inputs(inputs)) <= LINEAR_BOUND_MAX
        in64 = self._float64_inputs(inputs)
        if not small:
            inputs = None  # the float64 copies are all the referee needs
        bound = None
        try:
            out64, reason = self._referee(in64, dtypes)
            del in64
            # The bound first, then both staged: its float64 evaluations do not run beside
            # out64's staged copy (on small problems they were most of this process's peak).
            if out64 is not None and inputs is not None:
                bound = _linear_bound(inputs, out64, self._model64)
        finally:
            self._float32_again()  # the model back before anything is staged
        del inputs
        if out64 is not None:
            message.add("out64", out64, secret=True)
            del out64
            if bound is not None:
                # Float32, rounded up: half the bytes (the wire keeps the field's name).
                message.add("bound64", _float32_up(bound), secret=True)
            del bound
        return reason

    def _draw(self, seed: int) -> list[Any]:
        """The problem's inputs of ``seed`` (``transform_inputs``'s ``draw``)."""
        assert self.loaded is not None
        return self.loaded.make_inputs(seed, self.device)

    def _sharing(self) -> bool:
        """Whether this case's large device tensors go by CUDA IPC (``verify.ipc``)."""
        from kernelopt_jupyter.verify import ipc

        self.scrub()
        return self.device == "cuda" and ipc.available()

    def _sharer(self, secret: bool) -> Any:
        """``wire.encode``'s ``share``: a large device tensor exported by CUDA IPC, kept here
        unchanged until ``scrub`` (which zero-fills a ``secret`` one first)."""
        from kernelopt_jupyter.verify import ipc

        kind = "secret" if secret else "inputs"

        def share(t: torch.Tensor) -> dict[str, Any] | None:
            if t.device.type != "cuda" or t.numel() * t.element_size() < ipc.MIN_BYTES:
                return None
            if self.staging is None:
                self.staging = ipc.Staging()
            index = sum(1 for k, _ in self.exported if k == kind)
            self._mark()  # the staging buffers may grow: close the interval they were smaller
            try:
                spec = ipc.stage(self.staging, kind, index, t)
            except (ipc.IpcError, RuntimeError):  # the byte path carries this one
                return None
            self.exported.append((kind, spec["nbytes"]))
            return {"ipc": spec["ipc"]}

        return share

    def scrub(self) -> dict[str, Any]:
        """Zero-fill what the last case shared as the answer key (the checker has its copies)
        and free the staging buffers. Only dedicated staging buffers are ever shared
        (``verify.ipc.Staging``): no memory of this process that another process can map
        holds an answer while a candidate runs. Freed, they add nothing to the next case's
        peak (kept, the next case's float64 referee would run beside all of them)."""
        if self.exported and self.staging is not None:
            counts: dict[str, int] = {}
            for kind, nbytes in self.exported:
                index = counts.get(kind, 0)
                counts[kind] = index + 1
                if kind == "secret":
                    self.staging.buffers[kind][index].raw[:nbytes].zero_()
            _sync(self.device)
        self.exported.clear()
        if self.staging is not None:
            self._mark()
            self.staging.close()
        return {"ok": True}

    def stats(self) -> dict[str, Any]:
        """Peak device memory of this process, its staging buffers included: the largest of
        torch's peak plus the staging held, interval by interval (``_mark``)."""
        self._mark()
        staged = self.staging.nbytes() if self.staging is not None else 0
        return {"ok": True, "peak_bytes": int(self.peak), "staging_bytes": staged}

    def _mark(self) -> None:
        """Close a memory interval: torch's peak since the last mark plus the staging bytes
        held during it (staging grows only right after a mark), then a new interval."""
        if self.device != "cuda" or not torch.cuda.is_initialized():
            return
        staged = self.staging.nbytes() if self.staging is not None else 0
        self.peak = max(self.peak, int(torch.cuda.max_memory_allocated()) + staged)
        torch.cuda.reset_peak_memory_stats()

    # ------------------------------------------------------------------ helpers

    def _float64_inputs(self, inputs: list[Any]) -> list[Any]:
        """The referee's float64 copies of ``inputs``: on the device where they fit beside
        what the device already holds, else on the host (``referee_on_host``), where the
        referee then runs too. An out-of-memory while converting moves them to the host."""
        if self.device == "cuda" and referee_on_host(inputs):
            self.fp64_note = HOST_REFEREE_NOTE
            return _to_fp64(_clone_float64(inputs), "cpu")
        try:
            return _to_fp64(_clone_float64(inputs))
        except torch.OutOfMemoryError:
            torch.cuda.empty_cache()
            self.fp64_note = HOST_REFEREE_NOTE
            return _to_fp64(_clone_float64(inputs), "cpu")

    def _referee(self, in64: list[Any], dtypes: list[torch.dtype]) -> tuple[Any, str | None]:
        """The float64 outputs on the float64 inputs ``in64`` (this process's own copies: the
        referee may change them) and the same weights, or the reason there are none."""
        assert self.loaded is not None
        if not dtypes:
            return None, "the reference's output has no floating-point tensor"
        if all(d == torch.float64 for d in dtypes):
            return None, "the reference already computes in float64"
        on_host = self.device == "cuda" and any(
            isinstance(v, torch.Tensor) and v.device.type == "cpu" for v in in64
        )
        fn = self._model64(device="cpu" if on_host else None)
        if isinstance(fn, str):
            return None, fn
        try:
            with torch.no_grad(), _KeepFloat64():
                out64 = fn(*in64)
            _sync(self.device)
        except torch.OutOfMemoryError:
            # Retried with less: the referee on the host (slower, no device memory).
            self.model64 = None
            fn = None
            host = [v.cpu() if isinstance(v, torch.Tensor) else v for v in in64]
            in64.clear()
            torch.cuda.empty_cache()
            fn = self._model64(device="cpu")
            if isinstance(fn, str):
                return None, fn
            with torch.no_grad():
                out64 = fn(*host)
            self.fp64_note = HOST_REFEREE_NOTE
        except Exception as exc:
            return None, f"the reference cannot run in float64 ({_one_line(exc)})"
        if not any(d == torch.float64 for d in float_dtypes(out64)):
            return None, "the reference does not compute in float64 when given float64 inputs"
        return out64, None

    def _model64(self, device: str | None = None) -> Any:
        assert self.loaded is not None
        if self.loaded.problem.kind != "module":
            fn = self.loaded.reference_fn()
            if fn is None:
                return f"the {self.loaded.problem.kind} problem defines no reference() function"
            return fn
        if device is None and not self.params_change:
            if self.in64 is None:
                self.in64 = _InFloat64(self.model)
            return self.model
        # A float64 copy: on the host (device memory was short), or of a model whose forward
        # changes its parameters (converted back, they would carry the referee's change).
        if self.model64 is None or device is not None:
            self._float32_again()
            model = copy.deepcopy(self.model)
            self.model64 = model.to(device or self.device).to(torch.float64)
        return self.model64

    def _float32_again(self) -> None:
        """The model as the float32 cases run it (``_InFloat64.restore``), if converted."""
        in64, self.in64 = self.in64, None
        if in64 is not None:
            in64.restore()


def transform_inputs(
    inputs: list[Any],
    spec: dict[str, Any],
    draw: Callable[[int], list[Any]] | None = None,
) -> tuple[list[Any], Any]:
    """A call's inputs varied as its schedule entry says (``spec``: ``schedule.Call.transform``)
    and the variation described; ``None`` for a variation these inputs cannot take. ``draw``
    makes the inputs of another seed (the rows a batch above the benchmark's adds)."""
    kind = spec.get("kind", "fresh")
    if kind == "fresh":
        return inputs, {"kind": "fresh"}
    if kind == "perturb":
        floats = _float_inputs(inputs)
        if not floats:
            return inputs, {"kind": "perturb", "note": "no floating input to perturb"}
        rng = random.Random(int(spec["pick"]))
        which = rng.choice(floats)
        flat = inputs[which].reshape(-1)
        index = rng.randrange(flat.numel())
        value = float(flat[index])
        new = value + 1.0 + abs(value) if value == value else 0.5
        # Only one element changes: a candidate that samples a few values to pick a
        # cached answer returns the old one.
        target = inputs[which].clone()
        target.reshape(-1)[index] = new
        inputs[which] = target
        return inputs, {"kind": "perturb", "input": which, "index": index}
    if kind == "stress":
        scale = float(spec.get("scale", STRESS_SCALE))
        for i in _float_inputs(inputs):
            inputs[i] = inputs[i] * scale
        return inputs, {"kind": "stress", "scale": scale}
    if kind == "shift":
        shifted = []
        sign = float(spec.get("sign", 1.0))
        for i in _float_inputs(inputs):
            rms = output_scale(inputs[i])  # finite values only, chunked
            if rms > 0 and math.isfinite(rms):
                inputs[i] = inputs[i] + sign * SHIFT_RMS * rms
                shifted.append(i)
        return inputs, {"kind": "shift", "by_rms": sign * SHIFT_RMS, "inputs": shifted}
    if kind == "tiny":
        scale = float(spec["scale"])
        for i in _float_inputs(inputs):
            inputs[i] = inputs[i] * scale
        return inputs, {"kind": "tiny", "scale": scale}
    if kind == "signs":
        # Each element's sign flipped with probability one half, from the call's own
        # generator: inputs the problem draws non-negative get both signs. The flags are
        # drawn where the input lives, a byte each: drawn on the host as int64, a 4 GiB
        # input cost 8 GiB of host memory and seconds of every verification.
        gens: dict[Any, torch.Generator] = {}
        flipped = []
        for i in _float_inputs(inputs):
            t = inputs[i]
            gen = gens.get(t.device)
            if gen is None:
                gen = gens[t.device] = torch.Generator(device=t.device)
                gen.manual_seed(int(spec["pick"]))
            flip = torch.randint(0, 2, t.shape, generator=gen, device=t.device, dtype=torch.uint8)
            inputs[i] = torch.where(flip.bool(), -t, t)
            flipped.append(i)
        if not flipped:
            return inputs, None
        return inputs, {"kind": "signs", "inputs": flipped}
    if kind == "zeros":
        rng = random.Random(int(spec["pick"]))
        zeroed = []
        for i in _float_inputs(inputs):
            t = inputs[i]
            if t.numel() == 0:
                continue
            t = t.clone(memory_format=torch.contiguous_format)
            if t.dim() >= 2:
                rows = t.view(-1, t.shape[-1])
                rows[rng.randrange(rows.shape[0])] = 0
            else:
                flat = t.view(-1)
                span = max(1, flat.numel() // 8)
                start = rng.randrange(flat.numel() - span + 1)
                flat[start : start + span] = 0
            inputs[i] = t
            zeroed.append(i)
        return inputs, {"kind": "zeros", "inputs": zeroed}
    if kind == "permute":
        # Integer and boolean inputs (masks, labels, indices) are the same in every seed's
        # draw when the problem builds them (a causal mask): a candidate could hard-code
        # them and never read the argument. Their rows (dim -2; dim 0 of a vector) are
        # reordered: every value stays one the problem makes (an index in range, a mask
        # row with as many set entries), so the reference stays defined on them.
        rng = random.Random(int(spec["pick"]))
        permuted = []
        for i, v in enumerate(inputs):
            if not isinstance(v, torch.Tensor) or v.dim() == 0:
                continue
            if v.is_floating_point() or v.is_complex():
                continue
            dim = v.dim() - 2 if v.dim() >= 2 else 0
            order = list(range(v.shape[dim]))
            rng.shuffle(order)
            if len(order) < 2:
                continue
            if order == sorted(order):  # a real change
                order = order[1:] + order[:1]
            rows = torch.tensor(order, device=v.device)
            inputs[i] = torch.empty_like(v).copy_(v.index_select(dim, rows))
            permuted.append(i)
        if not permuted:
            return inputs, None
        return inputs, {"kind": "permute", "inputs": permuted}
    if kind == "batch":
        tensors = [v for v in inputs if isinstance(v, torch.Tensor) and v.dim() >= 1]
        if not tensors:
            return inputs, None
        batch = tensors[0].shape[0]
        size = derived_batch(batch, spec)
        if size is None:
            return inputs, None
        # Rows past the benchmark's come from draws of their own (``draw``): repeated rows
        # would let a candidate compute the first ``batch`` and copy them.
        more = []
        if size > batch:
            if draw is None:
                raise ValueError("a batch above the benchmark's needs inputs drawn for it")
            seeds = random.Random(int(spec.get("pick", 0)))
            more = [draw(seeds.getrandbits(31)) for _ in range(-(-size // batch) - 1)]
        out = []
        for i, v in enumerate(inputs):
            if isinstance(v, torch.Tensor) and v.dim() >= 1 and v.shape[0] == batch:
                if more:
                    parts = [v] + [m[i] for m in more]
                    v = torch.cat(parts)[:size].contiguous()
                else:
                    v = v[:size].clone()
            out.append(v)
        return out, {"kind": "batch", "direction": spec.get("direction"), "from": batch, "to": size}
    raise ValueError(f"unknown transform {kind!r}")


def _linear_bound(inputs: list[Any], out64: Any, model64: Callable[[], Any]) -> Any:
    """For a problem linear in its floating inputs, the float64 output on absolute inputs
    and absolute weights (the scale of any honest evaluation's rounding error); else None.

    Linearity is checked on the case itself: ``f(x) == f(x+) - f(x-)`` in float64, where
    ``x+`` and ``x-`` are the positive and negative parts of every floating input (a bias,
    a nonlinearity or a product of inputs breaks it). Bounded cost: inputs of at most
    ``LINEAR_BOUND_MAX`` elements, two or three extra float64 evaluations. ``model64`` gives the
    float64 model (or why there is none), asked for only where the inputs are small enough.
    """
    floats = _float_inputs(inputs)
    if not floats or sum(inputs[i].numel() for i in floats) > LINEAR_BOUND_MAX:
        return None
    fn = model64()
    if isinstance(fn, str):
        return None

    def part(sign: float) -> list[Any]:
        values = _to_fp64(_clone_float64(inputs))
        for i in floats:
            values[i] = (values[i] * sign).clamp(min=0)
        return values

    try:
        with torch.no_grad():
            pos = fn(*part(1.0))
            neg = fn(*part(-1.0))
            if not _linear_parts(out64, pos, neg):
                return None
            params = [
                t
                for t in (fn.state_dict().values() if isinstance(fn, torch.nn.Module) else [])
                if t.is_floating_point()
            ]
            if not any(bool((t < 0).any()) for t in params):
                return _add(pos, neg, into=True)
            del pos, neg  # not needed by the evaluation on absolute values
            absolute = copy.deepcopy(fn)
            for t in absolute.state_dict().values():
                if t.is_floating_point():
                    t.abs_()
            values = _to_fp64(_clone_float64(inputs))
            for i in floats:
                values[i] = values[i].abs()
            return absolute(*values)
    except Exception:
        return None


def serve(sock: socket.socket) -> None:
    """The reference process's loop: one reply per command until ``exit``."""
    ref = Reference()
    while True:
        try:
            header, blobs = wire.recv(sock, 1 << 40)
        except wire.WireError:
            return
        cmd = header.get("cmd")
        out: list[Any] = []
        try:
            if cmd == "setup":
                reply, out = ref.setup(header, blobs)
            elif cmd == "case":
                reply, out = ref.case(header)
            elif cmd == "referee":
                reply, out = ref.referee()
            elif cmd == "reload":
                reply, out = ref.reload(header)
            elif cmd == "state":
                reply = {"ok": True, "state": contract.summarize_state(ref.model.state_dict())}
            elif cmd == "stats":
                reply = ref.stats()
            elif cmd == "scrub":
                reply = ref.scrub()
            elif cmd in perf.COMMANDS:
                reply, out = perf.reference_command(ref, header)
            elif cmd == "exit":
                return
            else:
                reply = {"ok": False, "detail": f"unknown command {cmd!r}"}
        except ProblemError as exc:
            reply, out = {"ok": False, "problem_error": str(exc)}, []
        except torch.OutOfMemoryError as exc:
            # Device memory was short (a candidate's process holds its share beside this
            # one): the harness's limit, not the problem's fault.
            torch.cuda.empty_cache()
            reply, out = {"ok": False, "oom": True, "detail": oom_detail(exc)}, []
        except Exception as exc:
            path = ref.loaded.problem.path if ref.loaded is not None else "the problem"
            reply, out = {"ok": False, "problem_error": f"{path}: {_one_line(exc)}"}, []
        wire.send(sock, reply, out)
