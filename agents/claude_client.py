"""The transport to Claude: one streamed Messages request at a time, retried, metered, stoppable.

:class:`ClaudeClient` knows nothing of the five roles (that is :mod:`.claude`); it sends the
parameters it is given and reports what happens to a :class:`StreamSink`:

- Retries are ours (the SDK's are off) so each one is an event: 429, 529, 5xx, 408/409,
  connection errors and a stream cut midway are retried with exponential backoff and jitter.
  The server's ``retry-after`` / ``retry-after-ms`` is honoured, and ``x-should-retry: false``
  is obeyed (an exhausted or refused request is never retried; ``true`` retries any status).
  Every agent call has a deadline: no wait or request runs past it.
- Usage is counted as the API bills it: input, output, cache writes and cache reads, priced
  with :data:`PRICES`. A :class:`Meter` shared by every call enforces ``max_tokens`` and
  ``max_usd`` before each request (the search then ends cleanly, "budget used").
- :meth:`ClaudeClient.cancel` closes the stream in flight (the person pressed stop).
- :meth:`ClaudeClient.preflight` makes one free authenticated call (token counting) so a bad
  key, a refused account or an unknown model fails before minutes of analysis.

The API key is read from ``ANTHROPIC_API_KEY`` by the default client factory at call time and
goes nowhere but the SDK's auth header; every message this module makes is redacted.
"""

from __future__ import annotations

import os
import random
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kernelopt_jupyter.secrets import redact, redact_data

from .base import PolicyError
from .search import BudgetExhausted, SearchStopped

#: The default model: the docs' recommended starting point for agentic coding (Nov 2026).
DEFAULT_MODEL = "claude-opus-5-5"
MODEL_ENV = "KERNELOPT_MODEL"
KEY_ENV = "ANTHROPIC_API_KEY"
_MAX_RETRY_AFTER_S = 600.0
#: The four token kinds the API bills; a budget in tokens counts all of them.
TOKEN_KINDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


class ClaudeError(PolicyError):
    """The API failed for good (after retries) or gave no usable answer; one-line message.

    A :class:`~.base.PolicyError`: the search ends with this message.
    """


class ClaudeNoAnswer(ClaudeError):
    """The model gave no usable tool call, even after one correction.

    The Profiler and Planner raise it (the search cannot go on without them); the Executor,
    Tuner and Summarizer turn it into an empty answer that says why, so one bad answer costs
    one attempt rather than the search.
    """


class ClaudeUnavailable(ClaudeError):
    """Claude cannot be used at all (no key, no SDK, key rejected, unknown model)."""


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
#: Where :data:`PRICES` comes from (shown in docs/claude.md and the budget events' readers).
PRICE_SOURCE = (
    "Claude API documentation, pricing page (platform.claude.com/docs/en/about-claude/pricing) "
    "and model overview pages, read 2026-11-29; cache writes at the 5-minute rate"
)
#: APPROXIMATE list prices (USD per million tokens), from :data:`PRICE_SOURCE`. Prices change:
#: treat every cost shown as an estimate, not a bill.
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


def import_anthropic() -> Any:
    """The ``anthropic`` module, imported on first use (the engine must import without it)."""
    try:
        import anthropic
    except ImportError:
        raise ClaudeUnavailable(
            "the `anthropic` package is not installed: `pip install anthropic`, or use "
            "--agents offline"
        ) from None
    return anthropic


def require_key() -> None:
    """Raise :class:`ClaudeUnavailable` (one line) when no API key is in the environment."""
    if not os.environ.get(KEY_ENV, "").strip():
        raise ClaudeUnavailable(
            f"{KEY_ENV} is not set: export your Anthropic API key to use --agents claude, "
            "or use --agents offline"
        )


class StreamSink(Protocol):
    """Where a request's progress goes (the policy adapts it to the event stream)."""

    def text(self, delta: str) -> None:
        """A piece of the answer's text."""

    def thinking(self, delta: str) -> None:
        """A piece of the model's (summarized) thinking."""

    def retry(self, status: str, reason: str, wait_s: float, attempt: int, limit: int) -> None:
        """A failed attempt that will be retried after ``wait_s`` seconds."""

    def usage(self, counts: dict[str, float]) -> None:
        """The billed counts of one request (the four token kinds, ``cost_usd`` when priced)."""


