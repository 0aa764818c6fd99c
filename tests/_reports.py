"""Stand-in verifier reports for search tests: the real ``VerifyReport`` object, never a dict.

A fake gate runner builds its verdicts here, so the search sees exactly the type and the
metrics layout the verifier produces (timings in the performance gate's ``metrics``).
"""

from __future__ import annotations

from kernelopt_jupyter.verify.report import GATE_NAMES, GateResult, VerifyReport, skipped_after


def report_of(
    candidate: str,
    *,
    fail_at: str | None = None,
    detail: str = "",
    ms: float | None = None,
    speedup: float | None = None,
    problem: str = "problem.py",
    device: str = "cuda",
) -> VerifyReport:
    """Gates in contract order: pass up to ``fail_at`` (which fails with ``detail``), the rest
    skipped; with no failure the performance gate is timed at ``ms`` or skipped (no GPU)."""
    gates: list[GateResult] = []
    for name in GATE_NAMES:
        if fail_at is not None and any(g.status == "fail" for g in gates):
            gates.append(skipped_after(name, fail_at))
        elif name == fail_at:
            gates.append(GateResult(name, "fail", detail))
        elif name == "performance" and ms is None:
            gates.append(GateResult(name, "skipped", "no GPU"))
        elif name == "performance":
            metrics = {"candidate_ms": ms, "speedup": speedup, "ci_low": None, "ci_high": None}
            gates.append(GateResult(name, "pass", f"{ms:.4f} ms", metrics))
        else:
            gates.append(GateResult(name, "pass", ""))
    return VerifyReport(problem, candidate, device, gates)
