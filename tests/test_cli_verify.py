"""`kernelopt verify` as a real subprocess: exit codes 0/1/2, one JSON object, one-line errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernelopt_jupyter.cli import build_parser

DATA = Path(__file__).parent / "data"
PROBLEM = DATA / "problems" / "scaled_residual.py"
CANDIDATES = DATA / "candidates" / "scaled_residual"


def _kernelopt(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("kernelopt", path=str(Path(sys.executable).parent))
    command = [exe] if exe else [sys.executable, "-m", "kernelopt_jupyter.cli"]
    return subprocess.run(
        [*command, *args], capture_output=True, text=True, timeout=300, check=False
    )


def test_passing_candidate_exits_0_with_one_json_object() -> None:
    done = _kernelopt(
        "verify", str(PROBLEM), str(CANDIDATES / "good_fused.py"), "--device", "cpu", "--json"
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)  # exactly one object: json.loads rejects trailing text
    assert data["schema"] == 1 and data["verdict"] == "pass" and data["device"] == "cpu"
    assert data["problem"] == str(PROBLEM)
    assert data["candidate"] == str(CANDIDATES / "good_fused.py")
    gates = data["gates"]
    assert [g["name"] for g in gates] == ["static", "correctness", "fp64", "performance"]
    assert [g["status"] for g in gates] == ["pass", "pass", "pass", "skipped"]
    # Three input seeds, drawn fresh per verification (issue 10) and the schedule's seed kept.
    assert len(gates[1]["seeds"]) == 3 and isinstance(gates[1]["max_abs_err"], float)
    assert isinstance(data["seed"], int)
    assert isinstance(gates[2]["err_ratio"], float)
    assert gates[3]["detail"] == "no GPU" and gates[3]["speedup"] is None
    assert "static" in done.stderr  # progress went to stderr, not into the JSON


def test_failing_candidate_exits_1_and_human_output_names_the_gate() -> None:
    done = _kernelopt(
        "verify",
        str(PROBLEM),
        str(CANDIDATES / "bad_wrong_shape.py"),
        "--device",
        "cpu",
        "--seeds",
        "1",
        "--time-limit",
        "60",
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert any(ln.startswith("correctness") and "fail" in ln for ln in lines)
    assert lines[-1].startswith("verdict: fail")


def test_candidate_that_fails_static_exits_1_in_json(tmp_path: Path) -> None:
    # A problem that prints when it is loaded must not spoil the one JSON object on stdout.
    chatty = tmp_path / "chatty_problem.py"
    chatty.write_text('print("loading the problem")\n' + PROBLEM.read_text())
    done = _kernelopt(
        "verify",
        str(chatty),
        str(CANDIDATES / "bad_syntax_error.py"),
        "--device",
        "cpu",
        "--json",
    )
    assert done.returncode == 1
    data = json.loads(done.stdout)
    assert data["gates"][0]["status"] == "fail" and "syntax error" in data["gates"][0]["detail"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["verify", str(PROBLEM), "missing.py", "--device", "cpu"], "missing.py: no such"),
        (["verify", "nope.py", str(CANDIDATES / "good_fused.py")], "nope.py: no such problem"),
        (["verify", str(PROBLEM), str(CANDIDATES / "good_fused.py"), "--seeds", "0"], "--seeds"),
        (["verify", str(PROBLEM), str(CANDIDATES / "good_fused.py"), "--frobnicate"], "--frob"),
        (["verify", str(PROBLEM), str(CANDIDATES / "good_fused.py"), "--device", "tpu"], "tpu"),
    ],
)
def test_user_mistakes_exit_2_with_one_line(args: list[str], message: str) -> None:
    done = _kernelopt(*args)
    assert done.returncode == 2
    assert done.stdout == "" and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr


def _assert_json_error(stdout: str, message: str) -> None:
    """``--json`` promises one JSON object even for bad input: the error, with exit 2."""
    lines = stdout.strip().splitlines()
    assert len(lines) == 1, stdout
    payload = json.loads(lines[0])
    assert payload["schema"] == 1 and payload["exit"] == 2 and message in payload["error"]


def test_bad_problem_file_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "broken_problem.py"
    bad.write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x)\n")
    done = _kernelopt("verify", str(bad), str(CANDIDATES / "good_fused.py"), "--json")
    assert done.returncode == 2
    _assert_json_error(done.stdout, f"{bad}: syntax error on line 3")
    assert f"{bad}: syntax error on line 3" in done.stderr


def test_parser_accepts_every_contract_flag() -> None:
    parser = build_parser()
    v = parser.parse_args(
        [
            "verify",
            "p.py",
            "c.py",
            "--device",
            "cuda",
            "--seeds",
            "5",
            "--json",
            "--time-limit",
            "30",
            "--baseline",
            "eager",
            "--baseline",
            "compile",
        ]
    )
    assert (v.device, v.seeds, v.json, v.hang_limit, v.baseline) == (
        "cuda",
        5,
        True,
        30.0,
        ["eager", "compile"],
    )
    p = parser.parse_args(["profile", "p.py", "--device", "cpu", "--json"])
    assert (p.command, p.device, p.json) == ("profile", "cpu", True)
    o = parser.parse_args(
        [
            "optimize",
            "p.py",
            "--agents",
            "replay:run/events.jsonl",
            "--budget",
            "8",
            "--out",
            "d",
            "--device",
            "auto",
            "--json",
            "--step",
        ]
    )
    assert (o.agents, o.budget, o.out, o.json, o.step) == (
        "replay:run/events.jsonl",
        8,
        "d",
        True,
        True,
    )
    b = parser.parse_args(
        ["bench", "a.py", "dir", "--agents", "claude", "--out", "o", "--time-limit", "60", "--json"]
    )
    assert (b.problems, b.agents, b.time_limit, b.json) == (["a.py", "dir"], "claude", 60.0, True)
    defaults = parser.parse_args(["optimize", "p.py"])
    assert (defaults.agents, defaults.budget, defaults.device, defaults.step) == (
        "offline",
        16,
        "auto",
        False,
    )


def test_reference_that_raises_in_forward_exits_2(tmp_path: Path) -> None:
    # Loading validates inputs and construction only; forward first runs in the worker.
    broken = tmp_path / "raising_reference.py"
    broken.write_text(
        PROBLEM.read_text().replace(
            "return torch.relu(x) * self.scale + y", "raise ValueError('reference bug')"
        )
    )
    done = _kernelopt("verify", str(broken), str(CANDIDATES / "good_fused.py"), "--json")
    message = f"{broken}: the reference's forward raised ValueError: reference bug"
    assert done.returncode == 2
    _assert_json_error(done.stdout, message)
    assert message in done.stderr


@pytest.mark.parametrize(
    "command", [["verify", "p.py", "c.py"], ["export", "run"], ["reverify", "pkg"]]
)
def test_hang_limit_is_named_for_what_it_bounds_and_time_limit_stays_its_alias(
    command: list[str],
) -> None:
    """verify, export and reverify bound each run of a candidate (``--hang-limit``); their older
    ``--time-limit`` still works and sets the same value, and the default has one home."""
    from kernelopt_jupyter import defaults

    parser = build_parser()
    assert parser.parse_args(command).hang_limit == defaults.HANG_LIMIT_S
    assert parser.parse_args([*command, "--hang-limit", "30"]).hang_limit == 30.0
    assert parser.parse_args([*command, "--time-limit", "45"]).hang_limit == 45.0


def test_search_defaults_come_from_one_home() -> None:
    from kernelopt_jupyter import defaults
    from kernelopt_jupyter.agents.search import SearchConfig
    from kernelopt_jupyter.session import SearchOptions
    from kernelopt_jupyter.verify.report import VerifyOptions

    parser = build_parser()
    for args in (["optimize", "p.py"], ["bench", "p.py"]):
        parsed = parser.parse_args(args)
        assert (parsed.budget, parsed.seeds) == (defaults.CANDIDATE_BUDGET, defaults.SEEDS)
    assert parser.parse_args(["verify", "p.py", "c.py"]).seeds == defaults.SEEDS
    options, config = SearchOptions(), SearchConfig()
    assert (options.budget, options.seeds) == (defaults.CANDIDATE_BUDGET, defaults.SEEDS)
    assert (config.max_candidates, config.seeds) == (defaults.CANDIDATE_BUDGET, defaults.SEEDS)
    assert options.time_limit_s == config.time_limit_s == defaults.SEARCH_HANG_LIMIT_S
    assert VerifyOptions().seeds == defaults.SEEDS
    assert VerifyOptions().time_limit_s == defaults.HANG_LIMIT_S
