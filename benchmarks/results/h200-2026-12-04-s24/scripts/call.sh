#!/usr/bin/env bash
# One device call, prepared in the twenty-fourth session (a copy of the twenty-third's script):
# [refmem] the reference's steps' peaks on $REFMEM (scripts/ref_memory.py), [diag] max-autotune diagnosis
# [bytecode] torch's bytecode written first, (scripts/diag_harvest.py on $DIAG), [tests] GPU test files, then the bench on
# $PROBLEMS until $END s from the start, then [cached] the problem $CACHED searched again with
# the analysis cache the bench left (the first verdict with the analysis cached).
set -uo pipefail
T0=$(date +%s)
python3 -m pip install -q --no-deps --no-build-isolation -e . >"$OUT/install.log" 2>&1 || { cat "$OUT/install.log"; exit 1; }
if [[ "${STEPS:-}" == *bytecode* ]]; then
  # Write torch's and Triton's bytecode once, as a pip install normally does (the image sets
  # PYTHONDONTWRITEBYTECODE=1 and ships none), and time an import before and after.
  IMP="import torch, torch._dynamo, triton, torch._inductor.compile_fx"
  S=$EPOCHREALTIME; python3 -c "$IMP"; echo "import without bytecode: $(python3 -c "print(round($EPOCHREALTIME - $S, 2))") s"
  SP=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  S=$EPOCHREALTIME; python3 -m compileall -q -j 0 "$SP/torch" "$SP/triton" "$SP/sympy" >/dev/null 2>&1
  echo "compileall of $SP rc $? in $(python3 -c "print(round($EPOCHREALTIME - $S, 2))") s"
  S=$EPOCHREALTIME; python3 -c "$IMP"; echo "import with bytecode: $(python3 -c "print(round($EPOCHREALTIME - $S, 2))") s"
fi
if [[ "${STEPS:-}" == *refmem* ]]; then
  timeout ${RM_TIMEOUT:-150} python3 benchmarks/results/h200-2026-12-04-s24/scripts/ref_memory.py $REFMEM >"$OUT/refmem.log" 2>&1
  echo "refmem rc $? after $(( $(date +%s) - T0 )) s"; grep -v "^REPORT" "$OUT/refmem.log" | tail -40
fi
if [[ "${STEPS:-}" == *diag* ]]; then
  timeout ${DIAG_TIMEOUT:-200} python3 benchmarks/results/h200-2026-12-04-s22/scripts/diag_autotune.py $DIAG >"$OUT/diag.log" 2>&1
  echo "diag rc $? after $(( $(date +%s) - T0 )) s"; grep -A1 "^== " "$OUT/diag.log"; grep -c AUTOTUNE "$OUT/diag.log"
fi
if [[ "${STEPS:-}" == *winograd* ]]; then
  timeout ${WG_TIMEOUT:-150} python3 benchmarks/results/h200-2026-12-04-s22/scripts/winograd_bench.py "$OUT/winograd.json" >"$OUT/winograd.log" 2>&1
  echo "winograd rc $? after $(( $(date +%s) - T0 )) s"; grep -v "^skip" "$OUT/winograd.log" | tail -20
fi
if [[ "${STEPS:-}" == *tests* ]]; then
  OUT=$OUT/tests STAGES=tests FILES="$FILES" TEST_TIMEOUT=$TT GROUP=2 bash scripts/gpu_checks.sh | tail -15
  echo "tests done after $(( $(date +%s) - T0 )) s"
fi
if [ -n "${PROBLEMS:-}" ]; then
  LEFT=$(( ${END:-570} - ($(date +%s) - T0) ))
  echo "bench with $LEFT s"
  OUT=$OUT/bench BENCH_TIMEOUT=$LEFT BUDGET=16 TIME_LIMIT=60 bash benchmarks/run_gpu_bench.sh | tail -20
fi
if [ -n "${CACHED:-}" ]; then
  LEFT=$(( ${CEND:-590} - ($(date +%s) - T0) ))
  echo "cached run with $LEFT s; cache: $(ls ~/.cache/kernelopt/analysis 2>/dev/null | wc -l) entries"
  mkdir -p "$OUT/cached"
  KERNELOPT_HOME="$OUT/cached/home" PYTHONUNBUFFERED=1 timeout "$LEFT" kernelopt bench "$CACHED" --device cuda \
    --agents offline --budget 16 --time-limit 60 --out "$OUT/cached" --json >"$OUT/cached/bench.json" 2>"$OUT/cached/bench.log"
  echo "cached rc $?"; python3 -c "
import json,sys; d=json.load(open('$OUT/cached/bench.json'))
for r in d.get('rows', d if isinstance(d, list) else []):
    print(r['problem'], r['timeline'], r['seconds'], r.get('speedup_vs_peer'))" 2>&1 | tail -3
fi
echo "call done after $(( $(date +%s) - T0 )) s"
# Few files come back from a call: everything in one archive.
(cd "$OUT" && tar czf /tmp/all.tgz --exclude='*.pt' . && rm -rf ./* && mv /tmp/all.tgz all.tgz)
