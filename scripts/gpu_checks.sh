#!/usr/bin/env bash
# GPU checks, run on a CUDA machine (the H200): every test marked `gpu`, then offline searches
# whose best.py is re-verified, with results under $OUT (default gpu-results/).
#   bash scripts/gpu_checks.sh            # tests + searches
#   STAGES=bench bash scripts/gpu_checks.sh   # the benchmark instead (see benchmarks/README.md)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-gpu-results}"
STAGES="${STAGES:-tests,optimize}"
mkdir -p "$OUT"
PY=python3
$PY -m pip install -q --no-deps --no-build-isolation -e . >"$OUT/install.log" 2>&1 || { cat "$OUT/install.log"; exit 1; }
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  $PY -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, triton.__version__)"
} >"$OUT/machine.txt" 2>&1
export PYTHONUNBUFFERED=1 KERNELOPT_HOME="$OUT/home"
status=0
if [[ "$STAGES" == *tests* ]]; then
  # Only the files that hold gpu tests: the others import Jupyter packages the GPU image lacks.
  # The notebook test needs Jupyter, which the GPU image lacks: it runs below, from wheels.
  files=$(grep -l "pytest.mark.gpu" tests/test_*.py | grep -v test_notebook_gpu.py)
  KERNELOPT_TEST_LOG="$OUT/tests.log" timeout "${TEST_TIMEOUT:-420}" $PY -m pytest -m gpu -q \
    -p no:cacheprovider -rA $files 2>&1 | tee "$OUT/gpu_tests.log" | tail -40
  status=${PIPESTATUS[0]}
  if [ -d "${WHEELS:-gpu-wheels/jupyter}" ]; then
    OUT="$OUT/notebook" SKIP_PROJECT=1 bash scripts/gpu_notebook.sh | tail -5 || status=1
  else
    echo "NOT RUN: tests/test_notebook_gpu.py needs the Jupyter wheels: bash scripts/fetch_gpu_wheels.sh (a machine with pip), carry gpu-wheels/" | tee -a "$OUT/gpu_tests.log"
    status=1
  fi
fi
if [[ "$STAGES" == *optimize* ]]; then
  for p in ${OPT_PROBLEMS:-kernelopt_jupyter/problems/conv_relu_bias.py}; do
    name=$(basename "$p" .py); mkdir -p "$OUT/runs/$name"
    timeout "${OPT_TIMEOUT:-300}" kernelopt optimize "$p" --device cuda --agents offline --budget "${BUDGET:-8}" \
      --out "$OUT/runs/$name" --json >"$OUT/runs-$name.json" 2>"$OUT/runs/$name.log"
    kernelopt verify "$p" "$OUT/runs/$name/best.py" --device cuda --json >"$OUT/runs/$name/verify-best.json" 2>&1
    echo "optimize $name: exit $? ; $(head -c 400 "$OUT/runs-$name.json")"
  done
fi
if [[ "$STAGES" == *bench* ]]; then
  timeout "${BENCH_TIMEOUT:-560}" kernelopt bench ${BENCH_PROBLEMS:-benchmarks/problems} --device cuda \
    --agents offline --budget "${BUDGET:-6}" --out "$OUT/bench" --json >"$OUT/bench.json" 2>"$OUT/bench.log"
  tail -5 "$OUT/bench.log"
fi
exit $status
