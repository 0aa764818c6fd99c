"""Workers never import from the user's folder (a ``z3/`` or ``triton/`` there shadowed the
installed package in the harvest's worker); a problem's own sibling modules still import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kernelopt_jupyter.import_path import (
    allow_sibling_imports,
    imported_names,
    pythonpath_outside,
    worker_env,
)
from kernelopt_jupyter.worker import run_task

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = ROOT / "kernelopt_jupyter" / "problems"
PROBE = """
import importlib.util, os, sys

def probe(names):
    found = {}
    for name in names:
        spec = importlib.util.find_spec(name)
        found[name] = None if spec is None else str(spec.origin)
    return {"cwd": os.getcwd(), "path": list(sys.path), "found": found,
            "safe": sys.flags.safe_path}
"""


def _user_folder(folder: Path) -> Path:
    """A folder as the user's report had it: a ``z3`` package that imports but is not z3
    (torch then fails on ``z3.ExprRef``), a ``triton`` that raises, a stray module."""
    (folder / "z3").mkdir(parents=True)
    (folder / "z3" / "__init__.py").write_text("")
    (folder / "triton").mkdir()
    (folder / "triton" / "__init__.py").write_text("raise RuntimeError('the cwd triton')\n")
    (folder / "zz_stray.py").write_text("raise RuntimeError('the cwd module')\n")
    return folder


def test_pythonpath_entries_into_the_working_folder_are_dropped(tmp_path: Path) -> None:
    here, other = tmp_path / "here", tmp_path / "lib"
    value = os.pathsep.join(["", ".", "rel", str(here), str(here / "sub"), str(other), ""])
    assert pythonpath_outside(value, str(here)) == str(other)
    assert pythonpath_outside(str(other), "/") == str(other)  # a root cwd drops only "/"
    env = worker_env({"PYTHONPATH": str(here), "X": "1"})
    assert env["PYTHONSAFEPATH"] == "1" and env["X"] == "1"
    assert env.get("PYTHONPATH") in (None, str(here))  # dropped when here is the cwd
    cwd_env = worker_env({"PYTHONPATH": os.getcwd()})
    assert "PYTHONPATH" not in cwd_env


@pytest.mark.parametrize("launcher", ["cpu", "0"])
def test_a_worker_never_imports_from_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launcher: str
) -> None:
    user = _user_folder(tmp_path / "user")
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "kz_probe.py").write_text(PROBE)
    monkeypatch.chdir(user)
    monkeypatch.setenv("KERNELOPT_LAUNCHER", launcher)
    parts = ["", ".", str(user), str(user / "sub"), str(lib)]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(parts))
    result = run_task(
        "kz_probe:probe", {"names": ["z3", "triton", "zz_stray", "kz_probe"]}, device="cpu"
    )
    assert result.ok, result.describe() + result.stderr
    seen = result.value
    assert seen["cwd"] == str(user) and seen["safe"] == 1
    assert "" not in seen["path"] and not [p for p in seen["path"] if p.startswith(str(user))]
    assert str(lib) in seen["path"]  # an entry outside the working folder is kept
    found = seen["found"]
    assert found["zz_stray"] is None
    assert found["z3"] is None or not found["z3"].startswith(str(user))
    assert found["triton"] is not None and not found["triton"].startswith(str(user))


def test_a_problem_imports_its_sibling_module_and_nothing_else_of_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "kz_helper.py").write_text("SCALE = 2.0\n")
    (folder / "json.py").write_text("raise RuntimeError('the folder json')\n")
    (folder / "kz_unused.py").write_text("raise RuntimeError('not imported by the problem')\n")
    source = "import json\nimport kz_helper\nfrom kz_helper import SCALE\n"
    assert imported_names(source) == {"json", "kz_helper"}
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.delitem(sys.modules, "kz_helper", raising=False)
    assert allow_sibling_imports(source, str(folder / "p.py")) == ["json", "kz_helper"]
    import importlib

    assert importlib.import_module("kz_helper").SCALE == 2.0
    assert importlib.import_module("json").__file__ != str(folder / "json.py")  # installed wins
    assert importlib.util.find_spec("kz_unused") is None
    monkeypatch.delitem(sys.modules, "kz_helper")
    assert allow_sibling_imports("import torch\n", str(folder / "p.py")) == []


SIBLING_PROBLEM = """
import torch
import kz_helper


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * kz_helper.SCALE


