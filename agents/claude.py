"""The Claude policy: the five agents (roles, prompts, answers) through :mod:`.claude_client`.

Each agent call is one conversation: a streamed request whose thinking and text go into the
event stream as they arrive (``agent_thinking`` / ``agent_text``), and whose structured answer
comes back through the role's tool (see :mod:`.claude_tools`). The stable context (rules of the
house with one worked example, then the problem with its dispatch map) sits in cached system
blocks; the candidate a role works on is a cached block of the user turn, so the Profiler, the
Planner, the Executor's repairs and the Tuner reuse it.

Transport, retries, usage, budgets and stopping are the client's (:mod:`.claude_client`); this
module decides what to ask and checks what comes back.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from kernelopt_jupyter.candidate import Candidate, unified_diff
from kernelopt_jupyter.secrets import redact

from . import prompts
from .base import (
    AgentContext,
    AgentIO,
    Edit,
    ExperienceItem,
    Plan,
    ProfileReport,
    StepRecord,
    Summary,
    TuneProposal,
)
from .claude_client import (
    DEFAULT_MODEL,
    KEY_ENV,
    MODEL_ENV,
    PRICES,
    ClaudeClient,
    ClaudeError,
    ClaudeNoAnswer,
    ClaudeUnavailable,
    Meter,
    Price,
    import_anthropic,
    price_for,
    require_key,
    resolve_model,
    thinks_by_default,
)
from .claude_tools import (
    ROLE_TOOLS,
    TOOLS,
    ToolInputError,
    launch_configs,
    parse_edit,
    parse_hunk_edit,
    parse_plans,
    parse_report,
    parse_summary,
    parse_tune,
)
from .memory import SHOWN_TO_PLANNER, ExperienceMemory
from .offline import patterns_of
from .search import source_key

__all__ = [
    "DEFAULT_MODEL",
    "KEY_ENV",
    "MODEL_ENV",
    "PRICES",
    "ClaudeError",
    "ClaudeNoAnswer",
    "ClaudePolicy",
    "ClaudeUnavailable",
    "Price",
    "price_for",
    "resolve_model",
    "thinks_by_default",
]

T = TypeVar("T")


class _IOSink:
    """The client's stream sink for one agent call: every piece becomes an event."""

    def __init__(self, io: AgentIO) -> None:
        self.io = io

    def text(self, delta: str) -> None:
        """A piece of the answer."""
        self.io.text(delta)

    def thinking(self, delta: str) -> None:
        """A piece of the model's summarized thinking, as its own event type."""
        self.io.log.emit("agent_thinking", agent=self.io.agent, step=self.io.step, delta=delta)

    def retry(self, status: str, reason: str, wait_s: float, attempt: int, limit: int) -> None:
        """A retry the CLI and the panel show (status, wait, attempt)."""
        self.io.log.emit(
            "retry",
            agent=self.io.agent,
            step=self.io.step,
            status=status,
            reason=reason,
            wait_s=wait_s,
            attempt=attempt,
            max_attempts=limit,
        )

    def usage(self, counts: dict[str, float]) -> None:
        """One request's billed counts, added to the agent call's usage."""
        self.io.add_usage(**counts)


#: Per role: (effort, max_tokens). The Executor writes code and needs room; the Tuner and the
#: Summarizer answer from facts in front of them.
ROLE_LIMITS: dict[str, tuple[str, int]] = {
    "profiler": ("medium", 8_000),
    "planner": ("high", 16_000),
    "executor": ("high", 32_000),
    "tuner": ("low", 8_000),
    "summarizer": ("low", 8_000),
}
#: The ceiling a role's max_tokens is raised to after an answer stopped at its limit.
MAX_OUTPUT_TOKENS = 64_000


@dataclass
class _Thread:
    """An Executor conversation kept for its repair: the turns so far and what it submitted."""

    messages: list[dict[str, Any]]
    call_id: str
    source: str


@dataclass
class _Answer:
    """A parsed tool answer, with the conversation that produced it."""

    value: Any
    messages: list[dict[str, Any]]
    call_id: str


