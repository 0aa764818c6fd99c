"""The %%kernelopt and %kernelopt magics in a headless IPython shell."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython import get_ipython
from IPython.core.interactiveshell import InteractiveShell
from IPython.testing.globalipapp import start_ipython
from panel_sample import REFERENCE, sample_events

from kernelopt_jupyter import session
from kernelopt_jupyter.agents.stepping import StepControl
from kernelopt_jupyter.events import EventLog
from kernelopt_jupyter.notebook import accept, interpreter, magic
from kernelopt_jupyter.notebook.panel.view import SessionPanel
from kernelopt_jupyter.problem import Problem
from kernelopt_jupyter.session.progress import TextProgress

CELL = REFERENCE


class RecordedSession:
    """Stands in for OptimizationSession: replays the sample session's events when started."""

    made: list[RecordedSession] = []

    def __init__(self, problem: Problem, options: Any) -> None:
        self.problem = problem
        self.options = options
        self.out_dir = Path(options.out_dir or "runs/recorded")
        self.log = EventLog(self.out_dir / "events.jsonl")
        self.step = StepControl(enabled=options.step)
        self.stopped = False
        self._thread: threading.Thread | None = None
        RecordedSession.made.append(self)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        def run() -> None:
            for kind, data in sample_events(candidates=3):
                self.log.emit(kind, **data)

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        assert self._thread is not None
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def stop(self) -> None:
        self.stopped = True

    def submit(self, source: str, parent: str | None = None, agent: str = "person") -> str:
        return "c99"


@pytest.fixture
def ip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    shell = start_ipython() or get_ipython()  # the test shell is a process-wide singleton
    assert shell is not None
    monkeypatch.chdir(tmp_path)
    shell.run_line_magic("load_ext", "kernelopt_jupyter")
    magic.SESSIONS.clear()
    RecordedSession.made.clear()
    yield shell
    for record in magic.SESSIONS:
        panel = record.panel
        if isinstance(panel, SessionPanel):
            panel.close()
    magic.SESSIONS.clear()


