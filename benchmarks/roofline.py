"""Each bench problem against the H200 roofline: where its time goes, and how far the peers and
the record's winner are from it.

For every row of a record (``benchmarks/summarize.py --latest``), the problem is built at its
full size on the meta device (no memory, no compute): FLOPs are counted by torch's
``FlopCounterMode`` over the reference's forward (matmuls and convolutions: the ops that can be
compute-bound), and the compulsory traffic is its inputs, parameters, buffers and outputs, each
moved once. The roofline time is the larger of traffic over the measured copy bandwidth and
FLOPs over the fp32 CUDA-core peak (TF32 is off for fp32 problems; see
``kernelopt_jupyter/analysis/roofline.py``). A problem near its roofline has little left for any
optimizer; one far from it says where the time goes (launches, extra passes, a slow vendor
kernel).

    python benchmarks/roofline.py benchmarks/results/record.json -o roofline.json \\
        --markdown roofline.md
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import torch
from torch.utils.flop_counter import FlopCounterMode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kernelopt_jupyter.analysis.roofline import H200_FP32, bandwidth  # noqa: E402
from kernelopt_jupyter.problem import load_source_module  # noqa: E402

TARGET_PEERS = ("eager", "compile", "reduce_overhead")


def _nbytes(value: Any) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, list | tuple):
        return sum(_nbytes(v) for v in value)
    if isinstance(value, dict):
        return sum(_nbytes(v) for v in value.values())
    return 0


def measure(path: Path) -> dict[str, Any]:
    """FLOPs and compulsory bytes of one problem's forward, at full size, on the meta device."""
    module = load_source_module(path.read_text(), f"_roofline_{path.stem}")
    with torch.device("meta"):
        inputs = module.get_inputs()
        model = module.Model(*module.get_init_inputs())
        counter = FlopCounterMode(display=False)
        with counter, torch.no_grad():
            out = model(*inputs)
    state = _nbytes(dict(model.state_dict()))
    moved = _nbytes(inputs) + state + _nbytes(out)
    flops = int(counter.get_total_flops())
    t_mem, t_flops = moved / bandwidth() * 1e3, flops / H200_FP32 * 1e3
    return {
        "bytes": moved,
        "flops": flops,
        "roofline_ms": max(t_mem, t_flops),
        "bound": "memory" if t_mem >= t_flops else "compute",
    }


def table(record: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for row in record["rows"]:
        path = ROOT / row["problem"]
        try:
            point = measure(path)
        except Exception as exc:  # a problem the meta device cannot run: said, not skipped
            point = {"error": f"{type(exc).__name__}: {exc}"[:200]}
        peers = {k: row.get(f"{k}_ms") for k in (*TARGET_PEERS, "max_autotune")}
        target = min((v for k, v in peers.items() if k in TARGET_PEERS and v), default=None)
        ratio = (row.get("speedup_vs_peer") or {}).get("best_target_peer")
        ours = target / ratio if target and ratio else None
        roof = point.get("roofline_ms")
        rows.append(
            {
                "problem": row["problem"],
                "level": row["level"],
                **point,
                "best_target_peer_ms": target,
                "max_autotune_ms": peers["max_autotune"],
                "winner_ms": ours,
                "vs_best_target_peer": ratio,
                "peer_at_roofline": roof / target if roof and target else None,
                "winner_at_roofline": roof / ours if roof and ours else None,
            }
        )
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    def ms(v: Any) -> str:
        return "-" if v is None else f"{v:.4g}"

    def pct(v: Any) -> str:
        return "-" if v is None else f"{100 * v:.0f}%"

    lines = [
        "| level | problem | bound | roofline ms | best target peer ms (at roofline) "
        "| winner ms (at roofline) | vs best target peer |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for r in sorted(rows, key=lambda r: (r["level"], r["problem"])):
        name = Path(r["problem"]).stem
        if "error" in r:
            lines.append(f"| {r['level']} | `{name}` | {r['error']} | - | - | - | - |")
            continue
        lines.append(
            f"| {r['level']} | `{name}` | {r['bound']} | {ms(r['roofline_ms'])} "
            f"| {ms(r['best_target_peer_ms'])} ({pct(r['peer_at_roofline'])}) "
            f"| {ms(r['winner_ms'])} ({pct(r['winner_at_roofline'])}) "
            f"| {ms(r['vs_best_target_peer'])}x |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("record")
    parser.add_argument("-o", "--out", required=True)
    parser.add_argument("--markdown")
    args = parser.parse_args(argv)
    rows = table(json.loads(Path(args.record).read_text()))
    Path(args.out).write_text(json.dumps({"rows": rows}, indent=1) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(markdown(rows))
    print(markdown(rows), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
