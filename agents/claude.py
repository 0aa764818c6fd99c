"""The Claude policy: the five agents through the Messages API of the real ``anthropic`` SDK.

Each agent call is one streamed request: the reasoning streams into the event stream as it
arrives, and the structured answer comes back through the role's tool (see
:mod:`.claude_tools`). The stable context (rules of the house, then the problem with its
dispatch map and harvested kernels) sits in cached system blocks; the parent candidate is a
cached block of the user turn, so the Planner, the Executor's retries and the Tuner reuse it.

The policy owns its retries (the SDK's are turned off) so that each one is visible in the panel
as agent text: 429 (honouring ``retry-after``), 529 overloaded, 5xx, connection errors and a
stream cut midway are retried with exponential backoff and jitter; other 4xx fail at once.

The API key is read from ``ANTHROPIC_API_KEY`` only, by the client factory at call time; the
policy never stores, logs or repeats it (messages are scrubbed of it as a last defence).
``ANTHROPIC_BASE_URL`` is honoured by the SDK.
"""

from __future__ import annotations

import math
import os
import random
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from kernelopt_jupyter.candidate import Candidate

from . import prompts
from .base import (
    AgentContext,
    AgentIO,
    Edit,
    ExperienceItem,
    Plan,
    PolicyError,
    ProfileReport,
    StepRecord,
    Summary,
    TuneProposal,
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

#: The default model: the docs' recommended starting point for agentic coding (Nov 2026).
DEFAULT_MODEL = "claude-opus-5-5"
MODEL_ENV = "KERNELOPT_MODEL"
_MAX_RETRY_AFTER_S = 600.0
KEY_ENV = "ANTHROPIC_API_KEY"

T = TypeVar("T")


class ClaudeError(PolicyError):
    """The API failed for good (after retries) or gave no usable answer; one-line message.

    A :class:`~.base.PolicyError`: the search ends cleanly with this message.
    """


class ClaudeNoAnswer(ClaudeError):
    """The model gave no usable tool call, even after one correction.

    The Profiler and Planner raise it (the search cannot go on without them); the Executor,
    Tuner and Summarizer turn it into an empty answer that says why, so one bad answer costs
    one attempt rather than the search.
    """


class ClaudeUnavailable(ClaudeError):
    """Claude cannot be used at all (no key, no SDK, key rejected): stop the search."""


@dataclass(frozen=True)
class Price:
    """List prices in USD per million tokens."""

    input: float
    output: float
    cache_write: float  # 5-minute cache writes
    cache_read: float
    long_prompt: tuple[int, Price] | None = None  # (threshold in prompt tokens, price above it)

    def cost(
        self,
        input_tokens: float,
        output_tokens: float,
        cache_creation_input_tokens: float = 0,
        cache_read_input_tokens: float = 0,
    ) -> float:
        """Cost of one request in USD."""
        prompt = input_tokens + cache_creation_input_tokens + cache_read_input_tokens
        if self.long_prompt is not None and prompt > self.long_prompt[0]:
            return self.long_prompt[1].cost(
                input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens
            )
        return (
            input_tokens * self.input
            + output_tokens * self.output
            + cache_creation_input_tokens * self.cache_write
            + cache_read_input_tokens * self.cache_read
        ) / 1e6


_OPUS_4_5 = Price(5.0, 25.0, 6.25, 0.50)
_SONNET_4 = Price(3.0, 15.0, 3.75, 0.30)
#: APPROXIMATE list prices (USD per million tokens), from the Claude API documentation's model
#: pages and pricing page (platform.claude.com/docs/en/about-claude/pricing and
#: .../models/*/overview), as read on 2026-11-29. Prices change: treat the cost shown in the
#: panel as an estimate, not a bill. Cache writes are the 5-minute ones.
PRICES: dict[str, Price] = {
    "claude-fable-5-1": Price(10.0, 50.0, 12.50, 0.25),
    "claude-fable-5": Price(10.0, 50.0, 12.50, 1.00),
    "claude-opus-5-5": Price(4.0, 20.0, 5.00, 0.20),
    "claude-opus-5": Price(5.0, 25.0, 6.25, 0.50),
    "claude-sonnet-5-5": Price(2.0, 10.0, 2.50, 0.10),
    "claude-sonnet-5": Price(2.0, 10.0, 2.50, 0.20),
    # Haiku 5.5 is priced by prompt length: prompts over 100k tokens pay 5x on every token.
    "claude-haiku-5-5": Price(0.10, 0.50, 0.125, 0.01, (100_000, Price(0.50, 2.50, 0.625, 0.05))),
    "claude-opus-4-8": _OPUS_4_5,
    "claude-opus-4-7": _OPUS_4_5,
    "claude-opus-4-6": _OPUS_4_5,
    "claude-opus-4-5": _OPUS_4_5,
    "claude-sonnet-4-6": _SONNET_4,
    "claude-sonnet-4-5": _SONNET_4,
    "claude-haiku-4-5": Price(1.0, 5.0, 1.25, 0.10),
}


def price_for(model: str) -> Price | None:
    """The price of ``model`` (dated snapshots and ``[1m]`` variants included), or None."""
    name = re.sub(r"\[.*\]$", "", model.strip())
    name = re.sub(r"-\d{8}$", "", name)
    return PRICES.get(name)


def thinks_by_default(model: str) -> bool:
    """Whether ``model`` thinks adaptively by default (the 5.x families).

    Such models reject a forced ``tool_choice`` (forcing a tool is incompatible with thinking,
    and on some of them thinking cannot be turned off), so the policy lets them choose the tool
    and checks that they did; older models get the tool forced.
    """
    m = re.match(r"claude-(?:opus|sonnet|haiku|fable|mythos)-(\d+)", model)
    return m is not None and int(m.group(1)) >= 5


def resolve_model(model: str | None = None) -> str:
    """The model to use: the argument, else ``$KERNELOPT_MODEL``, else :data:`DEFAULT_MODEL`."""
    return (model or os.environ.get(MODEL_ENV, "").strip() or DEFAULT_MODEL).strip()


def scrub(text: str) -> str:
    """``text`` with the API key removed, should any layer below ever have echoed it."""
    key = os.environ.get(KEY_ENV, "")
    if len(key) >= 8:
        text = text.replace(key, "[redacted]")
    return text


def _import_anthropic() -> Any:
    try:
        import anthropic
    except ImportError:
        raise ClaudeUnavailable(
            "the `anthropic` package is not installed: `pip install anthropic`, or use "
            "--agents offline"
        ) from None
    return anthropic


def _transport_errors() -> tuple[type[BaseException], ...]:
    """httpx-level errors raised while a stream is read (a connection cut mid-response)."""
    found: list[type[BaseException]] = []
    for name in ("httpx2", "httpx"):
        module = sys.modules.get(name)
        cls = getattr(module, "TransportError", None) if module is not None else None
        if isinstance(cls, type) and issubclass(cls, BaseException):
            found.append(cls)
    return tuple(found)


class _StreamCut(Exception):
    """The event stream ended before ``message_stop``."""


@dataclass
class _Retryable:
    reason: str
    retry_after: float | None = None


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
        effort: str | None = None,
        tune_variants: int = 4,
        memory: ExperienceMemory | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.model = resolve_model(model)
        self.max_tokens = int(max_tokens)
        self.max_attempts = max(1, int(max_attempts))
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.timeout_s = timeout_s
        self.effort = effort
        self.tune_variants = tune_variants
        self.memory = memory
        self._sleep = sleep
        self._client_factory = client_factory or self._default_client
        self._client: Any = None
        self._lock = threading.Lock()
        self._force_tool = not thinks_by_default(self.model)
        self._thinking = thinks_by_default(self.model)
        self._price = price_for(self.model)
        self._price_warned = False
        if client_factory is None:
            _import_anthropic()
            if not os.environ.get(KEY_ENV, "").strip():
                raise ClaudeUnavailable(
                    f"{KEY_ENV} is not set: export your Anthropic API key to use --agents "
                    "claude, or use --agents offline"
                )

    def __repr__(self) -> str:
        return f"ClaudePolicy(model={self.model!r}, max_tokens={self.max_tokens})"

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
                    scrub(
                        f"{role}: no usable answer from {self.model} after a correction: {problem}"
                    )
                )
            io.text(scrub(f"\n[{problem}; asking for a correction]\n"))
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

    def _client_once(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self._client_factory()
            return self._client

    def _default_client(self) -> Any:
        anthropic = _import_anthropic()
        key = os.environ.get(KEY_ENV, "").strip()
        if not key:
            raise ClaudeUnavailable(
                f"{KEY_ENV} is not set: export your Anthropic API key to use --agents claude, "
                "or use --agents offline"
            )
        # Our own loop retries (and reports each retry); the SDK's would be invisible.
        return anthropic.Anthropic(api_key=key, max_retries=0, timeout=self.timeout_s)

    def _request(
        self, system: list[dict[str, Any]], messages: list[dict[str, Any]], tool: str, io: AgentIO
    ) -> Any:
        """One streamed request, retried on transient failures; returns the final message."""
        client = self._client_once()
        attempt = 0
        while True:
            attempt += 1
            params = self._request_params(system, messages, tool)
            try:
                return self._stream(client, params, io)
            except Exception as exc:
                verdict = self._classify(exc, params)
                if isinstance(verdict, ClaudeError):
                    raise verdict from None
                if verdict == "adapted":
                    attempt -= 1  # the request changed shape; the API did not fail
                    continue
                assert isinstance(verdict, _Retryable)
                if attempt >= self.max_attempts:
                    raise ClaudeError(
                        scrub(
                            f"Claude API: gave up after {attempt} attempts; last error: "
                            f"{verdict.reason}"
                        )
                    ) from None
                if verdict.retry_after is not None:
                    # The server knows when capacity returns: wait as asked (within reason).
                    delay = min(max(verdict.retry_after, 0.0), _MAX_RETRY_AFTER_S)
                else:
                    ceiling = min(self.max_backoff_s, self.backoff_s * 2 ** (attempt - 1))
                    delay = ceiling / 2 + random.uniform(0, ceiling / 2)
                io.text(scrub(f"\n[retrying after {verdict.reason} in {delay:.1f} s]\n"))
                self._sleep(delay)

    def _stream(self, client: Any, params: dict[str, Any], io: AgentIO) -> Any:
        """Stream one response into ``io``; account its usage even when it is cut."""
        usage: dict[str, float] = {}
        spoke = False
        finished = False
        try:
            with client.messages.stream(**params) as stream:
                for event in stream:
                    kind = event.type
                    if kind == "message_start":
                        usage.update(_usage_counts(event.message.usage))
                    elif kind == "content_block_start":
                        if spoke and event.content_block.type in ("text", "thinking"):
                            io.text("\n\n")
                    elif kind == "content_block_delta":
                        delta = event.delta
                        if delta.type == "text_delta" and delta.text:
                            io.text(delta.text)
                            spoke = True
                        elif delta.type == "thinking_delta" and delta.thinking:
                            io.text(delta.thinking)
                            spoke = True
                    elif kind == "message_delta":
                        usage.update(_usage_counts(event.usage))
                    elif kind == "message_stop":
                        finished = True
                if not finished:
                    raise _StreamCut("the response stream ended before message_stop")
                return stream.get_final_message()
        finally:
            self._account(usage, io)

    def _account(self, usage: dict[str, float], io: AgentIO) -> None:
        if not usage:
            return
        counts = {
            key: usage.get(key, 0)
            for key in (
                "input_tokens",
                "output_tokens",
                "cache_read_input_tokens",
                "cache_creation_input_tokens",
            )
        }
        if self._price is not None:
            counts["cost_usd"] = self._price.cost(**counts)
        elif not self._price_warned:
            self._price_warned = True
            io.text(f"\n[no price known for {self.model}: its cost is not counted]\n")
        io.add_usage(**counts)

    def _classify(self, exc: Exception, params: dict[str, Any]) -> _Retryable | ClaudeError | str:
        """Decide what a failed request means: retry, adapt the request, or fail."""
        anthropic = sys.modules.get("anthropic")
        if isinstance(exc, _StreamCut):
            return _Retryable("a stream cut midway")
        if anthropic is not None and isinstance(exc, anthropic.APIStatusError):
            return self._classify_status(exc, params)
        if anthropic is not None and isinstance(exc, anthropic.APIConnectionError):
            return _Retryable(
                "a connection error" + (" (timeout)" if "timed out" in str(exc).lower() else "")
            )
        if isinstance(exc, _transport_errors()):
            return _Retryable(f"a stream cut midway ({type(exc).__name__})")
        if isinstance(exc, ValueError) and "tool parameter JSON" in str(exc):
            return _Retryable("a garbled tool-input stream")
        if isinstance(exc, ClaudeError):
            return exc
        raise exc

    def _classify_status(self, exc: Any, params: dict[str, Any]) -> _Retryable | ClaudeError | str:
        status = int(getattr(exc, "status_code", 0) or 0)
        kind = str(getattr(exc, "type", None) or _error_type(exc) or "")
        detail = scrub(str(getattr(exc, "api_message", None) or _error_message(exc) or ""))
        if status == 429 or kind == "rate_limit_error":
            return _Retryable("429 rate limited", _retry_after(exc))
        if status == 529 or kind == "overloaded_error":
            return _Retryable("529 overloaded", _retry_after(exc))
        if status >= 500 or status in (408, 409) or (status == 200 and kind == "api_error"):
            return _Retryable(f"{status} {kind or 'server error'}".strip(), _retry_after(exc))
        if status == 400 and self._adapt(detail, params):
            return "adapted"
        if status == 401:
            return ClaudeUnavailable(
                f"Claude API rejected the credentials (401 {kind or 'authentication_error'}): "
                f"check {KEY_ENV}"
            )
        if status == 403:
            return ClaudeUnavailable(f"Claude API refused access (403 {kind}): {detail}")
        if status == 404:
            return ClaudeUnavailable(
                f"Claude API does not know model {self.model!r} (404): set {MODEL_ENV} or "
                f"--model to a current model id ({detail})"
            )
        return ClaudeError(f"Claude API rejected the request ({status} {kind}): {detail}")

    def _adapt(self, detail: str, params: dict[str, Any]) -> bool:
        """Drop a request feature this model turned out not to accept (once each)."""
        low = detail.lower()
        if self._force_tool and "tool_choice" in low:
            self._force_tool = False
            return True
        if self._thinking and "thinking" in low and "thinking" in params:
            self._thinking = False
            return True
        return False


# ----------------------------------------------------------------- helpers


def _text(text: str, cache: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if cache:
        block["cache_control"] = {"type": "ephemeral"}
    return block


def _usage_counts(usage: Any) -> dict[str, float]:
    out: dict[str, float] = {}
    for key in (
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    ):
        value = getattr(usage, key, None)
        if value is not None:
            out[key] = float(value)
    return out


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


def _error_body(exc: Any) -> dict[str, Any]:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            return err
    return {}


def _error_type(exc: Any) -> str | None:
    value = _error_body(exc).get("type")
    return str(value) if value else None


def _error_message(exc: Any) -> str | None:
    value = _error_body(exc).get("message")
    return str(value) if value else None


def _retry_after(exc: Any) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``retry-after``), or None."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            return float(raw) * scale
        except ValueError:
            continue  # an HTTP date: rare from this API; fall back to our own backoff
    return None
