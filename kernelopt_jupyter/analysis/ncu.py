"""Nsight Compute metrics per kernel of a harvested candidate (GPU with ``ncu`` on PATH only).

Runs one forward of the candidate in a child process under ``ncu`` and attaches, per kernel,
the memory and SM speed-of-light percentages, achieved bandwidth and achieved occupancy.
``--clock-control none`` keeps the GPU's own clocks (the platform notes: counters read there).
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
from pathlib import Path
from typing import Any

from kernelopt_jupyter import tempdirs
from kernelopt_jupyter.import_path import python_command, worker_env

METRICS = {
    "gpu__time_duration.sum": "duration_ns",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "memory_sol_pct",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm_sol_pct",
    "dram__bytes.sum.per_second": "achieved_bandwidth",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved_occupancy_pct",
}
_VENDOR_HINTS = ("gemm", "cutlass", "xmma", "cudnn", "conv", "sm90", "cublas", "implicit")

_RUNNER = """
import sys, torch
from kernelopt_jupyter.problem import load_problem, materialize, load_source_module, candidate_model
problem = load_problem(sys.argv[1], validate=False)
loaded = materialize(problem)
ref = loaded.make_model("cuda", seed=0)
module = load_source_module(open(sys.argv[2]).read(), "ncu_candidate")
model = candidate_model(problem, module, loaded.init_inputs()).to("cuda")
model.load_state_dict(ref.state_dict(), strict=True)
inputs = loaded.make_inputs(0, "cuda")
with torch.no_grad():
    model(*inputs)  # compiles the Triton kernels outside the profiled range
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    model(*inputs)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
"""


def run_ncu(
    problem_path: str, candidate_source: str, time_limit_s: float = 300.0
) -> dict[str, dict[str, float]]:
    """Kernel name -> metric name -> value for one forward of the candidate."""
    with tempdirs.TempDir("kernelopt-ncu-") as tmp:
        cand = Path(tmp) / "candidate.py"
        cand.write_text(candidate_source)
        runner = Path(tmp) / "runner.py"
        runner.write_text(_RUNNER)
        cmd = [
            "ncu",
            "--clock-control",
            "none",
            "--profile-from-start",
            "off",
            "--csv",
            "--metrics",
            ",".join(METRICS),
            *python_command(str(runner)),
            problem_path,
            str(cand),
        ]
        proc = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=time_limit_s,
            env=worker_env(os.environ),  # never the working folder on its sys.path
        )
    if proc.returncode != 0:
        raise RuntimeError(f"ncu exited with {proc.returncode}: {proc.stderr.strip()[-300:]}")
    return parse_ncu_csv(proc.stdout)


def parse_ncu_csv(text: str) -> dict[str, dict[str, float]]:
    """Parse ``ncu --csv`` output (one row per kernel and metric); values summed per kernel."""
    start = text.find('"ID"')
    if start < 0:
        return {}
    out: dict[str, dict[str, float]] = {}
    counts: dict[str, dict[str, int]] = {}
    for row in csv.DictReader(io.StringIO(text[start:])):
        name = row.get("Kernel Name", "")
        metric = METRICS.get(row.get("Metric Name", ""))
        if not name or metric is None:
            continue
        try:
            value = float(row.get("Metric Value", "").replace(",", ""))
        except ValueError:
            continue
        unit = row.get("Metric Unit", "")
        if metric == "achieved_bandwidth":
            value *= {
                "byte/second": 1,
                "Kbyte/second": 1e3,
                "Mbyte/second": 1e6,
                "Gbyte/second": 1e9,
                "Tbyte/second": 1e12,
            }.get(unit, 1)
        short = name.split("(")[0].strip()
        out.setdefault(short, {})
        counts.setdefault(short, {})
        out[short][metric] = out[short].get(metric, 0.0) + value
        counts[short][metric] = counts[short].get(metric, 0) + 1
    for name, metrics in out.items():
        for metric, total in metrics.items():
            if metric != "duration_ns":  # percentages and rates: average over launches
                metrics[metric] = total / counts[name][metric]
    return out


def attach_ncu(records: list[Any], problem_source: str, problem_path: str, candidate: str) -> None:
    """Attach metrics to dispatch records: Triton kernels by name, vendor kernels by library hint."""
    try:
        with tempdirs.TempDir("kernelopt-ncu-") as tmp:
            if not Path(problem_path).is_file():
                problem_path = str(Path(tmp) / "problem.py")
                Path(problem_path).write_text(problem_source)
            metrics = run_ncu(problem_path, candidate)
    except Exception as exc:
        for rec in records:
            rec.ncu = f"ncu failed: {type(exc).__name__}: {exc}"[:300]
        return
    vendor_kernels = {
        k: v for k, v in metrics.items() if any(h in k.lower() for h in _VENDOR_HINTS)
    }
    vendor_records = [r for r in records if r.kind == "vendor"]
    for rec in records:
        if rec.name in metrics:
            rec.ncu = metrics[rec.name]
        elif rec.kind == "vendor" and len(vendor_records) == 1 and vendor_kernels:
            rec.ncu = {"kernels": vendor_kernels}
        else:
            rec.ncu = "ncu saw no kernel of this name"
