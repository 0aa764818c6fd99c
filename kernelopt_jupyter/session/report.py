"""A saved session told as a standalone notebook: ``kernelopt report DIR`` and the panel's Report.

The notebook is a reader of the session's ``events.jsonl`` (and its ``problem.py``): the
problem, the baselines, the dispatch map as a table and a chart, every candidate that passed
the gates with its diff, gates and speedup, and the winner as a runnable cell followed by a
check against the reference. Charts are small SVG attachments drawn here, so the notebook
carries no plotting library and renders without a kernel. The notebook is written as plain
nbformat-4 JSON (validated with ``nbformat`` where it is installed, as on a Jupyter machine),
so it can also be written on a GPU box without Jupyter. Both front ends call it from here
(``cli/report.py``, ``notebook/panel/report.py``): a front end never imports the other.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from kernelopt_jupyter.analysis.codegen import library_on
from kernelopt_jupyter.event_payloads import SessionStarted
from kernelopt_jupyter.events import EventError, read_events
from kernelopt_jupyter.session.state import (
    CandidateView,
    SessionState,
    kernel_records,
    speedup_text,
)
from kernelopt_jupyter.verify.report import GATE_NAMES, GATE_PASS

#: A diff longer than this is cut in the report (the full one is in events.jsonl).
MAX_DIFF_LINES = 150
#: Gate details are cut to this many characters in the tables.
MAX_DETAIL = 240

_SETUP = """\
import os

import torch

if not torch.cuda.is_available():
    # No GPU: Triton kernels run in its CPU interpreter (slowly, one program at a time) and
    # KernelOPT's shims map the libdevice calls Inductor emits. Set before Triton is imported.
    os.environ["TRITON_INTERPRET"] = "1"
    from kernelopt_jupyter.cpu_triton import install_interpreter_shims

    install_interpreter_shims()
