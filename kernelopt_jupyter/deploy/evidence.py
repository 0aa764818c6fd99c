"""Evidence of a shape-specialized kernel in a candidate's source: hard-coded sizes.

Triton's CPU interpreter does not detect out-of-bounds accesses, and Inductor-harvested
kernels hard-code their sizes (``xnumel = 98304``, ``empty_strided((384, 256), ...)``): such a
kernel can pass the gates at another shape while reading and writing past its tensors. An
integer literal that is a size of the problem's own shape and not of another is evidence the
kernel was specialized to the own shape (docs/deploy.md).
"""

from __future__ import annotations

import ast
from typing import Any

#: Literal sizes below this are too common (warps, ranks, small blocks) to count as evidence.
_MIN_EVIDENCE = 64


def shape_sizes(signature: list[dict[str, Any]] | None, outputs: dict[str, Any] | None) -> set[int]:
    """Every dimension and product of adjacent dimensions of the inputs (a signature) and the
    outputs (a recorded layout)."""
    shapes = [s["shape"] for s in signature or [] if s.get("kind") == "tensor"]
    shapes += [t["shape"] for t in (outputs or {}).get("tensors", [])]
    found: set[int] = set()
    for shape in shapes:
        for start in range(len(shape)):
            product = 1
            for dim in shape[start:]:
                product *= int(dim)
                found.add(product)
    return found


#: A candidate may carry a copy of the problem's input code: its sizes are no evidence.
_PROBLEM_FUNCTIONS = {"get_inputs", "get_init_inputs", "get_shape_sets", "reference"}


def _not_evidence(tree: ast.Module) -> set[int]:
    """Ids of literal nodes that say nothing about the kernels' shapes: launch settings
    (LAUNCH_CONFIGS, *BLOCK*, num_warps...), the problem's own input code, and module-level
    size constants that nothing but that input code reads."""
    ids: set[int] = set()
    problem_code = [
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in _PROBLEM_FUNCTIONS
    ]
    for fn in problem_code:
        ids |= {id(n) for n in ast.walk(fn)}
    rest = [n for n in tree.body if n not in problem_code]
    read = {
        n.id
        for node in rest
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    for stmt in rest:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id not in read
        ):
            ids |= {id(n) for n in ast.walk(stmt.value)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and (t.id == "LAUNCH_CONFIGS" or "BLOCK" in t.id)
            for t in node.targets
        ):
            ids |= {id(n) for n in ast.walk(node.value)}
        elif isinstance(node, ast.keyword) and node.arg is not None:
            if "BLOCK" in node.arg or node.arg in ("num_warps", "num_stages", "num_ctas"):
                ids |= {id(n) for n in ast.walk(node.value)}
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                text = key.value if isinstance(key, ast.Constant) else None
                if isinstance(text, str) and ("BLOCK" in text or text.startswith("num_")):
                    ids |= {id(n) for n in ast.walk(value)}
    return ids


def hard_coded_sizes(source: str, own: set[int], here: set[int]) -> list[int]:
    """Integer literals of ``source`` that are sizes of the problem's own shape and not of this
    one (launch settings and small numbers excluded): evidence of a shape-specialized kernel,
    such as Inductor's static ``xnumel = 98304``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    tuning = _not_evidence(tree)
    own_only = {n for n in own - here if n >= _MIN_EVIDENCE}
    found = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and type(node.value) is int
        and node.value in own_only
        and id(node) not in tuning
    }
    return sorted(found)
