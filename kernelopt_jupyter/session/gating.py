"""Gating under a deadline: a verification that the search's time limit can cut off.

The verifier bounds each of its workers by the options' ``deadline`` and kills the one in
flight when it passes, with everything below it (the verifier's processes die with their
worker), so no gate work outlives the search; the search is told (``DeadlineReached``) instead
of getting a false verdict.
"""

from __future__ import annotations

from kernelopt_jupyter.agents.search import DeadlineReached
from kernelopt_jupyter.deadline import Deadline
from kernelopt_jupyter.device import Device
from kernelopt_jupyter.problem import Problem
from kernelopt_jupyter.verify.report import VerifyOptions, VerifyReport
from kernelopt_jupyter.verify.service import VerifyService

#: A verification is not started with less time than this left: it could not finish.
MIN_GATE_S = 2.0


def verify_before(
    problem: Problem,
    source: str,
    options: VerifyOptions,
    candidate_path: str,
    *,
    device: Device,
    deadline: Deadline,
    service: VerifyService | None = None,
    min_s: float = MIN_GATE_S,
) -> VerifyReport:
    """Verify ``source``, cancelled at ``deadline`` (the run's). None is started
    with less than ``min_s`` left (at least ``MIN_GATE_S``): the caller's estimate of the
    least a verification takes, so work that could not finish is not begun.

    The verifier bounds each of its workers by the deadline and kills the one in flight when
    it passes (with everything below it), so no gate work outlives the search and no extra
    process is started for the deadline's sake.

    Raises :class:`DeadlineReached` when there is no time to start or the deadline cut the
    verification off; ``ProblemError`` / ``DeviceError`` as the verifier itself does.
    """
    from dataclasses import replace

    from kernelopt_jupyter.verify import verify_candidate
    from kernelopt_jupyter.verify.report import VerificationCancelled

    left = deadline.left()
    if left is not None and left < max(MIN_GATE_S, min_s):
        raise DeadlineReached(
            f"time limit reached before the gates could start ({left:.1f} s left, "
            f"a verification takes about {max(MIN_GATE_S, min_s):.1f} s)",
            begun=False,
        )
    try:
        return verify_candidate(
            problem,
            source,
            replace(options, deadline=deadline.at),
            candidate_path=candidate_path,
            service=service,
        )
    except VerificationCancelled:
        raise DeadlineReached(f"time limit reached after {left or 0.0:.0f} s of gating") from None
