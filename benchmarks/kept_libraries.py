"""Liger-Kernel against torch eager, torch.compile and KernelOPT's own family kernel, on the GPU,
at the sizes of every problem in a folder whose traced graph a kept-library rule matches.

For each problem file (``*.py``, recursively) the rewrite scan (``agents/rewrites/task.py``)
runs as the search runs it; where a ``liger_*`` rule matches, each site it routes is timed
alone at the problem's sizes (its tensors drawn at the propagated shapes, the layers' own
weights), in fp32 with TF32 off, four ways: torch eager, the same op under ``torch.compile``,
KernelOPT's own family kernel (``family_kernels.py``, ``kernels.py``) and Liger through the
candidate's wrapper. Each is compared with eager first. The whole forward is timed too, the
reference's against the Liger candidate's (the rule's rendered source). A timing is the median
of CUDA-event timings after a warm-up. Nothing is keyed to a problem: the sites are whatever
the rules find.

    python benchmarks/kept_libraries.py ../shared/kernelbench-dev -o kept_libraries.json

Runs in about two minutes on an H100 for the KernelBench dev sample (``--budget-s`` stops
adding problems after that many seconds).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.fx as fx
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import kernelopt_jupyter.agents.rewrites.family_kernels as fk  # noqa: E402
import kernelopt_jupyter.agents.rewrites.kernels as kernels  # noqa: E402
from kernelopt_jupyter.agents.rewrites.canonical import canonicalize  # noqa: E402
from kernelopt_jupyter.agents.rewrites.graph import propagate_shapes, trace  # noqa: E402
from kernelopt_jupyter.agents.rewrites.kept_libraries import (  # noqa: E402
    KEPT_CALLS,
    liger_available,
)
from kernelopt_jupyter.agents.rewrites.rules import BY_NAME, REWRITES  # noqa: E402
from kernelopt_jupyter.agents.rewrites.task import scan  # noqa: E402
from kernelopt_jupyter.problem import load_source_module  # noqa: E402

#: The kept-library rules.
KEPT_RULES = {r.name for r in REWRITES if r.kept_library}
#: The ops a kept rule can take: files that name none of them are not scanned (a scan traces
#: the reference with every rule, seconds per problem).
_OPS = re.compile(
    r"norm|rsqrt|sqrt|cross_entropy|CrossEntropy|nll_loss|NLLLoss|kl_div|KLDiv", re.IGNORECASE
)


def _time_ms(fn: Any, inputs: list[Any], reps: int) -> float:
    """Median milliseconds of ``fn(*inputs)`` over ``reps`` timed calls after three warm-ups."""
    with torch.no_grad():
        for _ in range(3):
            fn(*inputs)
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(*inputs)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    return statistics.median(times)


def _error(got: Any, want: Any) -> float:
    """Largest absolute difference, relative to the reference's largest magnitude."""
    got, want = torch.as_tensor(got).double(), torch.as_tensor(want).double()
    return float((got - want).abs().max() / max(1.0, float(want.abs().max())))


def _candidate(source: str, name: str, reference: torch.nn.Module, init: list[Any]) -> Any:
    """The candidate's ``ModelNew`` with the reference's weights, on the GPU."""
    module = load_source_module(source, name)
    model = module.ModelNew(*init)
    model.load_state_dict(reference.state_dict())
    return model.cuda()


def _materialise(gm: fx.GraphModule, arg: Any) -> Any:
    """A kept call's argument as a value: a layer's own parameter, or a random tensor of the
    propagated shape and dtype (class indices are drawn by the op, which knows their range)."""
    if not isinstance(arg, fx.Node):
        return arg
    if arg.op == "get_attr":
        value = gm
        for part in str(arg.target).split("."):
            value = getattr(value, part)
        return value.detach()
    meta = arg.meta["tensor_meta"]
    if meta.dtype.is_floating_point:
        return torch.randn(tuple(meta.shape), dtype=meta.dtype, device="cuda")
    return torch.zeros(tuple(meta.shape), dtype=meta.dtype, device="cuda")


def _op_calls(name: str, args: list[Any]) -> dict[str, Callable[[], Any]]:
    """The site's op four ways: eager torch (``eager``, also compiled), KernelOPT's own family
    kernel (``own``) and Liger through the candidate's wrapper (``liger``)."""
    if name == "liger_norm":
        x, first, w, b, eps, rms = args
        dims = tuple(x.shape[first:])
        if rms:
            eager = lambda: F.rms_norm(x, dims, w, eps)  # noqa: E731
        else:
            eager = lambda: F.layer_norm(x, dims, w, b, eps)  # noqa: E731
        own = lambda: fk.kernelopt_norm(x, first, x.dim(), w, b, eps, rms, False)  # noqa: E731
    elif name == "liger_group_norm_call":
        x, groups, w, b, eps = args
        eager = lambda: F.group_norm(x, groups, w, b, eps)  # noqa: E731
        own = lambda: kernels.kernelopt_group_norm(x, groups, w, b, eps)  # noqa: E731
    elif name == "liger_cross_entropy_call":
        logits, target, ignore, reduction = args
        args[1] = target = torch.randint(0, logits.shape[1], target.shape, device="cuda")
        eager = lambda: F.cross_entropy(  # noqa: E731
            logits, target, ignore_index=ignore, reduction=reduction
        )
        own = lambda: fk.kernelopt_row_loss(  # noqa: E731
            logits, target, None, 1, "cross_entropy", ignore, 0.0, reduction
        )
    else:  # liger_kl_div_call
        a, b, log_a, log_target, reduction = args
        args[0] = a = torch.rand_like(a).softmax(-1) if log_a else torch.randn_like(a)
        args[1] = b = torch.rand_like(b).softmax(-1)
        if log_target:
            args[1] = b = b.log()
        form = "kl_log_target" if log_target else "kl"
        eager = lambda: F.kl_div(  # noqa: E731
            a.log() if log_a else a, b, reduction=reduction, log_target=log_target
        )
        own = lambda: fk.kernelopt_pointwise_loss(a, b, form, 0.0, log_a, reduction)  # noqa: E731
    wrapper = KEPT_CALLS[name][0]
    return {"eager": eager, "own": own, "liger": lambda: wrapper(*args)}


