"""The dispatch map: one record per sub-kernel of the harvested candidate, ranked by time share.

Each record says what the unit is (generated Triton kernel, kept vendor-library call, other
ATen kernel), which aten ops it came from, how often it launches, its measured time and share
(torch.profiler, GPU only), its FLOPs and bytes, and where it sits on the GPU's roofline. The
map also carries the per-op dispatch choice: for ops that have a vendor/eager path (a
convolution, a pooling op), whether that path beats Inductor's lowering, measured on the GPU.

On the CPU the interpreter's times mean nothing: records are ranked by their roofline-bound time
(bytes and FLOPs against the GPU's peaks, the H200's on the CPU) and the map says so.
"""

from __future__ import annotations

import shutil
from dataclasses import asdict, dataclass, field
from typing import Any

from kernelopt_jupyter.analysis.codegen import VENDOR_OPS
from kernelopt_jupyter.analysis.harvest import Harvest
from kernelopt_jupyter.analysis.roofline import compute_peak, place
from kernelopt_jupyter.device import GPU_LOCK
from kernelopt_jupyter.gpu_peaks import current as current_peaks
from kernelopt_jupyter.problem import Problem

SCHEMA = 1
#: Profiled forward calls per measurement on the GPU (after warm-up).
PROFILE_RUNS = 20


@dataclass
class DispatchRecord:
    """One sub-kernel: what it is, where its time goes, and its roofline position."""

    name: str
    kind: str  # "triton" | "vendor" | "other"
    ops: list[str] = field(default_factory=list)
    launches: int = 0
    library: str = ""
    ms: float | None = None  # measured per forward (GPU); None on CPU
    share: float | None = None  # fraction of the measured forward time
    flops: int | None = None
    bytes: int | None = None
    flops_source: str = ""
    intensity: float | None = None
    bound: str | None = None  # "memory" | "compute"
    bound_ms: float | None = None  # the roofline's lower bound on its time
    roofline_fraction: float | None = None  # bound_ms / ms: 1.0 = at the roof
    peak: str = ""
    ncu: dict[str, Any] | str = "not collected"
    source: str = ""
    #: Tensor argument shapes of the ATen op behind the unit, as the dispatch recorder saw
    #: them (a Triton unit: its first fused op in the reference's eager forward).
    shapes: list[list[int]] = field(default_factory=list)
    #: The same vendor call in other forms, each timed alone at its shapes on the GPU (ms):
    #: ``{"as called": ..., "gemm_bias_operand": ...}`` for an ``addmm`` with a 1-D bias.
    alternatives: dict[str, float] = field(default_factory=dict)

    def unit(self) -> dict[str, Any]:
        """The fields of ``agents.base.KernelUnit``, for the search."""
        return {
            "name": self.name,
            "kind": self.kind,
            "source": self.source,
            "ops": list(self.ops),
            "share": self.share,
            "ms": self.ms,
            "bound": self.bound,
            "roofline_fraction": self.roofline_fraction,
            "flops": self.flops,
            "bytes": self.bytes,
            "bound_ms": self.bound_ms,
            "library": self.library,
            "shapes": [list(s) for s in self.shapes],
            "alternatives": dict(self.alternatives),
        }


@dataclass
class DispatchChoice:
    """For one op with a vendor/eager path: does that path beat Inductor's lowering?"""

    label: str
    ops: list[str]
    inductor_ms: float | None = None  # Inductor's units for these ops (measured, GPU)
    eager_ms: float | None = None  # the eager/vendor kernels for the same ops
    harvest_ms: float | None = None  # whole forward: the harvested candidate
    variant_ms: float | None = None  # whole forward: the variant routing the op back
    vendor_beats_inductor: bool | None = None  # None where not measured (CPU)
    variant_available: bool = False
    dispatch_only: bool = False
    detail: str = ""


