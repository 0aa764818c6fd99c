"""Compile a problem with Inductor inside a worker and capture what the harvest needs.

Runs only in a worker process (it patches Inductor's launcher and global config). It records:
the generated module source, which graph input is which parameter/buffer/input, the launch
configuration Inductor settled on for every Triton kernel and how often each launched, and the
bytes each launch touched.
"""

from __future__ import annotations

import contextlib
import inspect
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from kernelopt_jupyter.analysis.codegen import HarvestError, LaunchInfo, ModelFacts


@dataclass
class Capture:
    """One Inductor compilation of the reference, as the harvest sees it."""

    code: str
    launches: dict[str, LaunchInfo]
    facts: ModelFacts
    compile_s: float
    extra_codes: int = 0
    notes: list[str] = field(default_factory=list)


def _set(cfg: Any, dotted: str, value: Any, patches: dict[str, Any]) -> None:
    """Record a config override if this torch has the option (names move between releases)."""
    obj = cfg
    parts = dotted.split(".")
    for part in parts[:-1]:
        obj = getattr(obj, part, None)
        if obj is None:
            return
    if hasattr(obj, parts[-1]):
        patches[dotted] = value


def knob_exists(dotted: str) -> bool:
    """Whether this torch's Inductor config has the option ``dotted`` (names move between
    releases: the GPU runs torch 2.11, CI 2.13)."""
    import torch._inductor.config as cfg

    obj: Any = cfg
    for part in dotted.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def inductor_patches(
    device: str, mode: str = "default", overrides: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Inductor config for a harvestable compile: Triton everywhere, no cudagraphs, plain grids."""
    import torch._inductor.config as cfg

    patches: dict[str, Any] = {}
    _set(cfg, "triton.cudagraphs", False, patches)
    _set(cfg, "triton.cooperative_reductions", False, patches)
    _set(cfg, "triton.mix_order_reduction", False, patches)
    _set(cfg, "freezing", False, patches)
    if device == "cpu":
        _set(cfg, "cpu_backend", "triton", patches)
        _set(cfg, "benchmark_epilogue_fusion", False, patches)
    if mode == "max-autotune":
        _set(cfg, "max_autotune", True, patches)
        _set(cfg, "max_autotune_pointwise", True, patches)
    for key, value in (overrides or {}).items():
        _set(cfg, key, value, patches)
    return patches


@contextlib.contextmanager
def _launch_recorder() -> Iterator[dict[str, Any]]:
    """Wrap ``CachingAutotuner.run`` to see every Inductor launch (name, config, args)."""
    from torch._inductor.runtime import triton_heuristics as th

    seen: dict[str, Any] = {"tuners": {}, "counts": {}, "bytes": {}, "enabled": True}
    original = th.CachingAutotuner.run

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        name = (getattr(self, "inductor_meta", None) or {}).get("kernel_name") or getattr(
            getattr(self, "fn", None), "__name__", "kernel"
        )
        if seen["enabled"]:
            seen["tuners"][name] = self
            seen["counts"][name] = seen["counts"].get(name, 0) + 1
            seen["bytes"][name] = [
                int(a.numel() * a.element_size()) if hasattr(a, "element_size") else 0 for a in args
            ]
        return result

    th.CachingAutotuner.run = run  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        th.CachingAutotuner.run = original  # type: ignore[method-assign]


def _launch_info(name: str, tuner: Any, count: int, arg_bytes: list[int]) -> LaunchInfo:
    launchers = getattr(tuner, "launchers", None) or []
    config = getattr(launchers[0], "config", None) if launchers else None
    if config is None:
        configs = getattr(tuner, "configs", None) or []
        # Under the interpreter Inductor launches configs[0] and never builds launchers.
        if configs and (getattr(tuner, "triton_interpret", False) or len(configs) == 1):
            config = configs[0]
        else:
            raise HarvestError(f"kernel {name}: cannot tell which launch config Inductor chose")
    meta = getattr(tuner, "triton_meta", None) or {}
    kwargs: dict[str, int] = {
        k: int(v) for k, v in (meta.get("constants") or {}).items() if isinstance(v, int)
    }
    kwargs.update({k: int(v) for k, v in config.kwargs.items() if isinstance(v, int)})
    heuristic = str(getattr(tuner, "heuristic_type", "")).rsplit(".", 1)[-1].lower()
    inductor_meta = getattr(tuner, "inductor_meta", None) or {}
    return LaunchInfo(
        name=name,
        config=kwargs,
        num_warps=int(getattr(config, "num_warps", 4) or 4),
        num_stages=int(getattr(config, "num_stages", 1) or 1),
        grid_type=inductor_meta.get("grid_type"),
        extra_args=len(inductor_meta.get("extra_launcher_args") or []),
        heuristic=heuristic,
        count=count,
        arg_bytes=arg_bytes,
    )


def _dtype_name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")


def model_facts(
    model: Any, inputs: list[Any], example_inputs: list[Any], output: Any
) -> ModelFacts:
    """Which graph input is which parameter, buffer or forward argument; the output structure."""
    import torch

    state = model.state_dict(keep_vars=True)
    by_id: dict[int, tuple[str, str]] = {}
    for key, value in state.items():
        kind = "param" if isinstance(value, torch.nn.Parameter) else "buffer"
        by_id.setdefault(id(value), (kind, key))
    persistent = set(state)
    for key, buf in model.named_buffers():
        if key not in persistent:
            by_id.setdefault(id(buf), ("nonpersistent", key))
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor):
            by_id.setdefault(id(x), ("input", str(i)))
    for prefix, module in model.named_modules():
        for name, value in vars(module).items():
            if isinstance(value, torch.Tensor):
                key = f"{prefix}.{name}" if prefix else name
                by_id.setdefault(id(value), ("attribute", key))
    sources: list[tuple[str, str | int]] = []
    for ex in example_inputs:
        if not isinstance(ex, torch.Tensor):
            raise HarvestError("the compiled graph takes a non-tensor input (dynamic shapes?)")
        hit = by_id.get(id(ex))
        if hit is None:
            raise HarvestError("a compiled-graph input is neither a parameter, buffer nor input")
        kind, key = hit
        if kind == "attribute":
            raise HarvestError(
                f"the model reads self.{key}, a tensor kept outside the state_dict (drawn by "
                "the constructor, not loaded with the weights): a harvested candidate could "
                "not get the reference's value"
            )
        if kind == "nonpersistent":
            raise HarvestError(
                f"the model reads non-persistent buffer {key!r}, which state_dict does not carry"
            )
        sources.append(("input", int(key)) if kind == "input" else (kind, key))
    try:
        sig = inspect.signature(model.forward)
        plist = list(sig.parameters.values())
        plain = all(
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in plist[: len(inputs)]
        )
        forward_params = [p.name for p in plist[: len(inputs)]] if plain else None
        if forward_params is not None and len(forward_params) < len(inputs):
            forward_params = None
    except (TypeError, ValueError):
        forward_params = None
    if isinstance(output, torch.Tensor):
        outputs: tuple[str, int] = ("tensor", 1)
    elif isinstance(output, tuple | list) and all(isinstance(o, torch.Tensor) for o in output):
        outputs = ("tuple" if isinstance(output, tuple) else "list", len(output))
    else:
        raise HarvestError(
            f"forward returns {type(output).__name__}; the harvest supports a tensor or a "
            "tuple/list of tensors"
        )
    return ModelFacts(
        state=[
            (k, list(v.shape), _dtype_name(v.dtype), isinstance(v, torch.nn.Parameter))
            for k, v in state.items()
        ],
        arg_sources=sources,
        forward_params=forward_params,
        n_inputs=len(inputs),
        outputs=outputs,
    )


def capture(
    model: Any,
    inputs: list[Any],
    device: str,
    *,
    mode: str = "default",
    overrides: dict[str, Any] | None = None,
) -> Capture:
    """Compile ``model`` with Inductor (under no_grad) and capture code, configs and facts."""
    import time

    import torch
    from torch._inductor.compile_fx import compile_fx
    from torch._inductor.utils import run_and_get_code

    os.environ.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "1")
    patches = inductor_patches(device, mode, overrides)
    graphs: list[list[Any]] = []

    def backend(gm: Any, example_inputs: list[Any]) -> Any:
        graphs.append(list(example_inputs))
        return compile_fx(gm, example_inputs)

    torch._dynamo.reset()
    with torch._inductor.config.patch(patches), torch.no_grad(), _launch_recorder() as seen:
        compiled = torch.compile(model, backend=backend, dynamic=False)
        start = time.perf_counter()
        seen["enabled"] = False  # the first call compiles and autotunes
        _, codes = run_and_get_code(compiled, *inputs)
        if not any("def call(" in c for c in codes):
            # Some releases skip save_output_code on an FX-graph-cache hit: compile afresh.
            graphs.clear()
            with torch._inductor.config.patch({"fx_graph_cache": False}):
                compiled = torch.compile(model, backend=backend, dynamic=False)
                _, codes = run_and_get_code(compiled, *inputs)
        compile_s = time.perf_counter() - start
        seen["enabled"] = True
        compiled(*inputs)  # a clean call: launch counts and the settled configs
        output = model(*inputs)
    if len(graphs) != 1:
        raise HarvestError(
            f"torch.compile produced {len(graphs)} graphs (graph breaks); the harvest needs one"
        )
    codes = [c for c in codes if "def call(" in c]
    if not codes:
        raise HarvestError("Inductor returned no generated module (nothing to harvest)")
    facts = model_facts(model, inputs, graphs[0], output)
    launches = {
        name: _launch_info(name, tuner, seen["counts"].get(name, 0), seen["bytes"].get(name, []))
        for name, tuner in seen["tuners"].items()
    }
    return Capture(codes[-1], launches, facts, compile_s, extra_codes=len(codes) - 1)
