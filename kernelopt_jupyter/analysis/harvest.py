"""The Inductor harvest: the reference compiled by Inductor, as an editable ``ModelNew`` candidate.

``harvest_problem(problem, device)`` runs the compile in a worker and returns a :class:`Harvest`:
the candidate source (Triton kernels as named ``@triton.jit`` units, vendor calls kept and
labelled), the kernel and vendor-call records the agents see, whether the problem is
library-dominated, and per-op vendor-dispatch variants. The worker checks the candidate against
the reference before returning it, so a harvest that would not verify is reported as failed.
"""

from __future__ import annotations

import re
import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any

from kernelopt_jupyter.analysis.codegen import HarvestError, build_candidate
from kernelopt_jupyter.problem import Problem

#: Ops whose Inductor lowering can lose to the vendor/eager kernel, and the Inductor settings
#: that route them back: (label, aten ops it concerns, config overrides, ops forced to fallback).
_DISPATCH_CHOICES: list[tuple[str, tuple[str, ...], dict[str, Any], tuple[str, ...]]] = [
    (
        "convolution in its own layout (cuDNN, no layout-conversion kernels)",
        ("aten.convolution",),
        {"layout_optimization": False},
        (),
    ),
    (
        "pooling by the eager (cuDNN/ATen) kernel",
        ("aten.avg_pool2d", "aten.max_pool2d_with_indices", "aten.avg_pool3d", "aten.max_pool2d"),
        {},
        ("avg_pool2d", "max_pool2d_with_indices", "avg_pool3d"),
    ),
]


def dispatch_choices() -> list[tuple[str, tuple[str, ...], dict[str, Any], tuple[str, ...]]]:
    """The ops the harvest can route back to their vendor/eager kernel, each as ``(label,
    aten ops, Inductor config overrides, ops forced to fallback)``: a copy, so a reader
    cannot change what later harvests do."""
    return [(label, ops, dict(overrides), fallbacks) for label, ops, overrides, fallbacks in
            _DISPATCH_CHOICES]  # fmt: skip


@dataclass
class KernelRecord:
    """One harvested unit as the agents see it (``agents.base.KernelUnit`` fields and more)."""

    name: str
    kind: str  # "triton" | "vendor" | "other"
    source: str = ""
    ops: list[str] = field(default_factory=list)
    launches: int = 0
    library: str = ""
    bytes: int | None = None
    flops: int | None = None
    elements: int | None = None  # iteration-space size of a Triton kernel


@dataclass
class Harvest:
    """The harvested candidate and its parts."""

    ok: bool
    source: str = ""
    kernels: list[KernelRecord] = field(default_factory=list)
    vendor_calls: list[KernelRecord] = field(default_factory=list)
    other_calls: list[KernelRecord] = field(default_factory=list)
    library_dominated: bool = False
    dispatch_variants: list[tuple[str, str]] = field(default_factory=list)
    dispatch_only_variants: list[str] = field(default_factory=list)
    error: str = ""
    device: str = "cpu"
    compile_s: float | None = None
    max_abs_err: float | None = None
    notes: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # capture, self_check, variants

    def units(self) -> list[KernelRecord]:
        """Every unit, Triton kernels first, then vendor and other calls."""
        return [*self.kernels, *self.vendor_calls, *self.other_calls]

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-able)."""
        data = asdict(self)
        data["dispatch_variants"] = [list(v) for v in self.dispatch_variants]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Harvest:
        """Inverse of :meth:`to_dict`."""
        d = dict(data)
        for key in ("kernels", "vendor_calls", "other_calls"):
            d[key] = [KernelRecord(**k) for k in d.get(key, [])]
        d["dispatch_variants"] = [tuple(v) for v in d.get("dispatch_variants", [])]
        return cls(**d)


class PhaseClock:
    """Wall seconds per phase, into ``seconds``: each phase ends at :meth:`mark`."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._last = time.perf_counter()

    def mark(self, phase: str) -> None:
        now = time.perf_counter()
        self.seconds[phase] = round(now - self._last, 2)
        self._last = now