@dataclass
class DispatchMap:
    """The profile of a problem's harvested candidate (``kernelopt profile --json``)."""

    problem: str
    device: str
    ok: bool = True
    error: str = ""
    ranked_by: str = ""
    total_ms: float | None = None
    records: list[DispatchRecord] = field(default_factory=list)
    choices: list[DispatchChoice] = field(default_factory=list)
    library_dominated: bool = False
    versions: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    harvest: Harvest | None = None
    # Wall seconds of each phase in the worker: load, harvest (its own split in the
    # harvest's ``seconds``), costs, profile, choices.
    seconds: dict[str, float] = field(default_factory=dict)
    #: The roof the records were placed under (``gpu_peaks``): the GPU's name, its fp32
    #: GFLOP/s and its sustained GB/s (the panel's roofline chart draws these).
    peak_gpu: str = ""
    peak_gflops: float | None = None
    peak_gbps: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able, schema 1 (the harvest itself is left out: it has its own to_dict)."""
        data = {"schema": SCHEMA}
        data.update({k: v for k, v in asdict(self).items() if k != "harvest"})
        return data

    def units(self) -> list[dict[str, Any]]:
        """Records as ``KernelUnit`` fields, in rank order."""
        return [r.unit() for r in self.records]


def profile_problem(
    problem: Problem, device: str, *, ncu: bool = False, time_limit_s: float = 900.0
) -> DispatchMap:
    """Harvest ``problem`` and profile its sub-kernels in a worker; never raises for failures.

    ``ncu=True`` additionally runs Nsight Compute per kernel where ``ncu`` is on PATH (GPU only).
    """
    from kernelopt_jupyter.worker import run_task

    if problem.kind != "module":
        return DispatchMap(
            problem.path,
            device,
            ok=False,
            error=f"{problem.kind} problems are profiled by verify; the dispatch map needs a "
            "module problem",
        )
    result = run_task(
        "kernelopt_jupyter.analysis.dispatch:profile_task",
        {"source": problem.source, "path": problem.path, "ncu": ncu},
        device=device,  # type: ignore[arg-type]
        time_limit_s=time_limit_s,
    )
    if not result.ok:
        return DispatchMap(
            problem.path, device, ok=False, error=f"profile worker failed: {result.describe()}"
        )
    return dispatch_map_from_dict(result.value)


def dispatch_map_from_dict(data: dict[str, Any]) -> DispatchMap:
    """Rebuild a map from its plain data (as the worker returns it)."""
    d = dict(data)
    d.pop("schema", None)
    harvest = d.pop("harvest_data", None)
    d["records"] = [DispatchRecord(**r) for r in d.get("records", [])]
    d["choices"] = [DispatchChoice(**c) for c in d.get("choices", [])]
    dmap = DispatchMap(**d)
    if harvest is not None:
        dmap.harvest = Harvest.from_dict(harvest)
    return dmap


# --------------------------------------------------------------------------- worker side


def _op_base(op: str) -> str:
    parts = op.replace("aten::", "aten.").split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "aten" else parts[0]


def _call_op(call_source: str) -> str:
    """``torch.addmm(...)`` or ``torch.ops.aten.avg_pool2d.default(...)`` -> the aten op name."""
    head = call_source.split("(")[0].replace("torch.ops.", "").replace("torch.", "aten.")
    return _op_base(head)


@dataclass
class _OpCall:
    """One recorded ATen call: its FLOPs, bytes moved, dtype and tensor argument shapes."""

    op: str
    flops: int | None
    bytes: int
    dtype: str
    shapes: list[list[int]]


def _tensor_args(values: Any) -> list[Any]:
    """Tensor arguments in call order, one level into lists (``cat``, ``stack``)."""
    import torch

    found: list[Any] = []
    for value in values:
        if isinstance(value, torch.Tensor):
            found.append(value)
        elif isinstance(value, list | tuple):
            found.extend(v for v in value if isinstance(v, torch.Tensor))
    return found


class _OpCosts:
    """Records FLOPs, bytes and argument shapes of the named ATen calls a forward makes."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.calls: list[_OpCall] = []

    def run(self, fn: Any, inputs: list[Any]) -> None:
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode

        try:
            from torch.utils.flop_counter import flop_registry
        except ImportError:  # pragma: no cover - older torch
            flop_registry = {}
        owner = self

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
                kwargs = kwargs or {}
                out = func(*args, **kwargs)
                name = func.overloadpacket.__name__
                if name in owner.names:
                    flops = None
                    formula = flop_registry.get(func.overloadpacket)
                    if formula is not None:
                        try:
                            plain = {k: v for k, v in kwargs.items() if k != "out"}
                            flops = int(formula(*args, **plain, out_val=out))
                        except Exception:
                            flops = None
                    tensors = _tensor_args((*args, *kwargs.values()))
                    outs = [out] if isinstance(out, torch.Tensor) else []
                    if "out" in kwargs:
                        outs = []  # the out= tensor is already among the arguments
                    nbytes = sum(t.numel() * t.element_size() for t in (*tensors, *outs))
                    dtype = str(tensors[0].dtype) if tensors else ""
                    shapes = [list(t.shape) for t in tensors]
                    owner.calls.append(_OpCall(name, flops, nbytes, dtype, shapes))
                return out

        with torch.no_grad(), Mode():
            fn(*inputs)


