"""Temporary folders (``kernelopt-*`` in the temp folder) go when the process that made them
ends: a block's end, an exception, the process's exit, SIGTERM; never a forked child's exit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kernelopt_jupyter import tempdirs

PROBLEMS = Path(__file__).resolve().parents[1] / "kernelopt_jupyter" / "problems"


def _kernelopt_entries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("kernelopt"))


def _env(tmp_path: Path) -> dict[str, str]:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return {
        **os.environ,
        "TMPDIR": str(tmp),
        "KERNELOPT_SMALL": "1",
        "KERNELOPT_CACHE_DIR": str(tmp_path / "cache"),
    }


@pytest.mark.slow
def test_a_cpu_search_leaves_no_temporary_folder(tmp_path: Path) -> None:
    env = _env(tmp_path)
    done = subprocess.run(
        [
            *(str(Path(sys.executable).parent / "kernelopt"), "optimize"),
            *(str(PROBLEMS / "fused_mlp.py"), "--device", "cpu", "--budget", "1"),
            *("--out", str(tmp_path / "out")),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert _kernelopt_entries(Path(env["TMPDIR"])) == []


def test_sigterm_ends_the_cli_with_its_workers_and_temp_folders(tmp_path: Path) -> None:
    env = _env(tmp_path)
    tmp = Path(env["TMPDIR"])
    proc = subprocess.Popen(
        [
            *(str(Path(sys.executable).parent / "kernelopt"), "optimize"),
            *(str(PROBLEMS / "row_softmax.py"), "--device", "cpu", "--budget", "4"),
            *("--out", str(tmp_path / "out")),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not any(
            n.startswith("kernelopt-worker-") or n.startswith("kernelopt-service-")
            for n in _kernelopt_entries(tmp)
        ):
            assert proc.poll() is None, "the search ended before a worker started"
            time.sleep(0.1)
        assert _kernelopt_entries(tmp), "no worker folder appeared"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    time.sleep(1.0)  # nothing it started is left to make one again
    assert _kernelopt_entries(tmp) == []


def test_temp_folders_go_with_their_block_and_their_process_only() -> None:
    with pytest.raises(RuntimeError), tempdirs.TempDir("kernelopt-test-") as kept:
        assert Path(kept).is_dir()
        raise RuntimeError("boom")
    assert not Path(kept).exists()
    made = tempdirs.make("kernelopt-test-")
    pid = os.fork()
    if pid == 0:  # a forked child owns nothing it inherited: its exit removes nothing
        tempdirs.remove_all()
        os._exit(0)
    os.waitpid(pid, 0)
    assert Path(made).is_dir() and made in tempdirs.owned()
    tempdirs.remove(made)  # (remove_all here would take this test process's other folders)
    assert not Path(made).exists() and made not in tempdirs.owned()
