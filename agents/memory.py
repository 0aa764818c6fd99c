"""Experience memory: what worked (or hurt) for which pattern, kept on disk across searches.

Following the paper's rule, a step is remembered when it gave at least a 1.05x speedup over its
parent or a regression of 1.20x or worse; the Planner is shown the most relevant items (at most
eight). The file is plain JSON under ``$KERNELOPT_HOME`` (default ``~/.cache/kernelopt``).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from kernelopt_jupyter.agents.base import ExperienceItem

GAIN_TO_KEEP = 1.05
REGRESSION_TO_KEEP = 1.20
SHOWN_TO_PLANNER = 8
MAX_ITEMS = 200
#: The most a move's priority moves for what it did on the same op family before (log units):
#: a lesson from another problem hints, it does not decide.
FAMILY_BOOST_CAP = 0.5


def default_memory_path() -> Path:
    """Where the experience file lives unless a search says otherwise."""
    home = os.environ.get("KERNELOPT_HOME") or Path.home() / ".cache" / "kernelopt"
    return Path(home) / "experience.json"


def worth_keeping(outcome: float) -> bool:
    """The paper's thresholds: a clear gain or a clear regression is a lesson."""
    return outcome >= GAIN_TO_KEEP or outcome <= 1.0 / REGRESSION_TO_KEEP


class ExperienceMemory:
    """A small, thread-safe JSON store of :class:`ExperienceItem` records."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.items: list[ExperienceItem] = []
        if path is not None and path.is_file():
            try:
                raw = json.loads(path.read_text())
                self.items = [ExperienceItem.from_dict(item) for item in raw.get("items", [])]
            except (json.JSONDecodeError, TypeError, KeyError, ValueError, AttributeError):
                # A damaged memory file must not stop a search: start afresh, keep the old one.
                path.replace(path.with_suffix(".corrupt.json"))

    def add(self, item: ExperienceItem) -> bool:
        """Store ``item`` if it clears the thresholds; returns whether it was kept."""
        if not worth_keeping(item.outcome):
            return False
        with self._lock:
            self.items.append(item)
            self.items = self.items[-MAX_ITEMS:]
            self._save()
        return True

    def relevant(self, patterns: set[str], limit: int = SHOWN_TO_PLANNER) -> list[ExperienceItem]:
        """Items whose pattern matches one of ``patterns``, strongest lessons first."""
        with self._lock:
            matching = [i for i in self.items if i.pattern in patterns]
        matching.sort(key=lambda i: -abs(_log(i.outcome)))
        return matching[:limit]

    def score(self, pattern_set: set[str], action: str) -> float:
        """Mean log-speedup the memory has seen for ``action`` on these patterns (0: unknown)."""
        seen = [
            _log(i.outcome) for i in self.relevant(pattern_set, MAX_ITEMS) if i.action == action
        ]
        return sum(seen) / len(seen) if seen else 0.0

    def family_score(self, families: set[str], action: str) -> float:
        """Mean log-speedup of ``action`` where it targeted one of ``families`` before (0:
        never), within ``FAMILY_BOOST_CAP``. A step is kept once per pattern of its problem:
        it counts once here."""
        if not families:
            return 0.0
        with self._lock:
            seen = {
                (i.problem, i.outcome, i.family): _log(i.outcome)
                for i in self.items
                if i.action == action and i.family in families
            }
        if not seen:
            return 0.0
        mean = sum(seen.values()) / len(seen)
        return max(-FAMILY_BOOST_CAP, min(FAMILY_BOOST_CAP, mean))

    def _save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"items": [i.to_dict() for i in self.items]}, indent=1))
        tmp.replace(self.path)


def _log(x: float) -> float:
    import math

    return math.log(max(x, 1e-9))