def _take_call(pending: list[_OpCall], ops: list[str], *, consume: bool = True) -> _OpCall | None:
    """The first pending call of any of ``ops`` (in the ops' order), removed from ``pending``
    unless ``consume`` is false."""
    for op in ops:
        match = next((c for c in pending if c.op == op), None)
        if match is not None:
            if consume:
                pending.remove(match)
            return match
    return None


def _records_from_harvest(
    harvest: Harvest, costs: _OpCosts, reference: _OpCosts | None = None
) -> list[DispatchRecord]:
    """One record per harvested unit; ``reference`` (the eager forward's calls of the ops the
    Triton units fused) gives those units their shapes."""
    import torch

    records: list[DispatchRecord] = []
    pending = list(costs.calls)
    fused = list(reference.calls) if reference is not None else []
    for unit in harvest.units():
        rec = DispatchRecord(
            name=unit.name,
            kind=unit.kind,
            ops=list(unit.ops),
            launches=unit.launches,
            library=unit.library,
            bytes=unit.bytes,
            source=unit.source,
        )
        dtype = "float32"
        if unit.kind == "triton":
            # Pointwise/reduction work: about one FLOP per element per fused op.
            n_ops = max(1, len([o for o in unit.ops if _op_base(o) not in _LAYOUT_OPS]))
            rec.flops = (unit.elements or 0) * n_ops if unit.elements else None
            rec.flops_source = "estimate: iteration space x fused ops"
            ops = [_op_base(o) for o in unit.ops]
            computed = [o for o in ops if o not in _LAYOUT_OPS]
            # A layout-only kernel (a weight relayout before a convolution) shares its op's
            # call with the vendor unit and its sibling layout kernels: peek, don't consume.
            seen = _take_call(fused, computed or ops, consume=bool(computed))
            rec.shapes = seen.shapes if seen is not None else []
        else:
            match = _take_call(pending, [_call_op(unit.source)])
            if match is not None:
                rec.flops, rec.bytes, dtype = match.flops, match.bytes, match.dtype
                rec.shapes = match.shapes
                rec.flops_source = (
                    "FlopCounter formula" if match.flops is not None else "no formula"
                )
        conv = any("convolution" in o for o in rec.ops)
        tf32 = bool(
            torch.backends.cudnn.allow_tf32 if conv else torch.backends.cuda.matmul.allow_tf32
        )
        peak, peak_name = compute_peak(rec.kind, dtype, tf32=tf32)
        rec.peak = peak_name
        point = place(rec.flops, rec.bytes, None, peak, peak_name)
        rec.intensity, rec.bound, rec.bound_ms = point.intensity, point.bound, point.bound_ms
        records.append(rec)
    return records


