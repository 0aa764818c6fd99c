"""The tools the Claude policy offers, one per role, and the checks on what the model sends.

Each role answers through one tool whose JSON schema the API enforces loosely; the parsers
below check what the schema cannot (kernel names that exist, a source that parses and defines
the entry, config keys that the candidate has) and raise :class:`ToolInputError` with a message
written for the model, which gets it back once as a corrective ``tool_result``.

All five tools are sent on every call, in the same order, so that the tool definitions stay
part of the cached prompt prefix whichever role is speaking.
"""

from __future__ import annotations

import ast
import pprint
from typing import Any

from kernelopt_jupyter.problem import Problem

from .base import (
    PLAN_ACTION_NAMES,
    Bottleneck,
    Edit,
    ExperienceItem,
    KernelUnit,
    Plan,
    ProfileReport,
    StepRecord,
    Summary,
    TuneProposal,
)

#: The plan actions the planner's tool accepts: the one list in agents/base.py.
PLAN_ACTIONS = PLAN_ACTION_NAMES
NUM_WARPS = (1, 2, 4, 8, 16, 32)

#: The tool each role must call.
ROLE_TOOLS = {
    "profiler": "report_bottlenecks",
    "planner": "propose_plans",
    "executor": "submit_candidate",
    "tuner": "propose_launch_configs",
    "summarizer": "record_experience",
}


class ToolInputError(ValueError):
    """A tool call whose input cannot be used; the message is addressed to the model."""


TOOLS: list[dict[str, Any]] = [
    {
        "name": "report_bottlenecks",
        "description": (
            "Profiler only. Report the sub-kernels worth optimizing, most important first, with "
            "their time share, whether they are memory- or compute-bound and why they matter."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "summary": {
                    "type": "string",
                    "description": "Two or three sentences: where the time goes and what bounds it.",
                },
                "bottlenecks": {
                    "type": "array",
                    "maxItems": 8,
                    "items": {
                        "type": "object",
                        "properties": {
                            "kernel": {"type": "string", "description": "Name as listed."},
                            "share": {
                                "type": ["number", "null"],
                                "description": "Fraction of time, 0..1; null if unknown.",
                            },
                            "bound": {
                                "type": "string",
                                "enum": ["memory", "compute", "latency", "unknown"],
                            },
                            "note": {"type": "string"},
                        },
                        "required": ["kernel", "bound", "note"],
                    },
                },
            },
            "required": ["summary", "bottlenecks"],
        },
    },
    {
        "name": "propose_plans",
        "description": (
            "Planner only. Propose concrete, minimal plans to improve the parent candidate, "
            "the most promising first."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "plans": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 8,
                    "items": {
                        "type": "object",
                        "properties": {
                            "title": {"type": "string", "description": "Short imperative title."},
                            "rationale": {
                                "type": "string",
                                "description": "Why the profile says this pays off; risks.",
                            },
                            "action": {"type": "string", "enum": list(PLAN_ACTIONS)},
                            "targets": {
                                "type": "array",
                                "items": {"type": "string"},
                                "description": "Kernel names as listed in the dispatch map.",
                            },
                            "params": {
                                "type": "object",
                                "description": "Optional arguments of the action.",
                            },
                        },
                        "required": ["title", "rationale", "action"],
                    },
                }
            },
            "required": ["plans"],
        },
    },
    {
        "name": "submit_candidate",
        "description": (
            "Executor only. Submit the complete new candidate source (a whole Python module) "
            "that applies the plan, or an empty source with the reason it cannot be done."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "source": {"type": "string", "description": "The whole module, or ''."},
                "explanation": {
                    "type": "string",
                    "description": "What changed and why, in two or three sentences.",
                },
                "dispatch_only": {
                    "type": "boolean",
                    "description": "True when only the choice between existing paths changed.",
                },
            },
            "required": ["source", "explanation", "dispatch_only"],
        },
    },
    {
        "name": "propose_launch_configs",
        "description": (
            "Tuner only. Propose launch-configuration variants of the candidate: each variant "
            "overrides entries of its LAUNCH_CONFIGS dict (block sizes, num_warps, num_stages)."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "explanation": {"type": "string"},
                "variants": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 8,
                    "items": {
                        "type": "object",
                        "properties": {
                            "label": {"type": "string"},
                            "configs": {
                                "type": "object",
                                "description": (
                                    "kernel name -> {constexpr or num_warps/num_stages: int}; "
                                    "only keys the kernel's entry already has."
                                ),
                                "additionalProperties": {
                                    "type": "object",
                                    "additionalProperties": {"type": "integer"},
                                },
                            },
                        },
                        "required": ["label", "configs"],
                    },
                },
            },
            "required": ["explanation", "variants"],
        },
    },
    {
        "name": "record_experience",
        "description": (
            "Summarizer only. A plain-language explanation per step, and reusable lessons."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "explanations": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "candidate": {"type": "string", "description": "Candidate id."},
                            "text": {"type": "string"},
                        },
                        "required": ["candidate", "text"],
                    },
                },
                "experience": {
                    "type": "array",
                    "maxItems": 3,
                    "items": {
                        "type": "object",
                        "properties": {
                            "pattern": {"type": "string"},
                            "action": {"type": "string"},
                            "outcome": {
                                "type": "number",
                                "description": "Speedup child over parent (1.0 if unmeasured).",
                            },
                            "lesson": {"type": "string"},
                        },
                        "required": ["pattern", "action", "outcome", "lesson"],
                    },
                },
            },
            "required": ["explanations", "experience"],
        },
    },
]


