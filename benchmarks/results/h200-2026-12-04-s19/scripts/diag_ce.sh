#!/usr/bin/env bash
# Why every candidate of level2/smoothed_cross_entropy failed the performance gate on the H200
# in the eleventh session ("illegal memory access" in the candidate's perf_setup): one search,
# each failed gate's detail printed.
set -uo pipefail
python3 -m pip install -q --no-deps --no-build-isolation -e . >"$OUT/install.log" 2>&1 || exit 1
P=benchmarks/problems/level2/smoothed_cross_entropy.py
KERNELOPT_HOME="$OUT/home" PYTHONUNBUFFERED=1 timeout 200 kernelopt optimize "$P" --device cuda \
  --agents offline --budget 6 --time-limit 60 --out "$OUT/run" >"$OUT/optimize.log" 2>&1
echo "optimize rc $?"
python3 - "$OUT/run/events.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    d = e.get("data", {})
    if e["type"] == "gate" and d.get("status") != "pass":
        print(round(e["t"], 1), d.get("candidate"), d.get("name"), d.get("status"), str(d.get("detail"))[:700])
    if e["type"] == "verdict":
        print(round(e["t"], 1), "verdict", d.get("candidate"), d.get("verdict"), d.get("speedup"))
PY
tail -5 "$OUT/optimize.log"
