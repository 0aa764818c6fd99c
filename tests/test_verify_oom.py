"""Device memory running short in the harness is the harness's limit, never the problem's
fault: the reference's process answers an out-of-memory as such (not as a problem error), the
checker fails that one candidate and a search goes on; the float64 referee's copies go to the
host where they would not fit beside what the device holds."""

from __future__ import annotations

import socket
import threading
from typing import Any

import pytest
import torch

from kernelopt_jupyter.verify import reference, wire
from kernelopt_jupyter.verify.checker import Checker, ReferenceFailure


def _ask_reference(monkeypatch: pytest.MonkeyPatch, error: BaseException) -> dict[str, Any]:
    def case(self: Any, header: dict[str, Any]) -> Any:
        raise error

    monkeypatch.setattr(reference.Reference, "case", case)
    ours, theirs = socket.socketpair()
    server = threading.Thread(target=reference.serve, args=(theirs,), daemon=True)
    server.start()
    try:
        wire.send(ours, {"cmd": "case"})
        reply, _ = wire.recv(ours, 1 << 20)
        wire.send(ours, {"cmd": "exit"})
        server.join(timeout=10)
    finally:
        ours.close()
        theirs.close()
    return reply


def test_an_out_of_memory_in_the_reference_is_not_a_problem_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    oom = torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 16.00 GiB. GPU 0 ...")
    reply = _ask_reference(monkeypatch, oom)
    assert reply["ok"] is False and reply["oom"] is True
    assert "problem_error" not in reply
    assert "asked for 16.00 GiB more" in reply["detail"]
    # Any other error of the reference's stays the problem's.
    other = _ask_reference(monkeypatch, ValueError("bad shape"))
    assert "oom" not in other and "bad shape" in other["problem_error"]


class _Reference:
    def __init__(self, reply: dict[str, Any]) -> None:
        self.reply = reply

    def ask(self, header: dict[str, Any], blobs: Any) -> tuple[dict[str, Any], list[Any]]:
        return self.reply, []


def _checker(reply: dict[str, Any]) -> Checker:
    kwargs: dict[str, Any] = {
        "device": "cuda",
        "dispatch_only": False,
        "cuda_graphs": False,
        "fp64_factor": 10.0,
        "seed": 7,
        "time_limit_s": 60.0,
        "problem": None,
        "candidate_source": "",
        "seeds": 3,
    }
    return Checker(kwargs, ref=_Reference(reply), cand=None)  # type: ignore[arg-type]


def test_the_checker_fails_the_candidate_not_the_problem_on_a_reference_oom() -> None:
    with pytest.raises(ReferenceFailure) as caught:
        _checker({"ok": False, "oom": True, "detail": "ran out"})._ref_ask({"cmd": "case"})
    assert caught.value.died  # the candidate fails; the search goes on
    with pytest.raises(ReferenceFailure) as caught:
        _checker({"ok": False, "problem_error": "p.py: raised"})._ref_ask({"cmd": "case"})
    assert not caught.value.died


def test_host_tensors_never_ask_for_the_host_referee() -> None:
    assert not reference.referee_on_host([torch.ones(4), 3, "x"])
    assert not reference.referee_on_host([torch.ones(4, dtype=torch.int64)])


@pytest.mark.gpu
def test_the_referee_goes_to_the_host_only_where_the_device_is_short(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    x = torch.randn(1 << 20, device="cuda")
    assert not reference.referee_on_host([x])  # 8 MiB of float64 beside a free card
    monkeypatch.setattr(reference, "REFEREE_DEVICE_SHARE", 1e-9)
    assert reference.referee_on_host([x])
