#!/usr/bin/env bash
# Installs everything into a fresh virtual environment and runs every CPU test:
# lint (ruff), types (mypy), unit and integration tests, notebook and real-browser tests.
# GPU tests (marked `gpu`) run on the GPU machine through scripts/gpu_checks.sh; the lesson
# notebooks (marked `lessons`) run as .ci/run's own step after this script.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${KERNELOPT_VENV:-.venv}"
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null || PY=python3

if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
echo "test.sh: installing the project and its test extras into $VENV (pip, constraints/ci.txt);"
echo "test.sh: the build backend builds the JupyterLab extension (npm install in labextension/)"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q -c constraints/ci.txt -e ".[test]"

# Chromium for the browser tests comes from the distribution (a browser download fails here).
# Said out loud, and never through sudo: a system package is the person's decision.
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null && [ "${KERNELOPT_NO_APT:-0}" != 1 ]; then
    echo "test.sh: installing Debian's chromium for the browser tests (apt-get; KERNELOPT_NO_APT=1 skips)"
    apt-get update -qq && apt-get install -y -qq chromium >/dev/null
  else
    echo "test.sh: the browser tests need /usr/bin/chromium: run 'sudo apt-get install chromium'" >&2
    exit 2
  fi
fi

# Unit tests of the extension, and its build linked into the editable install.
if [ -f labextension/package.json ]; then
  "$VENV/bin/python" scripts/build_labextension.py --skip-install
fi

"$VENV/bin/ruff" check .
"$VENV/bin/ruff" format --check .
# mypy on the installed layout (agents/ and verify/ inside the package): every seam typed.
"$VENV/bin/python" scripts/typecheck.py
# Two pytest workers (KERNELOPT_TEST_JOBS sets the count, 0 runs in this process), each file
# on one worker so its module fixtures are made once, the adversarial corpus in two parts,
# the browser tests on one JupyterLab (tests/_groups.py), the longest files first
# (tests/conftest.py). (Three on two cores were slower.)
JOBS="${KERNELOPT_TEST_JOBS:-2}"
PAR=()
if [ "$JOBS" != 0 ]; then PAR=(-n "$JOBS" --dist loadgroup); fi
"$VENV/bin/python" -m pytest -m "not gpu and not lessons and not kernelbench" -q --durations=15 "${PAR[@]}" "$@"
