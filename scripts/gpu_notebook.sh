#!/usr/bin/env bash
# The notebook GPU test (tests/test_notebook_gpu.py) on the GPU machine, whose image has no
# Jupyter packages: installs the wheels of .whl/jupyter/ into /tmp/site (never the image's
# site-packages, never the user's Jupyter or IPython settings), installs the project, then runs
# the test with its figures and log under $OUT.
#   bash scripts/gpu_notebook.sh    (from the repository root; OUT defaults to gpu-results/)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-gpu-results}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
LOG="$OUT/notebook_gpu.log"
PY="${PY:-python3}"
SITE="${SITE:-/tmp/site}"
WHEELS="${WHEELS:-gpu-wheels/jupyter}"  # scripts/fetch_gpu_wheels.sh fetches them
NB_TESTS="${NB_TESTS:--m gpu tests/test_notebook_gpu.py}"
: >"$LOG"
say() { echo "gpu_nb: $*" | tee -a "$LOG"; }

start=$(date +%s)
$PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$SITE" "$WHEELS"/*.whl >>"$LOG" 2>&1 \
  || { say "installing the Jupyter wheels failed"; tail -20 "$LOG"; exit 1; }
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
say "wheels installed in $(( $(date +%s) - start )) s: $(ls "$WHEELS"/*.whl | wc -l) wheels"

if [ -z "${SKIP_PROJECT:-}" ]; then
KERNELOPT_SKIP_LABEXTENSION=1 $PY -m pip install -q --no-deps --no-build-isolation -e . >>"$LOG" 2>&1 \
  || { say "installing the project failed"; tail -20 "$LOG"; exit 1; }
fi
say "project installed ($(( $(date +%s) - start )) s)"

# Jupyter and IPython read and write only under /tmp/jk.
JK=/tmp/jk
mkdir -p "$JK/config" "$JK/data" "$JK/runtime" "$JK/ipython" "$JK/mpl"
export JUPYTER_CONFIG_DIR="$JK/config" JUPYTER_DATA_DIR="$JK/data" JUPYTER_RUNTIME_DIR="$JK/runtime"
export IPYTHONDIR="$JK/ipython" MPLCONFIGDIR="$JK/mpl" JUPYTER_PLATFORM_DIRS=1
# nbclient's "python3" kernel: ipykernel's own spec (this interpreter) when jupyter_client finds
# it, else one installed under /tmp/jk.
if ! $PY -c "from jupyter_client.kernelspec import KernelSpecManager as K; print('kernel:', K().get_kernel_spec('python3').argv)" >>"$LOG" 2>&1; then
  $PY -m ipykernel install --prefix "$JK/prefix" --name python3 >>"$LOG" 2>&1
  export JUPYTER_PATH="$JK/prefix/share/jupyter"
  say "kernelspec installed under $JUPYTER_PATH"
fi
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  $PY -c "import sys, torch, triton, IPython, ipykernel, nbclient; print(sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__, 'IPython', IPython.__version__, 'ipykernel', ipykernel.__version__, 'nbclient', nbclient.__version__)"
} >"$OUT/notebook_gpu_machine.txt" 2>&1
cat "$OUT/notebook_gpu_machine.txt" >>"$LOG"

export PYTHONUNBUFFERED=1 KERNELOPT_GPU_ARTIFACTS="$OUT"
say "running the test ($(( $(date +%s) - start )) s so far)"
timeout "${TEST_TIMEOUT:-540}" $PY -m pytest -v -p no:cacheprovider -rA $NB_TESTS 2>&1 | tee -a "$LOG" | tail -40
status=${PIPESTATUS[0]}
say "pytest exit $status after $(( $(date +%s) - start )) s"
[ -f "$OUT/notebook_gpu.json" ] && head -c 1500 "$OUT/notebook_gpu.json"
exit $status
