"""A local fake of the Anthropic Messages API, for driving the real SDK in tests.

A real HTTP server on 127.0.0.1 (a random free port, one thread per connection) that answers
``POST /v1/messages`` from a script: each request takes the next scripted response. Streaming
requests get the real server-sent-event framing (``event: NAME\\ndata: JSON\\n\\n``, chunked
transfer encoding): ``message_start``, ``ping``, per block ``content_block_start`` /
``content_block_delta`` (``text_delta``, ``thinking_delta``, ``signature_delta``,
``input_json_delta``) / ``content_block_stop``, ``message_delta`` with the usage and
``message_stop``. Errors use the API's JSON body ``{"type": "error", "error": {"type": ...,
"message": ...}, "request_id": ...}``. A scripted cut closes the socket midway through the
stream, without the final chunk, as a dropped connection does.

The fake also checks requests the way the real API does where a policy could get it wrong
(alternating roles, a ``tool_result`` for every ``tool_use``, at most four cache breakpoints,
no forced ``tool_choice`` together with thinking), and simulates prompt caching: the prefix up
to the last ``cache_control`` breakpoint costs cache-creation tokens the first time and
cache-read tokens afterwards (the longest prefix cached at any breakpoint is read). Every
request is recorded (``fake.requests``) for assertions.

Usage::

    with FakeAnthropic() as fake:
        fake.script(overloaded(), reply("Looking at the profile...", tool=("report_bottlenecks",
                    {...})))
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        ...  # drive anthropic.Anthropic() / ClaudePolicy
        fake.requests[0].body["tool_choice"]
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import socket
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ids = itertools.count(1)


@dataclass
class Reply:
    """A successful answer: optional thinking, text, then tool calls, in that order."""

    text: str = ""
    tools: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    thinking: str = ""
    stop_reason: str | None = None  # default: "tool_use" if tools else "end_turn"
    output_tokens: int | None = None  # default: a rough count of what was sent
    chunk: int = 12  # characters per delta event


@dataclass
class ErrorReply:
    """An HTTP error with the API's JSON error body."""

    status: int
    type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class CutStream:
    """A streamed ``reply`` whose connection drops after ``after_events`` SSE events.

    With ``clean`` the body ends properly (final chunk sent) but without ``message_stop``.
    """

    reply: Reply
    after_events: int = 4
    clean: bool = False


@dataclass
class StreamError:
    """A stream that starts, then carries an SSE ``error`` event (e.g. overloaded midway)."""

    reply: Reply
    after_events: int = 3
    type: str = "overloaded_error"
    message: str = "Overloaded"


Scripted = Reply | ErrorReply | CutStream | StreamError


def reply(
    text: str = "",
    tool: tuple[str, dict[str, Any]] | None = None,
    *,
    thinking: str = "",
    stop_reason: str | None = None,
) -> Reply:
    """A scripted answer with optional text, one tool call and thinking."""
    return Reply(
        text=text, tools=[tool] if tool else [], thinking=thinking, stop_reason=stop_reason
    )


def overloaded(retry_after: float | None = None) -> ErrorReply:
    """HTTP 529 ``overloaded_error``."""
    headers = {} if retry_after is None else {"retry-after": str(retry_after)}
    return ErrorReply(529, "overloaded_error", "Overloaded", headers)


def rate_limited(retry_after: float = 1.0) -> ErrorReply:
    """HTTP 429 ``rate_limit_error`` with a ``retry-after`` header (seconds)."""
    return ErrorReply(
        429,
        "rate_limit_error",
        "This request would exceed your organization's rate limit.",
        {"retry-after": str(retry_after)},
    )


def server_error() -> ErrorReply:
    """HTTP 500 ``api_error``."""
    return ErrorReply(500, "api_error", "Internal server error")


def unauthorized() -> ErrorReply:
    """HTTP 401 ``authentication_error``, worded as the API words it."""
    return ErrorReply(401, "authentication_error", "invalid x-api-key")


def bad_request(message: str) -> ErrorReply:
    """HTTP 400 ``invalid_request_error``."""
    return ErrorReply(400, "invalid_request_error", message)


