"""Every candidate KernelOPT generates without a GPU builds from every problem of the KernelBench
development sample (other people's code, read from ``../shared/kernelbench-dev``; see
tests/_kernelbench.py), and takes the reference's weights.

Per problem: the eager-dispatch candidate, its CUDA-graph wrapper, the cuDNN wrapper over that,
each graph rewrite's candidate (and its CUDA-graph wrapper, and the rewritten problem the
harvest would compile) where the rewrite scan finds one, and the guard ``best.py`` and an
accepted notebook cell carry. Each is instantiated with ``get_init_inputs()`` and loads the
reference's ``state_dict`` strictly (as the verifier and the guard load it). Nothing runs a
forward: the sizes are KernelBench's published ones. A reference of more than
``CPU_BYTES`` of tensors, or none on the meta device, is built where the other is possible:
small ones on the CPU (real construction), large ones on the meta device (no memory).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
import torch
from _kernelbench import dev_problems, problem_ids

from kernelopt_jupyter.agents.rewrites.task import scan
from kernelopt_jupyter.agents.transforms import wrap_cuda_graph, wrap_cudnn_benchmark
from kernelopt_jupyter.candidate import eager_dispatch_source
from kernelopt_jupyter.deploy.guard import accepted_cell_source, guard_best_source
from kernelopt_jupyter.problem import load_source_module, materialize, problem_from_source

pytestmark = pytest.mark.kernelbench

#: References up to this many bytes of tensors are built on the CPU, larger ones on meta.
CPU_BYTES = 100 * 2**20
#: What a CPU-built case may hold (the reference and one candidate at a time).
MAX_CPU_BYTES = 2 * 2**30

try:  # collected everywhere, selected only with -m kernelbench: fail then, not at collection
    PROBLEMS: list[Path | None] = list(dev_problems())
    IDS = problem_ids([p for p in PROBLEMS if p is not None])
    ABSENT = ""
except pytest.fail.Exception as exc:
    PROBLEMS, IDS, ABSENT = [None], ["absent"], str(exc)

_names = itertools.count()


def _tensor_bytes(model: Any) -> int:
    """Bytes of the model's parameters, buffers and plain tensor attributes."""
    seen: set[int] = set()
    total = 0
    for module in model.modules():
        values = [*module._parameters.values(), *module._buffers.values()]
        values += [v for v in vars(module).values() if isinstance(v, torch.Tensor)]
        for t in values:
            if isinstance(t, torch.Tensor) and id(t) not in seen:
                seen.add(id(t))
                total += t.numel() * t.element_size()
    return total


def _build(cls: Any, init: list[Any], device: str) -> Any:
    torch.manual_seed(0)
    with torch.device(device):
        return cls(*init)


def _reference(cls: Any, init: list[Any]) -> tuple[Any, str]:
    """The reference built where this file builds it, and that device."""
    try:
        probe = _build(cls, init, "meta")
    except Exception:  # a constructor that reads values (.item()): the CPU only
        model = _build(cls, init, "cpu")
        size = _tensor_bytes(model)
        assert size <= MAX_CPU_BYTES, f"{size / 2**30:.1f} GiB built on the CPU"
        return model, "cpu"
    if _tensor_bytes(probe) > CPU_BYTES:
        return probe, "meta"
    return _build(cls, init, "cpu"), "cpu"


def _sources(problem: Any) -> list[tuple[str, str, str]]:
    """``(label, source, class)`` of every candidate built without a GPU for ``problem``."""
    eager = eager_dispatch_source(problem)
    graphed = wrap_cuda_graph(eager)
    out = [
        ("eager dispatch", eager, "ModelNew"),
        ("eager dispatch in a CUDA graph", graphed, "ModelNew"),
        (
            "the graphed candidate with cuDNN's timed algorithms",
            wrap_cudnn_benchmark(graphed),
            "ModelNew",
        ),
    ]
    for match in scan(problem.source, problem.path).matches:
        out.append((f"{match.title}: problem", match.problem_source, "Model"))
        out.append((f"{match.title}: candidate", match.eager_source, "ModelNew"))
        out.append(
            (f"{match.title}: in a CUDA graph", wrap_cuda_graph(match.eager_source), "ModelNew")
        )
    return out


@pytest.mark.parametrize("path", PROBLEMS, ids=IDS)
def test_every_generated_candidate_builds_and_takes_the_weights(path: Path | None) -> None:
    if path is None:
        pytest.fail(ABSENT, pytrace=False)
    problem = problem_from_source(path.read_text(), str(path), validate=False)
    loaded = materialize(problem)
    init = loaded.init_inputs()
    reference, device = _reference(loaded.module.Model, init)
    state = reference.state_dict()
    for label, source, cls_name in _sources(problem):
        module = load_source_module(source, f"kb_transform_{next(_names)}")
        try:
            model = _build(getattr(module, cls_name), init, device)
            model.load_state_dict(state, strict=True)
        except Exception as exc:
            pytest.fail(f"{label}: {type(exc).__name__}: {exc}", pytrace=False)
        del model
    # The guard best.py carries, and the accepted notebook cell: both build ModelNew from the
    # recorded init inputs and tie it to the person's reference.
    eager = eager_dispatch_source(problem)
    for label, source in (
        ("best.py's guard", guard_best_source(problem, eager, "cpu")),
        ("the accepted cell", accepted_cell_source(problem, eager, "cpu")),
    ):
        assert "guard not added" not in source, f"{label}: {source[-300:]}"
        module = load_source_module(source, f"kb_guard_{next(_names)}")
        with torch.device(device):
            guarded = module.kernelopt_guarded(reference)
        assert guarded.kernelopt_path == "not called yet", label
        del guarded
