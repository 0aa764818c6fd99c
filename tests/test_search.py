"""Beam-search logic with the real offline policy and a deterministic stand-in for the GPU gates.

The gate runner here plays the part of a GPU: it "times" a candidate by a fixed function of its
launch configuration, so the tests check what the search does with timings (beam, tuning,
early stop, budgets, step mode, replay, resume) without a GPU. Real gates are exercised in
tests/test_session.py.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from _reports import report_of

from kernelopt_jupyter.agents.base import PLAN_ACTION_NAMES, AgentContext, KernelUnit
from kernelopt_jupyter.agents.memory import ExperienceMemory
from kernelopt_jupyter.agents.offline import OfflinePolicy
from kernelopt_jupyter.agents.replay import ReplayPolicy
from kernelopt_jupyter.agents.search import BeamSearch, SearchConfig
from kernelopt_jupyter.agents.stepping import StepControl
from kernelopt_jupyter.candidate import Candidate
from kernelopt_jupyter.events import EventLog, read_events
from kernelopt_jupyter.launch_configs import read_launch_configs
from kernelopt_jupyter.problem import Problem, problem_from_source
from kernelopt_jupyter.verify.report import VerifyReport

PROBLEM = """
import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2
def get_inputs():
    return [torch.randn(1000)]
"""

ROOT = """
import torch, triton
import triton.language as tl

LAUNCH_CONFIGS = {
    'k_relu': {'XBLOCK': 256, 'num_warps': 1, 'num_stages': 1},
}

@triton.jit
def k_relu(x, o, n, XBLOCK: tl.constexpr):
    i = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    v = tl.load(x + i, mask=i < n)
    tl.store(o + i, tl.maximum(v, 0) * 2, mask=i < n)

class ModelNew(torch.nn.Module):
    def forward(self, x):
        o = torch.empty_like(x)
        n = x.numel()
        k_relu[lambda meta: (triton.cdiv(n, meta['XBLOCK']),)](x, o, n, **LAUNCH_CONFIGS['k_relu'])
        return o
