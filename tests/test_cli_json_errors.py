"""CLI rough edges: --json answers bad input with one JSON object; messages say what happened."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOFTMAX = ROOT / "kernelopt_jupyter" / "problems" / "row_softmax.py"


def _kernelopt(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["KERNELOPT_HOME"] = str(cwd / "home")
    return subprocess.run(
        [sys.executable, "-m", "kernelopt_jupyter.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


def _one_object(stdout: str) -> dict[str, object]:
    lines = [line for line in stdout.splitlines() if line.strip()]
    assert len(lines) == 1, stdout
    payload = json.loads(lines[0])
    assert isinstance(payload, dict)
    return payload


def test_json_error_object_on_bad_input(tmp_path: Path) -> None:
    missing = _kernelopt(tmp_path, "verify", "nope.py", "also_nope.py", "--json")
    assert missing.returncode == 2
    payload = _one_object(missing.stdout)
    assert payload["schema"] == 1 and payload["exit"] == 2
    assert "nope.py: no such problem file" in str(payload["error"])
    assert "no such problem file" in missing.stderr  # the one-line error stays on stderr
    flag = _kernelopt(tmp_path, "optimize", str(SOFTMAX), "--json", "--no-such-flag")
    assert flag.returncode == 2
    assert "--no-such-flag" in str(_one_object(flag.stdout)["error"])
    plain = _kernelopt(tmp_path, "verify", "nope.py", "also_nope.py")
    assert plain.returncode == 2 and plain.stdout == ""  # without --json: stderr only


def test_bench_on_an_empty_folder_names_it(tmp_path: Path) -> None:
    empty = tmp_path / "suite"
    empty.mkdir()
    done = _kernelopt(tmp_path, "bench", str(empty))
    assert done.returncode == 2
    assert str(empty) in done.stderr and "no problem files" in done.stderr


def test_a_refused_run_leaves_no_folder(tmp_path: Path) -> None:
    done = _kernelopt(tmp_path, "optimize", str(SOFTMAX), "--agents", "claude")
    assert done.returncode == 2 and "ANTHROPIC_API_KEY" in done.stderr
    assert not (tmp_path / "runs").exists(), list((tmp_path / "runs").rglob("*"))


def _json_subcommands() -> dict[str, int]:
    """Every subcommand that takes --json -> how many positional arguments it needs."""
    from kernelopt_jupyter.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found = {}
    for name, command in sub.choices.items():
        options = {o for action in command._actions for o in action.option_strings}
        if "--json" in options:
            found[name] = sum(1 for a in command._actions if not a.option_strings)
    return found


def test_every_json_subcommand_answers_bad_input_with_one_object(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from kernelopt_jupyter.cli import main

    commands = _json_subcommands()
    assert {"verify", "profile", "optimize", "bench", "export", "report"} <= set(commands)
    monkeypatch.chdir(tmp_path)
    for name, positionals in commands.items():
        missing = [f"missing_{i}" for i in range(positionals)]
        code = main([name, *missing, "--json"])
        out, err = capsys.readouterr()
        assert code == 2, (name, out, err)
        payload = _one_object(out)
        assert payload["schema"] == 1 and payload["exit"] == 2, (name, payload)
        assert "missing_0" in str(payload["error"]), (name, payload)  # it names the path
        assert str(payload["error"]) in err  # the same line as on stderr
    assert not (tmp_path / "runs").exists()
