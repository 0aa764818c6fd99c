#!/usr/bin/env bash
# One device call of the sixteenth session: [diag] the 6.4 GB verification under the profiler,
# [cheats] the 14 GPU cheats, then the bench on $PROBLEMS until 570 s from the start.
set -uo pipefail
T0=$(date +%s)
python3 -m pip install -q --no-deps --no-build-isolation -e . >"$OUT/install.log" 2>&1 || { cat "$OUT/install.log"; exit 1; }
if [[ "${STEPS:-}" == *diag* ]]; then
  PROFILE_OUT=$OUT/diag timeout 300 python3 benchmarks/results/h200-2026-12-03-s16/scripts/diag_verify_profile.py >"$OUT/diag.log" 2>&1
  echo "diag rc $? after $(( $(date +%s) - T0 )) s"; tail -c 1500 "$OUT/diag.log"
fi
if [[ "${STEPS:-}" == *select* ]]; then
  python3 benchmarks/results/h200-2026-12-03-s16/scripts/diag_select.py 2>&1 | tail -3
fi
if [[ "${STEPS:-}" == *cheats* ]]; then
  OUT=$OUT/cheats GROUP=1 STAGES=tests PYTEST_ARGS="-n 4" TEST_TIMEOUT=120 bash scripts/gpu_checks.sh | tail -4
  echo "cheats done after $(( $(date +%s) - T0 )) s"
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
echo "call done after $(( $(date +%s) - T0 )) s"
# Few files come back from a call: everything in one archive.
(cd "$OUT" && tar czf /tmp/all.tgz --exclude='*.pt' . && rm -rf ./* && mv /tmp/all.tgz all.tgz)