"""


def fake_gpu_gates(problem: Problem, candidate: Candidate) -> VerifyReport:
    """Pass everything that parses; time = f(block, warps), best at XBLOCK 1024, 4 warps."""
    if "BROKEN" in candidate.source:
        return report_of(candidate.id, fail_at="correctness", detail="seed 0: max abs err 3.0")
    cfg = read_launch_configs(candidate.source).get("k_relu", {})
    block, warps = cfg.get("XBLOCK", 256), cfg.get("num_warps", 1)
    ms = 0.1 + abs(block - 1024) / 10000 + abs(warps - 4) / 100
    if "CUDA-graph capture" in candidate.source:
        ms *= 0.5
    return report_of(candidate.id, ms=ms, speedup=0.2 / ms)


def make_search(tmp_path: Path, device: str = "cuda", **overrides: Any) -> BeamSearch:
    problem = problem_from_source(PROBLEM, "relu2.py")
    ctx = AgentContext(
        problem=problem,
        device=device,
        baselines={"eager": 0.2, "compile": 0.15},
        kernels=[KernelUnit("k_relu", "triton", share=1.0, bound="memory")],
    )
    screen_runner = overrides.pop("screen_runner", None)
    config = SearchConfig(device=device, **overrides)
    return BeamSearch(
        problem,
        overrides.pop("policy", None) or OfflinePolicy(ExperienceMemory(tmp_path / "mem.json")),
        EventLog(tmp_path / "events.jsonl"),
        config,
        gate_runner=fake_gpu_gates,
        context=ctx,
        root=Candidate("c0", ROOT, None, "harvest", None, False, "harvest"),
        memory=ExperienceMemory(tmp_path / "mem.json"),
        screen_runner=screen_runner,
    )


def test_search_improves_by_measured_tuning_and_graphs(tmp_path: Path) -> None:
    search = make_search(tmp_path, max_candidates=30)
    result = search.run()
    assert result.best is not None and result.best.ms is not None
    root_ms = result.candidates[0].ms
    assert root_ms is not None and result.best.ms < root_ms * 0.6
    # the winner came from gated steps, and each step was explained
    events = read_events(tmp_path / "events.jsonl")
    explained = {e.data["candidate"] for e in events if e.type == "explanation"}
    assert result.best.candidate.id in explained
    # every plan the offline planner made names an action of the one list
    actions = {e.data["action"] for e in events if e.type == "plan"}
    assert actions and actions <= set(PLAN_ACTION_NAMES)
    # speedup fields are derived from the baselines
    assert result.speedup_vs_compile == pytest.approx(0.15 / result.best.ms)


def test_candidate_budget_is_respected(tmp_path: Path) -> None:
    result = make_search(tmp_path, max_candidates=5).run()
    assert len(result.candidates) == 5
    assert any("candidate budget" in n for n in result.notes)


@pytest.mark.parametrize(
    ("decisions", "status", "resumed"),
    [
        # rejecting the Planner's step asks it again (a second planner pause), then stop
        (["approve", "reject", "stop"], "stopped", ["approve", "reject", "stop"]),
        # stopping at the executor's pause ends the search before anything is gated
        (["approve", "approve", "stop"], "stopped", ["approve", "approve", "stop"]),
    ],
)
def test_step_mode_reject_and_stop(
    tmp_path: Path, decisions: list[str], status: str, resumed: list[str]
) -> None:
    search = make_search(tmp_path, max_candidates=30)
    search.control = StepControl(enabled=True)

    def person() -> None:
        answered = 0
        for decision in decisions:
            while not (search.control.pending and search.control.pause_count > answered):
                threading.Event().wait(0.005)
            answered = search.control.pause_count
            getattr(search.control, decision)()

    helper = threading.Thread(target=person, daemon=True)
    helper.start()
    result = search.run()
    helper.join(5)
    assert result.status == status
    events = read_events(tmp_path / "events.jsonl")
    assert [e.data["action"] for e in events if e.type == "step_resumed"] == resumed
    assert [g.candidate.id for g in result.candidates] == ["c0"]
    if "reject" in decisions:
        paused = [e.data["agent"] for e in events if e.type == "step_paused"]
        assert paused == ["profiler", "planner", "planner"]


def test_person_edit_goes_through_the_gates(tmp_path: Path) -> None:
    search = make_search(tmp_path, max_candidates=30)
    search.control = StepControl(enabled=True)

    def person() -> None:
        edited, answered = False, 0
        for _ in range(100_000):
            if any(g.candidate.agent == "person" for g in search.gated):
                break
            if not (search.control.pending and search.control.pause_count > answered):
                threading.Event().wait(0.002)
                continue
            answered = search.control.pause_count
            last = search.log.of_type("step_paused")[-1]
            if last.data["agent"] == "executor" and not edited:
                search.control.edit_candidate(ROOT + "\n# BROKEN by hand\n")
                edited = True
            else:
                search.control.approve()
        search.control.stop()

    helper = threading.Thread(target=person)
    helper.start()
    result = search.run()
    helper.join(5)
    edited = [g for g in result.candidates if g.candidate.agent == "person"]
    assert edited and edited[0].verdict == "fail"
    assert edited[0].gates[1].name == "correctness"


def test_replay_reproduces_decisions_and_regates(tmp_path: Path) -> None:
    first = make_search(tmp_path / "a", max_candidates=12).run()
    recording = read_events(tmp_path / "a" / "events.jsonl")
    calls: list[str] = []

    search = make_search(tmp_path / "b", max_candidates=12)
    search.policy = ReplayPolicy(recording)
    original = search.gate_runner

    def counting(problem: Problem, candidate: Candidate) -> VerifyReport:
        calls.append(candidate.id)
        return original(problem, candidate)

    search.gate_runner = counting
    second = search.run()
    assert [g.candidate.source for g in second.candidates] == [
        g.candidate.source for g in first.candidates
    ]
    assert second.best and first.best and second.best.candidate.id == first.best.candidate.id
    assert len(calls) == len(second.candidates)  # every replayed candidate was gated afresh


def test_cpu_search_reports_untimed_candidates(tmp_path: Path) -> None:
    def untimed(problem: Problem, candidate: Candidate) -> VerifyReport:
        fail = "correctness" if "BROKEN" in candidate.source else None
        return report_of(candidate.id, fail_at=fail, device="cpu")

    search = make_search(tmp_path, device="cpu", max_candidates=6)
    search.gate_runner = untimed
    result = search.run()
    assert result.best is not None and result.best.ms is None
    assert all(g.passed for g in result.candidates)
    # no CUDA-graph plan is proposed on the CPU
    assert not any("CUDA-graph" in g.candidate.source for g in result.candidates)


class _RepeatingPolicy(OfflinePolicy):
    """The offline policy, except that its Executor proposes the parent's own source again."""

    def execute(self, ctx: Any, plan: Any, parent: Any, feedback: Any, io: Any) -> Any:
        from kernelopt_jupyter.agents.base import Edit

        if feedback is not None:
            return Edit(None, "no other idea")
        return Edit(parent.source, "the same again")


