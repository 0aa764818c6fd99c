"""Guard rendering: the text that makes an accepted output run its kernels only where verified.

``render_guard`` appends the guard runtime (``guard_runtime.py``, verbatim: one home) and the
verified set to a candidate's source, with ``kernelopt_guarded(reference, *init)`` bound to
the candidate's optimized class or function. ``best.py``, the notebook's accepted cell and
the export all use it. The candidate's own ``ModelNew`` is left untouched, so the file still
passes ``kernelopt verify``.
"""

from __future__ import annotations

import json
import pprint
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kernelopt_jupyter.problem import Problem, materialize
from kernelopt_jupyter.verify.static import analyze_candidate

_RUNTIME = Path(__file__).with_name("guard_runtime.py")


def guard_runtime_source() -> str:
    """The guard runtime's text as rendered into outputs (its module docstring kept)."""
    return _RUNTIME.read_text()


def _literal(value: Any) -> str:
    # JSON data as a Python literal (True/False/None spelled the Python way).
    return pprint.pformat(json.loads(json.dumps(value)), width=96, sort_dicts=False)


def init_literal(problem: Problem) -> list[Any] | None:
    """``get_init_inputs()`` when it is plain data (numbers, strings, tuples, lists: a Python
    literal that JSON can also carry), else None. Tuples stay tuples (KernelBench passes
    ``kernel_size=(3, 5)`` and ``bias_shape=(64, 1, 1)``; a constructor may add to them)."""
    if problem.kind != "module":
        return []
    init = materialize(problem).init_inputs()
    try:
        json.dumps(init, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return list(init) if _python_literal(init) is not None else None


def _python_literal(value: Any) -> str | None:
    """``value`` as Python source that evaluates back to it (types included), else None."""
    import ast

    text = pprint.pformat(value, width=96, sort_dicts=False)
    try:
        back = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    return text if _same(back, value) else None


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def render_guard(
    verified: dict[str, Any],
    *,
    optimized: str = "ModelNew",
    init: list[Any] | None = None,
    note: str = "",
    inline_runtime: bool = True,
) -> str:
    """The guard section to append to a candidate's source.

    ``verified`` is ``{"device", "signatures", "shapes"}`` (extra keys are kept as data);
    ``optimized`` names what the candidate defines (``ModelNew`` or the entry function);
    ``init`` is the reference's constructor arguments when they are plain data (else the
    caller passes them to ``kernelopt_guarded``). Use: ``model = kernelopt_guarded(Model(256))``
    then ``model(x)`` and ``model.kernelopt_path``. ``inline_runtime=False`` imports the guard
    runtime from this package instead of carrying its text (a notebook cell, where the package
    is installed: the same guard in one line instead of a few hundred).
    """
    data = {
        k: verified[k]
        for k in ("device", "signatures", "shapes", "state_dtypes", "training")
        if k in verified
    }
    shapes = ", ".join(data.get("shapes", [])) or "none"
    lines = [
        "",
        "",
        "# " + "-" * 70,
        "# KernelOPT guard: the kernels above run only for the verified shapes, dtypes and",
        f"# device ({data['device']}), in eval mode without autograd; any other call runs",
        "# the reference. Use: model = kernelopt_guarded(Model(...)); model(x);",
        "# model.kernelopt_path says which path the last call took.",
        f"# Verified shape sets: {shapes}.",
    ]
    if note:
        lines += ["# " + part for part in textwrap.wrap(note, 94)]
    runtime = (
        guard_runtime_source().rstrip("\n")
        if inline_runtime
        else "from kernelopt_jupyter.deploy.guard_runtime import kernelopt_guard"
    )
    lines += ["# " + "-" * 70, "", runtime, "", ""]
    lines.append(f"KERNELOPT_VERIFIED = {_literal(data)}")
    init_text = None if init is None else (_python_literal(init) or _literal(init))
    lines.append(f"KERNELOPT_INIT = {init_text or 'None'}")
    lines += [
        "",
        "",
        "def kernelopt_guarded(reference, *init):",
        '    """The reference (a module instance or the problem\'s function) with the verified',
        '    kernels swapped in where the guard admits the call (the verified set above)."""',
        "    args = list(init) if init else KERNELOPT_INIT",
        f"    return kernelopt_guard(reference, {optimized}, KERNELOPT_VERIFIED, args)",
        "",
    ]
    return "\n".join(lines)


def own_signature(problem: Problem) -> list[dict[str, Any]]:
    """The signature of the problem's own inputs (made on the meta device where possible)."""
    import torch

    from kernelopt_jupyter.deploy.guard_runtime import kernelopt_signature

    loaded = materialize(problem)
    try:
        with torch.device("meta"):
            inputs = loaded.make_inputs(seed=0, device="meta")
    except Exception:
        inputs = loaded.make_inputs(seed=0, device="cpu")
    return kernelopt_signature(inputs)


def model_state(problem: Problem) -> dict[str, Any]:
    """``state_dtypes`` (the reference's weight dtypes) and ``training`` (the mode it runs in:
    as constructed, or eval when the problem declares it) as the problem builds the model, on
    the meta device (nothing is allocated); a kernel problem has no weights and no mode."""
    import torch

    if problem.kind != "module":
        return {"state_dtypes": [], "training": False}
    loaded = materialize(problem)
    try:
        with torch.device("meta"):
            model = loaded.make_model(device="meta")
    except Exception:
        model = loaded.make_model(device="cpu")
    dtypes = sorted({str(t.dtype) for t in model.state_dict().values()})
    return {"state_dtypes": dtypes, "training": bool(model.training)}


def optimized_name(problem: Problem, source: str) -> str:
    """What the guard calls on the kernel path: ``ModelNew`` when the candidate defines it, else
    the kernel problem's entry function."""
    import ast

    tree = ast.parse(source)
    defined = {n.name for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef)}
    if "ModelNew" in defined or problem.kind == "module":
        return "ModelNew"
    return problem.entry