@pytest.fixture(autouse=True)
def no_interpreter_switch(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Keep this test process out of Triton's interpreter (the switch is for good); record
    that the magic asked for it. tests/browser/ checks the real switch in a real kernel."""
    calls: list[bool] = []
    monkeypatch.setattr(interpreter, "use_cpu_interpreter", lambda: calls.append(True) or True)
    return calls


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "OptimizationSession", RecordedSession)


@pytest.fixture
def widgets(monkeypatch: pytest.MonkeyPatch) -> None:
    # The test shell has no kernel; pretend a Jupyter front end is attached.
    monkeypatch.setattr(magic, "has_widget_frontend", lambda shell: True)


def run(ip: InteractiveShell, line: str, cell: str | None = None) -> Any:
    text = f"%%kernelopt {line}\n{cell}" if cell is not None else f"%kernelopt {line}"
    return ip.run_cell(text)


def test_help_lists_options_and_commands(
    ip: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    run(ip, "--help", "pass\n")
    out = capsys.readouterr().out
    for flag in (
        "--agents",
        "--budget",
        "--seeds",
        "--device",
        "--step",
        "--model",
        "--out",
        "--time-limit",
        "--module",
        "--inputs",
    ):
        assert flag in out
    assert "%kernelopt accept N" in out and "%%kernelopt [--agents" in out
    run(ip, "")
    assert "%kernelopt open DIR" in capsys.readouterr().out


def test_help_on_an_empty_cell(ip: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    # IPython refuses an empty cell-magic body before calling the magic: the help still shows.
    assert ip.run_cell("%%kernelopt --help\n").success
    assert "--budget" in capsys.readouterr().out
    empty = ip.run_cell("%%kernelopt --budget 3\n\n")
    assert not empty.success and "the %%kernelopt cell is empty" in str(empty.error_in_exec)


def test_sessions_are_named_after_the_problem(
    ip: InteractiveShell, recorded: None, no_interpreter_switch: list[bool]
) -> None:
    assert run(ip, "--budget 3", TRITON_CELL).success
    assert RecordedSession.made[-1].problem.name == "double"  # the kernel's entry function
    assert no_interpreter_switch  # on the CPU the cell's kernels are defined interpreted
    assert run(ip, "--budget 3 --name my run", CELL).success is False  # one word only
    assert run(ip, "--budget 3 --name my_run", CELL).success
    assert RecordedSession.made[-1].problem.name == "my_run"
    assert run(ip, "--budget 3", CELL).success
    assert RecordedSession.made[-1].problem.name.startswith("cell")  # no notebook name here


def test_sessions_marks_an_interrupted_saved_session(
    ip: InteractiveShell, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "runs" / "cut"
    log = EventLog(folder / "events.jsonl")
    for kind, data in sample_events(candidates=3):
        if kind != "session_finished":  # its kernel died mid-run
            log.emit(kind, **data)
    run(ip, f"sessions {tmp_path / 'runs'}")
    line = capsys.readouterr().out
    assert "interrupted" in line and "running" not in line
    # Opened read-only, its summary says the same (no kernel runs it any more).
    (folder / "problem.py").write_text(REFERENCE)
    run(ip, f"open {folder}")
    summary = magic.SESSIONS[-1].summary_html()
    assert "status <b>interrupted</b>" in summary and "running" not in summary


class StoppedSession(RecordedSession):
    """A recorded session that the person stopped: it ends ``stopped``, not ``finished``."""

    def start(self) -> None:
        def run() -> None:
            for kind, data in sample_events(candidates=3):
                if kind == "session_finished":
                    data = {**data, "status": "stopped"}
                self.log.emit(kind, **data)

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()


def test_wait_and_sessions_say_stopped_for_a_stopped_session(
    ip: InteractiveShell,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(session, "OptimizationSession", StoppedSession)
    run(ip, "--budget 3 --text", CELL)
    assert StoppedSession.made[-1].wait(10)
    capsys.readouterr()
    run(ip, "wait 5")
    said = capsys.readouterr().out
    assert "s1: stopped; best c2" in said and "finished" not in said
    folder = tmp_path / "saved-runs" / "halted"
    log = EventLog(folder / "events.jsonl")
    for kind, data in sample_events(candidates=3):
        log.emit(kind, **({**data, "status": "stopped"} if kind == "session_finished" else data))
    run(ip, f"sessions {tmp_path / 'saved-runs'}")
    saved = [line for line in capsys.readouterr().out.splitlines() if line.startswith("saved")]
    assert len(saved) == 1 and " stopped " in saved[0] and "finished" not in saved[0], saved


def test_bad_option_is_a_usage_error(ip: InteractiveShell) -> None:
    result = run(ip, "--budget lots", "pass\n")
    assert not result.success and "invalid int value" in str(result.error_in_exec)


def test_api_budget_flags_reach_the_session(
    ip: InteractiveShell, recorded: None, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run(ip, "--agents claude --max-tokens 5000 --max-usd 0.25 --text", CELL)
    assert result.success
    opts = RecordedSession.made[-1].options
    assert (opts.agents, opts.max_tokens, opts.max_usd) == ("claude", 5000, 0.25)
    RecordedSession.made[-1].wait(10)
    for line, message in (
        ("--max-usd 0", "--max-usd 0.0 must be more than 0 USD"),
        ("--max-tokens 0", "--max-tokens 0 must be at least 1"),
        ("--max-usd much", "invalid float value"),
    ):
        bad = run(ip, line, CELL)
        assert not bad.success and message in str(bad.error_in_exec)
    run(ip, "--help", "")
    text = capsys.readouterr().out
    assert "--max-tokens" in text and "--max-usd" in text and "analysis included" in text


def test_no_cache_reaches_the_session(ip: InteractiveShell, recorded: None) -> None:
    assert run(ip, "--text", CELL).success
    assert RecordedSession.made[-1].options.analysis_cache is True
    RecordedSession.made[-1].wait(10)
    assert run(ip, "--no-cache --text", CELL).success
    assert RecordedSession.made[-1].options.analysis_cache is False
    RecordedSession.made[-1].wait(10)


def test_cell_without_a_problem_gets_one_line(
    ip: InteractiveShell, recorded: None, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run(ip, "", "x = 41 + 1\n")
    assert result.success
    err = capsys.readouterr().err.strip()
    assert err.startswith("kernelopt: <cell>: defines no `class Model(nn.Module)`")
    assert "--module NAME --inputs NAME" in err and len(err.splitlines()) == 1
    assert "Traceback" not in err
    assert ip.user_ns["x"] == 42  # the cell still ran in the user's namespace
    assert not magic.SESSIONS and not RecordedSession.made


def test_cell_error_shows_its_own_traceback(ip: InteractiveShell, recorded: None) -> None:
    result = run(ip, "", "raise ValueError('mine')\n")
    assert not result.success and "mine" in str(result.error_in_exec)
    assert not magic.SESSIONS


def test_cell_starts_a_session_and_panel(
    ip: InteractiveShell, recorded: None, widgets: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ip, "get_parent", lambda: {"metadata": {"cellId": "cell-7"}}, raising=False)
    result = run(
        ip,
        "--budget 5 --seeds 2 --device cpu --step --model claude-x "
        "--time-limit 30 --out run1 --iterations 2 --name relu2",
        CELL,
    )
    assert result.success
    assert "Model" in ip.user_ns  # the cell ran in the user's namespace
    s = RecordedSession.made[-1]
    opts = s.options
    assert (opts.budget, opts.seeds, opts.device, opts.step, opts.model) == (
        5,
        2,
        "cpu",
        True,
        "claude-x",
    )
    assert (opts.max_seconds, opts.out_dir, opts.iterations) == (30.0, Path("run1"), 2)
    assert s.problem.kind == "module" and s.problem.name == "relu2"
    record = magic.SESSIONS[-1]
    assert record.cell_id == "cell-7"
    panel = record.panel
    assert isinstance(panel, SessionPanel) and panel.cell_id == "cell-7" and panel.step_mode
    assert s.wait(10)
    assert_wait(lambda: panel.rendered == len(s.log.events))
    assert len(panel.table.rows_box.children) == 4  # header + 3 candidates
    assert panel.state.status == "finished"


def assert_wait(predicate: Any, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not predicate() and time.monotonic() < end:
        time.sleep(0.02)
    assert predicate()


def test_text_mode_without_widgets(
    ip: InteractiveShell, recorded: None, capsys: pytest.CaptureFixture[str]
) -> None:
    run(ip, "--budget 3", CELL)
    record = magic.SESSIONS[-1]
    assert isinstance(record.panel, TextProgress)
    assert record.session.wait(10)
    out = capsys.readouterr().out
    assert "KernelOPT: relu_scale" in out and "finished (finished); best: c2" in out


def test_line_commands(
    ip: InteractiveShell,
    recorded: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(ip, "status")
    assert not result.success and "no session in this kernel" in str(result.error_in_exec)
    run(ip, "--budget 3", CELL)
    s = RecordedSession.made[-1]
    assert s.wait(10)
    capsys.readouterr()
    run(ip, "status")
    assert "finished; 3 candidates; best c2" in capsys.readouterr().out
    run(ip, "stop")  # the session has finished: nothing is stopped, and it says so
    # The label the commands take, with the name the panel shows.
    said = capsys.readouterr().out
    name = magic.SESSIONS[-1].problem.name
    assert not s.stopped and f"s1 ({name}): already finished; nothing to stop" in said
    run(ip, "wait 5")
    assert "s1: finished; best c2" in capsys.readouterr().out
    # Keep this process out of Triton's interpreter: the preamble would switch it on for good.
    monkeypatch.setattr(accept, "_INTERPRETER_PREAMBLE", "")
    inserted: list[tuple[str, bool]] = []
    monkeypatch.setattr(
        ip, "set_next_input", lambda text, replace=False: inserted.append((text, replace))
    )
    run(ip, "accept 2")
    text, replace = inserted[-1]
    assert not replace and text.startswith("# KernelOPT: accepted candidate c2 for cell")
    assert "class ModelNew" in text and "correctness pass" in text
    said = capsys.readouterr().out
    assert "asked the front end for a new cell below" in said and "set_next_input" in said
    run(ip, "accept best --run")
    assert inserted[-1][0] == text
    assert "ModelNew" in ip.user_ns  # --run defined it here
    assert "%kernelopt accept" not in capsys.readouterr().out
    failed = run(ip, "accept c3")
    assert not failed.success and "did not pass the gates" in str(failed.error_in_exec)
    missing = run(ip, "accept c42")
    assert "no candidate 'c42'" in str(missing.error_in_exec)
    unknown = run(ip, "frobnicate")
    assert "unknown command 'frobnicate'" in str(unknown.error_in_exec)
    capsys.readouterr()
    run(ip, "sessions")
    assert "s1  relu_scale" in capsys.readouterr().out


def test_module_instance_and_inputs(ip: InteractiveShell, recorded: None) -> None:
    cell = (
        "import torch\nnet = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())\n"
        "xs = [torch.randn(4, 8)]\n"
    )
    assert run(ip, "--module net --inputs xs", cell).success
    problem = RecordedSession.made[-1].problem
    assert problem.kind == "module" and "_ko_instance = net" in problem.source
    from kernelopt_jupyter.problem import materialize

    loaded = materialize(problem)
    model = loaded.make_model()
    x = loaded.make_inputs(seed=1)
    assert x[0].shape == (4, 8) and model(*x).shape == (4, 8)
    assert not __import__("torch").equal(x[0], loaded.make_inputs(seed=2)[0])


def test_module_option_errors(
    ip: InteractiveShell, recorded: None, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run(ip, "--module net", "net = 1\n")
    assert "--module and --inputs go together" in str(result.error_in_exec)
    run(ip, "--module net --inputs xs", "net = 1\nxs = []\n")
    assert "--module net: the cell defines no nn.Module" in capsys.readouterr().err


def test_open_saved_session_read_only(
    ip: InteractiveShell, widgets: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "saved"
    log = EventLog(folder / "events.jsonl")
    for kind, data in sample_events(candidates=3):
        log.emit(kind, **data)
    (folder / "problem.py").write_text(REFERENCE)
    run(ip, f"open {folder}")
    record = magic.SESSIONS[-1]
    assert not record.live and record.problem is not None
    panel = record.panel
    assert isinstance(panel, SessionPanel)
    assert panel.controller is None and panel.controls.stop_button.disabled
    assert len(panel.table.rows_box.children) == 4 and panel.state.best == "c2"
    missing = run(ip, f"open {tmp_path / 'nothing'}")
    assert missing.success and "not a KernelOPT session folder" in capsys.readouterr().err
    capsys.readouterr()
    run(ip, "sessions saved")
    assert "relu_scale" in capsys.readouterr().out


@pytest.mark.slow
def test_real_offline_session_end_to_end(
    ip: InteractiveShell, widgets: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real OptimizationSession on CPU: panel rows, gates, summary and accept."""
    monkeypatch.setenv("KERNELOPT_HOME", str(tmp_path / "home"))  # experience memory
    monkeypatch.setattr(accept, "_INTERPRETER_PREAMBLE", "")
    cell = (
        "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
        "    def forward(self, x):\n        return torch.relu(x) * 2.0\n\n\n"
        "def get_inputs():\n    return [torch.randn(64, 64)]\n"
    )
    assert run(ip, "--budget 2 --iterations 1 --device cpu --name relu2", cell).success
    record = magic.SESSIONS[-1]
    assert isinstance(record.session, session.OptimizationSession)
    assert record.session.wait(240), "the search did not finish"
    panel = record.panel
    assert isinstance(panel, SessionPanel)
    assert_wait(lambda: panel.rendered == len(record.session.log.events))
    state = panel.state
    assert state.status == "finished" and state.candidates
    first = next(iter(state.candidates.values()))
    assert first.verdict in ("pass", "fail")
    assert all(first.gates[g].status != "pending" for g in first.gates)
    assert len(panel.table.rows_box.children) == 1 + len(state.candidates)
    assert (record.out_dir / "events.jsonl").is_file()
    if state.best is not None:
        inserted: list[str] = []
        monkeypatch.setattr(ip, "set_next_input", lambda text, replace=False: inserted.append(text))
        run(ip, "accept best")
        assert inserted and f"accepted candidate {state.best}" in inserted[0]


TRITON_CELL = """
import torch
import triton
import triton.language as tl


@triton.jit
def _double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def double(x):
    y = torch.empty_like(x)
    _double[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    return y


def get_inputs():
    return [torch.randn(4096)]
"""


def test_triton_problem_cell(ip: InteractiveShell, recorded: None) -> None:
    assert run(ip, "", TRITON_CELL).success
    problem = RecordedSession.made[-1].problem
    assert (problem.kind, problem.entry) == ("triton", "double")


@pytest.mark.slow
def test_real_step_mode_through_the_panel(
    ip: InteractiveShell, widgets: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--step with the real search: every pause is answered with the panel's buttons."""
    monkeypatch.setenv("KERNELOPT_HOME", str(tmp_path / "home"))
    cell = (
        "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
        "    def forward(self, x):\n        return torch.relu(x) * 2.0\n\n\n"
        "def get_inputs():\n    return [torch.randn(64, 64)]\n"
    )
    assert run(ip, "--step --budget 3 --iterations 1 --device cpu", cell).success
    record = magic.SESSIONS[-1]
    panel = record.panel
    assert isinstance(panel, SessionPanel) and panel.step_mode
    pauses: list[str] = []
    edited = False
    end = time.monotonic() + 240
    while not record.session.wait(0.05) and time.monotonic() < end:
        panel.flush()
        paused = panel.state.paused
        if paused is None or panel.controls.step_buttons["approve"].disabled:
            continue
        pauses.append(paused.agent)
        source = paused.payload.get("source")
        if (
            paused.agent == "executor"
            and isinstance(source, str)
            and "2.0" in source
            and not edited
        ):
            # A person's edit that is wrong on purpose: the gates must catch it.
            panel.controls.step_buttons["edit"].click()
            panel.editor.source.value = source.replace("2.0", "3.0")
            panel.editor.submit.click()
            edited = True
        else:
            panel.controls.step_buttons["approve"].click()
    assert record.session.wait(1), "the stepped search did not finish"
    panel.flush()
    assert pauses and pauses[0] == "profiler"
    resumed = [e.data["action"] for e in record.session.log.events if e.type == "step_resumed"]
    assert len(resumed) == len(pauses)
    assert edited, f"the executor never paused with an edit to change (pauses: {pauses})"
    assert "edit_candidate" in resumed
    by_person = [c for c in panel.state.candidates.values() if c.agent == "person"]
    assert by_person and "3.0" in by_person[0].source
    assert by_person and by_person[0].gates["correctness"].status == "fail"


@pytest.mark.slow
def test_real_step_mode_rejects_and_the_search_goes_on(
    ip: InteractiveShell, widgets: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reject the Planner's step (its reason reaches the Planner, which plans again), then a
    later step: the real search still gates new candidates and finishes."""
    from panel_sample import TWO_KERNELS

    monkeypatch.setenv("KERNELOPT_HOME", str(tmp_path / "home"))
    magic_line = "--step --budget 5 --seeds 2 --iterations 2 --plans 1 --device cpu"
    assert run(ip, magic_line, TWO_KERNELS).success
    record = magic.SESSIONS[-1]
    panel = record.panel
    assert isinstance(panel, SessionPanel)
    rejected: list[int] = []  # how many candidates there were at each reject
    seen: list[str] = []
    planner_turns = 0
    end = time.monotonic() + 240
    while not record.session.wait(0.05) and time.monotonic() < end:
        panel.flush()
        paused = panel.state.paused
        if paused is None or panel.controls.step_buttons["approve"].disabled:
            continue
        agent = paused.agent
        seen.append(agent)
        if agent == "planner":
            planner_turns += 1
        plans = paused.payload.get("plans") or []
        # Reject the Planner's first proposal, and again once the search has a new candidate.
        again = not rejected or len(panel.state.candidates) > 1
        if agent == "planner" and plans and len(rejected) < 2 and again:
            panel.controls.reject_reason.value = f"leave the row max alone ({len(rejected)})"
            panel.controls.step_buttons["reject"].click()
            rejected.append(len(panel.state.candidates))
            continue
        panel.controls.step_buttons["approve"].click()
    assert record.session.wait(1), "the stepped search did not finish"
    panel.flush()
    assert len(rejected) == 2, (rejected, seen)
    # The reason reached the Planner: its next turn says it, and it planned something else.
    assert "leave the row max alone" in panel.agents.streams["planner"].value
    assert planner_turns >= 4
    assert "leave the row max alone (1)" in panel.agents.streams["planner"].value
    # New candidates were gated after each reject.
    assert len(panel.state.candidates) > rejected[1] > rejected[0], (rejected, seen)
    made = [c for c in panel.state.candidates.values() if c.id != "c0"]
    assert any(c.verdict == "pass" for c in made), panel.state.candidates
    assert panel.state.status == "finished"


ACCEPT_AFTER_TRITON = """
import linecache, sys
import torch, triton  # as in a kernel where the search ran: Triton imported, interpreter off
from kernelopt_jupyter.candidate import Candidate
from kernelopt_jupyter.notebook.accept import render_accepted_cell
from kernelopt_jupyter.problem import load_problem
problem = load_problem(sys.argv[1], validate=False)
cand = Candidate(id="c1", source=problem.source, parent=None, agent="tuner", plan_id=None)
text = render_accepted_cell(problem, cand, [], None)
linecache.cache["<accepted>"] = (len(text), None, text.splitlines(True), "<accepted>")
ns = {"__name__": "__main__"}
# The %%kernelopt cell ran first, as the magic runs it (the interpreter switched on before
# it): its function is the guard's reference.
from kernelopt_jupyter.notebook.interpreter import use_cpu_interpreter
use_cpu_interpreter()
src = problem.source
linecache.cache["<problem>"] = (len(src), None, src.splitlines(True), "<problem>")
exec(compile(src, "<problem>", "exec"), ns)
exec(compile(text, "<accepted>", "exec"), ns)
for rows in (256, 8):  # the verified shape, then one it was not verified at
    x = torch.randn(rows, 397) * 10
    ok = torch.allclose(ns["row_softmax"](x), torch.softmax(x, -1), atol=1e-5)
    print("match", ok, ns["row_softmax"].kernelopt_path)
"""


def test_accepted_reduction_runs_after_triton_was_imported(tmp_path: Path) -> None:
    """tl.max/tl.sum were compiled-mode when Triton was imported first; the accepted cell
    routes them through the interpreter (a fresh process: the switch is for good)."""
    import os
    import subprocess
    import sys

    problem = Path(magic.__file__).parent.parent / "problems" / "row_softmax.py"
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run(
        [sys.executable, "-c", ACCEPT_AFTER_TRITON, str(problem)],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    # The accepted cell is guarded: a shape it was not verified at takes the person's function.
    assert lines[0] == "match True kernel", done.stdout
    assert lines[1].startswith("match True reference: these shapes"), done.stdout


def test_export_line_command_takes_shape_sets(
    ip: InteractiveShell, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`%kernelopt export` lists shape sets as the CLI does; each is verified and said."""
    from deploy_cases import CANDIDATE, make_run

    folder = make_run(tmp_path / "run", CANDIDATE)
    log = EventLog(folder / "events.jsonl")
    for kind, data in sample_events(candidates=1):
        log.emit(kind, **data)
    run(ip, f"open {folder}")
    capsys.readouterr()
    bad = run(ip, "export --shape ROWS")
    assert "--shape" in str(bad.error_in_exec)
    done = run(ip, f"export --shape ROWS=3 --fixed-shape --device cpu --out {tmp_path / 'pkg'}")
    assert done.success, done.error_in_exec
    out = capsys.readouterr().out
    assert "shape as given: pass" in out and "shape ROWS=3: pass" in out, out
    shapes = [line.strip() for line in out.splitlines() if line.strip().startswith("shape ")]
    assert len(shapes) == 2, shapes  # --fixed-shape: no derived shapes beside these two
    package = next((tmp_path / "pkg").iterdir())
    assert (package / "manifest.json").is_file() and f"import {package.name}" in out


def test_summary_beside_a_live_panel_is_redrawn_at_each_phase() -> None:
    """The static summary is drawn before the session's first event; it is redrawn when the
    session starts and at each later phase (not at every budget tick), so it names the problem
    and the running phase while the search runs (found by the browser test: 'problem ?')."""
    redraws: list[int] = []
    log = EventLog()
    log.subscribe(magic._phase_redraw(lambda: redraws.append(len(log.events))), replay=True)
    types = []
    for kind, data in sample_events(candidates=3, text_deltas=2):
        log.emit(kind, **data)
        types.append(kind)
    assert types.count("budget") >= 3
    # the session started; its baselines opened the analysis; its profile opened the search
    assert [types[n - 1] for n in redraws] == ["session_started", "baseline", "profile"]


def test_a_syntax_error_is_one_line_with_the_cells_own_numbers(
    ip: InteractiveShell, recorded: None, capsys: pytest.CaptureFixture[str]
) -> None:
    body = "import torch\n\nclass Model(torch.nn.Module):\n    x = (1 +\n"
    result = ip.run_cell(f"%%kernelopt --budget 2\n{body}", store_history=True)  # as a kernel
    assert not result.success and not magic.SESSIONS  # the cell fails, as a bad cell should
    said = capsys.readouterr()
    text = said.out + said.err
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in text, text
    # Line 5 of the cell (the %%kernelopt line is line 1), and the number the front end shows.
    number = result.execution_count
    assert f"kernelopt: cell [{number}], line 5: " in lines[0], lines[0]
    assert "x = (1 +" in lines[0]


def test_a_runtime_error_points_at_the_cells_own_line(ip: InteractiveShell, recorded: None) -> None:
    result = run(ip, "", "\n\nx = 1\nraise ValueError('mine')\n")
    error = result.error_in_exec
    assert isinstance(error, ValueError)
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    assert tb is not None and tb.tb_lineno == 5  # blank, blank, x = 1, raise: under the magic
    assert f"-{result.execution_count}-" in tb.tb_frame.f_code.co_filename


def test_a_session_is_named_after_the_cell_number_the_notebook_shows(
    ip: InteractiveShell, recorded: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JPY_SESSION_NAME", "/work/Untitled.ipynb")
    # As a kernel runs a cell: stored in the history, so IPython counts cells.
    result = ip.run_cell(f"%%kernelopt --budget 3\n{CELL}", store_history=True)
    assert result.success
    # IPython counts the next cell while one runs: the name must use the one shown, [N].
    assert RecordedSession.made[-1].problem.name == f"Untitled-cell{result.execution_count}"


def test_a_renamed_notebook_names_its_next_session(
    ip: InteractiveShell, recorded: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kernelopt_jupyter.notebook import bridge

    monkeypatch.setenv("JPY_SESSION_NAME", "/work/Untitled.ipynb")  # as the kernel started
    monkeypatch.setattr(bridge, "_notebook", {})
    # The labextension's message before the %%kernelopt cell, after the rename.
    bridge.on_notebook_path(None, {"content": {"data": {"path": "work/softmax study.ipynb"}}})
    result = ip.run_cell(f"%%kernelopt --budget 3\n{CELL}", store_history=True)
    assert result.success
    assert RecordedSession.made[-1].problem.name == f"softmax_study-cell{result.execution_count}"


def test_stop_by_magic_says_so_on_the_panel_at_once(
    ip: InteractiveShell, recorded: None, widgets: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run(ip, "--budget 3 --step", CELL).success
    record = magic.SESSIONS[-1]
    assert isinstance(record.panel, SessionPanel)
    record.panel.ctx.say("Paused after profiler step 9: Next/Approve to continue.")
    monkeypatch.setattr(RecordedSession, "running", property(lambda self: True))
    assert run(ip, "stop").success
    assert RecordedSession.made[-1].stopped
    assert "Stopping after the current step" in record.panel.header.message.value