class _NewEachTime(OfflinePolicy):
    """The offline Planner, with an Executor that writes a new variant each time (no worker)."""

    made = 0

    def execute(self, ctx: Any, plan: Any, parent: Any, feedback: Any, io: Any) -> Any:
        from kernelopt_jupyter.agents.base import Edit

        self.made += 1
        return Edit(f"{parent.source}\n# variant {self.made}\n", "a variant")


def test_duplicates_are_never_gated_or_listed_again(tmp_path: Path) -> None:
    gated: list[str] = []

    def counting(problem: Problem, candidate: Candidate) -> VerifyReport:
        gated.append(candidate.source)
        return fake_gpu_gates(problem, candidate)

    search = make_search(tmp_path, max_candidates=12)
    search.policy = _RepeatingPolicy(ExperienceMemory(None))
    search.gate_runner = counting
    result = search.run()
    sources = [g.candidate.source for g in result.candidates]
    assert len(gated) == len(set(gated)) == len(sources) == len(set(sources))
    events = read_events(tmp_path / "events.jsonl")
    duplicates = [e for e in events if e.type == "decision" and e.data["kind"] == "duplicate"]
    assert duplicates and duplicates[0].data["candidate"] == "c0"
    # a duplicate is never announced as a candidate either
    assert len([e for e in events if e.type == "candidate"]) == len(result.candidates)


def test_a_deadline_cut_gate_is_not_listed_and_the_search_ends(tmp_path: Path) -> None:
    from kernelopt_jupyter.agents.search import DeadlineReached

    calls: list[str] = []
    saved: list[int] = []

    def cut_on_the_third(problem: Problem, candidate: Candidate) -> VerifyReport:
        calls.append(candidate.id)
        if len(calls) == 3:
            raise DeadlineReached("time limit reached after 9 s of gating")
        return fake_gpu_gates(problem, candidate)

    search = make_search(tmp_path, max_candidates=30)
    search.gate_runner = cut_on_the_third
    search.on_verdict = lambda s: saved.append(len(s.gated))
    result = search.run()
    assert result.status == "finished" and any("time limit" in n for n in result.notes)
    assert [g.candidate.id for g in result.candidates] == calls[:2]
    assert saved == [1, 2]  # the session's checkpoint ran after every verdict
    events = read_events(tmp_path / "events.jsonl")
    cancelled = [e for e in events if e.type == "decision" and e.data["kind"] == "cancelled"]
    assert [e.data["candidate"] for e in cancelled] == [calls[2]]


def test_a_passed_deadline_gates_nothing(tmp_path: Path) -> None:
    import time

    from kernelopt_jupyter.deadline import Deadline

    search = make_search(tmp_path, deadline=Deadline(time.monotonic() - 2.0, 1.0))
    result = search.run()
    assert result.candidates == [] and result.best is None
    assert any("time limit" in n for n in result.notes)


def test_the_cpu_search_does_not_run_the_tuner(tmp_path: Path) -> None:
    def untimed(problem: Problem, candidate: Candidate) -> VerifyReport:
        return report_of(candidate.id, device="cpu")

    search = make_search(tmp_path, device="cpu", max_candidates=3)
    search.policy = _NewEachTime(ExperienceMemory(None))
    search.gate_runner = untimed
    search.run()
    agents = {
        e.data["agent"] for e in read_events(tmp_path / "events.jsonl") if e.type == "agent_started"
    }
    assert "executor" in agents and "tuner" not in agents


def _fake_ms(source: str) -> float:
    report = fake_gpu_gates(problem_from_source(PROBLEM, "relu2.py"), Candidate("x", source))
    assert report.gate("performance") is not None
    return float(report.gate("performance").metrics["candidate_ms"])