def shape_rule_note(gates: Iterable[Any] | Mapping[str, Any]) -> str:
    """The guard's shape rule in words, from a verification's gate results (objects or dicts):
    the kernels run at the shape the gates verified, and what the derived batches below and
    above the benchmark's showed (``verify.derived``; reported, never admitted). Empty where
    the correctness gate recorded no derived shape."""
    from kernelopt_jupyter.verify.derived import shape_rule

    items = list(gates.values()) if isinstance(gates, Mapping) else list(gates)
    for gate in items:
        plain = (
            gate
            if isinstance(gate, Mapping)
            else {"name": getattr(gate, "name", None), "metrics": getattr(gate, "metrics", None)}
        )
        metrics = plain.get("metrics")
        rows = metrics.get("derived_shapes") if isinstance(metrics, Mapping) else None
        if plain.get("name") == "correctness" and isinstance(rows, list) and rows:
            rule = shape_rule(rows)
            return f"Shape rule: the kernels run only at the shape the gates checked; {rule}."
    return ""


def guard_best_source(problem: Problem, source: str, device: str, shape_rule: str = "") -> str:
    """``source`` (a verified candidate) with a guard admitting the problem's own shape only:
    the shape the search verified it at (``kernelopt export`` verifies more); ``shape_rule``
    (``shape_rule_note``) says what else the verification ran. Never raises: a problem whose
    inputs cannot be described gets a comment saying why it has no guard."""
    try:
        verified = {
            "device": device,
            "signatures": [own_signature(problem)],
            "shapes": ["as given"],
            **model_state(problem),
        }
        guard = render_guard(
            verified,
            optimized=optimized_name(problem, source),
            init=init_literal(problem),
            note=f"{shape_rule} `kernelopt export` verifies more shapes (docs/deploy.md).".strip(),
        )
        # best.py must keep passing `kernelopt verify`: a guard the static rules refuse is
        # left out (and the deploy tests fail on it) rather than breaking the result.
        refused = analyze_candidate(guard).violations
        if refused:
            raise ValueError(f"the verifier's static rules refuse it ({refused[0]})")
        return source.rstrip("\n") + "\n" + guard
    except Exception as exc:  # the search's result must be written whatever this finds
        return (
            source.rstrip("\n") + f"\n\n# KernelOPT guard not added: {type(exc).__name__}: {exc}\n"
        )


def accepted_cell_source(
    problem: Problem,
    source: str,
    device: str,
    verified: dict[str, Any] | None = None,
    shape_rule: str = "",
) -> str:
    """The text of a notebook cell that accepts ``source`` guarded (for ``notebook/accept.py``).

    The cell runs below the problem's own cell. For a module problem it defines the candidate
    and ``kernelopt_guarded``; the person wraps their model: ``kernelopt_guarded(Model(...))``.
    For a kernel problem the candidate redefines the entry function, so the cell keeps the
    person's function first and ends by binding the entry name to the guarded function.
    ``verified`` defaults to the problem's own shape (what the search verified);
    ``shape_rule`` (``shape_rule_note``) says what else the verification ran.
    """
    data = verified or {
        "device": device,
        "signatures": [own_signature(problem)],
        "shapes": ["as given"],
        **model_state(problem),
    }
    guard = render_guard(
        data,
        optimized=optimized_name(problem, source),
        init=init_literal(problem),
        note=shape_rule,
        inline_runtime=False,  # the notebook has the package: the runtime is imported
    )
    if problem.kind == "module":
        return (
            source.rstrip("\n")
            + "\n"
            + guard
            + "\n# model = kernelopt_guarded(Model(*get_init_inputs()))  # your instance\n"
        )
    entry = problem.entry
    return (
        f"# The person's {entry} stays the reference of the guard below.\n"
        f"_kernelopt_reference_{entry} = {entry}\n\n"
        + source.rstrip("\n")
        + "\n"
        + guard
        + f"\n{entry} = kernelopt_guarded(_kernelopt_reference_{entry})\n"
    )
