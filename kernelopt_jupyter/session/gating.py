"""Gating under a deadline: a verification that the search's time limit can cut off.

The verifier runs each candidate in worker processes with its own hang limits, which know
nothing of the whole search's ``--time-limit``. Under a deadline the session runs the whole
verification inside one more worker whose limit is the time left: at the deadline that worker
is killed, and with it everything below it (the verifier's workers die with their parent), so
no gate work outlives the search. Without a deadline the verification runs directly (no extra
process start).
"""

from __future__ import annotations

import time

from kernelopt_jupyter.agents.search import DeadlineReached
from kernelopt_jupyter.device import Device, DeviceError
from kernelopt_jupyter.problem import Problem, ProblemError
from kernelopt_jupyter.verify.report import VerifyOptions, VerifyReport

#: A verification is not started with less time than this left: it could not finish.
MIN_GATE_S = 2.0
#: Beyond three times its per-run hang limit (checker, compile check, timing), what a
#: verification may take at most: its workers' start-up allowances.
VERIFY_ALLOWANCE_S = 120.0


def worst_case_s(options: VerifyOptions) -> float:
    """The longest a verification can run before the verifier's own limits stop it."""
    return 3 * options.time_limit_s + VERIFY_ALLOWANCE_S


def verify_task(
    problem: Problem, source: str, options: VerifyOptions, candidate_path: str
) -> VerifyReport:
    """Worker entry: the ordinary verification, run one process down."""
    from kernelopt_jupyter.verify import verify_candidate

    return verify_candidate(problem, source, options, candidate_path)


def verify_before(
    problem: Problem,
    source: str,
    options: VerifyOptions,
    candidate_path: str,
    *,
    device: Device,
    deadline: float,
) -> VerifyReport:
    """Verify ``source``, cancelled at ``deadline`` (``time.monotonic()``).

    When the verifier's own limits end it before the deadline anyway, it runs here directly.

    Raises :class:`DeadlineReached` when there is no time to start or the deadline cut the
    verification off; ``ProblemError`` / ``DeviceError`` as the verifier itself does.
    """
    from kernelopt_jupyter.worker import run_task

    left = deadline - time.monotonic()
    if left < MIN_GATE_S:
        raise DeadlineReached("time limit reached before the gates could start")
    if worst_case_s(options) < left:
        # It ends before the deadline whatever the candidate does: no extra process to start
        # (a worker start costs a torch import, about a second per candidate).
        from kernelopt_jupyter.verify import verify_candidate

        return verify_candidate(problem, source, options, candidate_path)
    result = run_task(
        "kernelopt_jupyter.session.gating:verify_task",
        {
            "problem": problem,
            "source": source,
            "options": options,
            "candidate_path": candidate_path,
        },
        device=device,
        time_limit_s=left,
    )
    if result.timed_out:
        raise DeadlineReached(f"time limit reached after {left:.0f} s of gating")
    if not result.ok:
        if result.error_type == "ProblemError":
            raise ProblemError(result.error)
        if result.error_type == "DeviceError":
            raise DeviceError(result.error)
        # The verifier turns every candidate failure into a gate; this is the harness failing.
        raise RuntimeError(f"the verification worker failed: {result.describe()}")
    report = result.value
    if not isinstance(report, VerifyReport):
        raise RuntimeError(f"the verification worker returned {type(report).__name__}")
    return report
