"""Shape sets: the input sizes a problem must work at, declared, derived or given by a person.

Convention (docs/problems.md, "Shape sets"): a shape set overrides module-level integer size
constants that only ``get_inputs()`` reads (``TOKENS = 384`` → ``{"TOKENS": 127}``), so a
problem's own input code makes the inputs at each size. A problem declares sets with
``KERNELOPT_SHAPES = [{"TOKENS": 127}, ...]`` or a ``get_shape_sets()`` function returning
such a list, and marks itself fixed-shape with ``KERNELOPT_FIXED_SHAPE = True``. Unless it is
fixed-shape, every such constant is also tried at :data:`DERIVED_SIZES` and at twice its
value, one constant at a time, when the inputs stay within :data:`DERIVED_BYTES_FACTOR` times
the problem's own input bytes.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Literal

from kernelopt_jupyter.problem import Problem, ProblemError, materialize

#: Sizes every varying dimension is tried at: a batch of one and odd sizes that catch
#: kernels assuming a multiple of their block size.
DERIVED_SIZES: tuple[int, ...] = (1, 127, 129, 1023)
#: A derived shape whose inputs would outgrow the problem's own by more than this is skipped
#: (KernelBench-size problems would not fit in memory otherwise).
DERIVED_BYTES_FACTOR = 4.0

ShapeOrigin = Literal["problem", "declared", "person", "derived"]


@dataclass(frozen=True)
class ShapeSet:
    """One set of input sizes: overrides of the problem's size constants (empty: as given)."""

    name: str
    overrides: dict[str, int] = field(default_factory=dict)
    origin: ShapeOrigin = "problem"

    def to_dict(self) -> dict[str, Any]:
        """Plain data (the export manifest)."""
        return {"name": self.name, "overrides": dict(self.overrides), "origin": self.origin}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ShapeSet:
        """Read back :meth:`to_dict`; raises ValueError on another shape."""
        overrides = raw.get("overrides")
        origin = raw.get("origin")
        if not isinstance(overrides, dict) or origin not in (
            "problem",
            "declared",
            "person",
            "derived",
        ):
            raise ValueError(f"malformed shape set {raw!r}")
        return cls(str(raw["name"]), {str(k): int(v) for k, v in overrides.items()}, origin)


def shape_name(overrides: dict[str, int]) -> str:
    """``TOKENS=127,COLS=5`` (``as given`` for no override)."""
    return ",".join(f"{k}={v}" for k, v in overrides.items()) or "as given"


def parse_shape_spec(text: str, where: str = "--shape") -> dict[str, int]:
    """``NAME=INT[,NAME=INT...]`` as typed on the command line; raises ValueError."""
    overrides: dict[str, int] = {}
    for part in text.split(","):
        name, sep, value = part.strip().partition("=")
        if not sep or not name.isidentifier():
            raise ValueError(f"{where} {text!r}: write NAME=SIZE[,NAME=SIZE]")
        try:
            overrides[name] = int(value)
        except ValueError:
            raise ValueError(f"{where} {text!r}: {value!r} is not a whole number") from None
        if overrides[name] < 1:
            raise ValueError(f"{where} {text!r}: sizes must be at least 1")
    return overrides


def size_constants(source: str) -> dict[str, int]:
    """Module-level ``NAME = <int>`` assignments (bools excluded), last one winning."""
    tree = ast.parse(source)
    found: dict[str, int] = {}
    for node in tree.body:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if (
            isinstance(target, ast.Name)
            and isinstance(value, ast.Constant)
            and type(value.value) is int
        ):
            found[target.id] = value.value
    return found


def _loaded_names(nodes: list[ast.AST]) -> set[str]:
    return {
        n.id
        for node in nodes
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }


def variable_dims(problem: Problem) -> dict[str, int]:
    """Size constants read by ``get_inputs()``'s body and by nothing else in the file.

    A constant the model, ``get_init_inputs()``, a default argument or any other function also
    reads is fixed: changing it would change the model or the reference, not just the inputs.
    """
    tree = ast.parse(problem.source)
    constants = size_constants(problem.source)
    inputs_fn = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_inputs"), None
    )
    if inputs_fn is None:
        return {}
    inside = _loaded_names(list(inputs_fn.body))
    others: list[ast.AST] = [n for n in tree.body if n is not inputs_fn]
    others += [inputs_fn.args, *inputs_fn.decorator_list]
    outside = _loaded_names(others)
    assigned_twice = {
        name
        for name in constants
        if sum(
            isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
            for n in tree.body
        )
        > 1
    }
    return {
        name: value
        for name, value in constants.items()
        if name in inside and name not in outside and name not in assigned_twice
    }


def shape_problem(problem: Problem, shape: ShapeSet) -> Problem:
    """The problem with ``shape``'s sizes: its source with the constants re-assigned at the end
    (``get_inputs()`` reads them when it is called, after the module ran)."""
    if not shape.overrides:
        return problem
    lines = [f"{name} = {value}" for name, value in shape.overrides.items()]
    source = (
        problem.source.rstrip("\n")
        + f"\n\n\n# KernelOPT shape set {shape.name}: get_inputs() reads these when called\n"
        + "\n".join(lines)
        + "\n"
    )
    meta = {**problem.meta, "shape_set": shape.name}
    return Problem(
        problem.kind, problem.path, source, problem.entry, problem.name, problem.level, meta
    )


