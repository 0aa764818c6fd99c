"""Problem capture, the worker process and the event log."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from kernelopt_jupyter.events import Event, EventError, EventLog, read_events
from kernelopt_jupyter.problem import ProblemError, classify_source, problem_from_source
from kernelopt_jupyter.worker import run_task

MODULE = """
import torch
class Model(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = torch.nn.Linear(n, n)
    def forward(self, x):
        return torch.relu(self.lin(x))
def get_inputs():
    return [torch.randn(4, 8)]
def get_init_inputs():
    return [8]
"""

TRITON = """
import torch, triton, triton.language as tl
@triton.jit
def _add(x, y, o, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)
def add(x, y):
    o = torch.empty_like(x)
    _add[(triton.cdiv(x.numel(), 1024),)](x, y, o, x.numel(), BLOCK=1024)
    return o
def get_inputs():
    return [torch.randn(3000), torch.randn(3000)]
"""


def test_module_problem_is_captured_and_runs() -> None:
    from kernelopt_jupyter.problem import materialize

    problem = problem_from_source(MODULE, "p.py")
    assert (problem.kind, problem.entry) == ("module", "Model")
    loaded = materialize(problem)
    out = loaded.make_model()(*loaded.make_inputs(seed=0))
    assert tuple(out.shape) == (4, 8)


def test_triton_problem_entry_is_found() -> None:
    assert classify_source(TRITON) == ("triton", "add")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def f(:\n", "syntax error on line 1"),
        ("import torch\nx = 1\n", "defines no `class Model"),
        (MODULE.replace("def get_inputs", "def other_inputs"), "no get_inputs()"),
        (MODULE.replace("return [8]", "return [8, 9]"), "Model(*get_init_inputs()) failed"),
        (MODULE.replace("return [torch.randn(4, 8)]", "raise ValueError('boom')"), "boom"),
        (MODULE.replace("import torch", "import torch_missing"), "ModuleNotFoundError"),
    ],
)
def test_bad_problems_give_one_line_errors(source: str, message: str) -> None:
    with pytest.raises(ProblemError) as info:
        problem_from_source(source, "bad.py")
    text = str(info.value)
    assert text.startswith("bad.py: ") and message in text and "\n" not in text


def test_worker_reports_timeout_crash_and_exception() -> None:
    env = {"PYTHONPATH": str(Path(__file__).parent)}
    ok = run_task("_worker_tasks:echo", {"value": [1, 2]}, device="cpu", extra_env=env)
    assert ok.ok and ok.value == {"value": [1, 2], "interpret": "1"}
    hang = run_task("_worker_tasks:hang", {}, device="cpu", time_limit_s=3, extra_env=env)
    assert not hang.ok and hang.timed_out and "timed out" in hang.describe()
    failed = run_task("_worker_tasks:fail", {}, device="cpu", extra_env=env)
    assert failed.describe() == "RuntimeError: candidate exploded"
    crash = run_task("os:abort", {}, device="cpu", time_limit_s=30)
    assert not crash.ok and "SIGABRT" in crash.describe()


def test_event_log_appends_replays_and_resumes(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    log = EventLog(path)
    seen: list[str] = []
    log.emit(
        "session_started", problem="p.py", kind="module", device="cpu", agents="offline", options={}
    )
    log.subscribe(lambda e: seen.append(e.type))
    log.emit("error", where="test", message="x")
    assert seen == ["session_started", "error"]
    with pytest.raises(EventError):
        log.emit("nonsense")
    # a crash mid-write leaves a torn line: it is dropped and the sequence continues
    with path.open("a") as fh:
        fh.write('{"type": "agent_te')
    resumed = EventLog(path)
    assert resumed.session == log.session
    resumed.emit(
        "session_finished",
        status="stopped",
        best=None,
        speedup_vs_eager=None,
        speedup_vs_compile=None,
    )
    events = read_events(path)
    assert [e.seq for e in events] == [0, 1, 2]
    assert all(json.loads(line)["schema"] == 1 for line in path.read_text().splitlines())


def test_a_reader_subscribing_mid_search_gets_every_event_in_order() -> None:
    """An event emitted (on the search's thread) while the history is replayed to a new
    reader reaches it after the history, never in the middle: the panel once dropped a
    verdict that arrived before its candidate."""
    log = EventLog(None)
    for n in range(3):
        log.emit("error", where="history", message=str(n))
    seen: list[int] = []

    def reader(event: Event) -> None:
        seen.append(event.seq)
        if event.seq == 0:  # the search emits while the reader is still being replayed
            live = threading.Thread(
                target=log.emit, args=("error",), kwargs={"where": "live", "message": "3"}
            )
            live.start()
            live.join()

    log.subscribe(reader)
    log.emit("error", where="live", message="4")
    assert seen == [0, 1, 2, 3, 4]
    log.unsubscribe(reader)
    log.emit("error", where="after", message="5")
    assert seen == [0, 1, 2, 3, 4]


def test_strict_event_log_refuses_undeclared_fields(tmp_path: Path) -> None:
    # conftest turns strict validation on for every test (and the subprocesses they start).
    log = EventLog(tmp_path / "events.jsonl")
    assert log.strict
    log.emit("error", where="test", message="declared fields pass")
    with pytest.raises(EventError, match="undeclared field"):
        log.emit("error", where="test", message="x", colour="red")
    lenient = EventLog(None, strict=False)
    lenient.emit("error", where="test", message="x", colour="red")  # production: kept
    with pytest.raises(EventError, match="unknown event type"):
        lenient.emit("nonsense")


def test_every_emit_site_sends_only_declared_fields() -> None:
    # Static half of the check: emit sites no test happens to reach are covered too.
    import ast

    from kernelopt_jupyter.events import EVENT_TYPES

    root = Path(__file__).resolve().parents[1]
    problems = []
    sites = 0
    for folder in ("agents", "kernelopt_jupyter", "verify"):
        for path in (root / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if not (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "emit"
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                ):
                    continue
                sites += 1
                kind = node.args[0].value
                sent = {k.arg for k in node.keywords if k.arg is not None}
                undeclared = sent - set(EVENT_TYPES.get(kind, ()))
                if kind not in EVENT_TYPES or undeclared:
                    problems.append(f"{path.relative_to(root)}:{node.lineno} {kind} {undeclared}")
    assert sites > 20 and not problems, problems


def test_docs_events_md_documents_every_declared_field() -> None:
    from kernelopt_jupyter.events import EVENT_TYPES

    doc = (Path(__file__).resolve().parents[1] / "docs" / "events.md").read_text()
    rows = {
        line.split("|")[1].strip().strip("`"): line for line in doc.splitlines() if "| `" in line
    }
    missing = {
        kind: [f for f in fields if f not in rows.get(kind, "")]
        for kind, fields in EVENT_TYPES.items()
    }
    assert not {k: v for k, v in missing.items() if v or k not in rows}, missing
