"""Where the reference's process peaks on conv networks (issue 11's open 3x rows), measured in
one process on the GPU, step by step, for each problem given:

* the float32 forward at the problem's shape, cold (first call) and warm;
* the float32 forward at the derived batch (``(batch // 2) | 1``, the correctness gate's
  reported call);
* the float64 referee's forward (model and inputs converted), with cuDNN as it is and with
  cuDNN off (ATen's own kernels), each beside the float64 copies; at the derived batch; and
  with the batch in four slices into one preallocated output.

Each line: bytes held before the step, the step's peak over them (tensors and library
workspaces alike, ``torch.cuda.max_memory_allocated``) and the tensor bytes its outputs hold,
so a peak far above the tensors is a workspace. Usage: python ref_memory.py PROBLEM.py ...
"""

from __future__ import annotations

import copy
import itertools
import json
import sys
import time

import torch

from kernelopt_jupyter.problem import load_problem, materialize

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
MB = 1e6


def _bytes(value: object) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, list | tuple):
        return sum(_bytes(v) for v in value)
    return 0


def step(name: str, fn, args: list, rows: list) -> object:  # type: ignore[no-untyped-def]
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    with torch.no_grad():
        out = fn(*args)
    torch.cuda.synchronize()
    row = {
        "step": name,
        "held_mb": round(before / MB, 1),
        "peak_over_mb": round((torch.cuda.max_memory_allocated() - before) / MB, 1),
        "out_mb": round(_bytes(out) / MB, 1),
        "s": round(time.perf_counter() - t0, 3),
    }
    rows.append(row)
    print(json.dumps(row), flush=True)
    return out


def _rebatch(v: object, batch: int, size: int) -> object:
    if not isinstance(v, torch.Tensor) or not v.dim() or v.shape[0] != batch:
        return v
    reps = -(-size // batch)
    return torch.cat([v] * reps)[:size].contiguous() if reps > 1 else v[:size].clone()


def _double(v: object) -> object:
    return v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v


class _Sliced:
    """The model's forward over ``parts`` slices of the batch, into one preallocated output
    (a single tensor output whose first dimension is the batch)."""

    def __init__(self, model: torch.nn.Module, batch: int, parts: int) -> None:
        self.model, self.batch, self.parts = model, batch, parts

    def __call__(self, *inputs: object) -> torch.Tensor:
        bounds = [round(k * self.batch / self.parts) for k in range(self.parts + 1)]
        out = None
        for lo, hi in itertools.pairwise(bounds):
            part = [
                v[lo:hi]
                if isinstance(v, torch.Tensor) and v.dim() and v.shape[0] == self.batch
                else v
                for v in inputs
            ]
            y = self.model(*part)
            if out is None:
                out = y.new_empty((self.batch, *y.shape[1:]))
            out[lo:hi] = y
            del y
        assert out is not None
        return out


def main(paths: list[str]) -> None:
    report = {}
    for path in paths:
        loaded = materialize(load_problem(path))
        model = loaded.make_model("cuda", seed=0)
        if loaded.problem.mode == "eval":
            model.eval()
        inputs = loaded.make_inputs(1, "cuda")
        weights = sum(t.numel() * t.element_size() for t in model.state_dict().values())
        rows: list = []
        print(f"== {path}: inputs {_bytes(inputs) / MB:.1f} MB, weights {weights / MB:.1f} MB")
        out = step("fp32 forward, cold", model, inputs, rows)
        del out
        out = step("fp32 forward, warm", model, inputs, rows)
        del out
        batch = inputs[0].shape[0]
        size = max(1, (batch // 2) | 1)
        size = batch + 2 if size == batch else size
        derived = [_rebatch(v, batch, size) for v in inputs]
        out = step(f"fp32 forward, derived batch {size}", model, derived, rows)
        del out
        model64 = copy.deepcopy(model).to(torch.float64)
        in64 = [_double(v) for v in inputs]
        for cudnn in (True, False):
            with torch.backends.cudnn.flags(enabled=cudnn):
                out = step(f"fp64 forward, cudnn {'on' if cudnn else 'off'}", model64, in64, rows)
                del out
        derived64 = [_double(v) for v in derived]
        del derived
        out = step(f"fp64 forward, derived batch {size}", model64, derived64, rows)
        del out, derived64
        if batch >= 4:  # the referee in four slices of the batch (eval-mode networks)
            out = step("fp64 forward, batch in 4 slices", _Sliced(model64, batch, 4), in64, rows)
            del out
        report[path] = rows
        del model, model64, in64, inputs
        torch.cuda.empty_cache()
    print("REPORT " + json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1:])