def _declared(problem: Problem) -> tuple[list[dict[str, int]], bool]:
    """``KERNELOPT_SHAPES`` / ``get_shape_sets()`` and ``KERNELOPT_FIXED_SHAPE``."""
    tree = ast.parse(problem.source)
    names = {
        t.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    fixed = False
    if "KERNELOPT_FIXED_SHAPE" in names:
        node = names["KERNELOPT_FIXED_SHAPE"]
        if not (isinstance(node, ast.Constant) and isinstance(node.value, bool)):
            raise ProblemError(f"{problem.path}: KERNELOPT_FIXED_SHAPE must be True or False")
        fixed = bool(node.value)
    raw: Any = None
    if "KERNELOPT_SHAPES" in names:
        try:
            raw = ast.literal_eval(names["KERNELOPT_SHAPES"])
        except ValueError:
            raise ProblemError(
                f"{problem.path}: KERNELOPT_SHAPES must be a literal list of dicts"
            ) from None
    elif any(isinstance(n, ast.FunctionDef) and n.name == "get_shape_sets" for n in tree.body):
        module = materialize(problem).module
        try:
            raw = module.get_shape_sets()
        except Exception as exc:
            raise ProblemError(
                f"{problem.path}: get_shape_sets() raised {type(exc).__name__}: {exc}"
            ) from None
    if raw is None:
        return [], fixed
    where = f"{problem.path}: KERNELOPT_SHAPES/get_shape_sets()"
    if not isinstance(raw, list | tuple) or not all(isinstance(s, dict) for s in raw):
        raise ProblemError(f"{where} must be a list of dicts like {{'TOKENS': 127}}")
    sets = []
    for entry in raw:
        if not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 1
            for k, v in entry.items()
        ):
            raise ProblemError(f"{where}: {entry!r} must map size names to whole numbers >= 1")
        sets.append(dict(entry))
    return sets, fixed


def _check_overrides(problem: Problem, overrides: dict[str, int], where: str) -> None:
    dims = variable_dims(problem)
    for name in overrides:
        if name not in dims:
            fixed = size_constants(problem.source)
            why = (
                "is read by more than get_inputs() (the model or another function)"
                if name in fixed
                else "is not a module-level integer constant"
            )
            raise ProblemError(
                f"{problem.path}: {where} sets {name}, which {why}; a shape set may change "
                f"only sizes that get_inputs() alone reads ({', '.join(dims) or 'none here'})"
            )


def input_bytes(problem: Problem, shape: ShapeSet) -> int:
    """Bytes of the tensors ``get_inputs()`` makes at ``shape`` (counted on the meta device,
    so nothing is allocated; a problem whose inputs cannot be made there is counted on the
    CPU)."""
    import torch

    loaded = materialize(shape_problem(problem, shape))
    try:
        with torch.device("meta"):
            inputs = loaded.make_inputs(seed=0, device="meta")
    except Exception:
        inputs = loaded.make_inputs(seed=0, device="cpu")
    return sum(t.numel() * t.element_size() for t in inputs if isinstance(t, torch.Tensor))


def shape_sets(
    problem: Problem,
    *,
    person: list[dict[str, int]] | None = None,
    fixed: bool = False,
    derive: bool = True,
) -> list[ShapeSet]:
    """Every shape set to verify, the problem's own first, then declared, person's, derived.

    ``fixed`` (or the problem's ``KERNELOPT_FIXED_SHAPE``) turns derivation off; declared and
    person's sets are always kept. Raises ProblemError for a set that names a size the model
    also reads.
    """
    declared, problem_fixed = _declared(problem)
    own = dict(variable_dims(problem))
    out = [ShapeSet("as given", {}, "problem")]
    seen: set[tuple[tuple[str, int], ...]] = {()}

    def add(overrides: dict[str, int], origin: ShapeOrigin) -> None:
        effective = {k: v for k, v in overrides.items() if own.get(k) != v}
        key = tuple(sorted(effective.items()))
        if key not in seen:
            seen.add(key)
            out.append(ShapeSet(shape_name(effective), effective, origin))

    for entry in declared:
        _check_overrides(problem, entry, "KERNELOPT_SHAPES")
        add(entry, "declared")
    for entry in person or []:
        _check_overrides(problem, entry, "--shape")
        add(entry, "person")
    if derive and not fixed and not problem_fixed and own:
        budget = DERIVED_BYTES_FACTOR * max(input_bytes(problem, out[0]), 1)
        for name, value in own.items():
            for size in (*DERIVED_SIZES, 2 * value):
                if size == value:
                    continue
                candidate = ShapeSet(shape_name({name: size}), {name: size}, "derived")
                if input_bytes(problem, candidate) <= budget:
                    add({name: size}, "derived")
    return out


def is_fixed_shape(problem: Problem) -> bool:
    """Whether the problem marks itself ``KERNELOPT_FIXED_SHAPE = True``."""
    return _declared(problem)[1]