_LAYOUT_OPS = {"view", "permute", "clone", "convolution", "t", "expand", "reshape"}


def _device_time(avg: Any) -> float:
    for attr in ("device_time_total", "cuda_time_total"):
        value = getattr(avg, attr, None)
        if value is not None:
            return float(value)
    return 0.0


def _is_device_event(avg: Any) -> bool:
    from torch.autograd import DeviceType

    return getattr(avg, "device_type", None) == DeviceType.CUDA


def _profile(fn: Any, inputs: list[Any], runs: int = PROFILE_RUNS) -> dict[str, float]:
    """Per-forward device time (ms) of each profiler key: kernels and the ATen ops above them."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    with torch.no_grad():
        for _ in range(3):
            fn(*inputs)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(runs):
                fn(*inputs)
            torch.cuda.synchronize()
    times: dict[str, float] = {}
    kernel_total = 0.0
    for avg in prof.key_averages():
        ms = _device_time(avg) / 1e3 / runs
        if _is_device_event(avg):
            kernel_total += ms
            times["kernel:" + avg.key] = ms
        else:
            times["op:" + avg.key] = ms
    times["__total__"] = kernel_total
    return times


def addmm_bias_mkn(shapes: list[list[int]]) -> tuple[int, int, int] | None:
    """``(m, k, n)`` where an ``addmm``'s argument shapes (``[bias, mat1, mat2, ...]``) have
    a 1-D bias, the call cuBLASLt's bias epilogue takes; else None."""
    if len(shapes) < 3:
        return None
    bias, mat1, mat2 = shapes[:3]
    if len(bias) != 1 or len(mat1) != 2 or len(mat2) != 2 or mat1[1] != mat2[0]:
        return None
    return mat1[0], mat1[1], mat2[1]


def gemm_bias_shapes(rec: DispatchRecord) -> tuple[int, int, int] | None:
    """``(m, k, n)`` of a vendor ``addmm`` with a 1-D bias (the call cuBLASLt's bias epilogue
    takes), else None."""
    if rec.kind != "vendor" or _call_op(rec.source) != "addmm":
        return None
    return addmm_bias_mkn(rec.shapes)


def time_call_forms(records: list[DispatchRecord], device: str, dtype: Any) -> None:
    """Time each vendor ``addmm`` with a 1-D bias alone at its shapes in both forms: as called
    (cuBLASLt's bias epilogue) and with the bias broadcast as cuBLAS's C operand (the offline
    policy's ``gemm_bias_operand``), into ``rec.alternatives``. Random inputs of the call's
    shapes and the model's dtype; the performance gate's timer."""
    import torch

    for rec in records:
        mkn = gemm_bias_shapes(rec)
        if mkn is None:
            continue
        m, k, n = mkn
        gen = torch.Generator(device=device).manual_seed(0)
        args = [
            torch.randn(n, generator=gen, device=device, dtype=dtype),
            torch.randn(m, k, generator=gen, device=device, dtype=dtype),
            torch.randn(k, n, generator=gen, device=device, dtype=dtype),
        ]
        forms = {
            "as called": lambda bias, a, b: torch.addmm(bias, a, b),
            "gemm_bias_operand": lambda bias, a, b: torch.addmm(
                bias.expand(a.shape[0], b.shape[1]), a, b
            ),
        }
        for name, fn in forms.items():
            rec.alternatives[name] = _median_forward_ms(fn, args, device=device)