class ClaudePolicy:
    """The five agents through Claude.

    ``model``: a model id, else ``$KERNELOPT_MODEL``, else :data:`DEFAULT_MODEL`.
    ``max_tokens`` / ``effort``: when given, every role's output limit and effort; by default
    each role has its own (:data:`ROLE_LIMITS`), and a role whose answer stopped at its limit
    gets twice the room from then on. ``client_factory``: returns an ``anthropic.Anthropic``-
    like client; by default one is made from the environment (``ANTHROPIC_API_KEY``,
    ``ANTHROPIC_BASE_URL``) with the SDK's own retries off, and a missing key raises
    :class:`ClaudeUnavailable` here, before any work is done. ``memory``: the experience store
    shown to the Planner when the context carries none. ``budget_tokens`` / ``budget_usd``:
    limits on everything this policy spends (input, output, cache reads and writes); the
    search ends "budget used" when one is reached. ``max_attempts``, ``call_deadline_s``,
    ``sleep`` and ``clock`` shape the client's retries (:class:`.claude_client.ClaudeClient`).
    """

    name = "claude"

    def __init__(
        self,
        model: str | None = None,
        max_tokens: int | None = None,
        client_factory: Callable[[], Any] | None = None,
        *,
        max_attempts: int = 6,
        backoff_s: float = 1.0,
        max_backoff_s: float = 60.0,
        timeout_s: float = 600.0,
        call_deadline_s: float = 1800.0,
        effort: str | None = None,
        tune_variants: int = 4,
        memory: ExperienceMemory | None = None,
        budget_tokens: int | None = None,
        budget_usd: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.model = resolve_model(model)
        self.tune_variants = tune_variants
        self.memory = memory
        if client_factory is None:
            import_anthropic()
            require_key()
        if budget_usd is not None and price_for(self.model) is None:
            # A dollar limit on a model we cannot price would never trigger: refuse it.
            raise ClaudeUnavailable(
                f"--max-usd needs a known price and {self.model!r} has none in the price "
                "table; use --max-tokens, or a listed model"
            )
        self.meter = Meter(budget_tokens, budget_usd)
        self.client = ClaudeClient(
            self.model,
            client_factory,
            meter=self.meter,
            max_attempts=max_attempts,
            backoff_s=backoff_s,
            max_backoff_s=max_backoff_s,
            timeout_s=timeout_s,
            call_deadline_s=call_deadline_s,
            sleep=sleep,
            clock=clock,
        )
        thinks = thinks_by_default(self.model)
        self._limits = {
            role: (
                effort or (default_effort if thinks else None),
                int(max_tokens) if max_tokens else default_tokens,
            )
            for role, (default_effort, default_tokens) in ROLE_LIMITS.items()
        }
        self._force_tool = not thinks
        self._thinking = thinks
        self._strict = True
        self._effort_ok = True
        self._price_warned = False
        self._threads: dict[tuple[str | None, str], _Thread] = {}
        self._profiled: tuple[tuple[str, float | None], ProfileReport] | None = None
        self._context: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"ClaudePolicy(model={self.model!r})"

    def preflight(self) -> None:
        """One cheap authenticated call before any analysis: a bad key or model fails now."""
        self.client.preflight()

    def cancel(self) -> None:
        """Stop: close the stream in flight; later calls end the search as stopped."""
        self.client.cancel()

    def limits(self, role: str) -> tuple[str | None, int]:
        """The (effort, max_tokens) the next request of ``role`` is sent with."""
        return self._limits[role]

    # ----------------------------------------------------------------- the five roles

    def profile(self, ctx: AgentContext, io: AgentIO) -> ProfileReport:
        """Profiler: rank the sub-kernels by what optimizing them could gain.

        Asked about the beam's best candidate; when that has not changed since the last
        report, the report stands and nothing is sent (the same data gives the same answer).
        """
        best = _best_so_far(io)
        key = (best[0].id, best[1]) if best else ("", None)
        if self._profiled is not None and self._profiled[0] == key:
            io.text(
                f"[the search's best candidate is still {key[0] or 'the starting point'}: "
                "the last report stands, no new request]"
            )
            return self._profiled[1]
        blocks = []
        if best is not None:
            cand, ms = best
            timing = "not timed (no GPU)" if ms is None else f"{ms:.4g} ms"
            blocks.append(_text(prompts.candidate_text(cand), cache=True))
            note = f"The search's best candidate so far is `{cand.id}` ({timing}), above."
        else:
            note = "No candidate has passed the gates yet."
        task = "\n\n".join([note, self._budget(ctx), prompts.ROLE_PROFILER])
        blocks.append(_text(task))
        report = self._converse(
            ctx, "profiler", [_user(blocks)], lambda _t, d: parse_report(d, ctx.kernels), io
        ).value
        self._profiled = (key, report)
        return report

    def plan(
        self, ctx: AgentContext, report: ProfileReport, parent: Candidate, n: int, io: AgentIO
    ) -> list[Plan]:
        """Planner: up to ``n`` minimal concrete plans for ``parent``."""
        task = "\n\n".join(
            [
                prompts.report_text(report),
                prompts.memory_text(ctx.memory or self._remembered(ctx)),
                self._budget(ctx),
                *(
                    [
                        "A person reviewing this search rejected these plans, with their reasons"
                        " (do not propose them again; take the reasons into account): "
                        + "; ".join(ctx.rejections)
                    ]
                    if ctx.rejections
                    else []
                ),
                *(
                    [
                        "A person reviewing this search gave these directions, latest last "
                        "(follow the latest where it applies): " + "; ".join(ctx.directions)
                    ]
                    if ctx.directions
                    else []
                ),
                prompts.ROLE_PLANNER.format(n=n),
            ]
        )
        blocks = [_text(prompts.candidate_text(parent), cache=True), _text(task)]
        prefix = f"s{io.step}-p"
        plans: list[Plan] = self._converse(
            ctx,
            "planner",
            [_user(blocks)],
            lambda _t, d: parse_plans(d, ctx.kernels, n, prefix),
            io,
        ).value
        return plans

    def execute(
        self,
        ctx: AgentContext,
        plan: Plan,
        parent: Candidate,
        feedback: str | None,
        io: AgentIO,
    ) -> Edit:
        """Executor: the parent with the plan applied (hunks or a whole module).

        A retry after a gate failure is a repair in the same conversation: the model's own
        failed attempt is answered with its diff against the parent and every gate's detail.
        """
        key = (parent.id, plan.id)
        thread = self._threads.pop(key, None) if feedback else None
        if thread is not None:
            gates = prompts.gates_text(_gates_of(io, thread.source), feedback or "")
            diff = unified_diff(parent.source, thread.source, parent.id, "your attempt")
            messages = [
                *thread.messages,
                _user(
                    [
                        _tool_result(thread.call_id, prompts.repair_text(gates, diff), True),
                        _text(self._budget(ctx)),
                    ]
                ),
            ]
            base = thread.source
        else:
            parts = [prompts.plan_text(plan)]
            if feedback:
                parts.append(prompts.feedback_text(feedback))
            parts += [self._budget(ctx), prompts.ROLE_EXECUTOR]
            blocks = [_text(prompts.candidate_text(parent), cache=True), _text("\n\n".join(parts))]
            messages = [_user(blocks)]
            base = parent.source

        def parse(tool: str, data: dict[str, Any]) -> Edit:
            if tool == "edit_candidate":
                return parse_hunk_edit(data, base, ctx.problem)
            return parse_edit(data, ctx.problem)

        try:
            answer = self._converse(ctx, "executor", messages, parse, io)
        except ClaudeNoAnswer as exc:
            io.text(f"\n[{exc}]\n")
            return Edit(source=None, explanation=str(exc))
        edit: Edit = answer.value
        if edit.source is not None:
            self._threads[key] = _Thread(answer.messages, answer.call_id, edit.source)
            while len(self._threads) > 16:  # old plans' conversations are not coming back
                self._threads.pop(next(iter(self._threads)))
        return edit

    def tune(self, ctx: AgentContext, candidate: Candidate, io: AgentIO) -> TuneProposal:
        """Tuner: variants of the candidate's ``LAUNCH_CONFIGS`` worth measuring (GPU only)."""
        if ctx.device != "cuda":
            # Nothing is timed on the CPU: a variant could only be checked, never chosen.
            io.text("[no Tuner on the CPU: launch configurations are only worth it where timed]")
            return TuneProposal(variants=[], explanation="not tuned: nothing is timed on the CPU")
        configs = launch_configs(candidate.source)
        if configs is None:
            # Nothing the Tuner may change: say so rather than pay for a call.
            io.text("This candidate has no LAUNCH_CONFIGS dict, so there is nothing to tune.")
            return TuneProposal(variants=[], explanation="no LAUNCH_CONFIGS dict to tune")
        current = "\n".join(f"- {name}: {cfg}" for name, cfg in configs.items())
        task = (
            f"Current LAUNCH_CONFIGS:\n{current}\n\n{self._budget(ctx)}\n\n"
            + prompts.ROLE_TUNER.format(n=self.tune_variants)
        )
        blocks = [
            _text(prompts.candidate_text(candidate, "Candidate to tune"), cache=True),
            _text(task),
        ]
        source, n = candidate.source, self.tune_variants
        try:
            proposal: TuneProposal = self._converse(
                ctx, "tuner", [_user(blocks)], lambda _t, d: parse_tune(d, source, n), io
            ).value
        except ClaudeNoAnswer as exc:
            io.text(f"\n[{exc}]\n")
            return TuneProposal(variants=[], explanation=str(exc))
        return proposal

    def summarize(self, ctx: AgentContext, steps: list[StepRecord], io: AgentIO) -> Summary:
        """Summarizer: a plain-language explanation per step and reusable experience."""
        if not steps:
            return Summary(explanations={}, experience=[])
        tags = ", ".join(sorted(patterns_of(ctx)))
        task = (
            f"{prompts.steps_text(steps)}\n\n{self._budget(ctx)}\n\n{prompts.ROLE_SUMMARIZER}\n"
            f"This problem's pattern tags: {tags}. Use one of them as an item's `pattern` when "
            "it fits, so that every kind of agent can find the lesson again."
        )
        name = ctx.problem.name
        try:
            summary: Summary = self._converse(
                ctx,
                "summarizer",
                [_user([_text(task)])],
                lambda _t, d: parse_summary(d, steps, name),
                io,
            ).value
        except ClaudeNoAnswer as exc:
            io.text(f"\n[{exc}]\n")
            return Summary(explanations={}, experience=[])
        return summary

    def _remembered(self, ctx: AgentContext) -> list[ExperienceItem]:
        """Lessons for the Planner: those tagged like this problem first, then the strongest."""
        if self.memory is None:
            return []
        first = self.memory.relevant(patterns_of(ctx))
        rest = sorted(
            (i for i in self.memory.items if i not in first),
            key=lambda i: -abs(math.log(max(i.outcome, 1e-9))),
        )
        return [*first, *rest][:SHOWN_TO_PLANNER]

    def _budget(self, ctx: AgentContext) -> str:
        """Where the search stands and what the API budget has left, for pacing."""
        return f"{prompts.budget_text(ctx)}\n{self.meter.remaining_text()}"

    # ----------------------------------------------------------------- one agent call

    def _system(self, ctx: AgentContext, io: AgentIO) -> list[dict[str, Any]]:
        # Rendered once per problem: a byte-identical block is what keeps the cache warm.
        key = f"{ctx.problem.path}\0{ctx.problem.source}\0{ctx.device}"
        if key not in self._context:
            self._context[key] = prompts.problem_context(ctx, _dispatch_records(io))
        return [
            _text(prompts.HOUSE_RULES, cache=True),
            _text(self._context[key], cache=True),
        ]

    def _converse(
        self,
        ctx: AgentContext,
        role: str,
        messages: list[dict[str, Any]],
        parse: Callable[[str, dict[str, Any]], T],
        io: AgentIO,
    ) -> _Answer:
        """Ask, parse the role's tool call, and on a bad or missing call correct once."""
        tools = ROLE_TOOLS[role]
        names = " or ".join(f"`{t}`" for t in tools)
        system = self._system(ctx, io)
        messages = list(messages)
        for round_ in (1, 2):
            message = self._request(role, system, messages, io)
            calls = [b for b in message.content if getattr(b, "type", None) == "tool_use"]
            for call in calls:
                io.tool_call(call.name, call.input if isinstance(call.input, dict) else {})
            problem: str
            wanted = [c for c in calls if c.name in tools]
            if wanted and message.stop_reason != "max_tokens":
                call = wanted[0]
                try:
                    if not isinstance(call.input, dict):
                        raise ToolInputError("the tool input must be a JSON object")
                    value = parse(call.name, call.input)
                    done = [*messages, _assistant(message.content)]
                    return _Answer(value, done, str(call.id))
                except ToolInputError as exc:
                    problem = f"the `{call.name}` input was not usable: {exc}"
            elif message.stop_reason == "max_tokens":
                effort, limit = self._limits[role]
                problem = (
                    f"the answer hit the output limit ({limit} tokens) before the {names} "
                    "call was complete"
                )
                if limit < MAX_OUTPUT_TOKENS:
                    raised = min(MAX_OUTPUT_TOKENS, limit * 2)
                    self._limits[role] = (effort, raised)
                    io.text(f"\n[{role}: max_tokens raised from {limit} to {raised}]\n")
            else:
                problem = f"the answer did not call {names}"
            if round_ == 2:
                raise ClaudeNoAnswer(
                    redact(
                        f"{role}: no usable answer from {self.model} after a correction: {problem}"
                    )
                )
            io.text(redact(f"\n[{problem}; asking for a correction]\n"))
            messages.append(_assistant(message.content))
            messages.append(_user(_correction(calls, tools, problem)))
        raise AssertionError("unreachable")

    def _tools(self) -> list[dict[str, Any]]:
        if self._strict:
            return TOOLS
        return [{k: v for k, v in t.items() if k != "strict"} for t in TOOLS]

    def _request_params(
        self, role: str, system: list[dict[str, Any]], messages: list[dict[str, Any]]
    ) -> dict[str, Any]:
        effort, limit = self._limits[role]
        tools = ROLE_TOOLS[role]
        choice: dict[str, Any] = {"type": "auto"}
        if self._force_tool:
            choice = {"type": "tool", "name": tools[0]} if len(tools) == 1 else {"type": "any"}
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": limit,
            "system": system,
            "tools": self._tools(),
            "messages": messages,
            "tool_choice": choice,
        }
        if self._thinking:
            # "summarized" makes the model's reasoning visible to the learner in the panel.
            params["thinking"] = {"type": "adaptive", "display": "summarized"}
        if effort and self._effort_ok:
            params["output_config"] = {"effort": effort}
        return params

    def _request(
        self, role: str, system: list[dict[str, Any]], messages: list[dict[str, Any]], io: AgentIO
    ) -> Any:
        """One streamed request through the client (retries, usage and budgets are its)."""
        if self.client.price is None and not self._price_warned:
            self._price_warned = True
            io.text(f"\n[no price known for {self.model}: its cost is not counted]\n")
        return self.client.request(
            lambda: self._request_params(role, system, messages), _IOSink(io), self._adapt
        )

    def _adapt(self, detail: str) -> bool:
        """Drop a request feature this model turned out not to accept (once each)."""
        low = detail.lower()
        if self._force_tool and "tool_choice" in low:
            self._force_tool = False
            return True
        if self._thinking and "thinking" in low:
            self._thinking = False
            return True
        if self._strict and "strict" in low:
            self._strict = False
            return True
        if self._effort_ok and ("effort" in low or "output_config" in low):
            self._effort_ok = False
            return True
        return False


