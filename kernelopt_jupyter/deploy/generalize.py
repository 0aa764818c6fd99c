"""Verify one candidate at every shape set: which shapes its kernels are correct for.

Each shape set becomes its own problem (``shapes.shape_problem``) and goes through the public
verifier (``verify_candidate``): correctness and the float64 referee at that shape; the
performance gate runs only at the problem's own shape (a timing per shape would cost more
than the search). A candidate that passes at its own shape and fails elsewhere is
*shape-specialized*: its guard admits the passing shapes only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from kernelopt_jupyter.deploy.evidence import hard_coded_sizes, shape_sizes
from kernelopt_jupyter.deploy.shapes import ShapeSet, shape_problem
from kernelopt_jupyter.device import resolve_device
from kernelopt_jupyter.problem import Problem, ProblemError
from kernelopt_jupyter.verify import VerifyOptions, VerifyReport, verify_candidate
from kernelopt_jupyter.worker import run_task

ShapeVerdict = Literal["pass", "fail", "skipped"]


@dataclass
class ShapeCheck:
    """The verifier's verdict at one shape set (``skipped``: the reference cannot run there)."""

    shape: ShapeSet
    verdict: ShapeVerdict
    detail: str
    failed_gate: str | None = None
    max_abs_err: float | None = None
    err_ratio: float | None = None
    speedup: float | None = None
    signature: list[dict[str, Any]] | None = None
    outputs: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data (the export manifest and ``export --json``)."""
        return {
            **self.shape.to_dict(),
            "verdict": self.verdict,
            "detail": self.detail,
            "failed_gate": self.failed_gate,
            "max_abs_err": self.max_abs_err,
            "err_ratio": self.err_ratio,
            "speedup": self.speedup,
            "signature": self.signature,
            "outputs": self.outputs,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ShapeCheck:
        """Read back :meth:`to_dict`; raises ValueError on another shape."""
        if raw.get("verdict") not in ("pass", "fail", "skipped"):
            raise ValueError(f"shape check {raw.get('name')!r} has verdict {raw.get('verdict')!r}")
        return cls(
            ShapeSet.from_dict(raw),
            raw["verdict"],
            str(raw.get("detail", "")),
            raw.get("failed_gate"),
            raw.get("max_abs_err"),
            raw.get("err_ratio"),
            raw.get("speedup"),
            raw.get("signature"),
            raw.get("outputs"),
        )


@dataclass
class ShapeReport:
    """Every shape set's check; the verified ones make the guard."""

    device: str
    checks: list[ShapeCheck] = field(default_factory=list)
    #: The reference's weight dtypes (what the kernels were verified with).
    state_dtypes: list[str] = field(default_factory=list)
    #: The module mode verified in: the reference as constructed is in training mode.
    training: bool = False

    @property
    def passed(self) -> list[ShapeCheck]:
        """The shape sets the candidate is verified at."""
        return [c for c in self.checks if c.verdict == "pass"]

    @property
    def own_passed(self) -> bool:
        """Whether it passes at the problem's own shape (else nothing can be deployed)."""
        return bool(self.checks) and self.checks[0].verdict == "pass"

    @property
    def specialized(self) -> bool:
        """Passes at its own shape but fails at another: correct only where it was tuned."""
        return self.own_passed and any(c.verdict == "fail" for c in self.checks)

    def guard_set(self) -> dict[str, Any]:
        """The guard's ``verified`` data: the device and each passing shape's signature."""
        return {
            "device": self.device,
            "signatures": [c.signature for c in self.passed if c.signature is not None],
            "outputs": [c.outputs for c in self.passed if c.signature is not None],
            "shapes": [c.shape.name for c in self.passed if c.signature is not None],
            "state_dtypes": list(self.state_dtypes),
            "training": self.training,
        }

    def summary(self) -> str:
        """One line: how many shapes pass, and whether the candidate is shape-specialized."""
        failed = [c.shape.name for c in self.checks if c.verdict == "fail"]
        text = f"verified at {len(self.passed)} of {len(self.checks)} shape set(s)"
        if self.specialized:
            text += (
                f"; shape-specialized: fails at {', '.join(failed)} "
                "(the guard runs the reference there)"
            )
        return text

    def to_dict(self) -> dict[str, Any]:
        """Plain data (``export --json``'s ``shapes``)."""
        return {
            "device": self.device,
            "specialized": self.specialized,
            "summary": self.summary(),
            "checks": [c.to_dict() for c in self.checks],
        }


