"""A gate's diagnostics for people: one sentence, the numbers that matter, and the full record
behind a disclosure (the verifier's detail and metrics, as they were recorded)."""

from __future__ import annotations

import html
import json
from typing import Any

from kernelopt_jupyter.session.state import GateView

#: What each gate is, in words.
_GATE_TITLE = {
    "static": "Static checks",
    "correctness": "Correctness",
    "fp64": "The float64 referee",
    "performance": "The performance gate",
}
_VERB = {
    "pass": "passed",
    "fail": "failed",
    "skipped": "was skipped",
    "running": "is running",
    "pending": "has not run yet",
}
#: The metrics worth a line of their own, per gate, with their names in words.
KEY_NUMBERS: dict[str, tuple[tuple[str, str], ...]] = {
    "static": (("launches", "Triton launches per forward"), ("dispatch_only", "dispatch-only")),
    "correctness": (
        # The verifier counts the calls that passed (a failing call stops the gate).
        ("calls", "calls that passed"),
        ("seeds", "input seeds"),
        ("max_abs_err", "largest absolute error"),
        ("strict", "within the strict tolerance"),
    ),
    "fp64": (("err_ratio", "error / the fp32 reference's error"),),
    "performance": (
        ("candidate_ms", "candidate (ms)"),
        ("eager_ms", "eager (ms)"),
        ("speedup", "speedup"),
        ("ci_low", "95% interval, low"),
        ("ci_high", "95% interval, high"),
    ),
}
#: The sentence keeps this many characters of the verifier's detail; the rest is behind
#: the disclosure.
SENTENCE_CHARS = 240


def _number(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


def verdict_sentence(view: GateView) -> str:
    """One sentence: which gate, what it decided, and the start of why."""
    said = f"{_GATE_TITLE.get(view.name, view.name)} {_VERB.get(view.status, view.status)}"
    detail = " ".join((view.detail or "").split())
    if not detail:
        return said + "."
    if len(detail) > SENTENCE_CHARS:
        detail = detail[:SENTENCE_CHARS].rsplit(" ", 1)[0] + " …"
    return f"{said}: {detail}"


def key_numbers(view: GateView) -> list[tuple[str, str]]:
    """The gate's metrics that matter, in words, leaving out those it never measured."""
    rows = []
    for key, words in KEY_NUMBERS.get(view.name, ()):
        value = view.metrics.get(key)
        if value is None or value == [] or value == {}:
            continue
        rows.append((words, _number(value)))
    return rows


def gate_detail_html(cid: str, view: GateView, explanation: str = "") -> str:
    """The panel's view of one gate of candidate ``cid``."""
    numbers = "".join(
        f"<tr><td style='padding:0 12px 0 0;color:#555'>{html.escape(k)}</td>"
        f"<td>{html.escape(v)}</td></tr>"
        for k, v in key_numbers(view)
    )
    record = html.escape(view.detail or "(no detail)")
    metrics = html.escape(json.dumps(view.metrics, indent=1, default=str)) if view.metrics else ""
    return (
        f"<div class='kernelopt-gate-sentence'><b>{html.escape(cid)} · {view.name}:</b> "
        f"{html.escape(verdict_sentence(view))}</div>"
        + (f"<table class='kernelopt-gate-numbers'>{numbers}</table>" if numbers else "")
        + (f"<div>{html.escape(explanation)}</div>" if explanation else "")
        + "<details class='kernelopt-gate-record'><summary>full record</summary>"
        f"<pre style='white-space:pre-wrap;margin:2px 0'>{record}</pre>"
        + (
            f"<pre style='max-height:320px;overflow:auto;margin:2px 0'>{metrics}</pre>"
            if metrics
            else ""
        )
        + "</details>"
    )
