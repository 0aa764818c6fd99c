"""The analysis phase of a session: baselines, dispatch map and the search's starting point.

These are facts the search cannot change. They are measured once, written to the event stream
(``baseline`` and ``profile`` events, the latter carrying everything the search needs as
``facts``), and read back from the log when a session resumes, so a resumed search neither
re-measures nor re-harvests.
"""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass, field
from typing import Any

from kernelopt_jupyter.candidate import eager_dispatch_source
from kernelopt_jupyter.events import Event, EventLog
from kernelopt_jupyter.problem import Problem


@dataclass
class AnalysisFacts:
    """What the search starts from."""

    baselines: dict[str, float | None]
    kernels: list[dict[str, Any]]
    library_dominated: bool
    dispatch_variants: list[tuple[str, str]]
    root_source: str
    root_dispatch_only: bool
    root_note: str
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the ``profile`` event."""
        data = asdict(self)
        data["dispatch_variants"] = [list(v) for v in self.dispatch_variants]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AnalysisFacts:
        """Inverse of :meth:`to_dict`."""
        d = dict(data)
        d["dispatch_variants"] = [tuple(v) for v in d.get("dispatch_variants", [])]
        return cls(**d)


def _kernel_problem_units(problem: Problem) -> list[dict[str, Any]]:
    """A Triton or Helion problem's own kernels, as the agents see them."""
    tree = ast.parse(problem.source)
    units: list[dict[str, Any]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(
            ast.unparse(d.func if isinstance(d, ast.Call) else d).endswith(("jit", "kernel"))
            for d in node.decorator_list
        ):
            units.append(
                {
                    "name": node.name,
                    "kind": "triton",
                    "source": ast.get_source_segment(problem.source, node) or "",
                    "ops": [],
                    "share": None,
                    "ms": None,
                    "bound": None,
                    "roofline_fraction": None,
                }
            )
    return units


def analyse(problem: Problem, device: str, log: EventLog) -> AnalysisFacts:
    """Measure baselines, profile and harvest ``problem``; emits ``baseline`` and ``profile``."""
    from kernelopt_jupyter.analysis import measure_baselines, profile_problem
    from kernelopt_jupyter.analysis.timeline import profile_timeline

    base = measure_baselines(problem, device)
    for name, ms in base.as_ms().items():
        log.emit(
            "baseline",
            name=name,
            ms=ms,
            ci_low=None,
            ci_high=None,
            measured=base.measured and ms is not None,
            detail=base.detail,
            compile_s=base.compile_s.get(name),
        )
    notes: list[str] = []
    if problem.kind != "module":
        facts = AnalysisFacts(
            baselines=base.as_ms(),
            kernels=_kernel_problem_units(problem),
            library_dominated=False,
            dispatch_variants=[],
            root_source=problem.source,
            root_dispatch_only=False,
            root_note=f"the user's {problem.kind} kernel",
        )
        timeline = profile_timeline(problem, device)
        log.emit(
            "profile",
            dispatch_map={},
            summary=facts.root_note,
            facts=facts.to_dict(),
            timeline=timeline["timeline"],
            timeline_detail=timeline["detail"],
        )
        return facts
    dmap = profile_problem(problem, device)
    harvest = dmap.harvest
    if harvest is not None and harvest.ok and harvest.source:
        root, dispatch_only, note = harvest.source, False, "Inductor harvest"
        if harvest.library_dominated:
            note = "Inductor harvest (library-dominated: every op is a vendor call)"
            dispatch_only = not harvest.kernels
    else:
        why = (harvest.error if harvest is not None else "") or dmap.error or "harvest failed"
        notes.append(f"harvest failed, starting from the reference's own ops: {why}")
        try:
            root, dispatch_only = eager_dispatch_source(problem), True
        except ValueError:
            root, dispatch_only = problem.source, True
        note = "reference ops (the harvest failed)"
    facts = AnalysisFacts(
        baselines=base.as_ms(),
        kernels=dmap.units(),
        library_dominated=dmap.library_dominated,
        dispatch_variants=list(harvest.dispatch_variants) if harvest is not None else [],
        root_source=root,
        root_dispatch_only=dispatch_only,
        root_note=note,
        notes=notes + list(dmap.notes),
    )
    timeline = profile_timeline(problem, device)
    log.emit(
        "profile",
        dispatch_map=dmap.to_dict(),
        summary=_summary(dmap.to_dict(), facts),
        facts=facts.to_dict(),
        timeline=timeline["timeline"],
        timeline_detail=timeline["detail"],
    )
    return facts


def profile_candidate(
    problem: Problem, device: str, candidate_id: str, source: str, log: EventLog
) -> None:
    """The kernel timeline of one candidate (the winner), beside the reference's, for the
    panel; emitted as a ``profile`` event carrying ``candidate``."""
    from kernelopt_jupyter.analysis.timeline import profile_timeline

    timeline = profile_timeline(problem, device, source)
    log.emit(
        "profile",
        candidate=candidate_id,
        dispatch_map={},
        summary=f"kernel timeline of {candidate_id}",
        timeline=timeline["timeline"],
        timeline_detail=timeline["detail"],
    )


def _summary(dmap: dict[str, Any], facts: AnalysisFacts) -> str:
    records = dmap.get("records", [])
    triton = sum(1 for r in records if r.get("kind") == "triton")
    vendor = sum(1 for r in records if r.get("kind") == "vendor")
    text = f"{triton} generated Triton kernel(s), {vendor} vendor call(s)"
    if facts.library_dominated:
        text += "; library-dominated"
    if dmap.get("ranked_by"):
        text += f"; ranked by {dmap['ranked_by']}"
    return text


def analysis_from_events(events: list[Event] | None) -> AnalysisFacts | None:
    """The facts a saved session already measured, or None when its log has none."""
    for event in events or []:
        if event.type == "profile" and "facts" in event.data:
            return AnalysisFacts.from_dict(event.data["facts"])
    return None