def _require(data: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    if key not in data:
        raise ToolInputError(f"missing required field `{key}`")
    value = data[key]
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise ToolInputError(f"field `{key}` must be a {names}, got {type(value).__name__}")
    return value


def _unknown_names(names: list[str], kernels: list[KernelUnit]) -> list[str]:
    known = {k.name for k in kernels}
    return [n for n in names if known and n not in known]


def parse_report(data: dict[str, Any], kernels: list[KernelUnit]) -> ProfileReport:
    """The Profiler's tool input as a :class:`ProfileReport`."""
    summary = _require(data, "summary", str)
    entries = _require(data, "bottlenecks", list)
    shares = {k.name: k.share for k in kernels}
    out = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ToolInputError(f"bottlenecks[{i}] must be an object")
        name = _require(entry, "kernel", str)
        if _unknown_names([name], kernels):
            raise ToolInputError(
                f"bottlenecks[{i}].kernel `{name}` is not a listed kernel; use one of "
                f"{sorted(shares)}"
            )
        share = entry.get("share")
        if share is not None and (
            isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 1
        ):
            raise ToolInputError(f"bottlenecks[{i}].share must be a number in 0..1 or null")
        if share is None:
            share = shares.get(name)
        bound = entry.get("bound")
        out.append(
            Bottleneck(
                kernel=name,
                share=None if share is None else float(share),
                bound=bound if bound in ("memory", "compute", "latency") else None,
                note=str(entry.get("note", "")),
            )
        )
    return ProfileReport(bottlenecks=out, summary=summary)


def parse_plans(
    data: dict[str, Any], kernels: list[KernelUnit], n: int, id_prefix: str
) -> list[Plan]:
    """The Planner's tool input as at most ``n`` :class:`Plan` records with fresh ids."""
    entries = _require(data, "plans", list)
    if not entries:
        raise ToolInputError("`plans` is empty: propose at least one plan")
    plans = []
    for i, entry in enumerate(entries[:n]):
        if not isinstance(entry, dict):
            raise ToolInputError(f"plans[{i}] must be an object")
        action = _require(entry, "action", str)
        if action not in PLAN_ACTIONS:
            raise ToolInputError(f"plans[{i}].action `{action}` is not one of {PLAN_ACTIONS}")
        targets = entry.get("targets") or []
        if not isinstance(targets, list) or not all(isinstance(t, str) for t in targets):
            raise ToolInputError(f"plans[{i}].targets must be a list of kernel names")
        unknown = _unknown_names(targets, kernels)
        if unknown:
            raise ToolInputError(
                f"plans[{i}].targets {unknown} are not listed kernels; use names from "
                f"{sorted(k.name for k in kernels)}"
            )
        params = entry.get("params") or {}
        if not isinstance(params, dict):
            raise ToolInputError(f"plans[{i}].params must be an object")
        plans.append(
            Plan(
                id=f"{id_prefix}{i + 1}",
                title=_require(entry, "title", str).strip(),
                rationale=_require(entry, "rationale", str).strip(),
                action=action,
                targets=list(targets),
                params=dict(params),
            )
        )
    return plans


def check_candidate_source(source: str, problem: Problem) -> None:
    """Cheap checks that save a gate attempt: the source parses and defines the entry."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ToolInputError(
            f"the source does not parse: line {exc.lineno}: {exc.msg}; send the whole corrected "
            "module"
        ) from None
    defined = {
        n.name
        for n in tree.body
        if isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
    }
    if "ModelNew" in defined:
        return
    if problem.kind == "module":
        raise ToolInputError(
            "the source defines no `class ModelNew(nn.Module)`; a candidate for a module problem "
            "must define it (same constructor arguments as `Model`)"
        )
    if problem.entry not in defined:
        raise ToolInputError(
            f"the source defines neither a function `{problem.entry}` (the entry) nor a "
            "`ModelNew` module"
        )


def parse_edit(data: dict[str, Any], problem: Problem) -> Edit:
    """The Executor's tool input as an :class:`Edit` (``source=None`` when it declined)."""
    source = _require(data, "source", str)
    explanation = _require(data, "explanation", str).strip()
    dispatch_only = bool(data.get("dispatch_only", False))
    if not source.strip():
        if not explanation:
            raise ToolInputError("an empty `source` needs an `explanation` of why")
        return Edit(source=None, explanation=explanation, dispatch_only=False)
    check_candidate_source(source, problem)
    if not source.endswith("\n"):
        source += "\n"
    return Edit(source=source, explanation=explanation, dispatch_only=dispatch_only)


def launch_configs(source: str) -> tuple[dict[str, dict[str, int]], ast.Assign] | None:
    """The candidate's module-level ``LAUNCH_CONFIGS`` literal and its node, or None."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "LAUNCH_CONFIGS"
        ):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return None
            if isinstance(value, dict):
                return value, node
    return None


def with_launch_configs(source: str, overrides: dict[str, dict[str, int]]) -> str:
    """``source`` with its ``LAUNCH_CONFIGS`` entries updated by ``overrides`` (checked)."""
    found = launch_configs(source)
    if found is None:
        raise ToolInputError("the candidate has no literal LAUNCH_CONFIGS dict to tune")
    configs, node = found
    merged = {name: dict(cfg) for name, cfg in configs.items()}
    for kernel, cfg in overrides.items():
        if kernel not in merged:
            raise ToolInputError(
                f"`{kernel}` is not a key of LAUNCH_CONFIGS; keys are {sorted(merged)}"
            )
        if not isinstance(cfg, dict):
            raise ToolInputError(f"configs[{kernel!r}] must be an object of integers")
        for key, value in cfg.items():
            if key not in merged[kernel]:
                raise ToolInputError(
                    f"`{key}` is not a setting of `{kernel}`; its settings are "
                    f"{sorted(merged[kernel])}"
                )
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ToolInputError(f"{kernel}.{key} must be a positive integer")
            if key == "num_warps" and value not in NUM_WARPS:
                raise ToolInputError(f"{kernel}.num_warps must be one of {NUM_WARPS}")
            if key == "num_stages" and value > 8:
                raise ToolInputError(f"{kernel}.num_stages must be between 1 and 8")
            if key not in ("num_warps", "num_stages") and value & (value - 1):
                raise ToolInputError(f"{kernel}.{key} = {value} is not a power of two")
            merged[kernel][key] = value
    lines = source.splitlines(keepends=True)
    start, end = node.lineno - 1, (node.end_lineno or node.lineno)
    text = "LAUNCH_CONFIGS = " + pprint.pformat(merged, sort_dicts=False, width=96) + "\n"
    return "".join(lines[:start]) + text + "".join(lines[end:])


def _configs_of(source: str) -> dict[str, dict[str, int]] | None:
    found = launch_configs(source)
    return None if found is None else found[0]


def parse_tune(data: dict[str, Any], source: str, n: int) -> TuneProposal:
    """The Tuner's tool input as full-source variants of ``source`` (at most ``n``)."""
    explanation = _require(data, "explanation", str).strip()
    entries = _require(data, "variants", list)
    if not entries:
        raise ToolInputError("`variants` is empty: propose at least one variant")
    variants: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries[:n]):
        if not isinstance(entry, dict):
            raise ToolInputError(f"variants[{i}] must be an object")
        label = _require(entry, "label", str).strip() or f"variant {i + 1}"
        configs = _require(entry, "configs", dict)
        try:
            new = with_launch_configs(source, configs)
        except ToolInputError as exc:
            raise ToolInputError(f"variants[{i}] ({label}): {exc}") from None
        if new in seen or _configs_of(new) == _configs_of(source):
            continue  # a no-op or duplicate variant costs a measurement and teaches nothing
        seen.add(new)
        variants.append((label, new))
    if not variants:
        raise ToolInputError(
            "every variant equals the current configuration or another variant; change values"
        )
    return TuneProposal(variants=variants, explanation=explanation)