def harvest_problem(
    problem: Problem,
    device: str,
    *,
    variants: bool = True,
    mode: str = "default",
    inductor_config: dict[str, Any] | None = None,
    time_limit_s: float = 600.0,
) -> Harvest:
    """Compile ``problem`` with Inductor in a worker and return the editable candidate.

    Module problems only; a Triton or Helion problem is already kernel code (reported as not
    harvestable, with the reason). ``mode="max-autotune"`` also lets Inductor use its Triton
    templates; where their code cannot be harvested the default mode is used (noted).
    ``inductor_config`` adds Inductor options (e.g. ``max_autotune_gemm_backends``). Never
    raises for a harvest failure: ``ok`` is False and ``error`` says why.
    """
    from kernelopt_jupyter.worker import run_task

    if problem.kind != "module":
        return Harvest(
            ok=False,
            device=device,
            error=f"{problem.kind} problems are already kernel code; nothing to harvest",
        )
    result = run_task(
        "kernelopt_jupyter.analysis.harvest:harvest_task",
        {
            "source": problem.source,
            "path": problem.path,
            "variants": variants,
            "mode": mode,
            "inductor_config": inductor_config,
        },
        device=device,  # type: ignore[arg-type]
        time_limit_s=time_limit_s,
    )
    if not result.ok:
        return Harvest(ok=False, device=device, error=f"harvest worker failed: {result.describe()}")
    harvest = Harvest.from_dict(result.value)
    harvest.source = titled(harvest.source, problem.name)
    return harvest


# --------------------------------------------------------------------------- worker side


def prepare_worker(device: str) -> None:
    """Install the interpreter shims when this worker runs on the CPU."""
    if device == "cpu":
        from kernelopt_jupyter.cpu_triton import install_interpreter_shims

        install_interpreter_shims()


def load_reference(source: str, path: str, device: str) -> tuple[Any, Any, Any, list[Any]]:
    from kernelopt_jupyter.problem import materialize, problem_from_source

    problem = problem_from_source(source, path, validate=False)
    loaded = materialize(problem)
    model = loaded.make_model(device, seed=0)
    inputs = loaded.make_inputs(seed=0, device=device)
    return problem, loaded, model, inputs


def check_candidate(
    candidate: str, loaded: Any, model: Any, device: str, seed: int = 1
) -> tuple[float, float]:
    """Run the candidate on fresh inputs against the reference: (max abs error, output scale)."""
    import torch

    from kernelopt_jupyter.problem import candidate_model, load_source_module

    module = load_source_module(candidate, f"harvest_{loaded.problem.name}")
    cand = candidate_model(loaded.problem, module, loaded.init_inputs()).to(device)
    cand.load_state_dict(model.state_dict(), strict=True)
    inputs = loaded.make_inputs(seed=seed, device=device)
    with torch.no_grad():
        ref = model(*inputs)
        got = cand(*inputs)
    refs = [ref] if isinstance(ref, torch.Tensor) else list(ref)
    gots = [got] if isinstance(got, torch.Tensor) else list(got)
    if len(refs) != len(gots):
        raise HarvestError(f"candidate returns {len(gots)} outputs, reference {len(refs)}")
    err = 0.0
    scale = 0.0
    for r, g in zip(refs, gots):
        if r.shape != g.shape:
            raise HarvestError(f"candidate output shape {tuple(g.shape)} != {tuple(r.shape)}")
        err = max(err, float((r.double() - g.double()).abs().max()) if r.numel() else 0.0)
        scale = max(scale, float(r.double().abs().max()) if r.numel() else 0.0)
    return err, scale


def _harvest_once(
    loaded: Any,
    model: Any,
    inputs: list[Any],
    device: str,
    overrides: dict[str, Any] | None,
    mode: str = "default",
) -> tuple[Any, Any]:
    from kernelopt_jupyter.analysis.capture import capture

    cap = capture(model, inputs, device, mode=mode, overrides=overrides)
    note = f"Harvested on {device} (torch {_versions()})."
    code = build_candidate(
        cap.code,
        cap.launches,
        cap.facts,
        title=HARVEST_TITLE.format(name=loaded.problem.name),
        device_note=note,
    )
    return cap, code