class Meter:
    """Everything spent through one policy, and the limits it may not pass; thread-safe."""

    def __init__(self, max_tokens: int | None = None, max_usd: float | None = None) -> None:
        self.max_tokens = max_tokens
        self.max_usd = max_usd
        self.counts: dict[str, float] = dict.fromkeys(TOKEN_KINDS, 0.0)
        self.cost_usd = 0.0
        self.priced = True
        self._lock = threading.Lock()

    @property
    def tokens(self) -> int:
        """All billed tokens so far (input, output, cache reads and cache writes)."""
        return int(sum(self.counts.values()))

    def add(self, counts: dict[str, float]) -> None:
        """Count one request's usage."""
        with self._lock:
            for key in TOKEN_KINDS:
                self.counts[key] += counts.get(key, 0)
            if "cost_usd" in counts:
                self.cost_usd += counts["cost_usd"]
            else:
                self.priced = False

    def exhausted(self) -> str | None:
        """Why no further request may be sent, or None."""
        if self.max_tokens is not None and self.tokens >= self.max_tokens:
            return f"token budget used ({self.tokens} of {self.max_tokens} tokens)"
        if self.max_usd is not None and self.cost_usd >= self.max_usd:
            return f"dollar budget used (${self.cost_usd:.4f} of ${self.max_usd:.2f})"
        return None

    def remaining_text(self) -> str:
        """One line for the agents: what they have spent and what is left."""
        parts = []
        if self.max_usd is not None:
            parts.append(f"${max(self.max_usd - self.cost_usd, 0):.4f} of ${self.max_usd:.2f} left")
        if self.max_tokens is not None:
            parts.append(
                f"{max(self.max_tokens - self.tokens, 0)} of {self.max_tokens} tokens left"
            )
        spent = f"spent so far: {self.tokens} tokens, ${self.cost_usd:.4f}"
        if not parts:
            return f"API budget: no limit set; {spent}."
        return f"API budget: {'; '.join(parts)} ({spent}). Be concise."

    def snapshot(self) -> dict[str, Any]:
        """The fields of a ``budget`` event."""
        with self._lock:
            return {
                "tokens": self.tokens,
                "max_tokens": self.max_tokens,
                "cost_usd": round(self.cost_usd, 6) if self.priced else None,
                "max_usd": self.max_usd,
                "usage": {k: int(v) for k, v in self.counts.items()},
            }


class _StreamCut(Exception):
    """The event stream ended before ``message_stop``."""


@dataclass
class _Retryable:
    status: str  # "529", "429", "connection", "stream"...
    reason: str
    retry_after: float | None = None


@dataclass
class BadRequest(Exception):
    """A 400 the caller may fix by changing the request (e.g. a feature the model lacks)."""

    label: str  # "400 invalid_request_error"
    detail: str


