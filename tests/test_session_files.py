"""The session's files and semantics, with a scripted policy and stand-in gates (no workers):
result.json and best.py after every verdict, an interrupted run that lists what it decided and
resumes, the mode said everywhere, the CPU run's opening message, a deadline that the analysis
used up."""

from __future__ import annotations

import io
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _reports import report_of

from kernelopt_jupyter.agents.base import Edit, Plan, ProfileReport, Summary, TuneProposal
from kernelopt_jupyter.analysis import pipeline
from kernelopt_jupyter.analysis.pipeline import AnalysisFacts
from kernelopt_jupyter.analysis.pipeline import analyse as real_analyse
from kernelopt_jupyter.candidate import Candidate
from kernelopt_jupyter.event_payloads import Degraded
from kernelopt_jupyter.events import EventLog, read_events
from kernelopt_jupyter.problem import Problem, problem_from_source
from kernelopt_jupyter.session import OptimizationSession, SearchOptions, optimization
from kernelopt_jupyter.session.progress import TextProgress
from kernelopt_jupyter.session.state import degraded_text
from kernelopt_jupyter.verify.report import VerifyReport

PROBLEM = """
import torch
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm1d(8)
    def forward(self, x):
        return torch.relu(self.bn(x))
def get_inputs():
    return [torch.randn(16, 8)]
"""


class Scripted:
    """A policy whose Executor writes a new variant of the root each time (never a repeat)."""

    name = "scripted"

    def __init__(self) -> None:
        self.n = 0

    def profile(self, ctx: Any, io: Any) -> ProfileReport:
        return ProfileReport([], "nothing measured")

    def plan(self, ctx: Any, report: Any, parent: Any, n: int, io: Any) -> list[Plan]:
        self.n += 1
        return [Plan(f"{parent.id}.p{self.n}", f"variant {self.n}", "", "rewrite")]

    def execute(self, ctx: Any, plan: Plan, parent: Any, feedback: Any, io: Any) -> Edit:
        if feedback is not None:
            return Edit(None, "no other idea")
        return Edit(f"{ROOT}\n# {plan.title}\n", plan.title)

    def tune(self, ctx: Any, candidate: Any, io: Any) -> TuneProposal:
        return TuneProposal([], "")

    def summarize(self, ctx: Any, steps: Any, io: Any) -> Summary:
        return Summary({}, [])


ROOT = "import torch\nclass ModelNew(torch.nn.Module):\n    pass  # stands in for a harvest\n"


