"""No worker process survives a timeout, a normal return or a killed caller; workers see no
secret of the caller's environment; an untrusted result cannot run code in the caller."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kernelopt_jupyter.worker import load_plain, run_task, scrubbed_env

TESTS = str(Path(__file__).parent)
ENV = {"PYTHONPATH": TESTS}


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"  # a zombie is dead, only not yet reaped


def _pids(folder: Path) -> dict[str, int]:
    return {p.stem: int(p.read_text()) for p in folder.glob("*.pid") if p.read_text()}


def _all_gone(pids: dict[str, int], within_s: float = 5.0) -> list[str]:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        left = [name for name, pid in pids.items() if _alive(pid)]
        if not left:
            return []
        time.sleep(0.05)
    return left


def test_timeout_kills_the_task_its_children_and_an_escaped_grandchild(tmp_path: Path) -> None:
    result = run_task(
        "_worker_tasks:fork_tree",
        {"folder": str(tmp_path), "hang": True},
        device="cpu",
        time_limit_s=4,
        extra_env=ENV,
    )
    assert result.timed_out
    pids = _pids(tmp_path)
    assert set(pids) == {"worker", "child", "grandchild"}
    assert _all_gone(pids) == []


def test_a_task_that_returns_leaves_no_process_behind(tmp_path: Path) -> None:
    result = run_task(
        "_worker_tasks:fork_tree",
        {"folder": str(tmp_path), "hang": False},
        device="cpu",
        extra_env=ENV,
    )
    assert result.ok and result.value == "returned"
    pids = _pids(tmp_path)
    assert {"child", "grandchild"} <= set(pids)
    assert _all_gone(pids) == []


def test_a_killed_caller_leaves_no_process_behind(tmp_path: Path) -> None:
    caller = (
        "from kernelopt_jupyter.worker import run_task\n"
        f"run_task('_worker_tasks:fork_tree', {{'folder': {str(tmp_path)!r}, 'hang': True}}, "
        f"device='cpu', time_limit_s=600, extra_env={{'PYTHONPATH': {TESTS!r}}})\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", caller], start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(_pids(tmp_path)) < 3:
            time.sleep(0.1)
        pids = _pids(tmp_path)
        assert set(pids) == {"worker", "child", "grandchild"}
    finally:
        proc.send_signal(signal.SIGKILL)  # the caller dies without any chance to clean up
        proc.wait()
    assert _all_gone(pids, within_s=8.0) == []


def test_workers_see_none_of_the_callers_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = {
        "ANTHROPIC_API_KEY": "sk-ant-api03-test-secret-value",
        "GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123",
        "DB_PASSWORD": "hunter2",
        "KERNELOPT_UPLOAD_CREDENTIAL": "c1",
        "TRITON_NOTE": "sk-ant-pasted-into-an-allowed-name",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    result = run_task(
        "_worker_tasks:secrets_seen", {"names": list(secrets)}, device="cpu", extra_env=ENV
    )
    assert result.ok, result.describe()
    assert result.value == {"environ": [], "proc": [], "values": []}


def test_scrubbed_env_keeps_the_platform_and_drops_secrets() -> None:
    env = {
        "PATH": "/usr/bin",
        "HOME": "/root",
        "TRITON_CACHE_DIR": "/tmp/t",
        "CUDA_VISIBLE_DEVICES": "0",
        "LD_LIBRARY_PATH": "/usr/lib",
        "ANTHROPIC_BASE_URL": "https://x",
        "OPENAI_API_KEY": "sk-x",
        "MY_SERVICE_TOKEN": "t",
        "AWS_SECRET_ACCESS_KEY": "s",
        "KERNELOPT_API_KEY": "k",
        "TORCH_NOTE": "AKIAABCDEFGHIJKLMNOP",
        "RANDOM_THING": "x",
    }
    assert scrubbed_env(env) == {
        "PATH": "/usr/bin",
        "HOME": "/root",
        "TRITON_CACHE_DIR": "/tmp/t",
        "CUDA_VISIBLE_DEVICES": "0",
        "LD_LIBRARY_PATH": "/usr/lib",
    }


class _Boom:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, ("echo pwned",))


def test_an_untrusted_result_is_read_as_plain_data_only() -> None:
    plain = {"ok": True, "value": [1, 2.5, "x", (3, None), {"k": {1, 2}}]}
    assert load_plain(pickle.dumps(plain)) == plain
    with pytest.raises(pickle.UnpicklingError, match=r"may not hold posix\.system"):
        load_plain(pickle.dumps({"ok": True, "value": _Boom()}))


def test_launch_recorder_skips_raising_launches_and_reorders_programs() -> None:
    result = run_task("_worker_tasks:launch_recording", {}, device="cpu", extra_env=ENV)
    assert result.ok, result.describe() + result.traceback
    value = result.value
    assert value["raised"] and value["total"] == 3  # the raising launch is not counted
    orders = value["orders"]
    assert orders["grid"] == 15 and orders["reverse"] == 0  # the last program to run wins
    assert 0 <= orders["shuffle"] < 16


def test_interpreted_accesses_outside_the_launch_storages_are_recorded() -> None:
    result = run_task("_worker_tasks:launch_memory_bounds", {}, device="cpu", extra_env=ENV)
    assert result.ok, result.describe() + result.traceback
    found = result.value
    assert found["masked"] == [] and found["inside_storage"] == []
    assert len(found["past_input"]) == 1, found
    message = found["past_input"][0]
    assert "kernel copy_tile loads memory outside" in message and "x_ptr" in message
    assert (
        "0 bytes past the end of x_ptr's storage (4000 bytes)" in message
        and "24 masked-in lane(s)" in message
    )
    assert found["copied"]  # the masked-in lanes inside the storage were still loaded
    assert len(found["past_output"]) == 2 and "store_tile stores" in found["past_output"][1]
    assert "out_ptr" in found["past_output"][1] and found["guard_intact"]
    assert found["swapped"] == [0, 0, 0, 1]  # an atomic inside its tensor is made
    assert "compare-and-swap outside" in found["swap_past"]  # one past it raises, unmade
    assert found["total"] == 3
