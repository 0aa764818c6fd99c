"""The tools the Claude policy offers, per role, and the checks on what the model sends.

Each role answers through its tool (the Executor has two: search/replace hunks, or a whole
module). Schemas are strict (every property required, nothing else accepted), and each tool's
description carries its rules and one example. The parsers check what a schema cannot (kernel
names that exist, hunks that match once, a source that parses and defines the entry, launch
settings the candidate has) and raise :class:`ToolInputError` with a message written for the
model, which gets it back as a corrective ``tool_result``.

All tools are sent on every call, in the same order, so that the tool definitions stay part of
the cached prompt prefix whichever role is speaking.
"""

from __future__ import annotations

import ast
from typing import Any

from kernelopt_jupyter.launch_configs import (
    LaunchConfigError,
    LaunchConfigs,
    read_launch_configs,
    write_launch_configs,
)
from kernelopt_jupyter.problem import Problem

from .base import (
    PLAN_ACTION_NAMES,
    PLAN_ACTIONS,
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

NUM_WARPS = (1, 2, 4, 8, 16, 32)

#: The parameters an action takes (by name); actions not listed take none.
ACTION_PARAMS = {
    "retile": "kernel=<kernel name> (the kernel to retile)",
    "vendor_dispatch": "variant=<label as listed under the vendor-dispatch variants>",
    "vendor_choice": "choice=cudnn_benchmark | gemm_bias_operand",
}

#: The tool(s) each role may call; the first is the one forced on models that allow forcing.
ROLE_TOOLS: dict[str, tuple[str, ...]] = {
    "profiler": ("report_bottlenecks",),
    "planner": ("propose_plans",),
    "executor": ("edit_candidate", "submit_candidate"),
    "tuner": ("propose_launch_configs",),
    "summarizer": ("record_experience",),
}


class ToolInputError(ValueError):
    """A tool call whose input cannot be used; the message is addressed to the model."""


def _obj(properties: dict[str, Any]) -> dict[str, Any]:
    """A strict object schema: every property required, nothing else accepted."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _str(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _array(items: dict[str, Any], description: str = "", min_items: int = 0) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array", "items": items}
    if description:
        schema["description"] = description
    if min_items:
        schema["minItems"] = min_items
    return schema


_BOOL_DISPATCH = {
    "type": "boolean",
    "description": "True only when the edit merely chooses between existing paths.",
}
_ACTIONS_DOC = "\n".join(
    f"- {a.name}: {a.description}; params: {ACTION_PARAMS.get(a.name, 'none')}"
    for a in PLAN_ACTIONS
)

TOOLS: list[dict[str, Any]] = [
    {
        "name": "report_bottlenecks",
        "description": (
            "Profiler only. The sub-kernels worth optimizing, most important first (at most "
            "5), named exactly as in the dispatch map: each one's share of the time (0..1, or "
            "null when nothing was measured), whether it is memory-, compute- or "
            "latency-bound, and one line on what limits it (bytes vs the roofline, launch "
            "overhead, a vendor call already near peak).\n"
            'Example: {"summary": "The matmul is 70% and near its roof; the bias+ReLU '
            'epilogue is a memory-bound extra round trip.", "bottlenecks": [{"kernel": '
            '"triton_poi_fused_addmm_relu_0", "share": 0.3, "bound": "memory", "note": '
            '"reads and writes the whole output once more: fuse it"}]}'
        ),
        "strict": True,
        "input_schema": _obj(
            {
                "summary": _str("Two or three sentences: where the time goes, what bounds it."),
                "bottlenecks": _array(
                    _obj(
                        {
                            "kernel": _str("Kernel name exactly as listed."),
                            "share": {
                                "type": ["number", "null"],
                                "description": "Fraction of the time, 0..1; null if unknown.",
                            },
                            "bound": {
                                "type": "string",
                                "enum": ["memory", "compute", "latency", "unknown"],
                            },
                            "note": _str("One line: what limits it."),
                        }
                    )
                ),
            }
        ),
    },
    {
        "name": "propose_plans",
        "description": (
            "Planner only. Concrete, minimal plans for the parent candidate, the most "
            "promising first; each is ONE change the Executor can make in one edit. Actions "
            f"and their parameters:\n{_ACTIONS_DOC}\n"
            "`params` is a list of name/value pairs (values as text); empty when none.\n"
            'Example: {"plans": [{"title": "Fold bias and ReLU into one kernel after the '
            'matmul", "rationale": "The epilogue is memory-bound: one fewer round trip of '
            'the output. Risk: none, the matmul stays cuBLAS.", "action": "fuse", '
            '"targets": ["triton_poi_fused_addmm_relu_0"], "params": []}]}'
        ),
        "strict": True,
        "input_schema": _obj(
            {
                "plans": _array(
                    _obj(
                        {
                            "title": _str("Short imperative title."),
                            "rationale": _str("Why the profile says this pays off; risks."),
                            "action": {"type": "string", "enum": list(PLAN_ACTION_NAMES)},
                            "targets": _array(
                                {"type": "string"}, "Kernel names as listed in the dispatch map."
                            ),
                            "params": _array(
                                _obj({"name": _str("Parameter."), "value": _str("Its value.")}),
                                "The action's parameters (see above).",
                            ),
                        }
                    ),
                    min_items=1,
                )
            }
        ),
    },
    {
        "name": "edit_candidate",
        "description": (
            "Executor only (preferred for small changes). Search/replace hunks on the source "
            "you are editing (the parent, or on a repair your previous attempt): each "
            "`search` is text copied exactly from that source, long enough to occur exactly "
            "once, replaced by `replace`; hunks apply in order. Use `submit_candidate` when "
            "the change rewrites most of the file.\n"
            'Example: {"hunks": [{"search": "    tl.store(out_ptr + offs, tl.maximum(y, 0.0), '
            'mask=mask)", "replace": "    b = tl.load(b_ptr + offs % N, mask=mask, '
            'other=0.0)\\n    tl.store(out_ptr + offs, tl.maximum(y + b, 0.0), mask=mask)"}], '
            '"explanation": "Added back the bias the epilogue dropped.", "dispatch_only": '
            "false}"
        ),
        "strict": True,
        "input_schema": _obj(
            {
                "hunks": _array(
                    _obj(
                        {
                            "search": _str("Exact text of the current source, unique in it."),
                            "replace": _str("What replaces it."),
                        }
                    ),
                    min_items=1,
                ),
                "explanation": _str("What changed and why, in two or three sentences."),
                "dispatch_only": _BOOL_DISPATCH,
            }
        ),
    },
    {
        "name": "submit_candidate",
        "description": (
            "Executor only. The complete new candidate source (a whole Python module) that "
            "applies the plan, or an empty source with the reason it cannot be done safely.\n"
            'Example: {"source": "import torch\\nimport triton\\n...\\nclass ModelNew('
            'torch.nn.Module):\\n    ...\\n", "explanation": "Fused the bias and ReLU into '
            'the epilogue kernel.", "dispatch_only": false}'
        ),
        "strict": True,
        "input_schema": _obj(
            {
                "source": _str("The whole module, or '' to decline."),
                "explanation": _str("What changed and why, in two or three sentences."),
                "dispatch_only": _BOOL_DISPATCH,
            }
        ),
    },
    {
        "name": "propose_launch_configs",
        "description": (
            "Tuner only. Launch-configuration variants of the candidate: each variant sets "
            "entries of its LAUNCH_CONFIGS dict, one `settings` row per (kernel, key, value); "
            "keys must already exist for that kernel (block-size constexprs as powers of two, "
            "num_warps in 1, 2, 4, 8, 16, 32, num_stages 1..8).\n"
            'Example: {"explanation": "Memory-bound elementwise kernel: larger blocks.", '
            '"variants": [{"label": "XBLOCK 2048, 8 warps", "settings": [{"kernel": '
            '"triton_poi_fused_addmm_relu_0", "key": "XBLOCK", "value": 2048}, {"kernel": '
            '"triton_poi_fused_addmm_relu_0", "key": "num_warps", "value": 8}]}]}'
        ),
        "strict": True,
        "input_schema": _obj(
            {
                "explanation": _str("Why these variants, from the kernels' shapes and bounds."),
                "variants": _array(
                    _obj(
                        {
                            "label": _str("Short label."),
                            "settings": _array(
                                _obj(
                                    {
                                        "kernel": _str("A key of LAUNCH_CONFIGS."),
                                        "key": _str("One of that kernel's settings."),
                                        "value": {"type": "integer"},
                                    }
                                ),
                                min_items=1,
                            ),
                        }
                    ),
                    min_items=1,
                ),
            }
        ),
    },
    {
        "name": "record_experience",
        "description": (
            "Summarizer only. A plain-language explanation for every step, and at most 3 "
            "reusable lessons (clear wins >= 1.05x, clear regressions, repeated gate "
            "failures).\n"
            'Example: {"explanations": [{"candidate": "c2", "text": "The bias and ReLU now '
            "run in the kernel that writes the matmul's output, so the output crosses memory "
            'once instead of twice; not timed on this machine."}], "experience": '
            '[{"pattern": "elementwise epilogue after a vendor matmul", "action": "fuse", '
            '"outcome": 1.0, "lesson": "fold bias and activation into one epilogue kernel"}]}'
        ),
        "strict": True,
        "input_schema": _obj(
            {
                "explanations": _array(
                    _obj({"candidate": _str("Candidate id."), "text": _str("The explanation.")})
                ),
                "experience": _array(
                    _obj(
                        {
                            "pattern": _str("A pattern another problem can be recognized by."),
                            "action": _str("The action."),
                            "outcome": {
                                "type": "number",
                                "description": "Speedup child over parent (1.0 if unmeasured).",
                            },
                            "lesson": _str("The lesson."),
                        }
                    )
                ),
            }
        ),
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


def _params(raw: Any, where: str) -> dict[str, Any]:
    """Plan parameters from the tool's name/value list (an object is accepted too)."""
    if isinstance(raw, dict):
        return dict(raw)
    if not isinstance(raw, list):
        raise ToolInputError(f"{where}.params must be a list of name/value pairs")
    out: dict[str, Any] = {}
    for j, pair in enumerate(raw):
        if not isinstance(pair, dict) or not isinstance(pair.get("name"), str):
            raise ToolInputError(f"{where}.params[{j}] must be {{name, value}}")
        out[pair["name"]] = pair.get("value")
    return out


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
        if action not in PLAN_ACTION_NAMES:
            raise ToolInputError(f"plans[{i}].action `{action}` is not one of {PLAN_ACTION_NAMES}")
        targets = entry.get("targets") or []
        if not isinstance(targets, list) or not all(isinstance(t, str) for t in targets):
            raise ToolInputError(f"plans[{i}].targets must be a list of kernel names")
        unknown = _unknown_names(targets, kernels)
        if unknown:
            raise ToolInputError(
                f"plans[{i}].targets {unknown} are not listed kernels; use names from "
                f"{sorted(k.name for k in kernels)}"
            )
        plans.append(
            Plan(
                id=f"{id_prefix}{i + 1}",
                title=_require(entry, "title", str).strip(),
                rationale=_require(entry, "rationale", str).strip(),
                action=action,
                targets=list(targets),
                params=_params(entry.get("params") or [], f"plans[{i}]"),
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
    """The Executor's ``submit_candidate`` input as an :class:`Edit` (None source: declined)."""
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


def apply_hunks(source: str, hunks: list[Any]) -> str:
    """``source`` with each search/replace hunk applied in order; each must match once."""
    out = source
    for i, hunk in enumerate(hunks):
        if not isinstance(hunk, dict):
            raise ToolInputError(f"hunks[{i}] must be an object with `search` and `replace`")
        search = _require(hunk, "search", str)
        replace = _require(hunk, "replace", str)
        if not search:
            raise ToolInputError(f"hunks[{i}].search is empty: copy the text to replace")
        count = out.count(search)
        if count != 1:
            where = "does not occur" if count == 0 else f"occurs {count} times"
            raise ToolInputError(
                f"hunks[{i}].search {where} in the source (after the hunks before it); copy "
                "it exactly, with its indentation, and make it long enough to be unique"
            )
        out = out.replace(search, replace, 1)
    return out


def parse_hunk_edit(data: dict[str, Any], base: str, problem: Problem) -> Edit:
    """The Executor's ``edit_candidate`` input applied to ``base`` as an :class:`Edit`."""
    hunks = _require(data, "hunks", list)
    if not hunks:
        raise ToolInputError("`hunks` is empty: give at least one search/replace hunk")
    explanation = _require(data, "explanation", str).strip()
    source = apply_hunks(base, hunks)
    if source == base:
        raise ToolInputError("the hunks change nothing: the source is the same as before")
    check_candidate_source(source, problem)
    if not source.endswith("\n"):
        source += "\n"
    return Edit(source, explanation, bool(data.get("dispatch_only", False)))


def launch_configs(source: str) -> LaunchConfigs | None:
    """The candidate's ``LAUNCH_CONFIGS`` (via the shared codec), or None when it has none
    or the dict breaks the convention."""
    try:
        configs = read_launch_configs(source)
    except LaunchConfigError:
        return None
    return configs or None


def with_launch_configs(source: str, overrides: LaunchConfigs) -> str:
    """``source`` with its ``LAUNCH_CONFIGS`` entries updated by ``overrides`` (checked)."""
    configs = launch_configs(source)
    if configs is None:
        raise ToolInputError("the candidate has no literal LAUNCH_CONFIGS dict to tune")
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
    return write_launch_configs(source, merged)


def _overrides(entry: dict[str, Any], where: str) -> LaunchConfigs:
    """A variant's settings rows (or a legacy ``configs`` object) as kernel -> settings."""
    if isinstance(entry.get("configs"), dict) and "settings" not in entry:
        return dict(entry["configs"])
    rows = _require(entry, "settings", list)
    out: LaunchConfigs = {}
    for j, row in enumerate(rows):
        if not isinstance(row, dict):
            raise ToolInputError(f"{where}.settings[{j}] must be {{kernel, key, value}}")
        kernel = _require(row, "kernel", str)
        key = _require(row, "key", str)
        value = _require(row, "value", int)
        out.setdefault(kernel, {})[key] = value
    return out


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
        try:
            new = with_launch_configs(source, _overrides(entry, f"variants[{i}]"))
        except ToolInputError as exc:
            raise ToolInputError(f"variants[{i}] ({label}): {exc}") from None
        if new in seen or launch_configs(new) == launch_configs(source):
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