def test_the_tuners_variants_are_screened_and_only_the_fastest_gated(tmp_path: Path) -> None:
    """With a screen, the Tuner is asked for up to SCREEN_VARIANTS variants, they are timed
    together once, and only the SCREEN_KEEP fastest by that run reach the gates."""
    from kernelopt_jupyter.agents.search import SCREEN_KEEP, SCREEN_VARIANTS
    from kernelopt_jupyter.analysis.screen import ScreenResult

    calls: list[list[str]] = []

    def screen(problem: Problem, sources: list[str], limit: float) -> ScreenResult:
        calls.append(sources)
        assert 0 < limit <= 60
        return ScreenResult(True, ms=[_fake_ms(s) for s in sources], errors=[None] * len(sources))

    search = make_search(tmp_path, max_candidates=12, iterations=1, screen_runner=screen)
    search.run()
    events = read_events(tmp_path / "events.jsonl")
    screened = [e.data for e in events if e.type == "decision" and e.data["kind"] == "screened"]
    assert calls and len(screened) == len(calls)
    first = screened[0]
    assert SCREEN_KEEP < len(first["screen"]) <= SCREEN_VARIANTS
    kept = [row for row in first["screen"] if row["gated"]]
    assert len(kept) == SCREEN_KEEP
    # the kept rows are the fastest of the screen's rows
    cutoff = max(row["ms"] for row in kept)
    assert all(row["ms"] >= cutoff for row in first["screen"] if not row["gated"])
    # exactly the kept variants were gated as the Tuner's children of that parent
    tuned = [e.data for e in events if e.type == "candidate" and e.data["agent"] == "tuner"]
    parent = first["candidate"]
    labels = {e["note"][len("tune ") :] for e in tuned if e["parent"] == parent}
    assert labels == {row["label"] for row in kept}
    # the parent's own row is not changed by the screen's decision
    from kernelopt_jupyter.session.state import SessionState

    state = SessionState()
    for e in events:
        state.apply(e)
    assert state.candidates[parent].decision != "screened"


def test_a_failed_screen_gates_every_variant_and_a_variant_that_raises_is_not_gated(
    tmp_path: Path,
) -> None:
    from kernelopt_jupyter.analysis.screen import ScreenResult

    def broken(problem: Problem, sources: list[str], limit: float) -> ScreenResult:
        return ScreenResult(False, detail="worker: timed out")

    search = make_search(tmp_path, max_candidates=40, iterations=1, screen_runner=broken)
    search.run()
    events = read_events(tmp_path / "events.jsonl")
    [first, *_] = [e.data for e in events if e.type == "decision" and e.data["kind"] == "screened"]
    assert "failed" in first["reason"] and "timed out" in first["reason"]
    tuned = [e for e in events if e.type == "candidate" and e.data["agent"] == "tuner"]
    assert len([e for e in tuned if e.data["parent"] == first["candidate"]]) > 2

    def raises(problem: Problem, sources: list[str], limit: float) -> ScreenResult:
        n = len(sources)
        return ScreenResult(True, ms=[None] * n, errors=["RuntimeError: boom"] * n)

    other = tmp_path / "other"
    other.mkdir()
    search = make_search(other, max_candidates=40, iterations=1, screen_runner=raises)
    search.run()
    events = read_events(other / "events.jsonl")
    assert not [e for e in events if e.type == "candidate" and e.data["agent"] == "tuner"]
    [first, *_] = [e.data for e in events if e.type == "decision" and e.data["kind"] == "screened"]
    assert "none ran" in first["reason"]
    assert all(row["error"] == "RuntimeError: boom" for row in first["screen"])


def test_the_screen_is_off_on_the_cpu(tmp_path: Path) -> None:
    def screen(problem: Problem, sources: list[str], limit: float) -> Any:
        raise AssertionError("the CPU search has no Tuner to screen")

    search = make_search(tmp_path, device="cpu", max_candidates=6, screen_runner=screen)
    assert search.screen_runner is None
    search.run()


def test_a_submission_once_the_budget_is_used_is_refused_before_it_is_called_submitted(
    tmp_path: Path,
) -> None:
    from kernelopt_jupyter.session.optimization import OptimizationSession, SessionError

    search = make_search(tmp_path, max_candidates=2)
    search.run()
    assert len(search.gated) == 2 and search.budget_refusal() == "candidate budget used"
    # The session's submit on this search (its other parts play no role in a submission).
    session = object.__new__(OptimizationSession)
    session._search, session.log = search, search.log
    with pytest.raises(SessionError, match=r"^candidate budget used; no more candidates"):
        session.submit(ROOT.replace("'XBLOCK': 256", "'XBLOCK': 512"), parent="c0")
    # No "submitted, then not gated" pair: nothing was started that could fail later.
    assert not search.log.of_type("error") and len(search.gated) == 2
