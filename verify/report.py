"""What a verification returns: options in, gate results and a report out (plain data)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from kernelopt_jupyter import defaults

GateStatus = Literal["pass", "fail", "skipped"]

#: The gates in contract order; they run in this order and stop at the first failure.
GATE_NAMES: tuple[str, ...] = ("static", "correctness", "fp64", "performance")

#: A decided gate's status (``GateStatus``), the one home of these words.
GATE_PASS: GateStatus = "pass"
GATE_FAIL: GateStatus = "fail"
GATE_SKIPPED: GateStatus = "skipped"
GATE_STATUSES: tuple[GateStatus, ...] = (GATE_PASS, GATE_FAIL, GATE_SKIPPED)
#: What a live view (panel, progress) shows before a gate is decided.
GATE_PENDING = "pending"
GATE_RUNNING = "running"
VIEW_GATE_STATUSES: tuple[str, ...] = (*GATE_STATUSES, GATE_RUNNING, GATE_PENDING)

#: The contract's per-gate fields, copied from ``metrics`` to the top level of a gate's JSON.
_CONTRACT_FIELDS: dict[str, dict[str, Any]] = {
    "correctness": {"seeds": [], "max_abs_err": None},
    "fp64": {"err_ratio": None},
    "performance": {"speedup": None},
}


@dataclass(frozen=True)
class VerifyOptions:
    """How to verify: device, seeds, limits and which baselines the performance gate races.

    ``dispatch_only`` admits a candidate that launches no Triton kernel (it only re-routes ops
    between vendor libraries); a candidate may also declare it with a module-level
    ``KERNELOPT_DISPATCH_ONLY = True``. ``fp64_factor`` is how many times the fp32 reference's
    own error against float64 a candidate may have (whether or not it met the strict
    tolerance). ``seed`` fixes the verification's schedule (input seeds, extra calls,
    perturbation, reloaded weights); None draws a fresh one, written in the verdict.
    ``time_on_cpu`` runs the performance gate's protocol on the CPU too (for tests of that
    protocol: interpreter times mean nothing, and the gate's verdict says so). ``deadline``
    (a ``time.monotonic()`` value) cancels the verification at that moment: its workers are
    killed and :class:`VerificationCancelled` is raised instead of a verdict.
    """

    device: str = "auto"
    seeds: int = defaults.SEEDS
    time_limit_s: float = defaults.HANG_LIMIT_S
    dispatch_only: bool = False
    fp64_factor: float = 10.0
    baselines: tuple[str, ...] = ("eager",)
    run_performance: bool = True
    seed: int | None = None
    time_on_cpu: bool = False
    deadline: float | None = None

    #: A worker that timed out this close to the deadline was ended by it.
    DEADLINE_MARGIN_S: ClassVar[float] = 0.5

    def bounded(self, limit_s: float) -> float:
        """``limit_s``, cut to what is left before the deadline; raises
        :class:`VerificationCancelled` when nothing is left."""
        if self.deadline is None:
            return limit_s
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise VerificationCancelled("the deadline passed before the verification started")
        return min(limit_s, left)

    def late(self) -> bool:
        """True once the deadline has (all but) passed: a timeout now is the deadline's."""
        return (
            self.deadline is not None and time.monotonic() >= self.deadline - self.DEADLINE_MARGIN_S
        )


class VerificationCancelled(Exception):
    """The verification's ``deadline`` passed before it could decide: no verdict."""


@dataclass
class GateResult:
    """One gate's verdict with a one-line diagnostic and its measurements."""

    name: str
    status: GateStatus
    detail: str
    metrics: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """True when the gate ran and passed."""
        return self.status == "pass"

    def to_dict(self) -> dict[str, Any]:
        """The gate's object in ``verify --json`` (contract fields plus ``metrics``)."""
        out: dict[str, Any] = {"name": self.name, "status": self.status, "detail": self.detail}
        for key, default in _CONTRACT_FIELDS.get(self.name, {}).items():
            out[key] = _json_safe(self.metrics.get(key, default))
        out["metrics"] = _json_safe(self.metrics)
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> GateResult:
        """A gate read back from :meth:`to_dict` (a saved log); raises ValueError if malformed."""
        status = raw.get("status")
        if status not in GATE_STATUSES:
            raise ValueError(f"gate {raw.get('name')!r} has status {status!r}")
        metrics = raw.get("metrics", {})
        if not isinstance(metrics, dict):
            raise ValueError(f"gate {raw.get('name')!r} has metrics that are not an object")
        return cls(str(raw["name"]), status, str(raw.get("detail", "")), dict(metrics))


@dataclass
class VerifyReport:
    """The outcome of the four gates for one candidate."""

    problem: str
    candidate: str
    device: str
    gates: list[GateResult]
    dispatch_only: bool = False
    seconds: float = 0.0
    #: The verification's schedule seed (``--seed`` reproduces the run), None when none ran.
    seed: int | None = None

    @property
    def verdict(self) -> Literal["pass", "fail"]:
        """``pass`` when every gate that ran passed (skipped gates do not count)."""
        return "fail" if any(g.status == "fail" for g in self.gates) else "pass"

    @property
    def speedup(self) -> float | None:
        """The performance gate's speedup against the fastest baseline, or None."""
        gate = self.gate("performance")
        value = gate.metrics.get("speedup") if gate is not None else None
        return float(value) if isinstance(value, int | float) else None

    def gate(self, name: str) -> GateResult | None:
        """The gate called ``name``, if present."""
        return next((g for g in self.gates if g.name == name), None)

    @property
    def failed_gate(self) -> str | None:
        """Name of the gate that failed, or None when the verdict is pass."""
        return next((g.name for g in self.gates if g.status == "fail"), None)

    def to_dict(self) -> dict[str, Any]:
        """Exactly the ``verify --json`` object of the contract (schema 1), plus extra fields."""
        return {
            "schema": 1,
            "problem": self.problem,
            "candidate": self.candidate,
            "device": self.device,
            "verdict": self.verdict,
            "gates": [g.to_dict() for g in self.gates],
            "dispatch_only": self.dispatch_only,
            "seconds": round(self.seconds, 3),
            "seed": self.seed,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> VerifyReport:
        """A report read back from :meth:`to_dict` (a saved log only: the search passes the
        object itself). Raises ValueError for a shape ``to_dict`` does not write."""
        if raw.get("schema") != 1 or not isinstance(raw.get("gates"), list):
            raise ValueError("not a schema-1 verify report")
        try:
            return cls(
                problem=str(raw["problem"]),
                candidate=str(raw["candidate"]),
                device=str(raw["device"]),
                gates=[GateResult.from_dict(g) for g in raw["gates"]],
                dispatch_only=bool(raw.get("dispatch_only", False)),
                seconds=float(raw.get("seconds", 0.0)),
                seed=int(raw["seed"]) if isinstance(raw.get("seed"), int) else None,
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"malformed verify report: {exc!r}") from None


def _json_safe(value: Any) -> Any:
    """Plain JSON data: non-finite floats become None (JSON has no NaN), tuples become lists."""
    if isinstance(value, bool) or value is None or isinstance(value, str | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return str(value)


def skipped_after(name: str, failed: str) -> GateResult:
    """A gate that did not run because an earlier one failed."""
    return GateResult(name, "skipped", f"not run: the {failed} gate failed")
