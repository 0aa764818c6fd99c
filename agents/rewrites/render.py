"""A rewritten FX graph back to Python source: a rewritten problem and a dispatch-only candidate.

The rewritten forward is appended to the problem's own source as a subclass of the reference
class (renamed ``_KernelOptReference``), so every parameter and buffer keeps its ``state_dict``
key and the constructor is unchanged. Two texts come out:

* the **rewritten problem** (``class Model``): what the harvest compiles with Inductor into an
  editable Triton candidate;
* the **eager candidate** (``class ModelNew``, ``KERNELOPT_DISPATCH_ONLY = True``): the
  rewritten forward on the vendor libraries, for rewrites whose win is a vendor entry point;
  where a rewrite calls one of KernelOPT's own Triton kernels (``kernels.py``), the kernel's
  text is copied in and the candidate is an ordinary Triton candidate (no dispatch-only mark).
"""

from __future__ import annotations

import ast
import builtins
import inspect
import math
import re
import textwrap
import types
from typing import Any

import torch.fx as fx

from kernelopt_jupyter.agents.rewrites.derive import Hoisted, helper_text, hoist_derived
from kernelopt_jupyter.agents.rewrites.graph import RewriteError
from kernelopt_jupyter.agents.rewrites.helpers import HELPERS
from kernelopt_jupyter.agents.rewrites.kept_libraries import kept_call_text
from kernelopt_jupyter.agents.rewrites.kernels import KERNEL_CONSTANTS, KERNEL_HELPERS
from kernelopt_jupyter.candidate import freeze_environment_reads, insert_after_imports
from kernelopt_jupyter.renaming import RenameError, rename_class

BASE_NAME = "_KernelOptReference"
MARKER = "# --- KernelOPT graph rewrite"


def _global_line(name: str, value: Any, problem_module: str) -> str | None:
    """The statement that binds FX's global ``name`` in rendered code (None: nothing needed)."""
    if isinstance(value, types.ModuleType):
        return None if value.__name__ == name else f"import {value.__name__} as {name}"
    if isinstance(value, float) and (math.isinf(value) or math.isnan(value)):
        return f"{name} = float({str(value)!r})"
    if value is type(None):
        return f"{name} = type(None)"
    if getattr(builtins, name, None) is value:
        return None
    kernel = next((h for h, (fn, _) in KERNEL_HELPERS.items() if fn is value), None)
    if kernel is not None:
        return kernel_helper_text(kernel, name)
    kept = kept_call_text(value, name)
    if kept is not None:
        return kept
    helper = next((h for h, fn in HELPERS.items() if fn is value), None)
    if helper is not None:
        # The helper's own imports, then its text (it is our code, written to be copied).
        imports = "import torch\nimport torch.nn.functional as F\n\n\n"
        alias = "" if helper == name else f"\n\n{name} = {helper}"
        return imports + textwrap.dedent(inspect.getsource(value)) + alias
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None)
    if module == problem_module and getattr(value, "__name__", None) == name:
        return None  # defined by the problem itself, in scope in the rendered source
    importable = isinstance(module, str) and (
        module.startswith("torch") or module in ("math", "operator", "builtins")
    )
    if importable and isinstance(qualname, str) and "." not in qualname:
        return f"from {module} import {qualname} as {name}"
    if name == "device":
        return f"{name} = torch.device"
    raise RewriteError(f"cannot render the global {name!r} ({type(value).__name__}) as source")


def kernel_helper_text(helper: str, name: str) -> str:
    """A kernel helper's imports, the ``@triton.jit`` kernels it launches and its own text
    (our code, written to be copied), bound to ``name``."""
    wrapper, kernels = KERNEL_HELPERS[helper]
    # Triton kernels (``@triton.jit``: their source is ``k.fn``'s) and plain helpers alike.
    texts = [textwrap.dedent(inspect.getsource(getattr(k, "fn", k))).rstrip("\n") for k in kernels]
    texts.append(textwrap.dedent(inspect.getsource(wrapper)).rstrip("\n"))
    parts = ["import torch\nimport triton\nimport triton.language as tl"]
    parts += [f"{k} = {v!r}" for k, v in KERNEL_CONSTANTS.items() if any(k in t for t in texts)]
    parts += texts
    if helper != name:
        parts.append(f"{name} = {helper}")
    return "\n\n\n".join(parts) + "\n"


def uses_kernel_helpers(gm: fx.GraphModule) -> bool:
    """Whether a rewritten graph calls one of KernelOPT's own Triton kernels."""
    wrappers = {fn for fn, _ in KERNEL_HELPERS.values()}
    return any(n.op == "call_function" and n.target in wrappers for n in gm.graph.nodes)


def forward_source(gm: fx.GraphModule | fx.Graph, problem_module: str) -> tuple[str, str]:
    """``(globals, forward)``: the statements the forward needs and its ``def`` text."""
    graph = gm if isinstance(gm, fx.Graph) else gm.graph
    code = graph.python_code(root_module="self")
    lines = [
        ln for ln in code.src.splitlines() if not ln.startswith("torch.fx._symbolic_trace.wrap")
    ]
    body = "\n".join(lines).strip("\n")
    needed = []
    kernel_blocks: list[str] = []  # helpers share kernels and imports: each block once
    for name, value in code.globals.items():
        if not re.search(rf"\b{re.escape(name)}\b", body):
            continue
        line = _global_line(name, value, problem_module)
        if line and any(fn is value for fn, _ in KERNEL_HELPERS.values()):
            kernel_blocks += [b for b in line.strip("\n").split("\n\n\n") if b not in kernel_blocks]
        elif line:
            needed.append(line)
    if kernel_blocks:
        needed.append("\n\n\n".join(kernel_blocks) + "\n")
    return "\n".join(needed), body


