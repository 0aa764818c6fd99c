"""Worker task: the reference's input signature and output layout at each shape set.

The guard keys on input signatures and an exported op's fake (meta) implementation returns
outputs of the recorded layout, so both are measured by running the reference itself, once
per shape set, in a worker (on the CPU under Triton's interpreter, as a Triton problem's
reference launches kernels).
"""

from __future__ import annotations

from typing import Any

from kernelopt_jupyter.deploy.guard_runtime import kernelopt_signature
from kernelopt_jupyter.problem import ProblemError, materialize, problem_from_source


def output_layout(value: Any) -> dict[str, Any]:
    """What a forward returned, as plain data: one tensor, or a tuple/list of tensors."""
    import torch

    if isinstance(value, torch.Tensor):
        return {"structure": "tensor", "tensors": [_tensor_layout(value)]}
    if isinstance(value, tuple | list) and all(isinstance(v, torch.Tensor) for v in value):
        return {
            "structure": "tuple" if isinstance(value, tuple) else "list",
            "tensors": [_tensor_layout(v) for v in value],
        }
    raise ProblemError(
        f"the reference returns {type(value).__name__}; an export needs a tensor or a "
        "tuple/list of tensors"
    )


def _tensor_layout(t: Any) -> dict[str, Any]:
    return {"shape": list(t.shape), "stride": list(t.stride()), "dtype": str(t.dtype)}


def probe_shapes(sources: list[str], path: str, device: str) -> list[dict[str, Any]]:
    """Per problem source (one per shape set): ``{"signature", "outputs", "state_dtypes"}`` of
    its seed-0 inputs, the reference's output and its weights on ``device``, or ``{"error"}``
    when the reference cannot run there."""
    import torch

    found: list[dict[str, Any]] = []
    for source in sources:
        try:
            problem = problem_from_source(source, path, validate=False)
            loaded = materialize(problem)
            model = loaded.make_model(device=device)
            inputs = loaded.make_inputs(seed=0, device=device)
            with torch.no_grad():
                out = model(*inputs)
            layout = output_layout(out)
        except Exception as exc:  # a size the reference cannot run at: that shape is skipped
            found.append({"error": f"{type(exc).__name__}: {exc}"})
            continue
        state = sorted({str(t.dtype) for t in model.state_dict().values()})
        found.append(
            {
                "signature": kernelopt_signature(inputs),
                "outputs": layout,
                "state_dtypes": state,
                "training": bool(model.training),
            }
        )
    return found
