#!/usr/bin/env bash
# Download the wheels the notebook GPU test needs (constraints/gpu-notebook.txt) for a Linux
# x86-64 machine with CPython 3.12 and no network, into DEST (default gpu-wheels/jupyter), and
# Helion's into gpu-wheels/helion.
#   bash scripts/fetch_gpu_wheels.sh [DEST]      # then carry DEST to the GPU machine
set -euo pipefail
cd "$(dirname "$0")/.."
DEST="${1:-gpu-wheels/jupyter}"
PYVER="${PYVER:-3.12}"
mkdir -p "$DEST"
grep -v '^#' constraints/gpu-notebook.txt | while read -r spec; do
  [ -n "$spec" ] || continue
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$PYVER" \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_26_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$DEST" "$spec"
done
echo "$(ls "$DEST"/*.whl | wc -l) wheels in $DEST ($(du -sh "$DEST" | cut -f1))"
# Helion and the one dependency of it the GPU image lacks, for the Helion GPU test;
# scripts/gpu_checks.sh installs them from HELION_DEST. Not the version CI pins: helion 1.5.1
# (CI, torch 2.13) imports IntelGPUError from torch._inductor.runtime.triton_compat, which the
# GPU image's torch 2.11 lacks; 1.5.0 runs there (checked on the H200, 2026-12-02).
HELION_DEST="${HELION_DEST:-$(dirname "$DEST")/helion}"
HELION_GPU_VERSION="${HELION_GPU_VERSION:-1.5.0}"
mkdir -p "$HELION_DEST"
python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$PYVER" -d "$HELION_DEST" \
  "helion==$HELION_GPU_VERSION" filecheck
echo "$(ls "$HELION_DEST"/*.whl | wc -l) wheels in $HELION_DEST"
