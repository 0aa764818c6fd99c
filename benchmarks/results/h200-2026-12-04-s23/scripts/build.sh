#!/usr/bin/env bash
# This session's bench table and the record, from the calls' bench.json (run from the checkout).
set -euo pipefail
R=benchmarks/results
D=$R/h200-2026-12-04-s23
PY=${PY:-.venv/bin/python}
$PY benchmarks/summarize.py --latest -o $D/bench.json --markdown $D/bench.md $D/call*/bench/bench.json
$PY benchmarks/summarize.py --latest -o $D/record.json --markdown $D/record.md \
  $R/h200-2026-12-01-s6/bench-tl60.json $R/h200-2026-12-02-s7/bench.json $R/h200-2026-12-03-s11/bench.json \
  $R/h200-2026-12-03-s16/bench.json $R/h200-2026-12-03-s17/bench.json $R/h200-2026-12-04-s18/bench.json \
  $R/h200-2026-12-04-s19/bench.json $R/h200-2026-12-04-s20/bench.json $R/h200-2026-12-04-s21/bench.json \
  $R/h200-2026-12-04-s22/bench.json $D/bench.json
$PY benchmarks/plot.py $D/bench.json -o $D/bench.svg --title "H200, twenty-third session: each search's winner vs the peers (fp32, TF32 off)"
$PY benchmarks/plot.py $D/record.json -o $D/record.svg --title "H200 record after the twenty-third session: the latest row of each of the 38 problems"
$PY benchmarks/roofline.py $D/record.json -o $D/roofline.json --markdown $D/roofline.md
