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
from typing import Any, TypeVar

from kernelopt_jupyter.candidate import Candidate
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
    parse_plans,
    parse_report,
    parse_summary,
    parse_tune,
)
from .memory import SHOWN_TO_PLANNER, ExperienceMemory
from .offline import patterns_of

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
        self._last: str | None = None

    def _gap(self, kind: str) -> None:
        # A new block of the same kind after another one reads better with a paragraph break.
        if self._last is not None and self._last != kind and kind == "text":
            self.io.text("\n\n")
        self._last = kind

    def text(self, delta: str) -> None:
        """A piece of the answer."""
        self._gap("text")
        self.io.text(delta)

    def thinking(self, delta: str) -> None:
        """A piece of the model's summarized thinking, as its own event type."""
        self._gap("thinking")
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


class ClaudePolicy:
    """The five agents through Claude.

    ``model``: a model id, else ``$KERNELOPT_MODEL``, else :data:`DEFAULT_MODEL`.
    ``max_tokens``: the output limit of each request (thinking included).
    ``client_factory``: returns an ``anthropic.Anthropic``-like client; by default one is made
    from the environment (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``) with the SDK's own
    retries off. Without a factory a missing key raises :class:`ClaudeUnavailable` here, before
    any work is done. ``memory``: the experience store shown to the Planner when the context
    carries none (lessons matching the problem's pattern tags first, then the strongest).
    ``max_attempts`` bounds the requests per agent call (retries included); ``sleep`` is how
    the policy waits between them (tests pass a recorder). ``effort`` (low ... max) is sent
    as ``output_config.effort`` when given; ``tune_variants`` caps the Tuner's proposals.
    """

    name = "claude"

    def __init__(
        self,
        model: str | None = None,
        max_tokens: int = 32_000,
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
        self.max_tokens = int(max_tokens)
        self.effort = effort
        self.tune_variants = tune_variants
        self.memory = memory
        if client_factory is None:
            import_anthropic()
            require_key()
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
        self._force_tool = not thinks_by_default(self.model)
        self._thinking = thinks_by_default(self.model)
        self._price_warned = False

    def __repr__(self) -> str:
        return f"ClaudePolicy(model={self.model!r}, max_tokens={self.max_tokens})"

    def preflight(self) -> None:
        """One cheap authenticated call before any analysis: a bad key or model fails now."""
        self.client.preflight()

    def cancel(self) -> None:
        """Stop: close the stream in flight; later calls end the search as stopped."""
        self.client.cancel()

    # ----------------------------------------------------------------- the five roles

    def profile(self, ctx: AgentContext, io: AgentIO) -> ProfileReport:
        """Profiler: rank the sub-kernels by what optimizing them could gain."""
        task = f"{prompts.budget_text(ctx)}\n\n{prompts.ROLE_PROFILER}"
        return self._converse(
            ctx, "profiler", [_text(task)], lambda d: parse_report(d, ctx.kernels), io
        )

    def plan(
        self, ctx: AgentContext, report: ProfileReport, parent: Candidate, n: int, io: AgentIO
    ) -> list[Plan]:
        """Planner: up to ``n`` minimal concrete plans for ``parent``."""
        task = "\n\n".join(
            [
                prompts.report_text(report),
                prompts.memory_text(ctx.memory or self._remembered(ctx)),
                prompts.budget_text(ctx),
                prompts.ROLE_PLANNER.format(n=n),
            ]
        )
        blocks = [_text(prompts.candidate_text(parent), cache=True), _text(task)]
        prefix = f"s{io.step}-p"
        return self._converse(
            ctx, "planner", blocks, lambda d: parse_plans(d, ctx.kernels, n, prefix), io
        )

    def execute(
        self,
        ctx: AgentContext,
        plan: Plan,
        parent: Candidate,
        feedback: str | None,
        io: AgentIO,
    ) -> Edit:
        """Executor: the parent with the plan applied, as a whole new source."""
        parts = [prompts.plan_text(plan)]
        if feedback:
            parts.append(prompts.feedback_text(feedback))
        parts.append(prompts.ROLE_EXECUTOR)
        blocks = [_text(prompts.candidate_text(parent), cache=True), _text("\n\n".join(parts))]
        try:
            return self._converse(ctx, "executor", blocks, lambda d: parse_edit(d, ctx.problem), io)
        except ClaudeNoAnswer as exc:
            io.text(f"\n[{exc}]\n")
            return Edit(source=None, explanation=str(exc))

    def tune(self, ctx: AgentContext, candidate: Candidate, io: AgentIO) -> TuneProposal:
        """Tuner: variants of the candidate's ``LAUNCH_CONFIGS`` worth measuring."""
        found = launch_configs(candidate.source)
        if found is None:
            # Nothing the Tuner may change: say so rather than pay for a call.
            io.text("This candidate has no LAUNCH_CONFIGS dict, so there is nothing to tune.")
            return TuneProposal(variants=[], explanation="no LAUNCH_CONFIGS dict to tune")
        configs, _ = found
        current = "\n".join(f"- {name}: {cfg}" for name, cfg in configs.items())
        task = f"Current LAUNCH_CONFIGS:\n{current}\n\n" + prompts.ROLE_TUNER.format(
            n=self.tune_variants
        )
        blocks = [
            _text(prompts.candidate_text(candidate, "Candidate to tune"), cache=True),
            _text(task),
        ]
        source, n = candidate.source, self.tune_variants
        try:
            return self._converse(ctx, "tuner", blocks, lambda d: parse_tune(d, source, n), io)
        except ClaudeNoAnswer as exc:
            io.text(f"\n[{exc}]\n")
            return TuneProposal(variants=[], explanation=str(exc))

    def summarize(self, ctx: AgentContext, steps: list[StepRecord], io: AgentIO) -> Summary:
        """Summarizer: a plain-language explanation per step and reusable experience."""
        if not steps:
            return Summary(explanations={}, experience=[])
        tags = ", ".join(sorted(patterns_of(ctx)))
        task = (
            f"{prompts.steps_text(steps)}\n\n{prompts.ROLE_SUMMARIZER}\n"
            f"This problem's pattern tags: {tags}. Use one of them as an item's `pattern` when "
            "it fits, so that every kind of agent can find the lesson again."
        )
        name = ctx.problem.name
        try:
            return self._converse(
                ctx, "summarizer", [_text(task)], lambda d: parse_summary(d, steps, name), io
            )
        except ClaudeNoAnswer as exc:
            io.text(f"\n[{exc}]\n")
            return Summary(explanations={}, experience=[])

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

    # ----------------------------------------------------------------- one agent call

    def _system(self, ctx: AgentContext) -> list[dict[str, Any]]:
        return [
            _text(prompts.HOUSE_RULES, cache=True),
            _text(prompts.problem_context(ctx), cache=True),
        ]

    def _converse(
        self,
        ctx: AgentContext,
        role: str,
        user_blocks: list[dict[str, Any]],
        parse: Callable[[dict[str, Any]], T],
        io: AgentIO,
    ) -> T:
        """Ask, parse the role's tool call, and on a bad or missing call correct once."""
        tool = ROLE_TOOLS[role]
        system = self._system(ctx)
        messages: list[dict[str, Any]] = [{"role": "user", "content": user_blocks}]
        for round_ in (1, 2):
            message = self._request(system, messages, tool, io)
            calls = [b for b in message.content if getattr(b, "type", None) == "tool_use"]
            for call in calls:
                io.tool_call(call.name, call.input if isinstance(call.input, dict) else {})
            problem: str
            wanted = [c for c in calls if c.name == tool]
            if wanted and message.stop_reason != "max_tokens":
                data = wanted[0].input
                try:
                    if not isinstance(data, dict):
                        raise ToolInputError("the tool input must be a JSON object")
                    return parse(data)
                except ToolInputError as exc:
                    problem = f"the `{tool}` input was not usable: {exc}"
            elif message.stop_reason == "max_tokens":
                problem = (
                    f"the answer hit the output limit ({self.max_tokens} tokens) before the "
                    f"`{tool}` call was complete"
                )
            else:
                problem = f"the answer did not call `{tool}`"
            if round_ == 2:
                raise ClaudeNoAnswer(
                    redact(
                        f"{role}: no usable answer from {self.model} after a correction: {problem}"
                    )
                )
            io.text(redact(f"\n[{problem}; asking for a correction]\n"))
            messages.append({"role": "assistant", "content": _content_params(message.content)})
            messages.append({"role": "user", "content": _correction(calls, tool, problem)})
        raise AssertionError("unreachable")

    def _request_params(
        self, system: list[dict[str, Any]], messages: list[dict[str, Any]], tool: str
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": system,
            "tools": TOOLS,
            "messages": messages,
            "tool_choice": {"type": "tool", "name": tool} if self._force_tool else {"type": "auto"},
        }
        if self._thinking:
            # "summarized" makes the model's reasoning visible to the learner in the panel.
            params["thinking"] = {"type": "adaptive", "display": "summarized"}
        if self.effort:
            params["output_config"] = {"effort": self.effort}
        return params

    def _request(
        self, system: list[dict[str, Any]], messages: list[dict[str, Any]], tool: str, io: AgentIO
    ) -> Any:
        """One streamed request through the client (retries, usage and budgets are its)."""
        if self.client.price is None and not self._price_warned:
            self._price_warned = True
            io.text(f"\n[no price known for {self.model}: its cost is not counted]\n")
        return self.client.request(
            lambda: self._request_params(system, messages, tool), _IOSink(io), self._adapt
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


def _correction(calls: list[Any], tool: str, problem: str) -> list[dict[str, Any]]:
    """The user turn that answers every tool call and asks for the right one."""
    blocks: list[dict[str, Any]] = []
    for call in calls:
        note = problem if call.name == tool else f"`{call.name}` is not this role's tool"
        blocks.append(
            {"type": "tool_result", "tool_use_id": call.id, "is_error": True, "content": note}
        )
    blocks.append(
        _text(
            f"That did not work: {problem}. Call `{tool}` again, once, with a complete and "
            "corrected input. Keep any commentary short."
        )
    )
    return blocks
