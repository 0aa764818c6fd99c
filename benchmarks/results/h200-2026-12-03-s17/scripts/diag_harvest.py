"""Diagnosis (H200): where the analysis worker's harvest time goes. Each configuration runs
the dispatch step (``profile_task``: harvest, costs, profile, choices) in a fresh Python process
with cold Inductor and Triton caches of its own, and reports the harvest's phases and the top of
a cProfile by cumulative time. Usage: python diag_harvest.py PROBLEM.py [PROBLEM.py ...]"""

import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import cProfile, io, json, pstats, sys, time
t0 = time.perf_counter()
import torch, torch._dynamo, triton  # what a worker preloads
import kernelopt_jupyter.worker
imports_s = time.perf_counter() - t0
from kernelopt_jupyter.analysis.dispatch import profile_task
path = sys.argv[1]
prof = cProfile.Profile()
t1 = time.perf_counter()
prof.enable()
out = profile_task(open(path).read(), path)
prof.disable()
total = time.perf_counter() - t1
s = io.StringIO()
pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(45)
print(json.dumps({"imports_s": round(imports_s, 2), "profile_task_s": round(total, 2),
                  "dispatch": out.get("seconds"), "harvest": out.get("harvest_data", {}).get("seconds"),
                  "compile_s": out.get("harvest_data", {}).get("compile_s"), "ok": out.get("ok"),
                  "error": out.get("error")}))
print(s.getvalue()[-9000:])
"""

CONFIGS = {
    "default": {},
    "compile_threads_1": {"TORCHINDUCTOR_COMPILE_THREADS": "1"},
}

for path in sys.argv[1:]:
    for name, extra in CONFIGS.items():
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=f"{tmp}/inductor",
                       TRITON_CACHE_DIR=f"{tmp}/triton", **extra)
            proc = subprocess.run([sys.executable, "-c", CHILD, path], env=env,
                                  capture_output=True, text=True, timeout=240)
        lines = proc.stdout.splitlines()
        print(f"== {path} [{name}] rc {proc.returncode}")
        print(lines[0] if lines else proc.stderr[-3000:])
        if name == "default":
            print("\n".join(lines[1:]))
        sys.stdout.flush()