#: The title of a harvested candidate's docstring. The worker knows the problem by its source
#: alone (a notebook cell's is "cell") and an analysis is cached by source: ``titled`` puts in
#: the name of the session's problem once the harvest is back.
HARVEST_TITLE = "Harvested from torch.compile (Inductor) for problem {name!r}"
_TITLE = re.compile(
    r'^("""Harvested from torch\.compile \(Inductor\) for problem )'
    r"(?:'[^'\n]*'|\"[^\"\n]*\")",
    re.MULTILINE,
)


def titled(source: str, name: str) -> str:
    """``source`` with its harvest title (if it has one) naming problem ``name``."""
    return _TITLE.sub(lambda m: m.group(1) + repr(name), source, count=1)


def _versions() -> str:
    import torch
    import triton

    return f"{torch.__version__}, triton {triton.__version__}"


def _records(cap: Any, code: Any) -> dict[str, Any]:
    kernels = []
    for k in code.kernels:
        launch = cap.launches.get(k["name"])
        kernels.append(
            KernelRecord(
                name=k["name"],
                kind="triton",
                source=k["source"],
                ops=k["ops"],
                launches=launch.count if launch else k["launches"],
                bytes=_kernel_bytes(k["source"], k["name"], launch.arg_bytes if launch else []),
                elements=k.get("elements"),
            )
        )
    vendor = [
        KernelRecord(
            name=v["name"],
            kind="vendor",
            source=v["call"],
            ops=v["ops"] or [v["op"]],
            launches=1,
            library=v["library"],
        )
        for v in code.vendor_calls
    ]
    other = [
        KernelRecord(
            name=v["name"],
            kind="other",
            source=v["call"],
            ops=v["ops"] or [v["op"]],
            launches=1,
            library=v["library"],
        )
        for v in code.other_calls
    ]
    return {"kernels": kernels, "vendor_calls": vendor, "other_calls": other}


def _kernel_bytes(source: str, name: str, arg_bytes: list[int]) -> int | None:
    """Bytes a launch moves: each pointer argument's tensor once (in-out pointers twice)."""
    import ast

    if not arg_bytes:
        return None
    tree = ast.parse(source)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if fn is None:
        return None
    names = [
        a.arg
        for a in fn.args.args
        if a.annotation is None or "constexpr" not in ast.unparse(a.annotation)
    ]
    total = 0
    for pname, nbytes in zip(names, arg_bytes):
        if "ptr" in pname:
            total += nbytes * (2 if pname.startswith("in_out") else 1)
    return total


def mark_dispatch_only(source: str) -> str:
    """Declare a candidate that launches no Triton kernel dispatch-only (the verifier's marker)."""
    return source.replace(
        "\nimport torch\n",
        "\nimport torch\n\n# Launches no Triton kernel: a dispatch-only choice.\n"
        "KERNELOPT_DISPATCH_ONLY = True\n",
        1,
    )


def worker_device() -> str:
    """The device a worker runs on: the interpreter means CPU."""
    import os

    return "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


