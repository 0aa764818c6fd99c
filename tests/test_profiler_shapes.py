"""The Claude Profiler gets each kernel's argument shapes from the dispatch map's records."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropic, reply

from kernelopt_jupyter.agents import prompts
from kernelopt_jupyter.agents.base import AgentContext, AgentIO, KernelUnit
from kernelopt_jupyter.agents.claude import ClaudePolicy
from kernelopt_jupyter.analysis.dispatch import DispatchMap, DispatchRecord
from kernelopt_jupyter.events import EventLog
from kernelopt_jupyter.problem import problem_from_source

DATA = Path(__file__).parent / "data" / "claude"
EPILOGUE = "triton_poi_fused_addmm_relu_0"
REPORT = {
    "summary": "The matmul dominates.",
    "bottlenecks": [{"kernel": "extern_kernels.mm", "share": 0.7, "bound": "compute", "note": "x"}],
}


def _ctx() -> AgentContext:
    problem = problem_from_source(
        (DATA / "linear_relu.py").read_text(), str(DATA / "linear_relu.py"), validate=False
    )
    kernels = [
        KernelUnit("extern_kernels.mm", "vendor", ops=["mm"], bound="compute"),
        KernelUnit(EPILOGUE, "triton", ops=["add", "relu"], bound="memory"),
        KernelUnit("unmapped", "other"),
    ]
    return AgentContext(problem=problem, device="cpu", baselines={}, kernels=kernels)


def _records() -> list[dict[str, object]]:
    """Records as the profile event carries them: a real DispatchMap's to_dict()."""
    dmap = DispatchMap(
        "p.py",
        "cpu",
        records=[
            DispatchRecord("extern_kernels.mm", "vendor", shapes=[[128, 256], [256, 64]]),
            DispatchRecord(EPILOGUE, "triton", shapes=[[128, 64], [64], []]),
            DispatchRecord("unmapped", "other"),
        ],
    )
    return dmap.to_dict()["records"]


def test_kernel_table_has_a_shapes_column() -> None:
    table = prompts.kernel_table(_ctx().kernels, _records())
    header = table.splitlines()[1].split(" | ")
    col = header.index("shapes")
    rows = {line.split(" | ")[0]: line.split(" | ") for line in table.splitlines()[2:]}
    assert rows["extern_kernels.mm"][col] == "128x256, 256x64"
    assert rows[EPILOGUE][col] == "128x64, 64, scalar"
    assert rows["unmapped"][col] == "?"  # no recorded call: not guessed


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake-shapes-0000")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.delenv("KERNELOPT_MODEL", raising=False)
        yield server


def test_profiler_prompt_carries_the_reference_profile_shapes(fake: FakeAnthropic) -> None:
    log = EventLog()
    log.emit("profile", dispatch_map={"records": _records()}, summary="", facts={})
    fake.script(reply("ok", ("report_bottlenecks", REPORT)))
    ClaudePolicy(sleep=lambda _s: None).profile(_ctx(), AgentIO(log, "profiler", step=1))
    (req,) = fake.requests
    context = req.body["system"][1]["text"]
    assert "| 128x256, 256x64 |" in context and "| 128x64, 64, scalar |" in context
