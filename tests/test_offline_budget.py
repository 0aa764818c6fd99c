"""The agents' ``budget_left`` hook: seconds before the search's deadline, None without one."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from test_search import make_search

from kernelopt_jupyter.agents.memory import ExperienceMemory
from kernelopt_jupyter.agents.offline import OfflinePolicy
from kernelopt_jupyter.deadline import Deadline


class _Recording(OfflinePolicy):
    """The offline policy, noting what ``budget_left`` each Planner call saw."""

    def __init__(self) -> None:
        super().__init__(ExperienceMemory(None))
        self.seen: list[float | None] = []

    def plan(self, ctx: Any, report: Any, parent: Any, n: int, io: Any) -> Any:
        self.seen.append(ctx.budget_left)
        return super().plan(ctx, report, parent, n, io)


def test_budget_left_is_none_without_a_deadline(tmp_path: Path) -> None:
    search = make_search(tmp_path, max_candidates=3)
    search.policy = policy = _Recording()
    search.run()
    assert policy.seen and all(s is None for s in policy.seen)


def test_budget_left_counts_down_to_the_deadline(tmp_path: Path) -> None:
    search = make_search(tmp_path, max_candidates=4, deadline=Deadline.start(300.0))
    search.policy = policy = _Recording()
    search.run()
    seen = [s for s in policy.seen if s is not None]
    assert len(seen) == len(policy.seen) >= 1
    assert all(0.0 < s <= 300.0 for s in seen)
    assert seen == sorted(seen, reverse=True)


def test_budget_left_counts_from_when_the_run_began(tmp_path: Path) -> None:
    """The run began (the analysis) before the search: that time is no longer left."""
    search = make_search(
        tmp_path, max_candidates=3, deadline=Deadline(time.monotonic() - 540.0, 600.0)
    )
    search.policy = policy = _Recording()
    search.run()
    assert policy.seen and all(s is not None and s <= 60.0 for s in policy.seen)
