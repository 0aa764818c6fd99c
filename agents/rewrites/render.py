"""A rewritten FX graph back to Python source: a rewritten problem and a dispatch-only candidate.

The rewritten forward is appended to the problem's own source as a subclass of the reference
class (renamed ``_KernelOptReference``), so every parameter and buffer keeps its ``state_dict``
key and the constructor is unchanged. Two texts come out:

* the **rewritten problem** (``class Model``): what the harvest compiles with Inductor into an
  editable Triton candidate;
* the **eager candidate** (``class ModelNew``, ``KERNELOPT_DISPATCH_ONLY = True``): the
  rewritten forward on the vendor libraries, for rewrites whose win is a vendor entry point.
"""

from __future__ import annotations

import builtins
import inspect
import math
import re
import textwrap
import types
from typing import Any

import torch.fx as fx

from kernelopt_jupyter.agents.rewrites.graph import RewriteError
from kernelopt_jupyter.agents.rewrites.helpers import HELPERS
from kernelopt_jupyter.candidate import insert_after_imports

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


def forward_source(gm: fx.GraphModule, problem_module: str) -> tuple[str, str]:
    """``(globals, forward)``: the statements the forward needs and its ``def`` text."""
    code = gm.graph.python_code(root_module="self")
    lines = [
        ln for ln in code.src.splitlines() if not ln.startswith("torch.fx._symbolic_trace.wrap")
    ]
    body = "\n".join(lines).strip("\n")
    needed = []
    for name, value in code.globals.items():
        if not re.search(rf"\b{re.escape(name)}\b", body):
            continue
        line = _global_line(name, value, problem_module)
        if line:
            needed.append(line)
    return "\n".join(needed), body


def _base_source(source: str) -> str:
    """The problem's source with its ``Model`` class renamed to the rewrite's base class."""
    renamed, n = re.subn(r"^class Model\b", f"class {BASE_NAME}", source, count=1, flags=re.M)
    if n != 1:
        raise RewriteError("the problem defines no top-level class Model")
    renamed = re.sub(r"\bsuper\(Model,", f"super({BASE_NAME},", renamed)
    if re.search(r"\bModel\b", renamed):
        raise RewriteError("the problem refers to Model outside its class definition")
    return renamed


def rewritten_source(
    source: str, gm: fx.GraphModule, problem_module: str, titles: list[str], *, candidate: bool
) -> str:
    """The problem (``candidate=False``) or a dispatch-only ``ModelNew`` with the new forward."""
    header, forward = forward_source(gm, problem_module)
    cls = "ModelNew" if candidate else "Model"
    what = "; ".join(titles)
    parts = [
        _base_source(source).rstrip("\n"),
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
        textwrap.indent(forward, "    "),
        "",
    ]
    text = "\n".join(parts)
    if candidate:
        text = insert_after_imports(
            text,
            "# Dispatch-only candidate: the reference after graph rewrites, on the vendor\n"
            "# libraries (no generated kernels).\nKERNELOPT_DISPATCH_ONLY = True\n",
        )
    return text
