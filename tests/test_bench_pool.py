"""``kernelopt bench --gpus N`` and ``--executor ray`` on the CPU: CPU stand-in workers for GPUs,
a local Ray instance of two CPUs for a cluster; the rows must be a serial run's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _small import SMALL_SOFTMAX

from kernelopt_jupyter.cli.bench_pool import _BenchWorker, _Job, _Queue
from kernelopt_jupyter.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
PROBLEM = ROOT / "kernelopt_jupyter" / "problems" / "row_softmax.py"
SEARCH = ("--device", "cpu", "--budget", "1", "--seeds", "1")
#: What must agree between a serial and a parallel run (times and folders may not).
SAME = ("problem", "level", "verdict", "status", "candidates", "best", "error")

CRASH = """import os, signal
from pathlib import Path

# Kills the bench worker running it (the problem is executed in that process) {times}.
_runs = Path({marker!r})
_runs.write_text(_runs.read_text() + "x" if _runs.exists() else "x")
if {always} or len(_runs.read_text()) == 1:
    os.kill(os.getpid(), signal.SIGKILL)
raise RuntimeError("not killed this time: a plain error")


class Model:
    pass


def get_inputs():
    return []


def get_init_inputs():
    return []
"""


def _bench(args: list[str], tmp_path: Path) -> tuple[int, dict[str, Any], str]:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env.update(KERNELOPT_SMALL="1", KERNELOPT_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run(
        [sys.executable, "-m", "kernelopt_jupyter.cli", "bench", *args, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def _suite(tmp_path: Path) -> Path:
    """Two copies of a real problem (at 32 rows) and a broken one (an error row)."""
    level = tmp_path / "suite" / "level1"
    level.mkdir(parents=True)
    for name in ("softmax_a.py", "softmax_b.py"):
        (level / name).write_text(SMALL_SOFTMAX)
    (level / "broken.py").write_text("import torch\nx = 1\n")
    return level.parent


def _same(row: dict[str, Any]) -> dict[str, Any]:
    return {key: row.get(key) for key in SAME}


def _summary(payload: dict[str, Any]) -> dict[str, Any]:
    return {
        level: {k: v for k, v in s.items() if k != "search_seconds_median"}
        for level, s in payload["summary"].items()
    }


def test_the_queue_gives_a_dead_workers_problem_to_another() -> None:
    first, second = _Job(0, Path("a.py")), _Job(1, Path("b.py"))
    queue = _Queue([first, second], ["gpu0", "gpu1"])
    assert queue.take("gpu0") is first
    first.avoid = "gpu0"
    queue.done(first, again=True)  # gpu0's worker died on it
    assert queue.take("gpu0") is second  # gpu0 skips the problem it died on
    assert queue.take("gpu1") is first
    queue.done(second, again=False)
    queue.done(first, again=False)
    assert queue.take("gpu0") is None and queue.take("gpu1") is None
    alone = _Queue([_Job(0, Path("a.py"), avoid="cpu0")], ["cpu0"])
    assert alone.take("cpu0") is not None  # a pool of one re-runs it on its only worker


def test_a_killed_worker_has_its_problem_rerun_on_another(tmp_path: Path) -> None:
    level = tmp_path / "suite" / "level1"
    level.mkdir(parents=True)
    (level / "broken.py").write_text("import torch\nx = 1\n")
    once = CRASH.format(times="once", marker=str(tmp_path / "once.runs"), always=False)
    (level / "crash_once.py").write_text(once)
    always = CRASH.format(times="every time", marker=str(tmp_path / "always.runs"), always=True)
    (level / "crash_always.py").write_text(always)
    out = tmp_path / "out"
    code, payload, stderr = _bench(
        [str(level), *SEARCH, "--gpus", "2", "--out", str(out)], tmp_path
    )
    assert code == 1, stderr  # nothing verified
    rows = {Path(r["problem"]).name: r for r in payload["rows"]}
    assert list(rows) == ["broken.py", "crash_always.py", "crash_once.py"]  # the serial order
    once_row = rows["crash_once.py"]
    assert once_row["reruns"] == 1 and "SIGKILL" in once_row["rerun_reasons"][0]
    assert once_row["worker"] != once_row["rerun_reasons"][0].split(":")[0]  # another worker
    assert "not killed this time" in once_row["error"]
    always_row = rows["crash_always.py"]
    assert always_row["verdict"] == "error" and always_row["reruns"] == 2
    assert "died on every attempt" in always_row["error"]
    assert (tmp_path / "always.runs").read_text() == "xx"  # re-run once, not more
    assert rows["broken.py"]["verdict"] == "error" and "reruns" not in rows["broken.py"]
    assert "[cpu0]" in stderr and "[cpu1]" in stderr and "re-running it" in stderr
    assert json.loads((out / "bench.json").read_text()) == payload and payload["complete"]


def test_gpus_all_without_a_gpu_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "p.py").write_text(PROBLEM.read_text())
    base = ["bench", str(tmp_path / "p.py"), "--device", "cpu", "--out", str(tmp_path / "o")]
    assert main([*base, "--gpus", "all"]) == 2
    assert "--gpus all: no CUDA GPU is visible" in capsys.readouterr().err
    assert main([*base, "--gpus", "2", "--address", "localhost:6379"]) == 2
    assert "--address needs --executor ray" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*base, "--gpus", "none"])
    assert "use a number of GPUs or all" in capsys.readouterr().err


def test_ray_missing_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    (tmp_path / "p.py").write_text(PROBLEM.read_text())
    argv = ["bench", str(tmp_path / "p.py"), "--device", "cpu", "--executor", "ray"]
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'kernelopt-jupyter[ray]'" in err


@pytest.fixture(scope="module")
def serial(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The small suite benched serially: what every parallel run must reproduce."""
    tmp = tmp_path_factory.mktemp("serial")
    suite = _suite(tmp)
    code, payload, stderr = _bench([str(suite), *SEARCH, "--out", str(tmp / "out")], tmp)
    assert code == 0, stderr
    return suite, payload


