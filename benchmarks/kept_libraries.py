"""Liger-Kernel against torch eager, torch.compile and KernelOPT's own family kernel, on the GPU,
at the sizes of every problem in a folder whose traced graph a kept-library rule matches.

For each problem file (``*.py``, recursively) the rewrite scan (``agents/rewrites/task.py``)
runs as the search runs it; where a ``liger_*`` rule matches, four forwards are timed on the
problem's own inputs, in fp32 with TF32 off: the reference in eager mode, the reference under
``torch.compile`` (default mode), the Liger candidate (the rule's rendered source), and the
candidate of the family rule that finds the same sites with KernelOPT's own kernel (where that
rule's candidate exists). Each candidate's output is compared with eager's first; a timing is
the median of CUDA-event timings after a warm-up. Nothing is keyed to a problem: the sites are
whatever the rules find.

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
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kernelopt_jupyter.agents.rewrites.kept_libraries import liger_available  # noqa: E402
from kernelopt_jupyter.agents.rewrites.task import scan  # noqa: E402
from kernelopt_jupyter.problem import load_source_module  # noqa: E402

#: Each kept rule and the family rule that finds the same sites with KernelOPT's own kernel.
OWN_RULE = {
    "liger_rms_norm": "rms_norm_kernel",
    "liger_layer_norm": "layer_norm_kernel",
    "liger_group_norm": "group_norm_kernel",
    "liger_loss": "loss_kernel",
}
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


def bench_problem(path: Path, reps: int) -> list[dict[str, Any]]:
    """One row per kept rule that matches the problem at ``path``."""
    source = path.read_text()
    found = scan(source, str(path))
    by_names = {tuple(m.names): m for m in found.matches}
    kept = [m for m in found.matches if len(m.names) == 1 and m.names[0] in OWN_RULE]
    if not kept:
        return []
    problem = load_source_module(source, f"kept_{path.stem}")
    torch.manual_seed(0)
    init = list(problem.get_init_inputs())
    reference = problem.Model(*init).cuda()
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in problem.get_inputs()]
    with torch.no_grad():
        want = reference(*inputs)
    rows = []
    eager_ms = _time_ms(reference, inputs, reps)
    compiled = torch.compile(reference)
    compile_ms = _time_ms(compiled, inputs, reps)
    for match in kept:
        rule = match.names[0]
        row: dict[str, Any] = {
            "problem": str(path),
            "rule": rule,
            "title": match.title,
            "eager_ms": eager_ms,
            "compile_ms": compile_ms,
        }
        routes = {"liger": match, "own": by_names.get((OWN_RULE[rule],))}
        for label, routed in routes.items():
            if routed is None:
                row[f"{label}_ms"] = None
                continue
            model = _candidate(routed.eager_source, f"{label}_{path.stem}", reference, init)
            with torch.no_grad():
                row[f"{label}_error"] = _error(model(*inputs), want)
            row[f"{label}_ms"] = _time_ms(model, inputs, reps)
        peers = [row[k] for k in ("eager_ms", "compile_ms", "own_ms") if row.get(k)]
        row["liger_vs_best_other"] = min(peers) / row["liger_ms"]
        rows.append(row)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a folder of problem files (searched down)")
    parser.add_argument("-o", "--output", type=Path, default=Path("kept_libraries.json"))
    parser.add_argument("--reps", type=int, default=20, help="timed calls per forward")
    parser.add_argument("--budget-s", type=float, default=150.0, help="stop adding problems")
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
