"""The verification boundary from the candidate's side: what a candidate that got past the
source rules can find in its process (no secret, no reference output, no reference model),
that a verification leaves no process behind, and that no file it writes holds a secret."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from _processes import below_us, left_running
from _verify_adversarial import HEAD, INIT, KERNEL
from _verify_corpus import DATA, problem

from kernelopt_jupyter.verify import VerifyOptions
from kernelopt_jupyter.verify.cascade import _run_checks

SECRET = "sk-ant-api03-isolation-test-0123456789abcdef"

# What an agent that slipped past the source rules would try: the environment (its own, and
# its parent's through /proc), the garbage collector for the answer, sys.modules for the
# reference model. It reports what it found through the only channel it has: an exception.
PROBE = (
    HEAD
    + KERNEL
    + INIT
    + """
    def forward(self, x, y):
        import gc, sys, os, json
        expected = torch.relu(x) * self.scale + y
        found = {"env": sorted(k for k, v in os.environ.items() if "sk-ant" in v or "KEY" in k)}
        own = open("/proc/self/environ", "rb").read().decode(errors="replace")
        parent = open(f"/proc/{os.getppid()}/environ", "rb").read().decode(errors="replace")
        found["proc_self"] = "sk-ant" in own or "ANTHROPIC" in own
        found["proc_parent"] = "sk-ant" in parent or "ANTHROPIC" in parent
        tensors = [o for o in gc.get_objects() if type(o) is torch.Tensor]
        found["answers"] = sum(
            1 for t in tensors
            if t.shape == expected.shape and t is not expected and torch.equal(t, expected)
        )
        found["models"] = sorted(
            name for name, m in list(sys.modules.items())
            if name.startswith("kernelopt_src_problem")
            or (isinstance(getattr(m, "Model", None), type) and not name.startswith("torch"))
        )
        found["markers"] = sorted(k for k in os.environ if k.startswith("KERNELOPT"))
        raise RuntimeError("PROBE " + json.dumps(found))
"""
)


def _probe_findings(detail: str) -> dict[str, object]:
    assert "PROBE " in detail, detail
    return dict(json.loads(detail.split("PROBE ", 1)[1].rstrip(")").rsplit(" (call", 1)[0]))


def test_a_candidate_past_the_rules_finds_no_secret_no_answer_no_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    # The source rules would reject the probe at once; the run-time boundary must hold
    # without them, so the probe goes straight to the verification worker.
    spec = {"source": PROBE, "seed": 7, "dispatch_only": False, "cuda_graphs": False}
    before = below_us()
    (phases,) = _run_checks(problem("scaled_residual"), [spec], VerifyOptions(device="cpu"), "cpu")
    static = phases["static"]
    assert not static["ok"] and "forward raised RuntimeError" in static["detail"]
    found = _probe_findings(static["detail"])
    assert found == {
        "env": [],
        "proc_self": False,
        "proc_parent": False,
        "answers": 0,
        "models": [],
        "markers": [],
    }
    assert not left_running(before), "the verification left processes running"
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_a_cli_verify_run_writes_the_secret_nowhere(tmp_path: Path) -> None:
    env = dict(os.environ)
    env.update(
        ANTHROPIC_API_KEY=SECRET,
        TMPDIR=str(tmp_path / "tmp"),
        HOME=str(tmp_path / "home"),
        KERNELOPT_CACHE_DIR=str(tmp_path / "cache"),
    )
    for sub in ("tmp", "home", "cache"):
        (tmp_path / sub).mkdir()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kernelopt_jupyter.cli",
            "verify",
            str(DATA / "problems" / "scaled_residual.py"),
            str(DATA / "candidates" / "scaled_residual" / "good_fused.py"),
            "--device",
            "cpu",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout and SECRET not in done.stderr
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written  # the run did write files (compile cache, Triton cache): none has it
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path
