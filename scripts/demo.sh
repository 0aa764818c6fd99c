#!/usr/bin/env bash
# The main job on a fresh machine: install into .venv, then execute the quickstart notebook
# (a %%kernelopt search on the embedded offline agents; CPU through Triton's interpreter, or the
# GPU when one is present; no API key needed). The executed notebook is written next to it as
# notebooks/quickstart.executed.ipynb; a command-line search of the same problem follows.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${KERNELOPT_VENV:-.venv}"
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null || PY=python3
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q -c constraints/ci.txt -e ".[test]"
if [ -f labextension/package.json ]; then
  "$VENV/bin/python" scripts/build_labextension.py
fi
# A kernel of the demo's own name inside the demo's environment (--sys-prefix): the person's
# own python3 kernelspec and user-level kernels stay as they were.
"$VENV/bin/python" -m ipykernel install --sys-prefix --name kernelopt \
  --display-name "Python (KernelOPT)" >/dev/null
echo "== executing notebooks/quickstart.ipynb (offline agents) on the 'kernelopt' kernel"
# No widget state in the saved notebook: it would embed plotly.js (megabytes) per figure.
"$VENV/bin/jupyter" nbconvert --to notebook --execute notebooks/quickstart.ipynb \
  --ExecutePreprocessor.kernel_name=kernelopt --ExecutePreprocessor.store_widget_state=False \
  --ExecutePreprocessor.timeout=900 --output quickstart.executed.ipynb
echo "   $(du -h notebooks/quickstart.executed.ipynb | cut -f1) notebooks/quickstart.executed.ipynb"
echo "== kernelopt optimize (offline agents) on the bundled fused MLP problem"
"$VENV/bin/kernelopt" optimize kernelopt_jupyter/problems/fused_mlp.py --agents offline \
  --budget 6 --out runs/demo-fused-mlp
echo "== re-verifying the best candidate"
"$VENV/bin/kernelopt" verify kernelopt_jupyter/problems/fused_mlp.py runs/demo-fused-mlp/best.py
# What the search found, in one line, from its result file (the contract's result.json).
"$VENV/bin/python" - runs/demo-fused-mlp/result.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cands = r.get("candidates") or []
passed = [c for c in cands if c.get("verdict") == "pass"]
best = r.get("best")
speed = r.get("speedup_vs_eager")
timed = f", {speed:.2f}x over eager" if isinstance(speed, (int, float)) else " (no GPU: not timed)"
print(f"== found: {len(passed)} of {len(cands)} candidates verified; best {best or 'none'}{timed}")
PY
echo "Open the notebook in JupyterLab to see the live panel (kernel 'Python (KernelOPT)'):"
echo "  $VENV/bin/jupyter lab notebooks/quickstart.ipynb"
