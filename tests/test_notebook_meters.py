"""The panel's budget clock (from the run's start), API cost meter, retries, folded thinking,
the Export button, and the guard the accepted cell carries."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from panel_sample import REFERENCE

from kernelopt_jupyter.events import Event, EventLog
from kernelopt_jupyter.notebook.accept import render_accepted_cell
from kernelopt_jupyter.notebook.panel import export as export_view
from kernelopt_jupyter.notebook.panel.view import SessionPanel
from kernelopt_jupyter.notebook.phases import PhaseTracker, duration_text
from kernelopt_jupyter.problem import problem_from_source
from kernelopt_jupyter.session.state import SessionState

STARTED = Event(
    "session_started",
    {"problem": "p.py", "name": "p", "kind": "module", "device": "cpu", "agents": "claude",
     "options": {"budget": 8, "max_seconds": 120.0, "max_usd": 0.5, "max_tokens": 100_000}},
    t=0.0,
)  # fmt: skip


def _wait(predicate: Any, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end and not predicate():
        time.sleep(0.01)
    return bool(predicate())


# ------------------------------------------------------------------ the budget clock


def test_budget_clock_runs_from_the_start_before_the_search() -> None:
    state = SessionState()
    state.apply_all([STARTED, Event("baseline", {"name": "eager"}, t=42.0)])
    # No budget event yet (the analysis is running): the clock and the caps are there.
    assert state.budget_line().startswith("candidates 0/8 · 42/120 s")
    # The search's budget events count from the run's start too; the fresher clock wins.
    state.apply(Event("budget", {"candidates": 1, "max_candidates": 8, "seconds": 50.0}, t=50.0))
    state.apply(Event("agent_text", {"agent": "planner", "delta": "x"}, t=61.0))
    assert "61/120 s" in state.budget_line() and "candidates 1/8" in state.budget_line()


def test_phase_view_carries_the_budget_clock() -> None:
    panel = SessionPanel()
    panel.feed([STARTED, Event("baseline", {"name": "eager"}, t=3.0)])
    view = panel.phase_view
    assert (view.start, view.end, view.limit) == (0.0, -1.0, 120.0)
    assert "kernelopt-phase-clock" in view._esm and "the analysis counts" in view._esm
    panel.feed([Event("session_finished", {"status": "finished", "best": None}, t=95.0)])
    assert view.end == 95.0
    assert panel.phases.clock_text() == (
        "Time 1 min 35 s of 2 min 00 s (--time-limit; the analysis counts)"
    )
    tracker = PhaseTracker()
    tracker.apply(Event("session_started", {"kind": "module", "options": {}}, t=0.0))
    assert tracker.clock_text(now=5.0) == "Time 5 s (no --time-limit)"


# ------------------------------------------------------------------ cost, retries, thinking


def test_cost_meter_reads_the_budget_event() -> None:
    panel = SessionPanel()
    panel.feed([STARTED])
    assert panel.header.cost.value != ""  # caps are set: the meter shows from the start
    usage = {
        "input_tokens": 1_200,
        "output_tokens": 345,
        "cache_read_input_tokens": 9_000,
        "cache_creation_input_tokens": 1_800,
    }
    budget = {"candidates": 2, "max_candidates": 8, "seconds": 30.0, "max_seconds": 120.0,
              "tokens": 12_345, "max_tokens": 100_000, "cost_usd": 0.0123, "max_usd": 0.5,
              "usage": usage}  # fmt: skip
    panel.feed([Event("budget", budget, t=30.0)])
    meter = panel.header.cost.value
    assert "kernelopt-cost" in panel.header.cost._dom_classes
    assert "$0.0123 of $0.50" in meter and "12,345 tokens of 100,000" in meter
    assert "cache read 9,000" in meter and "cache write 1,800" in meter
    assert "value='0.025'" in meter  # $0.0123 of $0.50 as a bar
    assert "$0.012/$0.50" in panel.header.html.value and "12345/100000 tokens" in (
        panel.header.html.value
    )


def test_no_cost_meter_for_offline_agents() -> None:
    panel = SessionPanel()
    panel.feed([Event("session_started", {"agents": "offline", "options": {}}, t=0.0)])
    panel.feed([Event("budget", {"candidates": 1, "tokens": 0, "cost_usd": 0.0}, t=1.0)])
    assert panel.header.cost.value == ""


def test_retry_shows_on_the_agent_line_until_the_request_gets_through() -> None:
    panel = SessionPanel()
    retry = {"agent": "profiler", "step": 0, "status": "529", "reason": "overloaded",
             "wait_s": 4.0, "attempt": 2, "max_attempts": 6}  # fmt: skip
    panel.feed([STARTED, Event("agent_started", {"agent": "profiler", "step": 0}, t=1.0)])
    panel.feed([Event("retry", retry, t=2.0)])
    line = panel.agents._lines["profiler"].value
    assert "kernelopt-retry" in line and "retrying: 529 overloaded, attempt 2/6 in 4.0 s" in line
    panel.feed([Event("agent_text", {"agent": "profiler", "step": 0, "delta": "ok"}, t=7.0)])
    assert "retrying" not in panel.agents._lines["profiler"].value


def test_thinking_is_folded_apart_from_the_answer() -> None:
    panel = SessionPanel()
    panel.feed([STARTED, Event("agent_started", {"agent": "planner", "step": 1}, t=1.0)])
    fold = panel.agents._folds["planner"]
    assert fold.layout.display == "none"  # no thinking yet: nothing to unfold
    panel.feed(
        [
            Event("agent_thinking", {"agent": "planner", "step": 1, "delta": "Amdahl says "}),
            Event("agent_thinking", {"agent": "planner", "step": 1, "delta": "the matmul."}),
            Event("agent_text", {"agent": "planner", "step": 1, "delta": "Plan: fuse."}),
        ]
    )
    assert panel.agents.thinking["planner"].value == "Amdahl says the matmul."
    assert "Amdahl" not in panel.agents.streams["planner"].value
    assert "Plan: fuse." in panel.agents.streams["planner"].value
    assert fold.layout.display is None and fold.selected_index is None  # shown, folded
    assert "kernelopt-thinking" in fold._dom_classes


def test_failed_step_ends_the_agent_with_its_error() -> None:
    state = SessionState()
    state.apply_all(
        [
            STARTED,
            Event("agent_started", {"agent": "executor", "step": 2}),
            Event("agent_failed", {"agent": "executor", "step": 2, "error": "budget used",
                                   "usage": {"input_tokens": 10}}),
        ]
    )  # fmt: skip
    view = state.agents["executor"]
    assert not view.running and view.summary == "failed: budget used"
    assert state.cost()["usage"] == {"input_tokens": 10}


# ------------------------------------------------------------------ Export


def _finished(best: str | None) -> list[Event]:
    return [STARTED, Event("session_finished", {"status": "finished", "best": best}, t=9.0)]


def test_export_button_exports_the_winner_on_a_thread(tmp_path: Path) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []
    release = threading.Event()

    def exporter(run_dir: str, **kwargs: Any) -> Any:
        calls.append((run_dir, kwargs))
        kwargs["on_check"](SimpleNamespace(shape=SimpleNamespace(name="own"), verdict="pass"))
        release.wait(5)
        report = SimpleNamespace(summary=lambda: "verified at 3 of 4 shape set(s)")
        return SimpleNamespace(package=tmp_path / "export" / "kernelopt_p", report=report)

    panel = SessionPanel(out_dir=str(tmp_path))
    panel.export.exporter = exporter
    assert "kernelopt-export" in panel.export.button._dom_classes
    assert panel.export.button in panel.controls.widget.children
    panel.feed([STARTED])
    assert panel.export.button.disabled  # nothing to export while it runs
    panel.feed(_finished("c3"))
    assert not panel.export.button.disabled
    panel.export.button.click()
    assert _wait(lambda: calls) and panel.export.button.disabled  # busy
    assert calls[0][0] == str(tmp_path) and calls[0][1]["device"] == "cpu"
    assert _wait(lambda: "shape own: pass" in panel.header.message.value)
    release.set()
    assert _wait(lambda: "Exported to" in panel.header.message.value)
    message = panel.header.message.value
    assert "verified at 3 of 4 shape set(s)" in message and "import kernelopt_p" in message
    assert _wait(lambda: not panel.export.button.disabled)


def test_export_failure_and_no_winner_say_so(tmp_path: Path) -> None:
    def exporter(run_dir: str, **kwargs: Any) -> Any:
        raise RuntimeError(f"{run_dir}: the winner fails at the problem's own shape now")

    panel = SessionPanel(out_dir=str(tmp_path))
    panel.export.exporter = exporter
    panel.feed(_finished(None))
    assert panel.export.button.disabled and panel.export.start() is None
    assert "no verified winner" in panel.header.message.value
    panel.feed(_finished("c1"))
    thread = panel.export.start()
    assert thread is not None
    thread.join(5)
    assert "Export failed: " in panel.header.message.value
    assert "own shape now" in (panel.export.error or "")


def test_the_default_exporter_is_kernelopt_export(monkeypatch: pytest.MonkeyPatch) -> None:
    from kernelopt_jupyter import deploy

    seen: list[Any] = []
    monkeypatch.setattr(deploy, "export", lambda run_dir, **kw: seen.append((run_dir, kw)))
    export_view._default_exporter("runs/x", device="cpu")
    assert seen == [("runs/x", {"device": "cpu"})]


# ------------------------------------------------------------------ the accepted cell's guard


def test_accepted_module_cell_is_guarded_like_best_py() -> None:
    problem = problem_from_source(REFERENCE, validate=False)
    source = (
        "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
        "    def forward(self, x):\n        return torch.relu(x) * 2.0\n"
    )
    cand = {"id": "c7", "source": source, "parent": "c3", "agent": "executor", "plan_id": None}
    text = render_accepted_cell(problem, cand, [], None, device="cpu")
    assert "from kernelopt_jupyter.deploy.guard_runtime import kernelopt_guard" in text
    ns: dict[str, Any] = {}
    exec(compile(REFERENCE, "<problem cell>", "exec"), ns)  # the %%kernelopt cell ran first
    exec(compile(text, "<accepted>", "exec"), ns)
    model = ns["kernelopt_guarded"](ns["Model"]())
    with torch.no_grad():
        x = torch.randn(1024, 256)  # the shape the search verified
        torch.testing.assert_close(model(x), torch.relu(x) * 2.0)
        assert model.kernelopt_path == "kernel"
        y = torch.randn(4, 4)
        torch.testing.assert_close(model(y), torch.relu(y) * 2.0)
        assert model.kernelopt_path.startswith("reference: these shapes")
        model(x.double())  # a dtype it was not verified for
        assert model.kernelopt_path.startswith("reference")
    on_gpu = render_accepted_cell(problem, cand, [], None, device="cuda")
    assert "'device': 'cuda'" in on_gpu  # the session's device, not this kernel's


def test_an_unguardable_problem_still_gets_its_code() -> None:
    problem = problem_from_source(REFERENCE, validate=False)
    broken = type(problem)(problem.kind, problem.path, "def get_inputs(:\n", problem.entry, "p")
    cand = {"id": "c2", "source": "class ModelNew:\n    pass\n", "agent": "executor"}
    text = render_accepted_cell(broken, cand, [], None, device="cpu")
    assert "class ModelNew:" in text
    assert text.rstrip().splitlines()[-1].startswith("# KernelOPT guard not added:")


def test_panel_accept_uses_the_sessions_device(monkeypatch: pytest.MonkeyPatch) -> None:
    from kernelopt_jupyter.notebook.panel import view

    seen: list[str] = []
    monkeypatch.setattr(
        view, "insert_with_bridge", lambda cell, text, mode, done: seen.append(text)
    )
    problem = problem_from_source(REFERENCE, validate=False)
    panel = SessionPanel(problem=problem)
    source = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
    log = EventLog()
    log.emit("session_started", problem="p.py", kind="module", device="cuda", agents="offline")
    log.emit("candidate", id="c1", parent=None, agent="harvest", source=source)
    panel.feed(log.events)
    panel.accept("c1")
    assert seen and "'device': 'cuda'" in seen[0]


def test_the_header_leaves_the_clock_to_the_time_row() -> None:
    """One clock: the header's seconds came from the last event and stood still while paused
    (194 s beside the live "Time 3 min 43 s")."""
    panel = SessionPanel()
    panel.feed([STARTED])
    budget = {"candidates": 2, "max_candidates": 8, "seconds": 194.0, "max_seconds": 300.0}
    panel.feed([Event("budget", budget, t=194.0)])
    header = panel.header.html.value
    assert "candidates 2/8" in header
    assert "194" not in header and "/300 s" not in header
    assert panel.phases.clock_text(now=223.0).startswith("Time 3 min 43 s")  # the clock


def test_a_phase_shorter_than_half_a_second_reads_under_one_second() -> None:
    assert duration_text(0.3) == "under 1 s"  # not "0 s", which reads as a phase never run
    assert duration_text(0.6) == "1 s" and duration_text(42.2) == "42 s"
    assert duration_text(185) == "3 min 05 s"
