"""A verification in flight is cancelled at the deadline: its worker tree is killed, nothing
survives, and the search is told (``DeadlineReached``) instead of getting a false verdict."""

from __future__ import annotations

import time

import pytest
from _processes import below_us, left_running

from kernelopt_jupyter.agents.search import DeadlineReached
from kernelopt_jupyter.deadline import Deadline
from kernelopt_jupyter.problem import problem_from_source
from kernelopt_jupyter.session.gating import verify_before
from kernelopt_jupyter.verify.report import VerifyOptions

PROBLEM = """
import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2.0
def get_inputs():
    return [torch.randn(256)]
"""

# Passes the source checks, then never returns from its first forward.
HANGS = """
import time
import torch
import triton
import triton.language as tl

@triton.jit
def double(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)

class ModelNew(torch.nn.Module):
    def forward(self, x):
        while True:
            time.sleep(0.05)
"""


def test_the_deadline_kills_the_verification_in_flight() -> None:
    problem = problem_from_source(PROBLEM, "double.py")
    options = VerifyOptions(device="cpu", seeds=1, time_limit_s=600.0)
    before = below_us()
    with pytest.raises(DeadlineReached, match="time limit"):
        verify_before(
            problem, HANGS, options, "<hangs>", device="cpu", deadline=Deadline.start(8.0)
        )
    # Nothing of the cut verification outlives it (the kill takes the whole tree).
    left = left_running(before)
    assert not left, f"processes left running after the deadline: {left}"


def test_no_time_left_starts_nothing() -> None:
    problem = problem_from_source(PROBLEM, "double.py")
    options = VerifyOptions(device="cpu", seeds=1)
    with pytest.raises(DeadlineReached, match="before the gates could start"):
        verify_before(
            problem, HANGS, options, "<c>", device="cpu", deadline=Deadline(time.monotonic(), 0.0)
        )


def test_the_deadline_travels_in_the_options_and_no_extra_worker_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import kernelopt_jupyter.verify as verify
    import kernelopt_jupyter.worker as worker
    from kernelopt_jupyter.verify.report import VerifyReport

    problem = problem_from_source(PROBLEM, "double.py")
    options = VerifyOptions(device="cpu", seeds=1, time_limit_s=5.0)
    report = VerifyReport("double.py", "<c>", "cpu", [])
    seen: list[VerifyOptions] = []

    def no_worker(*args: object, **kwargs: object) -> None:
        raise AssertionError("an extra worker was started")

    def verify_now(_problem: object, _source: str, opts: VerifyOptions, **_kw: object) -> object:
        seen.append(opts)
        return report

    monkeypatch.setattr(worker, "run_task", no_worker)
    monkeypatch.setattr(verify, "verify_candidate", verify_now)
    deadline = Deadline.start(60.0)
    assert verify_before(problem, HANGS, options, "<c>", device="cpu", deadline=deadline) is report
    assert seen and seen[0].deadline == deadline.at and seen[0].time_limit_s == 5.0


def test_without_a_limit_the_verification_runs_with_no_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import kernelopt_jupyter.verify as verify
    from kernelopt_jupyter.verify.report import VerifyReport

    problem = problem_from_source(PROBLEM, "double.py")
    seen: list[VerifyOptions] = []

    def verify_now(_p: object, _s: str, opts: VerifyOptions, **_kw: object) -> object:
        seen.append(opts)
        return VerifyReport("double.py", "<c>", "cpu", [])

    monkeypatch.setattr(verify, "verify_candidate", verify_now)
    options = VerifyOptions(device="cpu", seeds=1)
    verify_before(problem, "a", options, "<c>", device="cpu", deadline=Deadline.start(None))
    assert seen and seen[0].deadline is None


def test_left_running_counts_what_the_test_started_not_a_helper_of_an_older_process() -> None:
    """The check behind 'no worker survives': a process this test started and left is
    reported; a helper that a process already running before the test (a browser a fixture
    opened earlier in the same pytest worker) starts mid-test is not this test's (as a CI flake
    showed: chromium's on-device-model service, started under this worker)."""
    import subprocess
    import sys

    from kernelopt_jupyter.worker import kill_tree

    sleeper = "import time; time.sleep(60)"
    older = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time; time.sleep(0.5); "
            f"subprocess.Popen([sys.executable, '-c', {sleeper!r}]); time.sleep(60)",
        ]
    )
    time.sleep(0.1)
    before = below_us()
    ours = subprocess.Popen([sys.executable, "-c", sleeper])
    try:
        deadline = time.monotonic() + 10
        while len(below_us() - before) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(below_us() - before) == 2  # ours and the older process's helper
        left = left_running(before, wait_s=0.2)
        assert len(left) == 1 and left[0].startswith(f"{ours.pid} ")
    finally:
        for proc in (ours, older):
            kill_tree(proc.pid)
            proc.wait(timeout=10)


def test_a_verification_that_could_not_end_before_the_deadline_is_not_begun(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With less time left than the caller's estimate of the quickest verification, nothing
    starts and the search is told why; with enough, the verification runs."""
    import kernelopt_jupyter.verify as verify
    from kernelopt_jupyter.verify.report import VerifyReport

    problem = problem_from_source(PROBLEM, "double.py")
    options = VerifyOptions(device="cpu", seeds=1)
    ran: list[str] = []

    def verify_now(_p: object, source: str, _o: object, **_kw: object) -> object:
        ran.append(source)
        return VerifyReport("double.py", "<c>", "cpu", [])

    monkeypatch.setattr(verify, "verify_candidate", verify_now)
    deadline = Deadline.start(6.0)
    with pytest.raises(DeadlineReached, match=r"a verification takes about 9\.0 s") as cut:
        verify_before(problem, "a", options, "<c>", device="cpu", deadline=deadline, min_s=9.0)
    assert not cut.value.begun  # the search says "not gated", not "cut during its gates"
    verify_before(problem, "b", options, "<c>", device="cpu", deadline=deadline, min_s=3.0)
    assert ran == ["b"]


def test_the_session_holds_back_what_its_quickest_verification_could_not_finish(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    """The search's gate runner passes 0.8x its quickest verification so far as the least
    time a new one needs (none before the first)."""
    from pathlib import Path

    import kernelopt_jupyter.session.optimization as optimization
    from kernelopt_jupyter.candidate import Candidate
    from kernelopt_jupyter.verify.report import VerifyReport

    asked: list[float] = []
    clock = [100.0]

    def fake_verify(*_args: object, min_s: float = 0.0, **_kw: object) -> VerifyReport:
        asked.append(min_s)
        clock[0] += 5.0 if len(asked) == 1 else 4.0  # two verifications of 5 s and 4 s
        return VerifyReport("double.py", "<c>", "cpu", [])

    monkeypatch.setattr(optimization, "verify_before", fake_verify)
    monkeypatch.setattr(optimization.time, "monotonic", lambda: clock[0])
    problem = problem_from_source(PROBLEM, "double.py")
    options = optimization.SearchOptions(device="cpu", out_dir=Path(str(tmp_path)))
    session = optimization.OptimizationSession(problem, options)
    session._deadline = Deadline(clock[0], 900.0)
    monkeypatch.setattr(session, "_verify_service", lambda *_a: None)
    for n in range(3):
        session._gate(problem, Candidate(id=f"c{n}", source=HANGS, agent="executor"))
    assert asked == [0.0, pytest.approx(4.0), pytest.approx(3.2)]
