#!/usr/bin/env bash
# The benchmark suite on every visible GPU at once: problems dealt round-robin to one
# `kernelopt bench` per GPU, then merged (benchmarks/summarize.py) and charted (plot.py).
#   bash benchmarks/run_gpu_bench.sh                 # all 38 problems, results in bench-out/
#   OUT=o BUDGET=8 TIME_LIMIT=60 PROBLEMS="benchmarks/problems/level2" bash benchmarks/run_gpu_bench.sh
#   BENCH_TIMEOUT=480 ...   # stop the searches after 480 s and still merge and chart what finished
#                           # (rows are written as each problem ends; a device call has 600 s)
#   RECORD=0 ...            # leave benchmarks/results/record.* as they are (see below)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-bench-out}"
mkdir -p "$OUT"
PY="${PY:-python3}"
unset KERNELOPT_SMALL  # full (H200) sizes
$PY -m pip install -q --no-deps --no-build-isolation -e . >"$OUT/install.log" 2>&1 || { cat "$OUT/install.log"; exit 1; }
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  $PY -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, triton.__version__)"
} >"$OUT/machine.txt" 2>&1
export PYTHONUNBUFFERED=1 KERNELOPT_HOME="$OUT/home"
GPUS=$(nvidia-smi -L | wc -l)
mapfile -t FILES < <(find ${PROBLEMS:-benchmarks/problems} -name '*.py' ! -name '_*' | sort)
for g in $(seq 0 $((GPUS - 1))); do
  shard=()
  for i in "${!FILES[@]}"; do
    if (( i % GPUS == g )); then shard+=("${FILES[$i]}"); fi
  done
  (( ${#shard[@]} )) || continue
  CUDA_VISIBLE_DEVICES=$g timeout "${BENCH_TIMEOUT:-86400}" kernelopt bench "${shard[@]}" --device cuda --agents offline \
    --budget "${BUDGET:-8}" --time-limit "${TIME_LIMIT:-60}" --out "$OUT/gpu$g" --json \
    >"$OUT/gpu$g.json" 2>"$OUT/gpu$g.log" &
done
wait
# A shard cut by the timeout left its stdout empty; its rows are in its own bench.json.
for g in $(seq 0 $((GPUS - 1))); do
  if [ ! -s "$OUT/gpu$g.json" ] && [ -s "$OUT/gpu$g/bench.json" ]; then cp "$OUT/gpu$g/bench.json" "$OUT/gpu$g.json"; fi
done
$PY benchmarks/summarize.py "$OUT"/gpu*.json -o "$OUT/bench.json" --markdown "$OUT/bench.md"
$PY benchmarks/plot.py "$OUT/bench.json" -o "$OUT/bench.svg"
cat "$OUT/bench.md"
# The committed record keeps the latest row of each problem: this run's rows replace that
# problem's older ones in benchmarks/results/record.{json,md,svg} (no new folders).
if [ "${RECORD:-1}" = 1 ]; then
  REC=benchmarks/results/record
  GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  $PY benchmarks/summarize.py --latest "$REC.json" "$OUT/bench.json" -o "$REC.json" --markdown "$REC.md"
  $PY benchmarks/plot.py "$REC.json" -o "$REC.svg" \
    --title "$GPU record: the latest row of each problem, fp32, TF32 off"
  echo "record updated: $REC.{json,md,svg} (machine: $OUT/machine.txt)"
fi
