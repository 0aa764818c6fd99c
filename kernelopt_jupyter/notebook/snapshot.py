"""A panel's static snapshot: what a saved notebook shows where the live panel cannot be drawn.

The live panel is an ipywidget; its model lives in the kernel that drew it. A notebook reopened
later (JupyterLab or Notebook 7 with a new kernel, nbviewer, GitHub) has no such model, and
ipywidgets then draws "Error displaying widget: model not found". So each panel's output carries
two more things:

- beside the widget view, ``PANEL_MIME``: the labextension renders it in place of the widget
  view, as the widget while the kernel still holds the panel's model, else as one line saying the
  panel ended with its kernel; its plain text says the same to viewers without the labextension;
- after the panel, an image (SVG) of the candidates, each a bar of its verified speedup or a mark
  of the gate it stopped at, above the static HTML summary (``report.render_summary``).
"""

from __future__ import annotations

import html
from typing import Any

from kernelopt_jupyter.session.state import CandidateView, SessionState
from kernelopt_jupyter.verify.report import GATE_FAIL, GATE_NAMES, GATE_PASS

#: The panel output's own mime type (labextension/src/record.ts renders it).
PANEL_MIME = "application/vnd.kernelopt.panel+json"
WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"
#: What a viewer without the labextension shows for the panel.
PANEL_TEXT = (
    "KernelOPT panel: live while its kernel runs; the chart and summary below are its snapshot."
)

_PASS_COLOR = "#1a7f37"
_FAIL_COLOR = "#cf222e"
_WAIT_COLOR = "#8c959f"
_BAR_WIDTH = 26
_GAP = 10
_PLOT_HEIGHT = 120
_TOP = 34
_LEFT = 52
_MIN_WIDTH = 560


def panel_bundle(widget_bundle: dict[str, Any], origin: str | None) -> dict[str, Any]:
    """The panel's output: the widget's own bundle, ``PANEL_MIME`` and readable plain text.

    ``origin`` is the session id of the front-end connection that ran the cell (the execute
    request's ``session``): that connection draws the widget at once, without asking the kernel
    whether it still holds the panel's model.
    """
    data = dict(widget_bundle)
    data["text/plain"] = PANEL_TEXT
    view = data.get(WIDGET_VIEW_MIME) or {}
    data[PANEL_MIME] = {"model_id": view.get("model_id", ""), "origin": origin or ""}
    return data


def _outcome(cand: CandidateView) -> tuple[str, str]:
    """The candidate's colour and what it reached: its speedup, 'passed' or the failed gate."""
    for gate in GATE_NAMES:
        if cand.gates[gate].status == GATE_FAIL:
            return _FAIL_COLOR, f"failed {gate}"
    if cand.verdict == GATE_PASS:
        if cand.speedup is not None:
            return _PASS_COLOR, f"{cand.speedup:.2f}x"
        return _PASS_COLOR, "passed"
    return _WAIT_COLOR, "not gated"


def snapshot_svg(state: SessionState) -> str | None:
    """An SVG chart of the session's candidates, or None before the first one.

    A candidate with a verified speedup is a bar of that height against a 1x line; one that
    passed untimed (the CPU) is a full-height green bar labelled "passed"; one that failed a
    gate is a short red bar naming the gate; one not gated yet is grey.
    """
    cands = list(state.candidates.values())
    if not cands:
        return None
    timed = [c.speedup for c in cands if c.speedup is not None and c.verdict == GATE_PASS]
    top = max([1.0, *timed]) * 1.1
    # Wide enough for the bars, the legend beside them, and the title and note below.
    width = max(_LEFT + _GAP + len(cands) * (_BAR_WIDTH + _GAP) + 160, _MIN_WIDTH)
    height = _TOP + _PLOT_HEIGHT + 48
    base = _TOP + _PLOT_HEIGHT
    title = f"KernelOPT {state.problem or 'session'}: {len(cands)} candidate(s)"
    if state.best:
        title += f", best {state.best}"
    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' font-family='sans-serif' font-size='11'>",
        f"<rect width='{width}' height='{height}' fill='white'/>",
        f"<text x='{_LEFT}' y='18' font-size='13' font-weight='bold'>{html.escape(title)}</text>",
        f"<line x1='{_LEFT}' y1='{base}' x2='{width - 160}' y2='{base}' stroke='#444'/>",
    ]
    if timed:
        one = base - _PLOT_HEIGHT / top
        parts.append(
            f"<line x1='{_LEFT}' y1='{one:.1f}' x2='{width - 160}' y2='{one:.1f}' "
            "stroke='#444' stroke-dasharray='4 3'/>"
            f"<text x='{_LEFT - 6}' y='{one + 4:.1f}' text-anchor='end'>1x</text>"
        )
    for i, cand in enumerate(cands):
        color, said = _outcome(cand)
        if cand.speedup is not None and cand.verdict == GATE_PASS:
            bar = _PLOT_HEIGHT * cand.speedup / top
        elif color == _PASS_COLOR:
            bar = _PLOT_HEIGHT * (1.0 / top if timed else 0.8)
        else:
            bar = _PLOT_HEIGHT * 0.25
        x = _LEFT + _GAP + i * (_BAR_WIDTH + _GAP)
        star = "★" if cand.id == state.best else ""
        parts.append(
            f"<rect x='{x}' y='{base - bar:.1f}' width='{_BAR_WIDTH}' height='{bar:.1f}' "
            f"fill='{color}'><title>{html.escape(f'{cand.id}: {said}')}</title></rect>"
            f"<text x='{x + _BAR_WIDTH / 2}' y='{base + 14}' text-anchor='middle'>"
            f"{html.escape(cand.id)}{star}</text>"
            f"<text x='{x + _BAR_WIDTH / 2}' y='{base - bar - 4:.1f}' text-anchor='middle' "
            f"font-size='9'>{html.escape(said)}</text>"
        )
    legend_x = width - 150
    for row, (color, text) in enumerate(
        (
            (_PASS_COLOR, "passed the gates"),
            (_FAIL_COLOR, "failed a gate"),
            (_WAIT_COLOR, "not gated"),
        )
    ):
        y = _TOP + 10 + row * 18
        parts.append(
            f"<rect x='{legend_x}' y='{y - 9}' width='10' height='10' fill='{color}'/>"
            f"<text x='{legend_x + 16}' y='{y}'>{text}</text>"
        )
    axis = "speedup (x vs baseline)" if timed else "gate outcome (nothing timed)"
    parts.append(
        f"<text x='14' y='{base - _PLOT_HEIGHT / 2:.1f}' text-anchor='middle' "
        f"transform='rotate(-90 14 {base - _PLOT_HEIGHT / 2:.1f})'>{axis}</text>"
        f"<text x='{_LEFT}' y='{base + 34}' fill='#555'>candidates in the order they were "
        "made (★ the best)</text></svg>"
    )
    return "".join(parts)


def snapshot_bundle(state: SessionState) -> dict[str, Any]:
    """The snapshot image's output: the SVG chart (none before the first candidate) and a line
    of plain text for viewers that draw no images."""
    svg = snapshot_svg(state)
    if svg is None:
        return {"text/plain": "KernelOPT: no candidate yet"}
    best = f"; best {state.best}" if state.best else ""
    return {
        "image/svg+xml": svg,
        "text/plain": f"KernelOPT: {len(state.candidates)} candidate(s){best}",
    }
