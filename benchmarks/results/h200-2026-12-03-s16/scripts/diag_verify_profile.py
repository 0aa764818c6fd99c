"""Diagnosis (run on the H200): where the 6.4 GB GELU verification's time goes inside the
checker process. The checker worker is started through a wrapper that runs its task under
cProfile and writes the statistics to $PROFILE_OUT before the worker's exit; the reference and
candidate children (forked before the task) are timed by the checker's own clock.

    PROFILE_OUT=$OUT/prof python benchmarks/results/h200-2026-12-03-s16/scripts/diag_verify_profile.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

WRAPPER = r'''
import cProfile, os, pstats, sys
from kernelopt_jupyter import worker
real = worker._resolve
def resolve(task):
    fn = real(task)
    if not task.endswith(":verify_task"):
        return fn
    def profiled(**kw):
        prof = cProfile.Profile()
        prof.enable()
        try:
            return fn(**kw)
        finally:
            prof.disable()
            out = os.environ["DIAG_PROFILE_OUT"]
            prof.dump_stats(out + ".prof")
            with open(out + ".txt", "w") as fh:
                st = pstats.Stats(prof, stream=fh)
                st.sort_stats("cumulative").print_stats(60)
                st.sort_stats("tottime").print_stats(40)
    return profiled
worker._resolve = resolve
sys.exit(worker.main(sys.argv[1:]))
'''


def main() -> None:
    out = Path(os.environ.get("PROFILE_OUT", "prof"))
    out.mkdir(parents=True, exist_ok=True)
    wrapper = out / "wrapper.py"
    wrapper.write_text(WRAPPER)
    from kernelopt_jupyter import worker

    def start(argv, env, err, device, fds=()):
        env = {**env, "DIAG_PROFILE_OUT": str(out / "checker")}
        if fds:
            env["KERNELOPT_CONTROL_FD"] = str(fds[0])
        return subprocess.Popen(
            [sys.executable, str(wrapper), *argv],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
            pass_fds=fds,
        )

    worker._start_worker = start
    sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tests"))
    from test_verify_gpu_boundary import BIG_GELU, GELU_CANDIDATE

    from kernelopt_jupyter.problem import problem_from_source
    from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

    source = BIG_GELU.replace("16384, 98304", os.environ.get("DIAG_SHAPE", "16384, 98304"))
    problem = problem_from_source(source, "<big_gelu>", validate=False)
    t0 = time.monotonic()
    report = verify_candidate(
        problem,
        GELU_CANDIDATE,
        VerifyOptions(device=os.environ.get("DIAG_DEVICE", "cuda"), seeds=1, time_limit_s=500, run_performance=False),
    )
    gates = [(g.name, g.status, g.detail[:300]) for g in report.gates]
    corr = report.gate("correctness")
    summary = {
        "seconds": round(time.monotonic() - t0, 1),
        "verdict": report.verdict,
        "gates": gates,
        "timings": corr.metrics.get("timings") if corr else None,
        "memory": corr.metrics.get("memory") if corr else None,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
