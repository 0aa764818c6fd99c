"""A candidate: plain source text plus where it came from.

Every candidate, from an agent, a recording or a person typing in the panel, is this record and
goes through the same four gates.
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from kernelopt_jupyter.renaming import rename_class

if TYPE_CHECKING:
    from kernelopt_jupyter.problem import Problem


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


def eager_dispatch_source(problem: Problem) -> str:
    """A dispatch-only candidate: the reference's own ops (vendor libraries) as ``ModelNew``.

    It launches no Triton kernel, so it is marked dispatch-only and counted as such. It wins
    where torch.compile's lowering loses to the vendor library (depthwise convolution, pooling).
    Raises :class:`~kernelopt_jupyter.renaming.RenameError` (a ``ValueError``) when the
    problem defines no top-level ``class Model``.
    """
    if problem.kind != "module":
        raise ValueError("eager dispatch applies to module problems only")
    # Every reference to the class (``super(Model, self)``, ``Model.forward``) follows the
    # rename; strings, comments and other names mentioning Model stay as written.
    source = rename_class(freeze_environment_reads(problem.source), "Model", "ModelNew")
    header = (
        "# Dispatch-only candidate: the reference's operators, routed to the vendor libraries\n"
        "# (cuBLAS/cuDNN) instead of torch.compile's generated kernels.\n"
        "KERNELOPT_DISPATCH_ONLY = True\n"
    )
    return insert_after_imports(source, header)


def freeze_environment_reads(source: str) -> str:
    """``source`` with each top-level assignment that reads the environment (``os.environ``,
    ``os.getenv``: the bundled problems' ``KERNELOPT_SMALL`` switch) replaced by the literal
    it has in this process.

    A candidate may not read the environment (the static gate refuses it), so a candidate
    built from the reference's text carries the reference's sizes as constants instead. The
    statement runs alone with ``os`` in scope (the problem is the user's trusted reference); a
    value that is not a plain literal leaves the statement as it was.
    """
    import os

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    lines = source.splitlines(keepends=True)
    for node in reversed(tree.body):
        if not isinstance(node, ast.Assign) or node.end_lineno is None:
            continue
        text = ast.get_source_segment(source, node) or ""
        if "os.environ" not in text and "os.getenv" not in text:
            continue
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if len(names) != len(node.targets):
            continue
        scope: dict[str, object] = {"os": os}
        try:
            exec(compile(ast.Module(body=[node], type_ignores=[]), "<env>", "exec"), scope)
            value = scope[names[0]]
            literal = repr(value)
            if ast.literal_eval(literal) != value:
                continue
        except Exception:
            continue
        frozen = " = ".join(names) + f" = {literal}  # read from the environment when built"
        lines[node.lineno - 1 : node.end_lineno] = [frozen + "\n"]
    return "".join(lines)


def insert_after_imports(source: str, text: str) -> str:
    """``source`` with ``text`` inserted after its leading imports and docstring."""
    tree = ast.parse(source)
    last = 0
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom) or (
            isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        ):
            last = node.end_lineno or last
        else:
            break
    lines = source.splitlines(keepends=True)
    return "".join(lines[:last]) + "\n" + text + "".join(lines[last:])


def is_dispatch_only(source: str) -> bool:
    """Whether the candidate declares itself dispatch-only."""
    return re.search(r"^KERNELOPT_DISPATCH_ONLY\s*=\s*True", source, flags=re.M) is not None