def harvest_task(
    source: str,
    path: str,
    variants: bool = True,
    mode: str = "default",
    inductor_config: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Worker entry: harvest, self-check, and build dispatch variants; plain data back."""
    device = worker_device()
    prepare_worker(device)
    _problem, loaded, model, inputs = load_reference(source, path, device)
    harvest = build_harvest(
        loaded, model, inputs, device, variants=variants, mode=mode, config=inductor_config
    )
    return harvest.to_dict()


def build_harvest(
    loaded: Any,
    model: Any,
    inputs: list[Any],
    device: str,
    *,
    variants: bool = True,
    mode: str = "default",
    config: dict[str, Any] | None = None,
) -> Harvest:
    """Harvest in this (worker) process: capture, rewrite, self-check, variants."""
    fallback_note = ""
    clock = PhaseClock()
    try:
        cap, code = _harvest_once(loaded, model, inputs, device, config, mode)
    except HarvestError as exc:
        if mode == "default":
            return Harvest(ok=False, device=device, error=str(exc))
        fallback_note = f"{mode} code not harvestable ({exc}); harvested the default mode"
        try:
            cap, code = _harvest_once(loaded, model, inputs, device, None)
        except HarvestError as exc2:
            return Harvest(ok=False, device=device, error=str(exc2), notes=[fallback_note])
    source = code.source if code.kernels else mark_dispatch_only(code.source)
    harvest = Harvest(ok=True, device=device, source=source, compile_s=cap.compile_s)
    harvest.seconds = clock.seconds
    clock.mark("capture")
    for key, value in _records(cap, code).items():
        setattr(harvest, key, value)
    if fallback_note:
        harvest.notes.append(fallback_note)
    harvest.notes.extend(code.notes)
    harvest.library_dominated = not harvest.kernels and bool(
        harvest.vendor_calls or harvest.other_calls
    )
    if harvest.library_dominated:
        harvest.notes.append(
            "library-dominated: Inductor generated no Triton kernel; all work is in vendor "
            "library or ATen calls, so the baseline is kept"
        )
    try:
        err, scale = check_candidate(source, loaded, model, device)
    except Exception as exc:  # the self-check runs generated code: report, do not crash
        harvest.ok = False
        harvest.error = f"harvested candidate failed its self-check: {type(exc).__name__}: {exc}"
        harvest.notes.append(traceback.format_exc()[-1500:])
        return harvest
    harvest.max_abs_err = err
    clock.mark("self_check")
    if err > 1e-3 * max(1.0, scale):
        harvest.ok = False
        harvest.error = f"harvested candidate differs from the reference (max abs err {err:.3g})"
        return harvest
    if variants:
        _add_variants(harvest, loaded, model, inputs, device)
        clock.mark("variants")
    return harvest


def _add_variants(
    harvest: Harvest, loaded: Any, model: Any, inputs: list[Any], device: str
) -> None:
    """Re-harvest with an op routed back to its vendor/eager kernel, where the graph has it."""
    triton_ops = {op for k in harvest.kernels for op in k.ops}
    for label, ops, overrides, fallbacks in _DISPATCH_CHOICES:
        if not any(op in triton_ops for op in ops):
            continue  # Inductor generated no kernel for this op: nothing to route back
        try:
            # The FX graph cache does not key on forced fallbacks: compile afresh.
            fresh = {**overrides, "fx_graph_cache": False}
            with _forced_fallbacks(fallbacks):
                _cap, code = _harvest_once(loaded, model, inputs, device, fresh)
            if code.source == harvest.source:
                continue
            err, scale = check_candidate(code.source, loaded, model, device, seed=2)
            if err > 1e-3 * max(1.0, scale):
                harvest.notes.append(f"variant {label!r} rejected: max abs err {err:.3g}")
                continue
        except Exception as exc:
            harvest.notes.append(f"variant {label!r} not built: {type(exc).__name__}: {exc}")
            continue
        source = code.source
        if not code.kernels:
            source = mark_dispatch_only(source)
            harvest.dispatch_only_variants.append(label)
        harvest.dispatch_variants.append((label, source))


class _forced_fallbacks:
    """Make Inductor call the ATen kernel for some ops instead of lowering them (worker only)."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self.saved: dict[Any, Any] = {}

    def __enter__(self) -> None:
        if not self.names:
            return
        import torch
        from torch._inductor import decomposition, lowering

        for name in self.names:
            packet = getattr(torch.ops.aten, name, None)
            if packet is None:
                continue
            for overload in [getattr(packet, o) for o in packet.overloads()]:
                if overload in lowering.lowerings:
                    self.saved[overload] = lowering.lowerings.pop(overload)
                decomposition.decompositions.pop(overload, None)
            lowering.make_fallback(packet, warn=False)

    def __exit__(self, *exc: Any) -> None:
        from torch._inductor import lowering

        lowering.lowerings.update(self.saved)