# ----------------------------------------------------------------- helpers


def _text(text: str, cache: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if cache:
        block["cache_control"] = {"type": "ephemeral"}
    return block


def _content_params(content: list[Any]) -> list[dict[str, Any]]:
    """The assistant's blocks as request params (thinking blocks passed back unmodified)."""
    out: list[dict[str, Any]] = []
    for b in content:
        if b.type == "text" and b.text:
            out.append({"type": "text", "text": b.text})
        elif b.type == "thinking":
            out.append({"type": "thinking", "thinking": b.thinking, "signature": b.signature})
        elif b.type == "redacted_thinking":
            out.append({"type": "redacted_thinking", "data": b.data})
        elif b.type == "tool_use":
            data = b.input if isinstance(b.input, dict) else {}
            out.append({"type": "tool_use", "id": b.id, "name": b.name, "input": data})
    return out or [{"type": "text", "text": "(no answer)"}]


def _user(content: list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": "user", "content": content}


def _assistant(content: list[Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": _content_params(content)}


def _tool_result(call_id: str, text: str, is_error: bool) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "is_error": is_error, "content": text}


def _correction(calls: list[Any], tools: tuple[str, ...], problem: str) -> list[dict[str, Any]]:
    """The user turn that answers every tool call and asks for the right one."""
    blocks: list[dict[str, Any]] = []
    for call in calls:
        note = problem if call.name in tools else f"`{call.name}` is not this role's tool"
        blocks.append(_tool_result(call.id, note, True))
    names = " or ".join(f"`{t}`" for t in tools)
    blocks.append(
        _text(
            f"That did not work: {problem}. Call {names} again, once, with a complete and "
            "corrected input. Keep any commentary short."
        )
    )
    return blocks


def _dispatch_records(io: AgentIO) -> list[dict[str, Any]]:
    """The reference's dispatch-map records (bytes, FLOPs, roofline) from the profile event."""
    for event in reversed(io.log.of_type("profile")):
        if event.data.get("candidate"):
            continue
        dmap = event.data.get("dispatch_map") or {}
        records = dmap.get("records") if isinstance(dmap, dict) else None
        if isinstance(records, list):
            return [r for r in records if isinstance(r, dict)]
    return []


def _gates_of(io: AgentIO, source: str) -> list[dict[str, Any]]:
    """Every gate's result for the candidate whose code is ``source`` (from its verdict)."""
    key = source_key(source)
    for event in reversed(io.log.of_type("verdict")):
        if event.data.get("source_key") == key:
            report = event.data.get("report") or {}
            gates = report.get("gates") if isinstance(report, dict) else None
            if isinstance(gates, list):
                return [g for g in gates if isinstance(g, dict)]
    return []


def _best_so_far(io: AgentIO) -> tuple[Candidate, float | None] | None:
    """The search's best usable candidate so far (fastest; untimed: the first), from the log."""
    sources: dict[str, Candidate] = {}
    for event in io.log.of_type("candidate"):
        d = event.data
        sources[str(d.get("id"))] = Candidate(
            str(d.get("id")), str(d.get("source") or ""), d.get("parent"), str(d.get("agent"))
        )
    best: tuple[Candidate, float | None] | None = None
    for event in io.log.of_type("verdict"):
        d = event.data
        cand = sources.get(str(d.get("candidate")))
        report = d.get("report") or {}
        status = {
            g.get("name"): g.get("status") for g in report.get("gates", []) if isinstance(g, dict)
        }
        usable = (
            status.get("static") == "pass"
            and status.get("correctness") == "pass"
            and status.get("fp64") in ("pass", "skipped")
        )
        if cand is None or not usable:
            continue
        ms = d.get("ms")
        if best is None or (ms is not None and (best[1] is None or ms < best[1])):
            best = (cand, ms)
    return best