def parse_summary(data: dict[str, Any], steps: list[StepRecord], problem: str) -> Summary:
    """The Summarizer's tool input as a :class:`Summary` for the given steps."""
    ids = {s.candidate.id for s in steps}
    explanations: dict[str, str] = {}
    for i, entry in enumerate(_require(data, "explanations", list)):
        if not isinstance(entry, dict):
            raise ToolInputError(f"explanations[{i}] must be an object")
        cid = _require(entry, "candidate", str)
        if cid not in ids:
            raise ToolInputError(
                f"explanations[{i}].candidate `{cid}` is not one of the steps {sorted(ids)}"
            )
        explanations[cid] = _require(entry, "text", str).strip()
    missing = sorted(ids - set(explanations))
    if missing:
        raise ToolInputError(f"no explanation for steps {missing}; explain every step")
    items = []
    for i, entry in enumerate(_require(data, "experience", list)[:3]):
        if not isinstance(entry, dict):
            raise ToolInputError(f"experience[{i}] must be an object")
        outcome = _require(entry, "outcome", (int, float))
        if not outcome > 0:
            raise ToolInputError(f"experience[{i}].outcome must be a positive speedup ratio")
        items.append(
            ExperienceItem(
                pattern=_require(entry, "pattern", str).strip(),
                action=_require(entry, "action", str).strip(),
                outcome=float(outcome),
                lesson=_require(entry, "lesson", str).strip(),
                problem=problem,
            )
        )
    return Summary(explanations=explanations, experience=items)
