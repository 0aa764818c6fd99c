"""Find the rewrites that match a problem and render their sources (runs in a worker).

:func:`find_rewrites` is what the Planner calls: it traces the reference on the meta device
(no memory, no real compute) in a worker, tries every rule on its own copy of the graph plus
all of them together, checks that each rewritten graph still produces the reference's output
shape, and returns the rendered sources as plain data.
"""

from __future__ import annotations

import contextlib
import copy
import threading
from concurrent.futures import Future
from dataclasses import asdict, dataclass, field
from typing import Any

from kernelopt_jupyter.problem import Problem


@dataclass
class RewriteMatch:
    """One applicable rewrite (or the combination of several) and its rendered sources."""

    names: list[str]
    title: str  # the candidate's label: "rewrite: fold BatchNorm into the conv/linear"
    exact: str
    sites: int
    problem_source: str  # the rewritten problem, to harvest with Inductor
    eager_source: str  # the dispatch-only candidate (rewritten forward on vendor libraries)
    eager_only: bool = False
    kernels: bool = False  # the eager candidate launches KernelOPT's own Triton kernel(s)
    #: The first PyTorch compute op the eager candidate runs beside those kernels ("": none):
    #: such a candidate is marked dispatch-only and ranked below one made of kernels alone.
    beside: str = ""
    #: The op families the rewrite took graph nodes from (``op_families.removed_families``):
    #: the work it targets, which the roofline ranking looks up in the profile.
    families: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the worker's answer."""
        return asdict(self)


@dataclass
class RewriteScan:
    """What :func:`find_rewrites` found, and why a rule could not be tried."""

    matches: list[RewriteMatch] = field(default_factory=list)
    error: str = ""
    #: Why a rule (or ``"combined"``) that matched was not offered, by its name: the same
    #: reasons ``error`` lists, kept apart for the coverage survey.
    refused: dict[str, str] = field(default_factory=dict)

    @property
    def mixed(self) -> dict[str, str]:
        """Matches whose candidate runs PyTorch compute beside KernelOPT's kernels, by the
        rules' joined names: the first such op (for the coverage survey)."""
        return {"+".join(m.names): m.beside for m in self.matches if m.beside}


_prefetched: dict[str, Future[RewriteScan]] = {}
_prefetch_lock = threading.Lock()


def prefetch(problem: Problem, *, time_limit_s: float = 120.0) -> None:
    """Start :func:`find_rewrites` for ``problem`` in the background (a search does this
    while its analysis runs); the next :func:`find_rewrites` of the same source waits for it
    instead of starting a worker of its own."""
    with _prefetch_lock:
        if problem.source in _prefetched:
            return
        future: Future[RewriteScan] = Future()
        _prefetched[problem.source] = future

    def work() -> None:
        try:
            future.set_result(_find(problem, time_limit_s))
        except BaseException as exc:  # the caller sees it when it asks
            future.set_exception(exc)

    threading.Thread(target=work, name="kernelopt-rewrite-scan", daemon=True).start()


def find_rewrites(problem: Problem, *, time_limit_s: float = 120.0) -> RewriteScan:
    """The rewrites whose pattern occurs in ``problem``'s graph (module problems only)."""
    with _prefetch_lock:
        future = _prefetched.pop(problem.source, None)
    if future is not None:
        return future.result()
    return _find(problem, time_limit_s)


def _find(problem: Problem, time_limit_s: float) -> RewriteScan:
    from kernelopt_jupyter.worker import run_task

    if problem.kind != "module":
        return RewriteScan(error=f"{problem.kind} problems have no module graph to rewrite")
    result = run_task(
        "kernelopt_jupyter.agents.rewrites.task:scan_task",
        {"source": problem.source, "path": problem.path},
        device="cpu",
        time_limit_s=time_limit_s,
    )
    if not result.ok:
        return RewriteScan(error=f"rewrite scan failed: {result.describe()}")
    value = result.value
    return RewriteScan(
        matches=[RewriteMatch(**m) for m in value["matches"]],
        error=value.get("error", ""),
        refused=value.get("refused", {}),
    )


