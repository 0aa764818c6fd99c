"""A candidate: plain source text plus where it came from.

Every candidate, from an agent, a recording or a person typing in the panel, is this record and
goes through the same four gates.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Candidate:
    """Source of a ``ModelNew`` (or kernel entry) with its lineage."""

    id: str
    source: str
    parent: str | None = None
    agent: str = "human"
    plan_id: str | None = None
    dispatch_only: bool = False
    note: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for events and result.json."""
        return asdict(self)


def unified_diff(old: str, new: str, old_name: str = "parent", new_name: str = "candidate") -> str:
    """A unified diff between two sources (the panel renders it side by side)."""
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=old_name,
            tofile=new_name,
        )
    )