def _metric(report: VerifyReport, gate: str, key: str) -> float | None:
    for g in report.gates:
        if g.name == gate and g.metrics.get(key) is not None:
            value = g.metrics[key]
            return float(value) if isinstance(value, int | float) else None
    return None


def verify_shapes(
    problem: Problem,
    source: str,
    shapes: list[ShapeSet],
    options: VerifyOptions,
    *,
    on_check: Callable[[ShapeCheck], None] | None = None,
) -> ShapeReport:
    """Verify ``source`` at each shape set (the first is the problem's own), after one worker
    ran the reference at each for its input signature and output layout. A shape where the
    reference cannot run is skipped; at the own shape that is a ProblemError.
    ``options.device`` must be resolved."""
    report = ShapeReport(device=options.device)
    probed = run_task(
        "kernelopt_jupyter.deploy.probe:probe_shapes",
        {
            "sources": [shape_problem(problem, s).source for s in shapes],
            "path": problem.path,
            "device": options.device,
        },
        device=resolve_device(options.device),
        time_limit_s=max(options.time_limit_s, 60.0) * max(len(shapes), 1),
    )
    if not probed.ok:
        raise ProblemError(f"{problem.path}: running the reference failed: {probed.describe()}")
    own_sizes: set[int] = set()
    for number, (shape, found) in enumerate(zip(shapes, probed.value)):
        if "error" in found:
            if number == 0:
                raise ProblemError(f"{problem.path}: the reference fails: {found['error']}")
            check = ShapeCheck(shape, "skipped", f"the reference cannot run here: {found['error']}")
        else:
            try:
                check = _verify_one(problem, source, shape, options, first=number == 0)
            except ProblemError as exc:  # the verifier could not run the reference there
                if number == 0:
                    raise
                check = ShapeCheck(shape, "skipped", f"the reference cannot run here: {exc}")
            else:
                check.signature, check.outputs = found["signature"], found["outputs"]
                if number == 0:
                    own_sizes = shape_sizes(check.signature, check.outputs)
                    report.state_dtypes = list(found.get("state_dtypes", []))
                    report.training = bool(found.get("training", False))
                elif check.verdict == "pass":
                    _hard_coded_check(check, source, own_sizes)
        report.checks.append(check)
        if on_check is not None:
            on_check(check)
    return report


def _verify_one(
    problem: Problem, source: str, shape: ShapeSet, options: VerifyOptions, *, first: bool
) -> ShapeCheck:
    opts = options if first else replace(options, run_performance=False)
    verdict = verify_candidate(shape_problem(problem, shape), source, opts)
    failed = verdict.failed_gate
    max_err = _metric(verdict, "correctness", "max_abs_err")
    ratio = _metric(verdict, "fp64", "err_ratio")
    # The guard is about correctness at a shape: a winner that is correct here but not
    # faster than the baseline (now, on this setup) keeps the shape, and the detail says so.
    slower = failed == "performance"
    if failed is None or slower:
        parts = [f"max abs err {max_err:.3g}" if max_err is not None else "gates pass"]
        if ratio is not None:
            parts.append(f"{ratio:.3g}x the fp32 reference's float64 error")
        if verdict.speedup is not None:
            parts.append(f"{verdict.speedup:.2f}x")
        if slower:
            gate = next(g for g in verdict.gates if g.name == "performance")
            parts.append(f"correct, but the performance gate failed: {gate.detail}")
        detail = "; ".join(parts)
    else:
        detail = next((g.detail for g in verdict.gates if g.name == failed), "failed")
    return ShapeCheck(
        shape,
        "pass" if verdict.verdict == "pass" or slower else "fail",
        detail,
        None if slower else failed,
        max_err,
        ratio,
        verdict.speedup,
    )


def _hard_coded_check(check: ShapeCheck, source: str, own_sizes: set[int]) -> None:
    fixed = hard_coded_sizes(source, own_sizes, shape_sizes(check.signature, check.outputs))
    if fixed:
        check.verdict = "fail"
        check.failed_gate = "shape"
        check.detail = (
            f"the gates pass here, but the source hard-codes {', '.join(map(str, fixed))} "
            "(sizes of the problem's own shape that differ here); out-of-bounds accesses "
            "can go unseen, so this shape is not admitted"
        )
