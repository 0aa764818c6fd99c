"""The performance gate's wall-clock figures on two GPU test verifications (a fused kernel at
8192x8191, a candidate that reads one row), run REPEAT times: the twenty-third session's
second call saw both tests fail on a wall-clock gap; this says whether the gap repeats. Run from the checkout after
``python3 -m pip install --no-deps --no-build-isolation -e .`` (the third call used a bare
``pip`` of another interpreter, and the script found no ``kernelopt_jupyter``):
``python3 benchmarks/results/h200-2026-12-04-s23/scripts/perf_gap.py LABEL REPEAT``."""

import json
import sys
import time

sys.path.insert(0, "tests")
from _verify_corpus import DATA, verify_on

from kernelopt_jupyter.problem import problem_from_source
from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

KEYS = ("speedup", "overhead_ms", "wall_gap_ms", "own_median_ms", "wall_median_ms", "warm_calls")


def fused():
    source = (DATA / "problems" / "scaled_residual.py").read_text()
    big = problem_from_source(source.replace("97, 1023", "8192, 8191"), "<scaled_residual_big>")
    path = DATA / "candidates" / "scaled_residual" / "good_fused.py"
    return verify_candidate(big, path.read_text(), VerifyOptions(device="cuda"), str(path))


def one_row():
    return verify_on("cuda", "gpu_first_row", "reads_one_row", seeds=1)


rows = []
for rep in range(int(sys.argv[2]) if len(sys.argv) > 2 else 2):
    for name, fn in (("fused", fused), ("one_row", one_row)):
        t0 = time.time()
        report = fn()
        perf = report.gate("performance")
        m = perf.metrics if perf is not None else {}
        row = {"label": sys.argv[1], "test": name, "rep": rep, "verdict": report.verdict,
               "perf": perf.status if perf else None, "implausible": m.get("implausible"),
               **{k: m.get(k) for k in KEYS}, "s": round(time.time() - t0, 1)}
        rows.append(row)
        print(json.dumps(row), flush=True)