def get_inputs():
    return [torch.randn(8, 16)]


def get_init_inputs():
    return []
"""
SIBLING_CANDIDATE = """
import torch

KERNELOPT_DISPATCH_ONLY = True


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2.0
"""


def _cli(*args: str, cwd: Path, env: dict[str, str], timeout: float = 300) -> Any:
    # ``-P``: this test's own CLI process does not import the folder it runs in either (the
    # ``kernelopt`` console script never has it on its path).
    return subprocess.run(
        [sys.executable, "-P", "-m", "kernelopt_jupyter.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
        check=False,
    )


def test_verify_runs_a_problem_that_imports_its_sibling_from_another_folder(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "problem.py").write_text(SIBLING_PROBLEM)
    (folder / "kz_helper.py").write_text("SCALE = 2.0\n")
    (tmp_path / "cand.py").write_text(SIBLING_CANDIDATE)
    user = _user_folder(tmp_path / "user")
    done = _cli(
        "verify",
        str(folder / "problem.py"),
        str(tmp_path / "cand.py"),
        "--device",
        "cpu",
        "--json",
        cwd=user,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert json.loads(done.stdout)["verdict"] == "pass"


@pytest.mark.slow
@pytest.mark.parametrize("problem", ["fused_mlp.py", "row_softmax.py"])
def test_a_cpu_search_from_a_folder_with_a_fake_z3_and_triton_still_harvests(
    tmp_path: Path, problem: str
) -> None:
    user = _user_folder(tmp_path / "user")
    env = {**os.environ, "KERNELOPT_SMALL": "1", "KERNELOPT_CACHE_DIR": str(tmp_path / "cache")}
    out = tmp_path / "out"
    done = _cli(
        "optimize",
        str(PROBLEMS / problem),
        "--device",
        "cpu",
        "--budget",
        "1",
        "--out",
        str(out),
        cwd=user,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((out / "result.json").read_text())
    assert result["degraded"] == [] and result["best"] == "c0", done.stderr[-3000:]
    profile = next(
        json.loads(line)["data"]
        for line in (out / "events.jsonl").read_text().splitlines()
        if '"type":"profile"' in line
    )
    expected = "Inductor harvest" if problem == "fused_mlp.py" else "the user's triton kernel"
    assert profile["facts"]["root_note"] == expected


@pytest.mark.slow
def test_workers_drop_an_inherited_pythonpath_into_the_cwd_in_a_real_search(
    tmp_path: Path,
) -> None:
    """The analysis worker of a search started with ``PYTHONPATH`` naming the fake folder (the
    CLI itself started clean) still harvests: the entry never reaches the worker."""
    user = _user_folder(tmp_path / "user")
    out = tmp_path / "out"
    # The CLI process started with -P and a clean PYTHONPATH; its workers inherit os.environ,
    # which here names the fake folder through a variable only the workers' env would carry.
    script = (
        "import os, sys\n"
        f"os.environ['PYTHONPATH'] = {str(user)!r}\n"
        "from kernelopt_jupyter.cli.main import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    done = subprocess.run(
        [
            *(sys.executable, "-P", "-c", script, "optimize", str(PROBLEMS / "fused_mlp.py")),
            *("--device", "cpu", "--budget", "1", "--out", str(out)),
        ],
        capture_output=True,
        text=True,
        cwd=user,
        env={**os.environ, "KERNELOPT_SMALL": "1", "KERNELOPT_CACHE_DIR": str(tmp_path / "c")},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads((out / "result.json").read_text())["degraded"] == []