class ClaudeClient:
    """Streamed requests to the Messages API with retries, a deadline, usage and budgets.

    ``client_factory`` returns an ``anthropic.Anthropic``-like client (default: one from the
    environment with the SDK's retries off). ``max_attempts`` bounds the requests of one call;
    ``call_deadline_s`` bounds its wall time, waits included; ``sleep`` and ``clock`` are how
    it waits and tells time (tests pass recorders).
    """

    def __init__(
        self,
        model: str,
        client_factory: Callable[[], Any] | None = None,
        *,
        meter: Meter | None = None,
        max_attempts: int = 6,
        backoff_s: float = 1.0,
        max_backoff_s: float = 60.0,
        timeout_s: float = 600.0,
        call_deadline_s: float = 1800.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.model = model
        self.meter = meter or Meter()
        self.max_attempts = max(1, int(max_attempts))
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.timeout_s = timeout_s
        self.call_deadline_s = call_deadline_s
        self.price = price_for(model)
        self._factory = client_factory or self._default_client
        self._client: Any = None
        self._sleep = sleep
        self._clock = clock
        self._lock = threading.Lock()
        self._in_flight: Any = None
        self._cancelled = threading.Event()

    def __repr__(self) -> str:
        return f"ClaudeClient(model={self.model!r})"

    # ----------------------------------------------------------------- lifecycle

    def sdk(self) -> Any:
        """The SDK client, made once."""
        with self._lock:
            if self._client is None:
                self._client = self._factory()
            return self._client

    def _default_client(self) -> Any:
        anthropic = import_anthropic()
        require_key()
        # Our own loop retries (and reports each retry); the SDK's would be invisible.
        return anthropic.Anthropic(
            api_key=os.environ[KEY_ENV].strip(), max_retries=0, timeout=self.timeout_s
        )

    def cancel(self) -> None:
        """Stop: close the stream in flight and refuse further requests (thread-safe)."""
        self._cancelled.set()
        with self._lock:
            stream = self._in_flight
        if stream is not None:
            try:
                stream.close()
            except Exception:  # closing a half-read response may itself fail; we are done
                pass

    @property
    def cancelled(self) -> bool:
        """Whether :meth:`cancel` was called."""
        return self._cancelled.is_set()

    def preflight(self) -> None:
        """One free authenticated call (token counting): fails on a bad key or model."""
        try:
            self.sdk().messages.count_tokens(
                model=self.model,
                messages=[{"role": "user", "content": "ping"}],
                timeout=min(self.timeout_s, 60.0),
            )
        except Exception as exc:
            verdict = self._classify(exc)
            if isinstance(verdict, ClaudeError):
                raise verdict from None
            if isinstance(verdict, BadRequest):
                raise ClaudeError(
                    f"Claude API rejected the check request ({verdict.label}): {verdict.detail}"
                ) from None
            # A transient failure now says nothing about the key: the search's retries will see.

    # ----------------------------------------------------------------- one call

    def request(
        self,
        build: Callable[[], dict[str, Any]],
        sink: StreamSink,
        adapt: Callable[[str], bool] | None = None,
    ) -> Any:
        """Stream one request (``build()`` gives its parameters), retried; the final message.

        ``adapt(detail)`` is asked about a 400: when it returns True the request is rebuilt and
        sent again without counting an attempt (a feature this model turned out not to take).
        """
        sdk = self.sdk()
        deadline = self._clock() + self.call_deadline_s
        attempt = 0
        while True:
            self._check_go()
            attempt += 1
            # Nothing secret is sent, whatever a problem file or a log line held.
            params = redact_data(build())
            left = deadline - self._clock()
            try:
                return self._stream(sdk, params, sink, timeout=max(1.0, min(self.timeout_s, left)))
            except Exception as exc:
                if self.cancelled:
                    raise SearchStopped() from None
                verdict = self._classify(exc)
            if isinstance(verdict, ClaudeError):
                raise verdict
            if isinstance(verdict, BadRequest):
                if adapt is not None and adapt(verdict.detail):
                    attempt -= 1  # the request changed shape; the API did not fail
                    continue
                raise ClaudeError(
                    f"Claude API rejected the request ({verdict.label}): {verdict.detail}"
                )
            wait = self._wait(verdict, attempt)
            if attempt >= self.max_attempts:
                raise ClaudeError(
                    redact(
                        f"Claude API: gave up after {attempt} attempts; last error: {verdict.reason}"
                    )
                )
            if self._clock() + wait >= deadline:
                raise ClaudeError(
                    redact(
                        f"Claude API: gave up after {attempt} attempts: waiting {wait:.1f} s more "
                        f"would pass the {self.call_deadline_s:.0f} s deadline of one agent call; "
                        f"last error: {verdict.reason}"
                    )
                )
            sink.retry(verdict.status, verdict.reason, round(wait, 3), attempt, self.max_attempts)
            self._sleep(wait)

    def _check_go(self) -> None:
        if self.cancelled:
            raise SearchStopped()
        why = self.meter.exhausted()
        if why is not None:
            raise BudgetExhausted(why)

    def _wait(self, verdict: _Retryable, attempt: int) -> float:
        if verdict.retry_after is not None:
            # The server knows when capacity returns: wait as asked (within reason).
            return min(max(verdict.retry_after, 0.0), _MAX_RETRY_AFTER_S)
        ceiling = min(self.max_backoff_s, self.backoff_s * 2 ** (attempt - 1))
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    def _stream(self, sdk: Any, params: dict[str, Any], sink: StreamSink, timeout: float) -> Any:
        """Stream one response into ``sink``; count its usage even when it is cut."""
        usage: dict[str, float] = {}
        finished = False
        try:
            with sdk.messages.stream(**params, timeout=timeout) as stream:
                with self._lock:
                    self._in_flight = stream
                for event in stream:
                    kind = event.type
                    if kind == "message_start":
                        usage.update(_usage_counts(event.message.usage))
                    elif kind == "content_block_delta":
                        delta = event.delta
                        if delta.type == "text_delta" and delta.text:
                            sink.text(delta.text)
                        elif delta.type == "thinking_delta" and delta.thinking:
                            sink.thinking(delta.thinking)
                    elif kind == "message_delta":
                        usage.update(_usage_counts(event.usage))
                    elif kind == "message_stop":
                        finished = True
                if not finished:
                    raise _StreamCut("the response stream ended before message_stop")
                return stream.get_final_message()
        finally:
            with self._lock:
                self._in_flight = None
            self._account(usage, sink)

    def _account(self, usage: dict[str, float], sink: StreamSink) -> None:
        if not usage:
            return
        counts: dict[str, float] = {key: usage.get(key, 0) for key in TOKEN_KINDS}
        if self.price is not None:
            counts["cost_usd"] = self.price.cost(**counts)
        self.meter.add(counts)
        sink.usage(counts)

    # ----------------------------------------------------------------- what a failure means

    def _classify(self, exc: Exception) -> _Retryable | ClaudeError | BadRequest:
        """Decide what a failed request means: retry, let the caller adapt it, or fail."""
        anthropic = sys.modules.get("anthropic")
        if isinstance(exc, _StreamCut):
            return _Retryable("stream", "a stream cut midway")
        if anthropic is not None and isinstance(exc, anthropic.APIStatusError):
            return self._classify_status(exc)
        if anthropic is not None and isinstance(exc, anthropic.APIConnectionError):
            timed_out = "timed out" in str(exc).lower() or "timeout" in type(exc).__name__.lower()
            return _Retryable(
                "connection", "a connection error" + (" (timeout)" if timed_out else "")
            )
        if isinstance(exc, _transport_errors()):
            return _Retryable("stream", f"a stream cut midway ({type(exc).__name__})")
        if isinstance(exc, ValueError) and "tool parameter JSON" in str(exc):
            return _Retryable("stream", "a garbled tool-input stream")
        if isinstance(exc, ClaudeError):
            return exc
        raise exc

    def _classify_status(self, exc: Any) -> _Retryable | ClaudeError | BadRequest:
        status = int(getattr(exc, "status_code", 0) or 0)
        kind = str(getattr(exc, "type", None) or _error_type(exc) or "")
        detail = redact(str(getattr(exc, "api_message", None) or _error_message(exc) or ""))
        should = _header(exc, "x-should-retry")
        label = f"{status} {kind}".strip() if status else (kind or "error")
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
        if status == 400:
            # Never retried; the caller may drop a feature the model lacks and ask again.
            return BadRequest(f"400 {kind}".strip(), detail)
        if should == "false":
            # The server says a retry cannot succeed (quota exhausted, request refused).
            return ClaudeError(f"Claude API refused the request ({label}, not retryable): {detail}")
        retryable = (
            should == "true"
            or status in (408, 409, 429, 529)
            or status >= 500
            or kind in ("rate_limit_error", "overloaded_error")
            or (status == 200 and kind == "api_error")
        )
        if retryable:
            if status == 429 or kind == "rate_limit_error":
                label = "429 rate limited"
            elif status == 529 or kind == "overloaded_error":
                label = "529 overloaded"
            return _Retryable(str(status or kind), label, _retry_after(exc))
        return ClaudeError(f"Claude API rejected the request ({status} {kind}): {detail}")


# ----------------------------------------------------------------- helpers


def _transport_errors() -> tuple[type[BaseException], ...]:
    """httpx-level errors raised while a stream is read (a connection cut mid-response)."""
    found: list[type[BaseException]] = []
    for name in ("httpx2", "httpx"):
        module = sys.modules.get(name)
        cls = getattr(module, "TransportError", None) if module is not None else None
        if isinstance(cls, type) and issubclass(cls, BaseException):
            found.append(cls)
    return tuple(found)


def _usage_counts(usage: Any) -> dict[str, float]:
    out: dict[str, float] = {}
    for key in TOKEN_KINDS:
        value = getattr(usage, key, None)
        if value is not None:
            out[key] = float(value)
    return out


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


def _header(exc: Any, name: str) -> str | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    value = headers.get(name)
    return None if value is None else str(value).strip().lower()


def _retry_after(exc: Any) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``retry-after``), or None."""
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        raw = _header(exc, name)
        if raw is None:
            continue
        try:
            return float(raw) * scale
        except ValueError:
            continue  # an HTTP date: rare from this API; fall back to our own backoff
    return None
