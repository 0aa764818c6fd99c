"""Kernel timelines: one forward's launches in order, from torch.profiler, for the panel.

On the GPU each entry is a device kernel (Triton, cuBLAS/cuDNN, or other) with its start and
duration. On the CPU (Triton's interpreter) there are no device kernels: the timeline lists
the top-level ATen operators instead and says so, since interpreter times mean nothing.
Candidates are profiled in a worker process like every other run of their code.
"""

from __future__ import annotations

import re
from typing import Any

from kernelopt_jupyter.problem import Problem

_VENDOR = re.compile(r"gemm|cutlass|cudnn|xmma|cublas|nvjet|sm\d+_|conv|implicit_|splitk", re.I)
_VENDOR_OPS = {
    "aten::mm",
    "aten::addmm",
    "aten::bmm",
    "aten::baddbmm",
    "aten::linear",
    "aten::matmul",
    "aten::convolution",
    "aten::conv2d",
}


def classify_launch(name: str, device: str) -> str:
    """``triton``, ``vendor`` or ``other`` for a kernel (GPU) or operator (CPU) name."""
    if "triton" in name.lower():
        return "triton"
    if device == "cuda":
        return "vendor" if _VENDOR.search(name) else "other"
    return "vendor" if name in _VENDOR_OPS else "other"


def kernel_timeline(fn: Any, inputs: list[Any], device: str) -> list[dict[str, Any]]:
    """Launches of one forward of ``fn``: name, kind, start_ms (from the first), dur_ms."""
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    cuda = device == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with torch.no_grad():
        for _ in range(2):  # compile and warm up outside the profile
            fn(*inputs)
        if cuda:
            torch.cuda.synchronize()
        with profile(activities=activities) as prof:
            fn(*inputs)
            if cuda:
                torch.cuda.synchronize()
    rows = []
    for event in prof.events():
        if cuda:
            if event.device_type != DeviceType.CUDA:
                continue
        elif not event.name.startswith(("aten::", "triton:")) or event.cpu_parent is not None:
            continue
        rows.append((event.time_range.start, event.time_range.elapsed_us(), event.name))
    if not rows:
        return []
    t0 = min(start for start, _, _ in rows)
    return [
        {
            "name": name,
            "kind": classify_launch(name, device),
            "start_ms": round((start - t0) / 1e3, 6),
            "dur_ms": round(dur / 1e3, 6),
        }
        for start, dur, name in sorted(rows)
    ]


def _label_interpreted_launches() -> None:
    """Under the interpreter a Triton launch is plain Python: mark each one as a profiler range
    named ``triton:<kernel>`` so the CPU timeline shows kernels, not the interpreter's insides."""
    import torch
    from triton.runtime.interpreter import InterpretedFunction

    original = InterpretedFunction.run

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(getattr(self, "fn", None), "__name__", "kernel")
        with torch.profiler.record_function(f"triton:{name}"):
            return original(self, *args, **kwargs)

    InterpretedFunction.run = run  # type: ignore[method-assign]


def timeline_task(
    source: str, path: str, device: str, candidate_source: str | None = None
) -> dict[str, Any]:
    """Worker entry: the timeline of the reference, or of a candidate with its weights."""
    import torch

    from kernelopt_jupyter.problem import (
        candidate_model,
        load_source_module,
        materialize,
        problem_from_source,
    )

    if device == "cpu":
        from kernelopt_jupyter.cpu_triton import install_interpreter_shims

        install_interpreter_shims()
        _label_interpreted_launches()
    problem = problem_from_source(source, path, validate=False)
    loaded = materialize(problem)
    model = loaded.make_model(device, seed=0)
    if candidate_source is not None:
        module = load_source_module(candidate_source, "candidate")
        candidate = candidate_model(problem, module, loaded.init_inputs())
        candidate = torch.nn.Module.to(candidate, device)
        torch.nn.Module.load_state_dict(candidate, model.state_dict(), strict=True)
        model = torch.nn.Module.eval(candidate)
    timeline = kernel_timeline(model, loaded.make_inputs(0, device), device)
    what = "device kernels" if device == "cuda" else "ATen operators (CPU, interpreter)"
    return {"timeline": timeline, "detail": f"{len(timeline)} {what} in one forward"}


def profile_timeline(
    problem: Problem, device: str, candidate_source: str | None = None, time_limit_s: float = 300
) -> dict[str, Any]:
    """The timeline of the reference or a candidate, run in a worker; never raises."""
    from kernelopt_jupyter.worker import run_task

    result = run_task(
        "kernelopt_jupyter.analysis.timeline:timeline_task",
        {
            "source": problem.source,
            "path": problem.path,
            "device": device,
            "candidate_source": candidate_source,
        },
        device=device,  # type: ignore[arg-type]
        time_limit_s=time_limit_s,
    )
    if not result.ok:
        return {"timeline": [], "detail": f"no timeline: {result.describe()}"}
    value: dict[str, Any] = result.value
    return value
