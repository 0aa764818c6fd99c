"""Diagnosis (H200): the k-th largest of 16M float64 values (the referee's p99 per chunk) by
torch.kthvalue, by torch.topk and by a sort; seconds per selection and agreement."""

import json
import math
import time

import torch

n = 1 << 24
x = torch.rand(n, dtype=torch.float64, device="cuda")
m = math.ceil(0.01 * n) + 1
out = {}
for name, fn in {
    "kthvalue": lambda v: torch.kthvalue(v, v.numel() - m + 1).values,
    "topk": lambda v: torch.topk(v, m, sorted=False).values.min(),
    "sort": lambda v: torch.sort(v, descending=True).values[m - 1],
}.items():
    fn(x)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(5):
        v = float(fn(x))
    out[name] = {"s": round((time.perf_counter() - t) / 5, 5), "value": v}
print(json.dumps(out))