def _median_forward_ms(fn: Any, inputs: list[Any], rounds: int = 30, device: str = "cuda") -> float:
    """Median forward time with the performance gate's timer (CUDA events, L2 flush)."""
    from kernelopt_jupyter.verify.timing import _Timer

    timer = _Timer(device)
    samples = []
    for _ in range(3):
        timer.time(fn, inputs)
    for _ in range(rounds):
        timer.flush()
        samples.append(timer.time(fn, [x.clone() if hasattr(x, "clone") else x for x in inputs])[0])
    samples.sort()
    return samples[len(samples) // 2]


def _attribute_times(records: list[DispatchRecord], times: dict[str, float]) -> float:
    total = times.get("__total__", 0.0)
    by_op: dict[str, list[DispatchRecord]] = {}
    for rec in records:
        if rec.kind == "triton":
            rec.ms = times.get("kernel:" + rec.name)
        else:
            op = _call_op(rec.source)
            by_op.setdefault(op, []).append(rec)
    for op, recs in by_op.items():
        op_ms = times.get(f"op:aten::{op}")
        if op_ms is None:
            continue
        weights = [max(r.flops or 0, 1) for r in recs]
        for rec, w in zip(recs, weights):
            rec.ms = op_ms * w / sum(weights)
    attributed = sum(r.ms or 0.0 for r in records)
    if total > 0 and total - attributed > 0.01 * total:
        records.append(
            DispatchRecord(
                name="unattributed",
                kind="other",
                ms=total - attributed,
                flops_source="kernels the map could not tie to a unit (copies, memsets)",
            )
        )
    return total


def _ncu_status(device: str, wanted: bool) -> str:
    if device != "cuda":
        return "not available: no GPU (CPU interpreter)"
    if shutil.which("ncu") is None:
        return "not available: ncu is not on PATH"
    if not wanted:
        return "not collected: pass ncu=True (kernelopt profile --ncu) to attach Nsight Compute metrics"
    return "requested"


def _choices(
    harvest: Harvest,
    records: list[DispatchRecord],
    device: str,
    loaded: Any,
    model: Any,
    inputs: list[Any],
    cand: Any,
) -> list[DispatchChoice]:
    from kernelopt_jupyter.analysis.harvest import dispatch_choices
    from kernelopt_jupyter.problem import candidate_model, load_source_module

    variants = dict(harvest.dispatch_variants)
    triton_ops = {op for k in harvest.kernels for op in k.ops}
    choices: list[DispatchChoice] = []
    eager_times = _profile(model, inputs) if device == "cuda" else {}
    harvest_ms = _median_forward_ms(cand, inputs) if device == "cuda" and variants else None
    for label, ops, _overrides, _fallbacks in dispatch_choices():
        if not any(op in triton_ops for op in ops):
            continue
        choice = DispatchChoice(
            label=label,
            ops=list(ops),
            variant_available=label in variants,
            dispatch_only=label in harvest.dispatch_only_variants,
        )
        if device != "cuda":
            choice.detail = "not measured on CPU: the GPU decides whether the vendor path wins"
            choices.append(choice)
            continue
        bases = {_op_base(o) for o in ops}
        choice.inductor_ms = sum(
            r.ms or 0.0 for r in records if any(_op_base(o) in bases for o in r.ops)
        )
        choice.eager_ms = sum(
            times
            for key, times in eager_times.items()
            if key.startswith("op:aten::") and key[9:] in bases
        )
        if label in variants:
            module = load_source_module(variants[label], f"variant_{loaded.problem.name}")
            vmodel = candidate_model(loaded.problem, module, loaded.init_inputs()).to(device)
            vmodel.load_state_dict(model.state_dict(), strict=True)
            choice.harvest_ms = harvest_ms
            choice.variant_ms = _median_forward_ms(vmodel, inputs)
            choice.vendor_beats_inductor = bool(
                harvest_ms is not None and choice.variant_ms < 0.97 * harvest_ms
            )
            choice.detail = (
                f"whole forward {choice.variant_ms:.4f} ms with the vendor path vs "
                f"{harvest_ms:.4f} ms as Inductor lowered it"
            )
        elif choice.eager_ms:
            choice.vendor_beats_inductor = choice.eager_ms < 0.97 * (choice.inductor_ms or 0.0)
            choice.detail = (
                f"eager {choice.eager_ms:.4f} ms vs Inductor {choice.inductor_ms:.4f} ms for "
                f"{', '.join(sorted(bases))}; no variant could be built"
            )
        choices.append(choice)
    return choices


def profile_task(source: str, path: str, ncu: bool = False) -> dict[str, Any]:
    """Worker entry: harvest, cost each unit, time it on the GPU, rank; plain data back."""
    import torch
    import triton

    from kernelopt_jupyter.analysis.harvest import (
        PhaseClock,
        build_harvest,
        load_reference,
        prepare_worker,
        worker_device,
    )
    from kernelopt_jupyter.problem import candidate_model, load_source_module

    device = worker_device()
    clock = PhaseClock()
    prepare_worker(device)
    _problem, loaded, model, inputs = load_reference(source, path, device)
    versions = {"torch": torch.__version__, "triton": triton.__version__}
    clock.mark("load")
    harvest = build_harvest(loaded, model, inputs, device, variants=True)
    clock.mark("harvest")
    if device == "cuda":
        # What follows times the reference's ops: not beside a verification on this GPU (a
        # search gates its first candidate while this harvest compiles). Released by the
        # analysis worker's step loop (``pipeline.analysis_task``).
        GPU_LOCK.acquire()
        clock.mark("lock")
    dmap = DispatchMap(path, device, versions=versions, harvest=harvest, seconds=clock.seconds)
    if not harvest.ok:
        dmap.ok = False
        dmap.error = harvest.error
        return _plain(dmap)
    module = load_source_module(harvest.source, f"profile_{loaded.problem.name}")
    cand = candidate_model(loaded.problem, module, loaded.init_inputs()).to(device)
    cand.load_state_dict(model.state_dict(), strict=True)
    names = set(VENDOR_OPS) | {_call_op(u.source) for u in harvest.other_calls}
    costs = _OpCosts(names)
    costs.run(cand, inputs)
    fused = _OpCosts({_op_base(o) for k in harvest.kernels for o in k.ops})
    fused.run(model, inputs)  # the Triton units' ops as the reference dispatches them
    records = _records_from_harvest(harvest, costs, fused)
    clock.mark("costs")
    ncu_note = _ncu_status(device, ncu)
    if device == "cuda":
        times = _profile(cand, inputs)
        dmap.total_ms = _attribute_times(records, times)
        for rec in records:
            if rec.ms is not None and dmap.total_ms:
                rec.share = rec.ms / dmap.total_ms
            if rec.ms and rec.bound_ms:
                rec.roofline_fraction = rec.bound_ms / rec.ms
        records.sort(key=lambda r: -(r.ms or 0.0))
        dtype = next((p.dtype for p in model.parameters() if p.is_floating_point()), None)
        time_call_forms(records, device, dtype or torch.float32)
        dmap.ranked_by = "measured device time (torch.profiler, per forward)"
        if ncu and ncu_note == "requested":
            from kernelopt_jupyter.analysis.ncu import attach_ncu

            attach_ncu(records, source, path, harvest.source)
        else:
            for rec in records:
                rec.ncu = ncu_note
    else:
        records.sort(key=lambda r: -(r.bound_ms or 0.0))
        dmap.ranked_by = (
            "estimated roofline time (bytes and FLOPs against the GPU's peaks): interpreter times on "
            "the CPU are not meaningful"
        )
        for rec in records:
            rec.ncu = ncu_note
    dmap.records = records
    roof = current_peaks()
    dmap.peak_gpu, dmap.peak_gflops, dmap.peak_gbps = (
        roof.name,
        roof.fp32 / 1e9,
        roof.bandwidth / 1e9,
    )
    dmap.library_dominated = harvest.library_dominated
    clock.mark("profile")
    dmap.choices = _choices(harvest, records, device, loaded, model, inputs, cand)
    clock.mark("choices")
    if harvest.library_dominated:
        dmap.notes.append("library-dominated: all work is in vendor calls; the baseline is kept")
    return _plain(dmap)


def _plain(dmap: DispatchMap) -> dict[str, Any]:
    data = dmap.to_dict()
    if dmap.harvest is not None:
        data["harvest_data"] = dmap.harvest.to_dict()
    return data