@dataclass
class Recorded:
    """One request as the fake received it."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def role_of(body: dict[str, Any]) -> str | None:
    """Which agent role a request is for ("profiler", ...), read from its first user turn.

    The Claude policy states the role as "Role: Profiler." in the task text; a responder uses
    this to answer whatever order a search calls the agents in.
    """
    messages = body.get("messages") or []
    content = messages[0].get("content") if messages else None
    texts = [content] if isinstance(content, str) else [b.get("text", "") for b in _blocks(content)]
    for text in texts:
        m = re.search(r"Role: (Profiler|Planner|Executor|Tuner|Summarizer)\.", text or "")
        if m:
            return m.group(1).lower()
    return None


Responder = Callable[[dict[str, Any]], Scripted]


def _task_text(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    content = messages[0].get("content") if messages else None
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in _blocks(content))


def plain_model(body: dict[str, Any]) -> Scripted:
    """A responder that answers any role of any problem plausibly, for end-to-end runs.

    Profiler: no bottleneck named; Planner: one ``rewrite`` plan; Executor: the parent source
    with one comment line added (a new source that passes the gates whenever the parent did;
    an unchanged one would be a duplicate the search does not gate again); Tuner: the first kernel
    of ``LAUNCH_CONFIGS`` with its first block size doubled; Summarizer: one line per step.
    """
    role = role_of(body)
    task = _task_text(body)
    if role == "profiler":
        data: dict[str, Any] = {"summary": "Nothing measured stands out.", "bottlenecks": []}
        return reply("Reading the dispatch map.", ("report_bottlenecks", data))
    if role == "planner":
        plan = {"title": "Re-emit the candidate", "rationale": "a no-op plan", "action": "rewrite"}
        return reply("One plan.", ("propose_plans", {"plans": [plan]}))
    source_match = re.search(r"```python\n(.*?)\n```", task, re.S)
    source = source_match.group(1) + "\n" if source_match else ""
    if role == "executor":
        source += f"# re-emitted by the fake model (edit {next(_ids)})\n"
        data = {"source": source, "explanation": "a comment added", "dispatch_only": False}
        return reply("Re-emitting the parent.", ("submit_candidate", data))
    if role == "tuner":
        configs = _launch_configs(source)
        name, cfg = next(iter(configs.items())) if configs else ("none", {})
        key = next((k for k in cfg if k not in ("num_warps", "num_stages")), "num_warps")
        value = int(cfg.get(key, 1)) * 2
        variant = {"label": f"{key} {value}", "configs": {name: {key: value}}}
        data = {"explanation": "a larger block", "variants": [variant]}
        return reply("One variant.", ("propose_launch_configs", data))
    if role == "summarizer":
        ids = re.findall(r"## Step: candidate `([^`]+)`", task)
        data = {
            "explanations": [{"candidate": i, "text": f"Step {i} was checked."} for i in ids],
            "experience": [],
        }
        return reply("Summing up.", ("record_experience", data))
    return bad_request(f"fake plain_model: cannot tell the role of this request ({role})")


def _launch_configs(source: str) -> dict[str, dict[str, Any]]:
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "LAUNCH_CONFIGS" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            return value if isinstance(value, dict) else {}
    return {}


class FakeAnthropic:
    """The fake server; use as a context manager or call :meth:`start` / :meth:`stop`.

    ``responder`` (optional) answers a request when the script is empty: it gets the request
    body and returns a scripted response (see :func:`role_of`). Without one, an empty script
    answers 400, which the policy does not retry, so a test that runs out fails at once.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        api_key: str | None = None,
        models: set[str] | None = None,
    ) -> None:
        self.responder = responder
        #: When set, any other key (or none) gets 401, as a revoked or mistyped key does.
        self.api_key = api_key
        #: When set, any other model gets 404 ``not_found_error``, as an unknown id does.
        self.models = models
        self.requests: list[Recorded] = []
        self._script: deque[Scripted] = deque()
        self._cache: set[str] = set()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------------- lifecycle

    def start(self) -> FakeAnthropic:
        """Listen on 127.0.0.1 at a free port, serving from a daemon thread."""
        fake = self

        class Handler(_Handler):
            owner = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # ``shutdown`` waits for the serving loop to look again: at the default half second
        # between looks, every test that used a fake server spent 0.5 s in its teardown.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Shut the server down and close its socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """The URL to put in ``ANTHROPIC_BASE_URL``."""
        assert self._server is not None, "start() the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # ----------------------------------------------------------------- script

    def script(self, *responses: Scripted) -> None:
        """Queue responses; each request takes the next one."""
        with self._lock:
            self._script.extend(responses)

    @property
    def pending(self) -> int:
        """Scripted responses not yet used."""
        with self._lock:
            return len(self._script)

    def _next(self, body: dict[str, Any]) -> Scripted | None:
        with self._lock:
            if self._script:
                return self._script.popleft()
        return self.responder(body) if self.responder is not None else None

    # ----------------------------------------------------------------- request checks

    def validate(self, body: dict[str, Any]) -> str | None:
        """What the real API would reject in ``body`` (a subset), or None."""
        for key in ("model", "max_tokens", "messages"):
            if key not in body:
                return f"{key}: Field required"
        messages = body["messages"]
        if not messages or messages[0].get("role") != "user":
            return "messages: first message must use the user role"
        for a, b in itertools.pairwise(messages):
            if a.get("role") == b.get("role"):
                return "messages: roles must alternate between user and assistant"
        for i, msg in enumerate(messages):
            if msg.get("role") != "assistant" or not isinstance(msg.get("content"), list):
                continue
            ids = {b["id"] for b in msg["content"] if b.get("type") == "tool_use"}
            nxt = messages[i + 1]["content"] if i + 1 < len(messages) else []
            answered = {
                b.get("tool_use_id")
                for b in (nxt if isinstance(nxt, list) else [])
                if b.get("type") == "tool_result"
            }
            if ids - answered:
                return (
                    f"messages.{i + 1}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {sorted(ids - answered)}"
                )
        if len(_cache_points(body)) > 4:
            return "A maximum of 4 blocks with cache_control may be provided."
        choice = body.get("tool_choice") or {}
        thinking = body.get("thinking") or {}
        if choice.get("type") in ("any", "tool") and thinking.get("type") not in (
            None,
            "disabled",
        ):
            return "Thinking may not be enabled when tool_choice forces tool use."
        if choice.get("type") == "tool":
            names = {t.get("name") for t in body.get("tools", [])}
            if choice.get("name") not in names:
                return f"tool_choice.name: no tool named {choice.get('name')!r}"
        return None

    def usage_for(self, body: dict[str, Any]) -> dict[str, int]:
        """Simulated prompt usage: the cached prefix is created once, then read."""
        whole = json.dumps(
            [body.get("tools"), body.get("system"), body.get("messages")], sort_keys=True
        )
        points = _cache_points(body)
        created = read = 0
        if points:
            # As the API does: the longest prefix cached at any breakpoint is read, and the
            # rest up to the last breakpoint is written (every breakpoint becomes an entry).
            prefixes = [_prefix_text(body, p) for p in points]
            digests = [hashlib.sha256(p.encode()).hexdigest() for p in prefixes]
            with self._lock:
                hits = [i for i, d in enumerate(digests) if d in self._cache]
                self._cache.update(digests)
            read = _tokens(prefixes[hits[-1]]) if hits else 0
            created = _tokens(prefixes[-1]) - read
        total = _tokens(whole)
        return {
            "input_tokens": max(1, total - created - read),
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": read,
        }


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _cache_points(body: dict[str, Any]) -> list[tuple[str, int, int]]:
    """Where the request's cache breakpoints are, in prompt order (tools, system, messages)."""
    points = [
        ("tools", i, 0) for i, t in enumerate(body.get("tools") or []) if "cache_control" in t
    ]
    points += [
        ("system", i, 0) for i, b in enumerate(_blocks(body.get("system"))) if "cache_control" in b
    ]
    for m, msg in enumerate(body.get("messages") or []):
        points += [
            ("messages", m, i)
            for i, b in enumerate(_blocks(msg.get("content")))
            if "cache_control" in b
        ]
    return points