#: Module-level functions of a problem file that a candidate must not carry (the harness's).
_PROBLEM_ONLY = {"get_inputs", "get_init_inputs", "reference"}


def _loaded_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _candidate_module(source: str) -> str:
    """The problem's text minus what only the harness uses: input makers, and module-level
    assignments no class or function needs (sizes read from the environment, conventions).

    A candidate must not read the environment or mention the harness's variables; the
    reference class and its helpers rarely need the problem's size constants.
    """
    tree = ast.parse(source)
    kept_defs = [
        n
        for n in tree.body
        if isinstance(n, ast.ClassDef | ast.FunctionDef) and n.name not in _PROBLEM_ONLY
    ]
    needed: set[str] = set().union(*(_loaded_names(d) for d in kept_defs)) if kept_defs else set()
    assigns = [n for n in tree.body if isinstance(n, ast.Assign | ast.AnnAssign)]
    keep: set[int] = set()
    changed = True
    while changed:  # assignments the kept code needs, and what those need in turn
        changed = False
        for node in assigns:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            if id(node) not in keep and names & needed:
                keep.add(id(node))
                needed |= _loaded_names(node.value) if node.value is not None else set()
                changed = True
    lines = source.splitlines(keepends=True)
    drop: list[tuple[int, int]] = []
    for stmt in tree.body:
        is_problem_fn = isinstance(stmt, ast.FunctionDef) and stmt.name in _PROBLEM_ONLY
        is_unneeded = isinstance(stmt, ast.Assign | ast.AnnAssign) and id(stmt) not in keep
        is_main = isinstance(stmt, ast.If)  # `if __name__ == "__main__":` demos and the like
        if is_problem_fn or is_unneeded or is_main:
            start = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
            drop.append((start - 1, stmt.end_lineno or stmt.lineno))
    for start, end in sorted(drop, reverse=True):
        # Comments right above a dropped statement describe it: drop them too.
        while start > 0 and lines[start - 1].lstrip().startswith("#"):
            start -= 1
        del lines[start:end]
    return re.sub(r"\n{4,}", "\n\n\n", "".join(lines))


def _base_source(source: str) -> str:
    """The problem's source with its ``Model`` class renamed to the rewrite's base class, and
    every reference to it (``super(Model, self)``, ``Model.helper``); a docstring or comment
    that says "Model" stays as written."""
    try:
        return rename_class(freeze_environment_reads(source), "Model", BASE_NAME)
    except RenameError as exc:
        raise RewriteError(str(exc)) from None


def rewritten_source(
    source: str,
    gm: fx.GraphModule,
    problem_module: str,
    titles: list[str],
    *,
    candidate: bool,
    beside: str | None = None,
) -> str:
    """The problem (``candidate=False``) or a dispatch-only ``ModelNew`` with the new forward.

    ``beside``: the first PyTorch compute op the forward still runs beside KernelOPT's own
    kernels. Such a candidate is marked dispatch-only too (the verifier then judges PyTorch
    ops as work, and the kernels by their launches), with a comment saying what it is."""
    header, forward = forward_source(gm, problem_module)
    members = ""
    hoisted = hoist_derived(gm) if candidate else None
    if hoisted is not None:
        # The eager candidate derives folded weights once per load, not once per call.
        headers = []
        bodies = []
        for part in (hoisted.main, hoisted.derive, hoisted.sources):
            part_header, body = forward_source(part, problem_module)
            headers += [h for h in part_header.split("\n") if h and h not in headers]
            bodies.append(body)
        header = "\n".join([*headers, "", "", helper_text()]).strip("\n")
        forward = Hoisted.forward(bodies[0])
        members = hoisted.members(bodies[1], bodies[2])
    cls = "ModelNew" if candidate else "Model"
    what = "; ".join(titles)
    base = _base_source(_candidate_module(source) if candidate else source)
    parts = [
        base.rstrip("\n"),
        "",
        "",
        f"{MARKER}: {what} ---",
    ]
    if header:
        parts += [header, ""]
    parts += [
        "",
        f"class {cls}({BASE_NAME}):",
        f'    """The reference with its forward rewritten: {what}."""',
        "",
        *([textwrap.indent(members, "    "), ""] if members else []),
        textwrap.indent(forward, "    "),
        "",
    ]
    text = "\n".join(parts)
    if candidate and not uses_kernel_helpers(gm):
        text = insert_after_imports(
            text,
            "# Dispatch-only candidate: the reference after graph rewrites, on the vendor\n"
            "# libraries (no generated kernels).\nKERNELOPT_DISPATCH_ONLY = True\n",
        )
    elif candidate and beside is not None:
        text = insert_after_imports(
            text,
            "# Mixed candidate: KernelOPT's own Triton kernels, with PyTorch ops (first:\n"
            f"# {beside}) for the rest of the forward; marked dispatch-only so that the\n"
            "# verifier counts those ops as the candidate's work.\nKERNELOPT_DISPATCH_ONLY = True\n",
        )
    return text