def bench_sites(reference: torch.nn.Module, inputs: list[Any], rule: str, reps: int) -> list[Any]:
    """One row per site ``rule`` routes to Liger: the op alone at the site's sizes."""
    gm = trace(reference, inputs)
    propagate_shapes(gm, inputs)
    canonicalize(gm)
    BY_NAME[rule].apply(gm)
    rows = []
    for node in list(gm.graph.nodes):
        name = getattr(node.target, "__name__", "")
        if node.op != "call_function" or name not in KEPT_CALLS:
            continue
        args = [_materialise(gm, a) for a in node.args]
        calls = _op_calls(name, args)
        row: dict[str, Any] = {
            "op": name,
            "shapes": [list(a.shape) for a in args if isinstance(a, torch.Tensor)],
        }
        with torch.no_grad():
            want = calls["eager"]()
        calls["compile"] = torch.compile(calls["eager"])
        for label, fn in calls.items():
            try:
                with torch.no_grad():
                    row[f"{label}_error"] = _error(fn(), want)
                row[f"{label}_ms"] = _time_ms(lambda *_, f=fn: f(), [], reps)
            except Exception as exc:  # one route's failure (an own kernel's limit) is reported
                row[f"{label}_ms"] = None
                row[f"{label}_failed"] = f"{type(exc).__name__}: {exc}"[:300]
        others = [row[f"{k}_ms"] for k in ("eager", "compile", "own") if row.get(f"{k}_ms")]
        if row.get("liger_ms") and others:
            row["liger_vs_best_other"] = round(min(others) / row["liger_ms"], 3)
        rows.append(row)
    return rows


def bench_problem(path: Path, reps: int) -> list[dict[str, Any]]:
    """One row per kept rule that matches the problem at ``path``: its sites timed alone
    (``sites``), and the whole forward, the reference's against the Liger candidate's."""
    source = path.read_text()
    found = scan(source, str(path))
    kept = [m for m in found.matches if len(m.names) == 1 and m.names[0] in KEPT_RULES]
    if not kept:
        return []
    problem = load_source_module(source, f"kept_{path.stem}")
    torch.manual_seed(0)
    init = list(problem.get_init_inputs())
    reference = problem.Model(*init).cuda()
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in problem.get_inputs()]
    with torch.no_grad():
        want = reference(*inputs)
    eager_ms = _time_ms(reference, inputs, reps)
    rows = []
    for match in kept:
        rule = match.names[0]
        model = _candidate(match.eager_source, f"liger_{path.stem}", reference, init)
        with torch.no_grad():
            error = _error(model(*inputs), want)
        liger_ms = _time_ms(model, inputs, reps)
        rows.append(
            {
                "problem": str(path),
                "rule": rule,
                "title": match.title,
                "forward_eager_ms": eager_ms,
                "forward_liger_ms": liger_ms,
                "forward_liger_error": error,
                "sites": bench_sites(reference, inputs, rule, reps),
            }
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a folder of problem files (searched down)")
    parser.add_argument("-o", "--output", type=Path, default=Path("kept_libraries.json"))
    parser.add_argument("--reps", type=int, default=20, help="timed calls per forward")
    parser.add_argument("--budget-s", type=float, default=120.0, help="stop adding problems")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("kept_libraries.py: needs a CUDA GPU (it times kernels)", file=sys.stderr)
        return 2
    if not liger_available():
        print(
            "kept_libraries.py: Liger-Kernel is not installed: pip install -e '.[liger]'",
            file=sys.stderr,
        )
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    start = time.monotonic()
    rows: list[dict[str, Any]] = []
    skipped: list[str] = []
    for path in sorted(args.folder.rglob("*.py")):
        if not _OPS.search(path.read_text()):
            continue
        if time.monotonic() - start > args.budget_s:
            skipped.append(str(path))
            continue
        try:
            found = bench_problem(path, args.reps)
        except Exception as exc:  # one problem's failure is reported, the others still run
            found = [{"problem": str(path), "error": f"{type(exc).__name__}: {exc}"[:500]}]
        rows += found
        for row in found:
            print(json.dumps(row), flush=True)
        torch.cuda.empty_cache()
    result = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "liger_kernel": _version("liger-kernel"),
        "dtype": "float32, TF32 off",
        "rows": rows,
        "skipped_for_budget": skipped,
        "wall_s": round(time.monotonic() - start, 1),
    }
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"kept_libraries.py: {len(rows)} row(s) in {result['wall_s']} s -> {args.output}")
    return 0


def _version(package: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


if __name__ == "__main__":
    raise SystemExit(main())