def _prefix_text(body: dict[str, Any], point: tuple[str, int, int]) -> str:
    """The prompt up to and including a breakpoint, as text (cache_control markers removed)."""

    def clean(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks]

    where, i, j = point
    tools = clean(body.get("tools") or [])
    system = clean(_blocks(body.get("system")))
    if where == "tools":
        return json.dumps([tools[: i + 1]], sort_keys=True)
    if where == "system":
        return json.dumps([tools, system[: i + 1]], sort_keys=True)
    msgs = []
    for m, msg in enumerate((body.get("messages") or [])[: i + 1]):
        content = clean(_blocks(msg.get("content")))
        msgs.append([msg.get("role"), content[: j + 1] if m == i else content])
    return json.dumps([tools, system, msgs], sort_keys=True)


def _message_events(
    model: str, answer: Reply, usage: dict[str, int]
) -> list[tuple[str, dict[str, Any]]]:
    """The SSE events of one answer, in the API's order."""
    msg_id = f"msg_fake{next(_ids):06d}"
    out_tokens = answer.output_tokens
    if out_tokens is None:
        sent = answer.text + answer.thinking + "".join(json.dumps(i) for _, i in answer.tools)
        out_tokens = _tokens(sent)
    stop = answer.stop_reason or ("tool_use" if answer.tools else "end_turn")
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {**usage, "output_tokens": 1},
                },
            },
        ),
        ("ping", {"type": "ping"}),
    ]
    index = 0

    def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        for d in deltas:
            events.append(
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1

    if answer.thinking:
        deltas = [
            {"type": "thinking_delta", "thinking": p}
            for p in _pieces(answer.thinking, answer.chunk)
        ]
        deltas.append({"type": "signature_delta", "signature": f"sig-{msg_id}"})
        block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
    if answer.text:
        block(
            {"type": "text", "text": ""},
            [{"type": "text_delta", "text": p} for p in _pieces(answer.text, answer.chunk)],
        )
    for name, data in answer.tools:
        raw = json.dumps(data)
        block(
            {"type": "tool_use", "id": f"toolu_fake{next(_ids):06d}", "name": name, "input": {}},
            [
                {"type": "input_json_delta", "partial_json": p}
                for p in _pieces(raw, max(answer.chunk, 64))
            ],
        )
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": out_tokens},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _message_json(model: str, answer: Reply, usage: dict[str, int]) -> dict[str, Any]:
    """The non-streamed form of the same answer."""
    content: list[dict[str, Any]] = []
    if answer.thinking:
        content.append({"type": "thinking", "thinking": answer.thinking, "signature": "sig"})
    if answer.text:
        content.append({"type": "text", "text": answer.text})
    for name, data in answer.tools:
        content.append(
            {"type": "tool_use", "id": f"toolu_fake{next(_ids):06d}", "name": name, "input": data}
        )
    events = _message_events(model, answer, usage)
    out_tokens = events[-2][1]["usage"]["output_tokens"]
    return {
        "id": f"msg_fake{next(_ids):06d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": answer.stop_reason or ("tool_use" if answer.tools else "end_turn"),
        "stop_sequence": None,
        "usage": {**usage, "output_tokens": out_tokens},
    }


class _Handler(BaseHTTPRequestHandler):
    owner: FakeAnthropic
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read ``fake.requests`` instead of a log."""

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._error(ErrorReply(400, "invalid_request_error", "body is not JSON"))
            return
        path = self.path.split("?")[0]
        self.owner.requests.append(
            Recorded(path, {k.lower(): v for k, v in self.headers.items()}, body)
        )
        if path not in ("/v1/messages", "/v1/messages/count_tokens"):
            self._error(ErrorReply(404, "not_found_error", f"no route {path}"))
            return
        key = self.headers.get("x-api-key") or (self.headers.get("authorization") or "")
        key = key.removeprefix("Bearer ").strip()
        if not key or (self.owner.api_key is not None and key != self.owner.api_key):
            self._error(unauthorized())
            return
        model = str(body.get("model"))
        if self.owner.models is not None and model not in self.owner.models:
            self._error(ErrorReply(404, "not_found_error", f"model: {model}"))
            return
        if path == "/v1/messages/count_tokens":
            # Free and unscripted, as the real endpoint is: it answers without using the script.
            self._json(200, {"input_tokens": _tokens(json.dumps(body))})
            return
        problem = self.owner.validate(body)
        if problem is not None:
            self._error(bad_request(problem))
            return
        scripted = self.owner._next(body)
        if scripted is None:
            # Not retryable on purpose: a test that runs out of script fails at once.
            self._error(bad_request("fake server: no scripted response left"))
            return
        if isinstance(scripted, ErrorReply):
            self._error(scripted)
            return
        usage = self.owner.usage_for(body)
        if not body.get("stream"):
            answer = scripted.reply if isinstance(scripted, CutStream | StreamError) else scripted
            self._json(200, _message_json(model, answer, usage))
            return
        if isinstance(scripted, Reply):
            self._stream(_message_events(model, scripted, usage))
        elif isinstance(scripted, StreamError):
            events = _message_events(model, scripted.reply, usage)[: scripted.after_events]
            error = {"type": "error", "error": {"type": scripted.type, "message": scripted.message}}
            self._stream([*events, ("error", error)])
        else:
            events = _message_events(model, scripted.reply, usage)[: scripted.after_events]
            self._stream(events, cut=not scripted.clean)

    def _json(
        self, status: int, data: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.send_header("request-id", f"req_fake{next(_ids):06d}")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(payload)

    def _error(self, err: ErrorReply) -> None:
        body = {
            "type": "error",
            "error": {"type": err.type, "message": err.message},
            "request_id": f"req_fake{next(_ids):06d}",
        }
        # As the real API does: transient statuses say a retry may succeed, the rest say not;
        # a scripted header (e.g. x-should-retry: false on a 529) overrides.
        should = "true" if err.status in (408, 409, 429) or err.status >= 500 else "false"
        self._json(err.status, body, {"x-should-retry": should, **err.headers})

    def _stream(self, events: list[tuple[str, dict[str, Any]]], cut: bool = False) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", f"req_fake{next(_ids):06d}")
        self.end_headers()
        for name, data in events:
            chunk = _sse(name, data)
            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.flush()
        if cut:
            # A dropped connection: no terminating chunk, the socket just goes away.
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