def _meta_reference(source: str, path: str) -> tuple[Any, list[Any], str]:
    import torch

    from kernelopt_jupyter.problem import materialize, problem_from_source

    loaded = materialize(problem_from_source(source, path, validate=False))
    # A constructor that reads values (``.item()`` on a table it builds) runs on the CPU and
    # is moved to meta afterwards (make_model's own fallback).
    model = loaded.make_model("meta", seed=0)
    # A distribution's argument checks read values (``.item()``), which meta tensors have
    # none of: KernelBench draws inputs from ``Pareto(...)``. Off while the inputs are made.
    validate = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(False)
    try:
        with torch.device("meta"):
            inputs = loaded.make_inputs(seed=0, device="meta")
    finally:
        torch.distributions.Distribution.set_default_validate_args(validate)
    return model, inputs, loaded.module.__name__


def _shape(out: Any) -> Any:
    import torch

    if isinstance(out, torch.Tensor):
        return (tuple(out.shape), out.dtype)
    if isinstance(out, list | tuple):
        return [_shape(o) for o in out]
    return type(out).__name__


def _traced_constant(gm: Any, made: set[str]) -> str | None:
    """The first attribute ``gm``'s forward reads that tracing set on the model (``made``:
    names the reference's own constructor did not create); None: none."""
    for node in gm.graph.nodes:
        if node.op == "get_attr" and str(node.target).split(".")[0] in made:
            return str(node.target)
    return None


