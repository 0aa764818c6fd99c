"""Accepting a candidate: the notebook cell that brings it back, and how it gets inserted.

The cell is the candidate's own source (it defines ``ModelNew``, or the kernel entry for a
Triton/Helion problem) under a header comment naming the candidate, its gate results and its
speedup, so the notebook records what was accepted and why it was trusted. Below the source
comes the same guard ``best.py`` carries (``deploy.guard.accepted_cell_source``): the kernels
run only for the shapes, dtypes, device and mode they were verified at, any other call runs the
person's reference. Insertion goes
through the labextension bridge (a comm, works from a button while the kernel is busy); where
there is none, ``%kernelopt accept N`` inserts it with ``set_next_input`` from an executing cell.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kernelopt_jupyter.problem import Problem
from kernelopt_jupyter.verify.report import GATE_NAMES as GATE_ORDER

_INTERPRETER_PREAMBLE = """from kernelopt_jupyter.notebook.interpreter import use_cpu_interpreter

use_cpu_interpreter()  # no GPU: the Triton kernels below run in Triton's interpreter

"""


def _field(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def gate_line(gates: Iterable[Any] | Mapping[str, Any]) -> str:
    """'static pass · correctness pass · fp64 pass · performance skipped (no GPU)'."""
    items = list(gates.values()) if isinstance(gates, Mapping) else list(gates)
    by_name = {str(_field(g, "name")): g for g in items}
    names = [n for n in GATE_ORDER if n in by_name] + [n for n in by_name if n not in GATE_ORDER]
    parts = []
    for name in names:
        gate = by_name[name]
        status = str(_field(gate, "status", "pending"))
        detail = str(_field(gate, "detail", "") or "")
        text = f"{name} {status}"
        if status == "skipped" and detail:
            text += f" ({detail.splitlines()[0][:60]})"
        parts.append(text)
    return " · ".join(parts) if parts else "no gate results"


def speedup_line(speedup: Any) -> str:
    """'1.23x vs eager [1.20, 1.26]' from a number, a (value, low, high) tuple, or None."""
    if speedup is None:
        return "not timed (no GPU: the performance gate was skipped)"
    low = high = None
    if isinstance(speedup, tuple | list):
        speedup, low, high = [*speedup, None, None][:3]
    elif isinstance(speedup, Mapping):
        speedup, low, high = speedup.get("speedup"), speedup.get("ci_low"), speedup.get("ci_high")
    if speedup is None:
        return "not timed (no GPU: the performance gate was skipped)"
    text = f"{float(speedup):.2f}x vs the baseline"
    if low is not None and high is not None:
        text += f" (95% CI {float(low):.2f}-{float(high):.2f})"
    return text


def guarded_source(problem: Problem, source: str, device: str, shape_rule: str = "") -> str:
    """``source`` with the guard of ``deploy.guard.accepted_cell_source`` (a module problem:
    ``kernelopt_guarded(Model(...))``; a kernel problem: the entry name bound to the guarded
    function), its ``shape_rule`` stated. Never raises: a problem whose inputs cannot be
    described gets the source with a comment saying why it carries no guard."""
    from kernelopt_jupyter.deploy.guard import accepted_cell_source

    try:
        return accepted_cell_source(problem, source, device, shape_rule=shape_rule)
    except Exception as exc:  # the person must still get the code they accepted
        return (
            source.rstrip("\n") + f"\n\n# KernelOPT guard not added: {type(exc).__name__}: {exc}\n"
        )


def render_accepted_cell(
    problem: Problem | None,
    candidate: Any,
    gates: Iterable[Any] | Mapping[str, Any],
    speedup: Any,
    *,
    device: str | None = None,
) -> str:
    """A runnable notebook cell that redefines the model (``ModelNew``) or the kernel entry.

    ``candidate`` is a :class:`~kernelopt_jupyter.candidate.Candidate` or anything with ``id``,
    ``source``, ``parent``, ``agent`` and ``plan_id``; ``gates`` are gate results (objects or
    dicts with ``name``, ``status``, ``detail``); ``speedup`` a number, a (value, low, high)
    tuple or None. With a ``problem`` the cell carries the guard for ``device`` (the session's;
    default: where this kernel runs).
    """
    cid = _field(candidate, "id")
    source = str(_field(candidate, "source", "") or "").rstrip() + "\n"
    lineage = [f"agent {_field(candidate, 'agent') or 'unknown'}"]
    if _field(candidate, "parent"):
        lineage.append(f"parent {_field(candidate, 'parent')}")
    if _field(candidate, "plan_id"):
        lineage.append(f"plan {_field(candidate, 'plan_id')}")
    if problem is None:
        defines = "ModelNew"
        where = ""
    elif problem.kind == "module":
        defines = (
            "ModelNew (a drop-in for Model: same constructor arguments and weights) and "
            "kernelopt_guarded(Model(...)): ModelNew's kernels where verified, Model elsewhere"
        )
        where = f"{problem.name} ({problem.kind} problem)"
    else:
        defines = (
            f"{problem.entry} (same signature as your kernel launcher), guarded: the new "
            f"kernels where verified, your {problem.entry} elsewhere"
        )
        where = f"{problem.name} ({problem.kind} problem)"
    if problem is not None:
        from kernelopt_jupyter.deploy.guard import shape_rule_note
        from kernelopt_jupyter.device import resolve_device

        rule = shape_rule_note(gates)
        source = guarded_source(problem, source, device or resolve_device("auto"), rule)
    if "triton" in source:
        # Without a GPU, Triton kernels can only run in Triton's interpreter, which is chosen
        # when a kernel is decorated: switch it on before the source below defines them (and
        # route Triton's own library, imported earlier by the search, through it too).
        source = _INTERPRETER_PREAMBLE + source
    header = [
        f"# KernelOPT: accepted candidate {cid}" + (f" for {where}" if where else ""),
        f"#   lineage: {', '.join(lineage)}",
        f"#   gates:   {gate_line(gates)}",
        f"#   speedup: {speedup_line(speedup)}",
        f"#   defines: {defines}",
    ]
    return "\n".join(header) + "\n" + source


def insert_with_bridge(
    cell_id: str | None,
    source: str,
    mode: str,
    done: Callable[[bool, str], None],
) -> None:
    """Ask the labextension to insert ``source`` next to cell ``cell_id``, without blocking.

    The bridge's reply arrives as a comm message on the kernel's shell channel, which a widget
    callback (running on that channel) would starve if it waited; so the round trip runs on a
    worker thread (``bridge.request_insert_async``, which also records which browser clicked)
    and ``done(inserted, detail)`` reports the outcome from there.
    """
    if not cell_id:
        done(False, "the %%kernelopt cell has no id (not JupyterLab)")
        return
    try:
        import importlib

        # Imported by name: bridge.py is the labextension's side of the project.
        bridge = importlib.import_module("kernelopt_jupyter.notebook.bridge")
    except ImportError:
        done(False, "the notebook bridge is not installed")
        return
    request_async = getattr(bridge, "request_insert_async", None)
    if request_async is None:
        _insert_on_thread(bridge, cell_id, source, mode, done)
        return

    def on_done(ok: bool, reply: Any) -> None:
        detail = (
            "" if ok else str(getattr(reply, "detail", "") or "no JupyterLab extension answered")
        )
        done(ok, detail)

    def failed(future: Any) -> None:
        exc = future.exception()
        if exc is not None:  # on_done is not called then: a broken bridge must not lose the accept
            done(False, f"bridge error {type(exc).__name__}: {exc}")

    try:
        request_async(cell_id, source, mode, on_done=on_done).add_done_callback(failed)
    except Exception as exc:
        done(False, f"bridge error {type(exc).__name__}: {exc}")


def _insert_on_thread(
    bridge: Any, cell_id: str, source: str, mode: str, done: Callable[[bool, str], None]
) -> None:
    def run() -> None:
        try:
            ok = bool(bridge.request_insert(cell_id, source, mode))
            detail = "" if ok else "no JupyterLab extension answered"
        except Exception as exc:  # a broken bridge must not lose the accept: fall back
            ok, detail = False, f"bridge error {type(exc).__name__}: {exc}"
        done(ok, detail)

    threading.Thread(target=run, name="kernelopt-accept", daemon=True).start()


def insert_next_input(text: str, shell: Any = None) -> None:
    """Put ``text`` in a new cell below the executing one (the ``%kernelopt accept`` fallback)."""
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    if shell is None:
        raise RuntimeError("not running inside IPython: copy the cell text instead")
    shell.set_next_input(text, replace=False)


# The button sits in the view's first line, the code in its <pre> below: found from the view.
_COPY_JS = (
    "const p=this.closest('.kernelopt-code-view').querySelector('pre');"
    "navigator.clipboard.writeText(p.innerText).then(()=>{this.textContent='Copied'},"
    "()=>{const r=document.createRange();r.selectNodeContents(p);"
    "const s=getSelection();s.removeAllRanges();s.addRange(r);this.textContent='Selected: press Ctrl+C'})"
)


def code_view_html(text: str, cid: str) -> str:
    """The accepted cell's code with a Copy button, for front ends that cannot insert cells."""
    return (
        f"<div class='kernelopt-code-view' data-candidate='{html.escape(cid)}' "
        "style='border:1px solid #ccc;border-radius:3px;margin:4px 0;padding:4px'>"
        f"<div><b>{html.escape(cid)}</b>: paste this into a new cell "
        f'<button class="kernelopt-copy" onclick="{html.escape(_COPY_JS)}">Copy</button></div>'
        "<pre style='max-height:240px;overflow:auto;margin:4px 0;font-size:12px'>"
        f"{html.escape(text)}</pre></div>"
    )