"""
_SMALL = """
# The session ran this problem at its small sizes; the harvested kernels are specialised to them.
os.environ["KERNELOPT_SMALL"] = "1"
"""


def write_report(run_dir: Path, out: Path, *, overwrite: bool = True) -> int:
    """Write the report notebook of the session in ``run_dir`` to ``out``; returns its cells.

    With ``overwrite=False`` an existing ``out`` is left alone (FileExistsError). Raises
    EventError when ``run_dir`` holds no session, OSError when ``out`` cannot be written.
    """
    notebook = report_notebook(run_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w" if overwrite else "x", encoding="utf-8") as fh:
        fh.write(json.dumps(notebook, indent=1) + "\n")
    return len(notebook["cells"])


# --------------------------------------------------------------------------- the notebook


def report_notebook(run_dir: Path) -> dict[str, Any]:
    """The report of the session in ``run_dir`` as an nbformat-4 notebook (a plain dict).

    Raises EventError when ``run_dir`` holds no readable ``events.jsonl``.
    """
    events = read_events(run_dir / "events.jsonl")
    if not events:
        raise EventError(f"{run_dir / 'events.jsonl'}: the session recorded no event")
    state = SessionState()
    state.apply_all(events)
    started = next(
        (p for e in events if isinstance(p := e.payload(), SessionStarted)), SessionStarted()
    )
    problem_file = run_dir / "problem.py"
    problem = problem_file.read_text(encoding="utf-8") if problem_file.is_file() else ""
    cells: list[dict[str, Any]] = []
    cells += _header(state, started, run_dir, problem)
    cells += _problem_cells(problem, started)
    cells += _dispatch_cells(state)
    cells += _search_cells(state)
    cells += _final_cells(state, started, bool(problem))
    for number, cell in enumerate(cells):
        cell["id"] = f"report-{number:02d}"
    notebook = {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "kernelopt": {"session": str(run_dir), "best": state.best},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    _validate(notebook)
    return notebook


def _validate(notebook: dict[str, Any]) -> None:
    try:
        import nbformat
    except ImportError:  # the GPU box has no Jupyter: the JSON above is written by hand
        return
    nbformat.validate(nbformat.from_dict(notebook))


def _md(text: str, attachments: dict[str, Any] | None = None) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": "markdown", "metadata": {}, "source": text}
    if attachments:
        cell["attachments"] = attachments
    return cell


def _code(text: str) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {},
        "outputs": [],
        "source": text.rstrip() + "\n",
    }


def _cell_text(text: str) -> str:
    """Text for a markdown table cell: one line, no pipes, HTML escaped, cut short."""
    one = " ".join(str(text).split()).replace("|", "/")
    if len(one) > MAX_DETAIL:
        one = one[: MAX_DETAIL - 1] + "…"
    return html.escape(one, quote=False)


def _header(
    state: SessionState, started: SessionStarted, run_dir: Path, problem: str
) -> list[dict[str, Any]]:
    name = started.name or state.problem or run_dir.name
    status = state.finished.status if state.finished else "not finished (interrupted)"
    lines = [
        f"# KernelOPT session report: {name}",
        "",
        f"- problem: `{started.problem_path or '?'}` ({started.kind or '?'} problem)",
        f"- device: {started.device or '?'}; agents: {started.agents or '?'}; "
        f"module mode: {started.mode or 'as-constructed'}",
        f"- status: {status}; best: {state.best or 'none'}; candidates gated: "
        f"{len(state.candidates)}",
        f"- written by `kernelopt report` from `{run_dir.name}/events.jsonl`",
    ]
    notice = started.notice
    if notice:
        lines += ["", f"> {notice}"]
    if started.device == "cpu":
        lines += [
            "",
            "> On the CPU nothing is timed: speedups read *not timed*, and the dispatch map ranks "
            "kernels by a roofline estimate (bytes and FLOPs against H200 peaks), not by a "
            "measurement.",
        ]
    lines += [
        "",
        "Run the notebook top to bottom: the last cells rebuild the best candidate and "
        "check it against the reference.",
    ]
    small = "KERNELOPT_SMALL=1" in str(notice or "") and "KERNELOPT_SMALL" in problem
    return [_md("\n".join(lines)), _code(_SETUP + (_SMALL if small else ""))]


def _problem_cells(problem: str, started: SessionStarted) -> list[dict[str, Any]]:
    if not problem:
        return [_md("## The problem\n\nThe session folder holds no `problem.py`.")]
    entry = started.entry or "Model"
    keep = f"\n\nREFERENCE = {entry}  # the candidate below may redefine the name\n"
    return [
        _md(
            "## The problem\n\nThe reference the search had to beat, exactly as it was "
            "captured. Every candidate must match it on fresh random inputs."
        ),
        _code(problem.rstrip() + keep),
    ]


def _dispatch_cells(state: SessionState) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = []
    rows = ["| baseline | ms | note |", "|---|---|---|"]
    for name, base in state.baselines.items():
        rows.append(
            f"| {name} | {_number(base.ms, '%.4f') or 'not measured'} | {_cell_text(base.detail)} |"
        )
    profile = state.reference_profile()
    records = kernel_records(profile)
    text = ["## Baselines and the dispatch map", ""]
    if state.baselines:
        text += ["\n".join(rows), ""]
    if not records:
        text.append("The session recorded no dispatch map.")
        return [_md("\n".join(text))]
    if profile is not None and profile.summary:
        text += [profile.summary, ""]
    text += [
        "Where the reference's work runs once compiled: each generated Triton kernel (editable) "
        "and each vendor-library call (cuBLAS, cuDNN: kept). *Intensity* is FLOPs per byte "
        "moved; below the GPU's ridge point a kernel is limited by memory bandwidth "
        "(*memory*-bound), above it by arithmetic (*compute*-bound).",
        "",
        "| kernel | kind | ops | launches | ms | share | FLOPs | bytes | FLOP/byte | bound |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        text.append(
            "| {name} | {kind} | {ops} | {launches} | {ms} | {share} | {flops} | {bytes} "
            "| {intensity} | {bound} |".format(
                name=_cell_text(r.get("name", "")),
                kind=_cell_text(
                    library_on(str(r.get("library") or ""), state.device) or r.get("kind") or ""
                ),
                ops=_cell_text(", ".join(map(str, r.get("ops") or []))),
                launches=r.get("launches", ""),
                ms=_number(r.get("ms"), "%.4f"),
                share=_number(r.get("share"), "%.0f%%", 100.0),
                flops=_number(r.get("flops"), "%.3g"),
                bytes=_number(r.get("bytes"), "%.3g"),
                intensity=_number(r.get("intensity"), "%.2f"),
                bound=_cell_text(r.get("bound") or ""),
            )
        )
    cells.append(_md("\n".join(text)))
    chart = dispatch_chart(records)
    if chart:
        what = (
            "measured time"
            if any(isinstance(r.get("ms"), int | float) for r in records)
            else "roofline-bound estimate (the least time the bytes and FLOPs need on an H200)"
        )
        cells.append(
            _md(
                f"Time per kernel ({what}); blue: generated Triton, orange: vendor library.\n\n"
                "![dispatch map](attachment:dispatch.svg)",
                {"dispatch.svg": {"image/svg+xml": chart}},
            )
        )
    return cells


def _number(value: Any, fmt: str, scale: float = 1.0) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return ""
    return fmt % (value * scale)


def dispatch_chart(records: list[dict[str, Any]]) -> str:
    """A horizontal bar chart (SVG text) of each kernel's time: measured ms, else the
    roofline bound; empty when no record has either."""
    bars = []
    for r in records:
        value = r.get("ms") if isinstance(r.get("ms"), int | float) else r.get("bound_ms")
        if isinstance(value, int | float) and not isinstance(value, bool):
            bars.append((str(r.get("name", "")), float(value), r.get("kind") == "vendor"))
    if not bars:
        return ""
    top = max(v for _, v, _ in bars) or 1.0
    row, label_w, bar_w = 22, 260, 320
    height = row * len(bars) + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_w + bar_w + 90}" '
        f'height="{height}" font-family="sans-serif" font-size="12">'
    ]
    for i, (name, value, vendor) in enumerate(bars):
        y = 10 + i * row
        width = max(1.0, bar_w * value / top)
        colour = "#e8833a" if vendor else "#3a78c2"
        short = name if len(name) <= 38 else name[:37] + "…"
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end">{html.escape(short)}</text>'
            f'<rect x="{label_w}" y="{y + 2}" width="{width:.1f}" height="{row - 6}" '
            f'fill="{colour}"/>'
            f'<text x="{label_w + width + 4:.1f}" y="{y + 14}">{value:.3g} ms</text>'
        )
    parts.append(
        f'<text x="{label_w}" y="{height - 4}" fill="#555">milliseconds (0 to {top:.3g})</text>'
    )
    parts.append("</svg>")
    return "".join(parts)


def _lineage(state: SessionState, best: str | None) -> list[str]:
    """Candidate ids from the first ancestor to ``best``."""
    chain: list[str] = []
    cid = best
    while cid and cid in state.candidates and cid not in chain:
        chain.append(cid)
        cid = state.candidates[cid].parent
    return chain[::-1]


def _gates_table(cand: CandidateView) -> str:
    rows = ["| gate | status | detail |", "|---|---|---|"]
    for name in GATE_NAMES:
        gate = cand.gates.get(name)
        if gate is not None:
            rows.append(f"| {name} | {gate.status} | {_cell_text(gate.detail)} |")
    return "\n".join(rows)


def _diff_block(diff: str) -> str:
    lines = diff.rstrip().splitlines()
    cut = ""
    if len(lines) > MAX_DIFF_LINES:
        cut = f"\n\n({len(lines) - MAX_DIFF_LINES} more lines of the diff are in events.jsonl)"
        lines = lines[:MAX_DIFF_LINES]
    fence = "````" if any(line.startswith("```") for line in lines) else "```"
    return f"{fence}diff\n" + "\n".join(lines) + f"\n{fence}{cut}"


def _search_cells(state: SessionState) -> list[dict[str, Any]]:
    rows = [
        "## The search",
        "",
        "Every candidate went through the four gates (static, correctness, float64 referee, "
        "performance) in a separate worker process.",
        "",
        "| candidate | parent | agent | plan | gates | verdict | speedup |",
        "|---|---|---|---|---|---|---|",
    ]
    for cand in state.candidates.values():
        gates = " ".join(f"{g}:{cand.gates[g].status}" for g in GATE_NAMES if g in cand.gates)
        rows.append(
            f"| {cand.id} | {cand.parent or 'reference'} | {cand.agent} "
            f"| {_cell_text(state.candidate_plan_title(cand) or cand.note)} | {gates} "
            f"| {cand.verdict or ''} | {speedup_text(cand)} |"
        )
    cells = [_md("\n".join(rows))]
    lineage = _lineage(state, state.best)
    accepted = [c for c in state.candidates.values() if c.verdict == GATE_PASS]
    for cand in accepted:
        role = "on the winner's path" if cand.id in lineage else "passed, not chosen"
        title = state.candidate_plan_title(cand) or cand.note or cand.agent
        text = [
            f"### {cand.id}: {_cell_text(title)} ({role})",
            "",
            f"Parent: {cand.parent or 'the reference'}; agent: {cand.agent}; "
            f"speedup: {speedup_text(cand) or 'none'}"
            + (
                "; dispatch-only (vendor libraries, no generated kernel)"
                if cand.dispatch_only
                else ""
            ),
        ]
        if cand.explanation:
            text += ["", _cell_text(cand.explanation)]
        text += ["", _gates_table(cand)]
        if cand.diff:
            text += [
                "",
                f"The change against {cand.parent or 'the reference'}:",
                "",
                _diff_block(cand.diff),
            ]
        cells.append(_md("\n".join(text)))
    if not accepted:
        cells.append(_md("No candidate passed every gate."))
    return cells


def _final_cells(
    state: SessionState, started: SessionStarted, has_problem: bool
) -> list[dict[str, Any]]:
    best = state.candidates.get(state.best or "")
    if best is None or not best.source:
        return [_md("## The result\n\nThe search verified no candidate: nothing to run.")]
    cells = [
        _md(
            f"## The result: {best.id}\n\nThe winning candidate as it was verified. Running it "
            "defines the replacement next to the reference above."
        ),
        _code(best.source),
    ]
    if not has_problem:
        return cells
    entry = started.entry or "Model"
    if (started.kind or "module") == "module":
        check = (
            "torch.manual_seed(0)\n"
            "reference = REFERENCE(*get_init_inputs())\n"
            # Built under the same seed: a tensor the constructor draws outside the
            # state_dict (an RNN's initial hidden state) is then the reference's too.
            "torch.manual_seed(0)\n"
            "candidate = ModelNew(*get_init_inputs())\n"
            "candidate.load_state_dict(reference.state_dict())  # the reference's weights\n"
            "inputs = get_inputs()\n"
            "with torch.no_grad():\n"
            "    torch.testing.assert_close(candidate(*inputs), reference(*inputs), "
            "rtol=1e-4, atol=1e-4)\n"
            f'print("{best.id} matches the reference")'
        )
    else:
        check = (
            "torch.manual_seed(0)\n"
            "inputs = get_inputs()\n"
            f"candidate = ModelNew() if 'ModelNew' in globals() else {entry}\n"
            "torch.testing.assert_close(candidate(*inputs), REFERENCE(*inputs), "
            "rtol=1e-4, atol=1e-4)\n"
            f'print("{best.id} matches the reference")'
        )
    cells += [
        _md("A last check on one input, as the correctness gate did on several:"),
        _code(check),
    ]
    return cells
