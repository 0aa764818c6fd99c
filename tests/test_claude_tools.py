"""The Claude policy's pure parts: tool-input checks, LAUNCH_CONFIGS rewriting, prices,
prompts; and the fake Messages API itself (non-streamed answers, the checks it makes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import pytest
from fake_anthropic import FakeAnthropic, reply

from kernelopt_jupyter.agents import prompts
from kernelopt_jupyter.agents.base import AgentContext, KernelUnit
from kernelopt_jupyter.agents.claude import PRICES, price_for, resolve_model, thinks_by_default
from kernelopt_jupyter.agents.claude_tools import (
    ROLE_TOOLS,
    TOOLS,
    ToolInputError,
    launch_configs,
    parse_edit,
    parse_plans,
    with_launch_configs,
)
from kernelopt_jupyter.problem import problem_from_source

DATA = Path(__file__).parent / "data" / "claude"
FUSED = (DATA / "linear_relu_fused.py").read_text()
TRITON_PROBLEM = """
import torch
import triton
import triton.language as tl

@triton.jit
def _k(x_ptr, n, BLOCK: tl.constexpr):
    pass

def row_softmax(x):
    return x

def get_inputs():
    return [torch.randn(4, 4)]
"""


def test_launch_configs_are_rewritten_in_place() -> None:
    new = with_launch_configs(FUSED, {"bias_relu_kernel": {"BLOCK": 256, "num_stages": 2}})
    found = launch_configs(new)
    assert found is not None
    assert found == {"bias_relu_kernel": {"BLOCK": 256, "num_warps": 4, "num_stages": 2}}
    assert new.splitlines()[:8] == FUSED.splitlines()[:8]  # the docstring and imports stay
    assert new.split("@triton.jit")[1] == FUSED.split("@triton.jit")[1]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"nope": {"BLOCK": 256}}, "`nope` is not a key of LAUNCH_CONFIGS"),
        ({"bias_relu_kernel": {"XBLOCK": 256}}, "`XBLOCK` is not a setting"),
        ({"bias_relu_kernel": {"BLOCK": 384}}, "not a power of two"),
        ({"bias_relu_kernel": {"num_warps": 3}}, "num_warps must be one of"),
        ({"bias_relu_kernel": {"BLOCK": 0}}, "positive integer"),
        ({"bias_relu_kernel": {"BLOCK": True}}, "positive integer"),
    ],
)
def test_bad_launch_configs_are_refused(overrides: dict, message: str) -> None:
    with pytest.raises(ToolInputError, match=message):
        with_launch_configs(FUSED, overrides)


def test_no_launch_configs_dict() -> None:
    assert launch_configs("x = 1\n") is None
    with pytest.raises(ToolInputError, match="no literal LAUNCH_CONFIGS"):
        with_launch_configs("x = 1\n", {"k": {"BLOCK": 2}})


def test_edit_checks_the_entry_of_each_problem_kind() -> None:
    module = problem_from_source((DATA / "linear_relu.py").read_text(), "p.py", validate=False)
    triton_problem = problem_from_source(TRITON_PROBLEM, "t.py", validate=False)
    data = {"explanation": "x", "dispatch_only": True}
    assert parse_edit({**data, "source": FUSED}, module).dispatch_only is True
    with pytest.raises(ToolInputError, match="no `class ModelNew"):
        parse_edit({**data, "source": "def row_softmax(x):\n    return x\n"}, module)
    edit = parse_edit({**data, "source": "def row_softmax(x):\n    return x"}, triton_problem)
    assert edit.source is not None and edit.source.endswith("\n")
    with pytest.raises(ToolInputError, match="neither a function `row_softmax`"):
        parse_edit({**data, "source": "def other(x):\n    return x\n"}, triton_problem)
    with pytest.raises(ToolInputError, match="missing required field `explanation`"):
        parse_edit({"source": FUSED}, module)


def test_plans_are_checked_and_capped() -> None:
    kernels = [KernelUnit("k0", "triton")]
    plan = {"title": "t", "rationale": "r", "action": "fuse", "targets": ["k0"]}
    assert [p.id for p in parse_plans({"plans": [plan] * 3}, kernels, 2, "x")] == ["x1", "x2"]
    with pytest.raises(ToolInputError, match="not one of"):
        parse_plans({"plans": [{**plan, "action": "magic"}]}, kernels, 2, "x")
    with pytest.raises(ToolInputError, match=r"\['k9'\] are not listed kernels"):
        parse_plans({"plans": [{**plan, "targets": ["k9"]}]}, kernels, 2, "x")
    with pytest.raises(ToolInputError, match="is empty"):
        parse_plans({"plans": []}, kernels, 2, "x")


def test_prices_models_and_thinking() -> None:
    assert price_for("claude-opus-5-5-20260922") is PRICES["claude-opus-5-5"]
    assert price_for("claude-sonnet-5-5[1m]") is PRICES["claude-sonnet-5-5"]
    assert price_for("some-unknown-model") is None
    haiku = PRICES["claude-haiku-5-5"]
    assert haiku.cost(1000, 1000) == pytest.approx((1000 * 0.10 + 1000 * 0.50) / 1e6)
    assert haiku.cost(200_000, 1000) == pytest.approx((200_000 * 0.50 + 1000 * 2.50) / 1e6)
    assert thinks_by_default("claude-opus-5-5") and thinks_by_default("claude-fable-5-1")
    assert not thinks_by_default("claude-sonnet-4-5") and not thinks_by_default("my-proxy-model")
    assert resolve_model("  claude-haiku-4-5 ") == "claude-haiku-4-5"


def test_problem_context_carries_source_and_dispatch_map() -> None:
    problem = problem_from_source((DATA / "linear_relu.py").read_text(), "p.py", validate=False)
    ctx = AgentContext(
        problem=problem,
        device="cuda",
        baselines={"eager": 0.031, "compile": None},
        kernels=[
            KernelUnit("extern_kernels.mm", "vendor", share=0.8, ms=0.02, bound="compute"),
            KernelUnit("k1", "triton", source="@triton.jit\ndef k1(): pass", share=0.2),
        ],
        library_dominated=True,
        dispatch_variants=[("mm via cuBLAS", "src")],
    )
    text = prompts.problem_context(ctx)
    assert "class Model(nn.Module)" in text and "eager: 0.031 ms" in text
    assert "compile: not measured" in text and "extern_kernels.mm | vendor | 80.0%" in text
    assert "library-dominated" in text and "- mm via cuBLAS" in text
    # The kernel's source is in the candidate each role gets: not sent twice.
    assert "def k1()" not in text


def _objects(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """Every object schema inside ``schema`` (itself included)."""
    found = [schema] if schema.get("type") == "object" else []
    for sub in schema.get("properties", {}).values():
        found += _objects(sub)
    if isinstance(schema.get("items"), dict):
        found += _objects(schema["items"])
    return found


def test_every_role_has_well_formed_strict_tools_with_an_example() -> None:
    names = [t["name"] for t in TOOLS]
    assert len(set(names)) == 6
    assert {n for tools in ROLE_TOOLS.values() for n in tools} == set(names)
    for tool in TOOLS:
        assert tool["strict"] is True and "Example: {" in tool["description"]
        # The example in the description is valid JSON (what a model would copy).
        example = json.loads(tool["description"].split("Example: ", 1)[1])
        assert set(example) == set(tool["input_schema"]["properties"])
        for schema in _objects(tool["input_schema"]):
            # Strict tools: every property required, nothing else accepted.
            assert schema["additionalProperties"] is False
            assert schema["required"] == list(schema["properties"])
    plans = next(t for t in TOOLS if t["name"] == "propose_plans")
    for action in ("retile", "vendor_dispatch", "cuda_graph", "fuse", "keep_baseline"):
        assert f"- {action}: " in plans["description"]
    assert "kernel=<kernel name>" in plans["description"]


# ----------------------------------------------------------------- the fake itself


def client(fake: FakeAnthropic) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="sk-test-fake-key", base_url=fake.base_url, max_retries=0)


def test_fake_answers_without_streaming_too() -> None:
    with FakeAnthropic() as fake:
        fake.script(reply("hello", ("propose_plans", {"plans": []}), thinking="hm"))
        message = client(fake).messages.create(
            model="claude-x", max_tokens=100, messages=[{"role": "user", "content": "hi"}]
        )
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use"]
    assert (
        getattr(message.content[2], "input", None) == {"plans": []}
        and message.stop_reason == "tool_use"
    )
    assert message.usage.output_tokens > 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {"tool_choice": {"type": "any"}, "thinking": {"type": "adaptive"}},
            "Thinking may not be enabled",
        ),
        (
            {
                "system": [
                    {"type": "text", "text": str(i), "cache_control": {"type": "ephemeral"}}
                    for i in range(5)
                ]
            },
            "maximum of 4 blocks",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": "a"},
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}],
                    },
                    {"role": "user", "content": [{"type": "text", "text": "b"}]},
                ]
            },
            "without `tool_result`",
        ),
    ],
)
def test_fake_rejects_what_the_api_rejects(extra: dict, message: str) -> None:
    with FakeAnthropic() as fake:
        fake.script(reply("never sent"))
        request = {
            "model": "m",
            "max_tokens": 10,
            "messages": [{"role": "user", "content": "hi"}],
            **extra,
        }
        with pytest.raises(anthropic.BadRequestError, match=message):
            client(fake).messages.create(**request)
        assert fake.pending == 1  # the script was not consumed