@pytest.mark.slow
def test_two_cpu_workers_give_the_serial_rows(
    serial: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    suite, expected = serial
    out = tmp_path / "out"
    code, payload, stderr = _bench(
        [str(suite), *SEARCH, "--gpus", "2", "--out", str(out)], tmp_path
    )
    assert code == 0, stderr
    assert [_same(r) for r in payload["rows"]] == [_same(r) for r in expected["rows"]]
    assert _summary(payload) == _summary(expected)
    assert {r["worker"] for r in payload["rows"]} <= {"cpu0", "cpu1"}
    for row in payload["rows"]:
        if row["verdict"] != "error":
            assert (Path(row["out_dir"]) / "result.json").is_file()
    assert json.loads((out / "bench.json").read_text()) == payload


@pytest.mark.slow
def test_a_local_ray_cluster_of_two_gives_the_serial_rows(
    serial: tuple[Path, dict[str, Any]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ray = pytest.importorskip("ray")
    suite, expected = serial
    # The Ray workers inherit this environment (small sizes, no key, a private cache).
    monkeypatch.setenv("KERNELOPT_SMALL", "1")
    monkeypatch.setenv("KERNELOPT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    ray.init(num_cpus=2, num_gpus=0, include_dashboard=False, log_to_driver=False)
    try:
        out = tmp_path / "out"
        argv = ["bench", str(suite), *SEARCH, "--executor", "ray", "--out", str(out), "--json"]
        assert main(argv) == 0
        payload = json.loads(capsys.readouterr().out)
        cuda = ["bench", str(suite), "--device", "cuda", "--executor", "ray", "--out", str(out)]
        assert main(cuda) == 2  # the cluster has no GPU
        assert "local Ray instance has no GPU" in capsys.readouterr().err
    finally:
        ray.shutdown()
    assert [_same(r) for r in payload["rows"]] == [_same(r) for r in expected["rows"]]
    assert _summary(payload) == _summary(expected)
    assert all(r["worker"].startswith("ray:") for r in payload["rows"])
    assert json.loads((out / "bench.json").read_text()) == payload


def test_a_hung_worker_is_stopped_with_its_tree(tmp_path: Path) -> None:
    """Silent past its deadline: the worker and what its problem started are killed."""
    problem = tmp_path / "level1" / "hang.py"
    problem.parent.mkdir()
    pid_file = tmp_path / "child.pid"
    problem.write_text(
        "import subprocess, time\n"
        "child = subprocess.Popen(['sleep', '300'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(300)\n"
        "class Model:\n    pass\n"
        "def get_inputs():\n    return []\n"
        "def get_init_inputs():\n    return []\n"
    )
    args = {"device": "cpu", "budget": 1, "seeds": 1, "agents": "offline"}
    worker = _BenchWorker("cpu0", {"KERNELOPT_SMALL": "1"}, json.dumps(args))
    row, why = worker.run(_Job(0, problem), tmp_path / "out", hang_limit_s=15.0)
    assert row is None and "hung" in why
    assert worker.proc.returncode is not None
    # What the problem started went with the worker (a zombie is gone: it only awaits its reaper).
    stat = Path(f"/proc/{int(pid_file.read_text())}/stat")
    assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"
