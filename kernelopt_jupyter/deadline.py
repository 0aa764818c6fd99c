"""A whole run's deadline on one clock.

``--time-limit`` bounds a search, analysis included. Every layer that asks "how long is left"
(the session, the search, the analysis, the gates) reads one :class:`Deadline` made when the
run began, so they all count on ``time.monotonic()`` from the same start. The verifier's
options still take the deadline as a monotonic moment (:attr:`Deadline.at`): that is the
process boundary's plain number.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Deadline:
    """When a run began (``time.monotonic()``) and how many seconds it may take.

    ``limit_s`` None means no limit: :meth:`left` is None and :meth:`reached` never true, but
    :meth:`elapsed` still counts (the budget's clock).
    """

    started: float
    limit_s: float | None = None

    @classmethod
    def start(cls, limit_s: float | None = None) -> Deadline:
        """A deadline ``limit_s`` seconds from now (None or 0: no limit, the clock starts)."""
        return cls(time.monotonic(), float(limit_s) if limit_s else None)

    @property
    def at(self) -> float | None:
        """The deadline as a ``time.monotonic()`` value, or None without a limit."""
        return None if self.limit_s is None else self.started + self.limit_s

    @property
    def limited(self) -> bool:
        """True when the run has a time limit."""
        return self.limit_s is not None

    def elapsed(self) -> float:
        """Seconds since the run began."""
        return time.monotonic() - self.started

    def left(self) -> float | None:
        """Seconds before the deadline (0 once it has passed), or None without a limit."""
        at = self.at
        return None if at is None else max(0.0, at - time.monotonic())

    def reached(self) -> bool:
        """True once the deadline has passed (never without a limit)."""
        at = self.at
        return at is not None and time.monotonic() >= at

    def cap(self, seconds: float) -> float:
        """``seconds``, or what is left before the deadline when that is less."""
        left = self.left()
        return seconds if left is None else min(seconds, left)

    def share(self, fraction: float) -> Deadline:
        """The same start with ``fraction`` of the limit (itself without a limit): a phase
        that must leave the rest of the run to what follows it."""
        if self.limit_s is None:
            return self
        return Deadline(self.started, self.limit_s * fraction)