def scan(source: str, path: str) -> RewriteScan:
    """Try every rule on the reference traced at meta; render those that apply (in-process).

    The reference is traced, its shapes propagated and its ops put in their canonical spelling
    (``canonical.py``) once; each attempt works on a copy of
    that graph and propagates again only after a rule changed it (a meta forward of a long
    recurrent network takes seconds).
    """
    import torch.fx as fx

    from kernelopt_jupyter.agents.op_families import graph_families, removed_families
    from kernelopt_jupyter.agents.rewrites.canonical import canonicalize
    from kernelopt_jupyter.agents.rewrites.epilogue_rule import fuse_epilogues
    from kernelopt_jupyter.agents.rewrites.graph import (
        RewriteError,
        propagate_shapes,
        propagated_output,
        trace,
    )
    from kernelopt_jupyter.agents.rewrites.render import rewritten_source
    from kernelopt_jupyter.agents.rewrites.rules import REWRITES, Rewrite, foreign_compute

    scan_result = RewriteScan()
    try:
        model, inputs, module_name = _meta_reference(source, path)
    except Exception as exc:  # a constructor that reads values (.item()): no meta graph
        scan_result.error = f"the reference cannot be built on the meta device: {exc}"
        return scan_result

    def meta_error() -> str | None:
        try:
            model(*inputs)
        except Exception as exc:  # data-dependent Python (a value read with .item()): no graph
            return f"the reference does not run on the meta device: {exc}"
        return None

    own = set(vars(model))
    try:
        base = trace(model, inputs)
    except RewriteError as exc:
        scan_result.error = meta_error() or str(exc)
        return scan_result
    try:
        expected = _shape(propagated_output(base, inputs))
        shaped = True
    except Exception:  # shapes are a hint; the reference's own forward gives the output
        error = meta_error()
        if error is not None:
            scan_result.error = error
            return scan_result
        expected, shaped = _shape(model(*inputs)), False
    # Every spelling of an op becomes its one canonical call, which is what the rules match.
    canonicalize(base)
    base_families = graph_families(base)

    def fresh() -> Any:
        """A graph of the reference to rewrite, its shapes propagated where they could be."""
        try:  # the graph copied (its shapes with it), the layers shared as a new trace has them
            return fx.GraphModule(base, copy.deepcopy(base.graph))
        except Exception:  # a graph that cannot be copied: trace it again
            gm = trace(model, inputs)
            if shaped:
                propagate_shapes(gm, inputs)
            canonicalize(gm)
            return gm

    def attempt(rules: list[Rewrite]) -> RewriteMatch | None:
        gm = fresh()
        counts: dict[str, int] = {}
        stale = False  # whether the graph changed since its shapes were propagated
        out: list[Any] = []  # the output of the last propagation, where it ran
        for _ in range(3):  # one rule's result can expose another's pattern: to a fixed point
            progressed = False
            for rule in rules:
                if stale:
                    out = []
                    with contextlib.suppress(Exception):  # shapes are a hint (see below)
                        out = [propagated_output(gm, inputs)]
                    canonicalize(gm)  # what a rule wrote, spelled as the next rule matches
                    stale = False
                sites = rule.apply(gm)
                if sites:
                    counts[rule.name] = counts.get(rule.name, 0) + sites
                    progressed = stale = True
            if not progressed:
                break
        applied = [(rule, counts[rule.name]) for rule in rules if rule.name in counts]
        if not applied:
            return None
        # The rewritten graph runs (its last propagation, or now: what it raises goes up).
        result = out[0] if out and not stale else propagated_output(gm, inputs)
        if _shape(result) != expected:
            raise RewriteError(f"{'+'.join(r.name for r, _ in applied)} changed the output shape")
        made = _traced_constant(gm, set(vars(model)) - own)
        if made is not None:
            # Tracing turned a tensor built in forward into an attribute of the graph; the
            # rendered subclass of the reference has no such attribute (and on the meta
            # device it holds no values to copy).
            raise RewriteError(f"the traced forward reads {made}, a constant the reference lacks")
        titles = [r.title for r, _ in applied]
        exact = all(r.exact == "bit-exact" for r, _ in applied)
        if any(r.kernels for r, _ in applied):
            # Pointwise ops after a kernel go into it (its epilogue) before the rest of the
            # forward is looked at.
            if fuse_epilogues(gm):
                titles.append("pointwise epilogue fused into the kernel")
                exact = False  # float32 expressions of its own: a bit-exact max pool no more
            foreign = foreign_compute(gm)
            if foreign is not None:
                # The rest of the forward stays PyTorch compute beside KernelOPT's kernel: the
                # candidate is offered as a mixed one, marked dispatch-only (the verifier
                # refuses PyTorch compute in a Triton candidate otherwise), and says so.
                titles.append(f"PyTorch ops for the rest ({foreign})")
        else:
            foreign = None
        return RewriteMatch(
            names=[r.name for r, _ in applied],
            title="rewrite: " + " + ".join(titles),
            exact="bit-exact" if exact else "reassociation",
            sites=sum(n for _, n in applied),
            problem_source=rewritten_source(source, gm, module_name, titles, candidate=False),
            eager_source=rewritten_source(
                source, gm, module_name, titles, candidate=True, beside=foreign
            ),
            eager_only=any(r.eager_only for r, _ in applied),
            kernels=any(r.kernels for r, _ in applied),
            beside=foreign or "",
            families=removed_families(base_families, graph_families(gm)),
        )

    singles: list[RewriteMatch] = []
    for rule in REWRITES:
        try:
            match = attempt([rule])
        except Exception as exc:  # one rule's failure (or bug) costs only its own candidate
            scan_result.error += f"{rule.name}: {_why(exc)}; "
            scan_result.refused[rule.name] = _why(exc)
            continue
        if match is not None:
            singles.append(match)
    if singles:
        # Rules enable each other (a folded BatchNorm leaves a linear+ReLU for the epilogue
        # rule): try them all together, with and without the eager-only ones.
        seen = {tuple(m.names) for m in singles}
        mine = [r for r in REWRITES if not r.kept_library]  # a kept library is tried alone
        for rules in ([r for r in mine if not r.eager_only], mine):
            try:
                combined = attempt(rules)
            except Exception as exc:
                scan_result.error += f"combined: {_why(exc)}; "
                scan_result.refused["combined"] = _why(exc)
                continue
            if combined is not None and tuple(combined.names) not in seen:
                seen.add(tuple(combined.names))
                scan_result.matches.append(combined)
    scan_result.matches.extend(singles)
    return scan_result


def _why(exc: Exception) -> str:
    """A rule's refusal as it said it; any other exception with its type (a rule's bug)."""
    from kernelopt_jupyter.agents.rewrites.graph import RewriteError

    return str(exc) if isinstance(exc, RewriteError) else f"{type(exc).__name__}: {exc}"


def scan_task(source: str, path: str) -> dict[str, Any]:
    """Worker entry: :func:`scan` as plain data."""
    found = scan(source, path)
    return {
        "matches": [m.to_dict() for m in found.matches],
        "error": found.error,
        "refused": found.refused,
    }