@pytest.fixture
def stand_ins(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Scripted agents, instant analysis, no timeline worker; returns the gated sources."""

    def analyse(problem: Problem, device: str, log: EventLog, **_: Any) -> AnalysisFacts:
        facts = AnalysisFacts({"eager": None}, [], False, [], ROOT, False, "stand-in harvest")
        log.emit("profile", dispatch_map={}, summary="stand-in", facts=facts.to_dict())
        return facts

    monkeypatch.setattr(pipeline, "analyse", analyse)
    monkeypatch.setattr(pipeline, "profile_candidate", lambda *a, **k: None)
    monkeypatch.setattr(optimization, "make_policy", lambda *a, **k: Scripted())
    return []


def _session(tmp_path: Path, gated: list[str], interrupt_at: int = 0, **opts: Any) -> Any:
    problem = problem_from_source(PROBLEM, "bn_relu.py", validate=False)
    opts = {"budget": 6, **opts}
    options = SearchOptions(device="cpu", out_dir=tmp_path, memory_path=None, **opts)
    session = OptimizationSession(problem, options)

    def gate(problem: Problem, candidate: Candidate, baselines: Any = ()) -> VerifyReport:
        gated.append(candidate.source)
        if interrupt_at and len(gated) == interrupt_at:
            raise KeyboardInterrupt  # Ctrl-C while this candidate is in its gates
        return report_of(candidate.id, device="cpu")

    session._gate = gate
    return session


def test_files_after_every_verdict_and_an_interrupted_run_resumes(
    tmp_path: Path, stand_ins: list[str]
) -> None:
    seen: list[dict[str, Any]] = []
    session = _session(tmp_path, stand_ins, interrupt_at=3)

    def watch(event: Any) -> None:
        if event.type == "session_finished":
            return
        if event.type == "budget":  # emitted after each verdict, before the checkpoint
            return
        if event.type == "agent_started" and (tmp_path / "result.json").exists():
            seen.append(json.loads((tmp_path / "result.json").read_text()))

    session.log.subscribe(watch, replay=False)
    with pytest.raises(KeyboardInterrupt):
        session.run()
    # While it ran, result.json always held every candidate decided so far.
    assert seen and all(s["status"] == "interrupted" for s in seen)
    assert [len(s["candidates"]) for s in seen] == sorted(len(s["candidates"]) for s in seen)
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["status"] == "interrupted"
    assert [c["id"] for c in result["candidates"]] == ["c0", "c1"]
    assert result["best"] == "c0" and (tmp_path / "best.py").is_file()
    assert "# Mode: as constructed" in (tmp_path / "best.py").read_text()
    assert not list(tmp_path.glob(".*.tmp"))  # atomic writes leave no temporary behind

    again: list[str] = []
    resumed = OptimizationSession.open(tmp_path, resume=True)
    resumed._gate = _session(tmp_path / "unused", again)._gate
    final = resumed.run()
    assert final.status == "finished"
    assert ROOT not in again  # c0 was decided before the interrupt: reused, not gated again
    ids = [g.candidate.id for g in final.candidates]
    assert ids[:2] == ["c0", "c1"] and len(ids) == len(set(ids))
    assert json.loads((tmp_path / "result.json").read_text())["status"] == "finished"


def test_eval_mode_is_said_in_every_verdict_and_best_py(
    tmp_path: Path, stand_ins: list[str]
) -> None:
    session = _session(tmp_path, stand_ins, mode="eval")
    session.run()
    assert 'KERNELOPT_MODE = "eval"' in (tmp_path / "problem.py").read_text()
    verdicts = [e for e in read_events(tmp_path / "events.jsonl") if e.type == "verdict"]
    assert verdicts and {e.data["mode"] for e in verdicts} == {"eval"}
    assert "# Mode: eval (inference" in (tmp_path / "best.py").read_text()
    assert json.loads((tmp_path / "result.json").read_text())["mode"] == "eval"


def test_the_cpu_run_says_what_it_can_do(tmp_path: Path, stand_ins: list[str]) -> None:
    session = _session(tmp_path, stand_ins, budget=1)
    out = io.StringIO()
    session.log.subscribe(TextProgress(out), replay=False)
    session.run()
    started = read_events(tmp_path / "events.jsonl")[0]
    notice = started.data["notice"]
    assert "interpreter" in notice and "nothing is timed" in notice and "not tried" in notice
    assert "KERNELOPT_SMALL" in notice
    assert notice in out.getvalue()


def test_a_deadline_spent_in_the_analysis_gates_nothing(
    tmp_path: Path, stand_ins: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    slow = pipeline.analyse

    def analysis_past_the_deadline(*args: Any, **kw: Any) -> AnalysisFacts:
        deadline = kw["deadline"]
        while not deadline.reached():  # the analysis used the whole limit
            time.sleep(0.01)
        return slow(*args, **kw)

    monkeypatch.setattr(pipeline, "analyse", analysis_past_the_deadline)
    session = _session(tmp_path, stand_ins, max_seconds=0.2)
    result = session.run()
    assert result.candidates == [] and stand_ins == []
    assert any("during the analysis" in n for n in result.notes)


def test_an_analysis_past_its_share_leaves_the_search_the_reference_ops(
    tmp_path: Path, stand_ins: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from kernelopt_jupyter.worker import WorkerResult

    monkeypatch.setattr(pipeline, "analyse", real_analyse)
    cut: list[float] = []

    def harvest_that_never_ends(problem: Any, device: str, deadline: Any, *a: Any, **k: Any):
        while not deadline.reached():  # a network whose harvest outlasts any limit
            time.sleep(0.01)
        cut.append(deadline.elapsed())
        return WorkerResult(False, timed_out=True, seconds=deadline.elapsed())

    monkeypatch.setattr(pipeline, "_analysis_worker", harvest_that_never_ends)
    session = _session(tmp_path, stand_ins, max_seconds=8.0, budget=1)
    result = session.run()
    # Killed at half the limit, and the reference's own ops were gated with the rest.
    assert cut and cut[0] < 6.0
    assert len(stand_ins) == 1 and "class ModelNew" in stand_ins[0]
    assert result.best is not None and result.best.candidate.note.startswith("reference ops")
    events = read_events(tmp_path / "events.jsonl")
    notes = next(e.data["facts"]["notes"] for e in events if e.type == "profile")
    assert "its share of the 8 s limit" in notes[0]
    degraded = [e.data for e in events if e.type == "degraded"]
    assert degraded and "share" in degraded[0]["error"] and "candidate" not in degraded[0]["error"]
    said = degraded_text(Degraded(**degraded[0]))
    assert said.startswith("the analysis stopped at 4 s") and "phase failed" not in said


def test_a_heartbeat_names_the_phase_of_a_long_step() -> None:
    out = io.StringIO()
    progress = TextProgress(out, heartbeat_s=0.05)
    log = EventLog(None)
    log.subscribe(progress)
    log.emit("session_started", problem="p.py", kind="module", device="cpu", agents="offline")
    done = threading.Event()
    for _ in range(200):  # wait for the line, however slow the machine (no timing asserted)
        if "still analysing" in out.getvalue():
            done.set()
            break
        time.sleep(0.02)
    progress.close()
    assert done.is_set(), out.getvalue()
    assert "s so far)" in out.getvalue()


def test_a_problem_that_can_shrink_does_so_on_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    from kernelopt_jupyter.sizes import shrink_for_cpu

    # setenv then delenv: monkeypatch restores the variable's absence after the test, even
    # though shrink_for_cpu sets it behind monkeypatch's back.
    monkeypatch.setenv("KERNELOPT_SMALL", "")
    monkeypatch.delenv("KERNELOPT_SMALL")
    source = 'import os\nSMALL = os.environ.get("KERNELOPT_SMALL") == "1"\n'
    assert shrink_for_cpu(source, "cuda") is None  # the GPU runs the published sizes
    assert shrink_for_cpu("import torch\n", "cpu") is None  # a problem without the switch
    note = shrink_for_cpu(source, "cpu")
    assert note is not None and "KERNELOPT_SMALL=1" in note
    import os

    assert os.environ["KERNELOPT_SMALL"] == "1"
    assert shrink_for_cpu(source, "cpu") is None  # already set: said once


def test_the_state_keeps_a_row_that_a_duplicate_names() -> None:
    from kernelopt_jupyter.session.state import SessionState

    log = EventLog(None)
    state = SessionState()
    log.subscribe(state.apply)
    log.emit("candidate", id="c0", parent=None, agent="harvest", plan_id=None, source="s")
    log.emit("decision", kind="best", candidate="c0", reason="fastest")
    log.emit("decision", kind="duplicate", candidate="c0", reason="repeats c0")
    log.emit("candidate", id="c1", parent="c0", agent="executor", plan_id=None, source="t")
    log.emit("decision", kind="cancelled", candidate="c1", reason="time limit")
    assert state.candidates["c0"].decision == "best" and state.best == "c0"
    assert state.candidates["c1"].decision == "cancelled" and state.candidates["c1"].verdict is None


QUICK = (
    "import torch\nclass ModelNew(torch.nn.Module):\n    pass  # stands in for the quick start\n"
)


def test_the_quick_start_is_gated_while_the_analysis_runs(
    tmp_path: Path, stand_ins: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The quick-start candidate's gates run while the analysis is still working (the
    analysis here waits to see them begin), its verdict comes first, and the search then
    starts from the harvest as before."""
    began = threading.Event()
    instant = pipeline.analyse

    def analysis_that_waits(*args: Any, **kw: Any) -> AnalysisFacts:
        began.wait(timeout=30)  # never set if the quick start waited for the analysis
        return instant(*args, **kw)

    monkeypatch.setattr(pipeline, "analyse", analysis_that_waits)
    session = _session(tmp_path, stand_ins, budget=4)
    gate = session._gate

    def gate_and_say(problem: Problem, candidate: Candidate, baselines: Any = ()) -> Any:
        if candidate.source == QUICK:
            began.set()
        return gate(problem, candidate, baselines)

    session._gate = gate_and_say

    def quick_start() -> Candidate:
        assert session._search is not None
        return Candidate(session._search.new_id(), QUICK, None, "quickstart", None, True, "q")

    monkeypatch.setattr(session, "_quick_start", quick_start)
    result = session.run()
    assert began.is_set()
    events = read_events(tmp_path / "events.jsonl")
    kinds = [(e.type, e.data.get("candidate") or e.data.get("id")) for e in events]
    # Its gate began before the analysis ended (the analysis waited for it); the order of its
    # verdict and the analysis's profile event after that is the threads' business.
    assert kinds.index(("candidate", "c1")) < [k for k, _ in kinds].index("profile")
    assert kinds.index(("decision", "c1")) < kinds.index(("verdict", "c1"))
    assert kinds.index(("verdict", "c1")) < kinds.index(("candidate", "c0"))
    assert stand_ins[:2] == [QUICK, ROOT]  # the quick start, then the harvest (c0)
    ids = [g.candidate.id for g in result.candidates]
    assert ids[:2] == ["c1", "c0"] and len(ids) == len(set(ids)) == 4
    saved = json.loads((tmp_path / "result.json").read_text())
    assert [c["id"] for c in saved["candidates"]][:2] == ["c1", "c0"]


def test_when_there_is_a_quick_start_and_when_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kernelopt_jupyter.analysis.cache import AnalysisCache

    def session_on(device: str, budget: int = 16, **opts: Any) -> OptimizationSession:
        problem = problem_from_source(PROBLEM, "bn_relu.py", validate=False)
        options = SearchOptions(
            device="cpu",
            out_dir=tmp_path / "run",
            memory_path=None,
            budget=budget,
            cache_dir=tmp_path / "cache",
            **opts,
        )
        session = OptimizationSession(problem, options)
        session.device = device  # type: ignore[assignment]  # as resolved on a GPU machine
        session._search = optimization.BeamSearch(
            session.problem,
            Scripted(),  # type: ignore[arg-type]
            session.log,
            optimization.SearchConfig(device=device),
            gate_runner=session._gate,
            context=session._empty_context(),
            root=None,
        )
        return session

    assert session_on("cpu")._quick_start() is None  # no graphs on the CPU
    assert session_on("cuda", budget=3)._quick_start() is None  # too small a budget
    quick = session_on("cuda")._quick_start()
    assert quick is not None and quick.id == "c1" and quick.agent == "quickstart"
    assert quick.dispatch_only and "torch.cuda.CUDAGraph()" in quick.source
    assert "class _ModelNewEager(torch.nn.Module)" in quick.source  # the reference's own ops
    # With the analysis cached there is no wait to fill.
    cached = session_on("cuda")
    cache = AnalysisCache(tmp_path / "cache")
    key = cache.key(cached.problem, "cuda")
    assert key is not None
    cache.store(key, {"baselines": {}, "profile": {}})
    assert cached._quick_start() is None
    assert session_on("cuda", analysis_cache=False)._quick_start() is not None


def test_a_stop_during_the_quick_start_ends_the_search_as_stopped(
    tmp_path: Path, stand_ins: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    session = _session(tmp_path, stand_ins, budget=4)

    def quick_start() -> Candidate:
        assert session._search is not None
        session.stop()  # a person pressed Stop as the search began
        return Candidate(session._search.new_id(), QUICK, None, "quickstart", None, True, "q")

    monkeypatch.setattr(session, "_quick_start", quick_start)
    result = session.run()
    assert result.status == "stopped" and stand_ins == []
    assert not [e for e in read_events(tmp_path / "events.jsonl") if e.type == "error"]
    assert json.loads((tmp_path / "result.json").read_text())["status"] == "stopped"


def test_the_verdict_names_the_file_the_candidate_is_kept_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kernelopt_jupyter import verify

    told: list[str] = []

    def verify_candidate(problem: Any, source: str, options: Any, **kw: Any) -> VerifyReport:
        told.append(kw["candidate_path"])
        assert Path(kw["candidate_path"]).read_text() == source  # written before the gates
        return report_of("c0", device="cpu")

    monkeypatch.setattr(verify, "verify_candidate", verify_candidate)
    problem = problem_from_source(PROBLEM, "bn_relu.py", validate=False)
    options = SearchOptions(device="cpu", out_dir=tmp_path, memory_path=None)
    session = OptimizationSession(problem, options)
    monkeypatch.setattr(session, "_verify_service", lambda *a: None)
    session._deadline = None
    session._gate(problem, Candidate("c0", ROOT, None, "harvest"))
    assert told == [str(tmp_path / "candidates" / "c0.py")]
