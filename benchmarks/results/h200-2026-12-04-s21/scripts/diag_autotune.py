"""Diagnosis (H200): what torch.compile's max-autotune changes on a problem, and what it costs.
Each (problem, mode) runs in a fresh Python process with cold Inductor and Triton caches of its
own: the compile time, the forward's median time (fp32, TF32 off), and the AUTOTUNE tables
Inductor prints (which choice won each GEMM/convolution, against cuBLAS/cuDNN).
Usage: python diag_autotune.py MODE[,MODE] PROBLEM.py [PROBLEM.py ...]
MODE: default | max-autotune-no-cudagraphs | gemm-only (max_autotune_gemm, no pointwise tuning)
"""

import os
import subprocess
import sys
import tempfile

CHILD = r"""
import importlib.util, json, sys, time
import torch
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
path, mode = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("problem", path)
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
torch.manual_seed(0)
model = mod.Model(*mod.get_init_inputs()).cuda()
if getattr(mod, "KERNELOPT_MODE", "") == "eval":
    model.eval()
inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in mod.get_inputs()]
import torch._inductor.config as ic
if mode == "gemm-only":
    ic.max_autotune_gemm = True
    compiled = torch.compile(model)
elif mode == "default":
    compiled = torch.compile(model)
else:
    compiled = torch.compile(model, mode=mode)
def timed(fn, n=30):
    with torch.no_grad():
        for _ in range(3): fn(*inputs)
        torch.cuda.synchronize()
        ts = []
        for _ in range(n):
            a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
            a.record(); fn(*inputs); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b))
    ts.sort(); return ts[len(ts) // 2]
t0 = time.perf_counter()
with torch.no_grad():
    compiled(*inputs)
torch.cuda.synchronize()
compile_s = time.perf_counter() - t0
print(json.dumps({"mode": mode, "compile_s": round(compile_s, 1), "ms": round(timed(compiled), 4),
                  "eager_ms": round(timed(model), 4)}), flush=True)
"""

modes = sys.argv[1].split(",")
for path in sys.argv[2:]:
    for mode in modes:
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=f"{tmp}/inductor",
                       TRITON_CACHE_DIR=f"{tmp}/triton")
            proc = subprocess.run([sys.executable, "-c", CHILD, path, mode], env=env,
                                  capture_output=True, text=True, timeout=240)
        print(f"== {path} [{mode}] rc {proc.returncode}")
        print(proc.stdout.strip()[-2000:])
        lines = proc.stderr.splitlines()
        keep, take = [], 0
        for line in lines:
            if "AUTOTUNE" in line:
                take = 7
            if take:
                keep.append(line[:200]); take -= 1
        print("\n".join(keep[-120:]) if keep else proc.stderr[-1500:])
        sys.stdout.flush()
