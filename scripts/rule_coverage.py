"""Which rewrite rules reach which problems of a KernelBench folder, and which of them end in a
candidate made only of KernelOPT's own kernels and vendor calls (issue 42's survey).

Usage:
    python scripts/rule_coverage.py FOLDER [--json OUT]

FOLDER holds ``level1/ level2/ level3/`` (the development sample). Each problem is shrunk by the
size rule (``kernelopt_jupyter.sizes``, as the CPU tier does), traced and canonicalized, and
every rule in ``REWRITES`` is tried alone and all of them together, exactly as the Planner's
rewrite scan (``agents/rewrites/task.py``) does. Per problem it records the rules that
matched, the candidates offered, those offered as mixed candidates because the rest of the
forward still runs PyTorch compute beside KernelOPT's kernel (``foreign_compute``: the first
such op), and the rules refused; then a table and the counts per level. The folder is read where it lies: its files are other people's code.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kernelopt_jupyter.agents.rewrites.task import RewriteMatch, scan
from kernelopt_jupyter.problem import ProblemError, load_problem
from kernelopt_jupyter.sizes import resolve_sizes

LEVELS = ("level1", "level2", "level3")
#: The outcomes, best first: a candidate of our own kernels; a mixed candidate (our kernels,
#: the rest of the forward in PyTorch compute); only dispatch-level (vendor) rewrites; rules
#: matched but were refused for another reason; nothing; the problem could not be scanned.
OUTCOMES = ("kernels", "foreign", "vendor", "refused", "none", "error")


@dataclass
class Coverage:
    """What the rewrite scan found on one problem."""

    problem: str  # "level/file"
    matched: list[str] = field(default_factory=list)  # rules that fired (offered or refused)
    offered: list[list[str]] = field(default_factory=list)  # each candidate's rule names
    kernels: bool = False  # a candidate launches our own kernels (foreign compute excluded)
    foreign: dict[str, str] = field(default_factory=dict)  # rules -> the PyTorch op left over
    refused: dict[str, str] = field(default_factory=dict)  # rule -> any other reason
    error: str = ""  # the problem could not be loaded, shrunk or traced

    @property
    def outcome(self) -> str:
        """The best thing the scan reached (one of ``OUTCOMES``)."""
        if self.error:
            return "error"
        if self.kernels:
            return "kernels"
        if self.foreign:
            return "foreign"
        if self.offered:
            return "vendor"
        return "refused" if self.refused else "none"

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json``."""
        return {**asdict(self), "outcome": self.outcome}


def _missing_imports(path: Path) -> list[str]:
    """Top-level modules ``path`` imports that this environment lacks (Mamba's ``einops``)."""
    found = re.findall(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)", path.read_text(), re.MULTILINE)
    return sorted({n for n in found if importlib.util.find_spec(n) is None})


def survey_problem(path: Path) -> tuple[Coverage, list[RewriteMatch]]:
    """The scan of one problem file at CPU sizes: its coverage and the candidates offered."""
    cov = Coverage(problem=f"{path.parent.name}/{path.stem}")
    missing = _missing_imports(path)
    if missing:
        cov.error = f"imports {', '.join(missing)}, which this environment lacks"
        return cov, []
    try:
        try:
            problem = load_problem(path)
        except ProblemError as exc:  # random in training mode: eval, as --mode eval asks
            if "--mode eval" not in str(exc):
                raise
            problem = load_problem(path, mode="eval")
        small, _ = resolve_sizes(problem, "auto", "cpu")
        found = scan(small.source, small.path)
    except Exception as exc:  # a problem the engine cannot load is a row, not a crash
        cov.error = f"{type(exc).__name__}: {exc}"[:200]
        return cov, []
    if not found.matches and not found.refused and found.error:
        cov.error = found.error[:200]
    cov.offered = [list(m.names) for m in found.matches]
    cov.kernels = any(m.kernels and not m.beside for m in found.matches)
    matched = {name for m in found.matches for name in m.names}
    cov.foreign = dict(found.mixed)
    for rule, reason in found.refused.items():
        cov.refused[rule] = reason[:200]
        if rule != "combined":
            matched.add(rule)
    cov.matched = sorted(matched)
    return cov, found.matches


def problems(folder: Path) -> list[Path]:
    """Every problem file of ``folder``, level by level, in name order."""
    return sorted(p for level in LEVELS for p in (folder / level).glob("*.py"))


def level_counts(rows: list[Coverage]) -> dict[str, Counter[str]]:
    """Per level, how many problems reached each outcome, and how many any rule matched."""
    counts: dict[str, Counter[str]] = {}
    for row in rows:
        level = counts.setdefault(row.problem.split("/")[0], Counter())
        level["problems"] += 1
        level[row.outcome] += 1
        level["matched"] += bool(row.matched)
    return counts


def table(rows: list[Coverage]) -> str:
    """One line per problem, then the counts per level."""
    lines = [f"{'problem':58} {'outcome':8} rules (foreign op)"]
    for row in rows:
        rules = ",".join(row.matched)
        foreign = ",".join(f"{r}:{op}" for r, op in row.foreign.items())
        note = f" ({foreign})" if foreign else ""
        note += f" [{row.error[:60]}]" if row.error else ""
        lines.append(f"{row.problem[:58]:58} {row.outcome:8} {rules}{note}")
    lines.append("")
    lines.append(
        f"{'level':8} {'problems':>8} {'matched':>8} " + " ".join(f"{o:>8}" for o in OUTCOMES)
    )
    for level, c in level_counts(rows).items():
        cells = " ".join(f"{c[o]:>8}" for o in OUTCOMES)
        lines.append(f"{level:8} {c['problems']:>8} {c['matched']:>8} {cells}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Survey FOLDER, print the table, write ``--json`` if asked."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--json", type=Path, default=None, help="write the rows as JSON here")
    args = parser.parse_args(argv)
    paths = problems(args.folder)
    if not paths:
        print(f"{args.folder}: no level1/ level2/ level3/ problem files", file=sys.stderr)
        return 2
    rows = [survey_problem(p)[0] for p in paths]
    print(table(rows))
    if args.json is not None:
        counts = {level: dict(c) for level, c in level_counts(rows).items()}
        data = {"problems": [r.to_dict() for r in rows], "levels": counts}
        args.json.write_text(json.dumps(data, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
