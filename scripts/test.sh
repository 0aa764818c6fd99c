#!/usr/bin/env bash
# Installs everything into a fresh virtual environment and runs every CPU test:
# lint (ruff), types (mypy), unit and integration tests, notebook and real-browser tests.
# GPU tests (marked `gpu`) run on the GPU machine through scripts/gpu_checks.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${KERNELOPT_VENV:-.venv}"
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null || PY=python3

if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q -c constraints/ci.txt -e ".[test]"

# Chromium for the browser tests comes from the distribution (a browser download fails here).
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium >/dev/null
fi

# The labextension is built from source (no build output is committed).
if [ -f labextension/package.json ]; then
  "$VENV/bin/python" scripts/build_labextension.py
fi

"$VENV/bin/ruff" check .
"$VENV/bin/ruff" format --check .
# mypy on the installed layout (agents/ and verify/ inside the package): every seam typed.
"$VENV/bin/python" scripts/typecheck.py
"$VENV/bin/python" -m pytest -m "not gpu" -q "$@"
