"""A synthetic, well-formed event stream for the panel's tests and its benchmark.

It follows docs/events.md (every type and field of ``EVENT_TYPES``) with GPU-shaped numbers,
so the charts have something to draw without a GPU. It is not a search: nothing is verified.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

REFERENCE = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x) * 2.0


def get_inputs():
    return [torch.randn(1024, 256)]
"""

CANDIDATE = """import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0) * SCALE, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        _relu_scale[(triton.cdiv(n, BLOCK_SIZE),)](x, y, n, BLOCK=BLOCK_SIZE)
        return y
"""


def candidate_source(block: int, scale: str = "2.0") -> str:
    """The sample Triton candidate with a given block size."""
    return CANDIDATE.replace("SCALE", scale).replace("BLOCK_SIZE", str(block))


def sample_events(
    candidates: int = 6, text_deltas: int = 20, step: bool = False
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(type, data) pairs of a plausible session with ``candidates`` candidates."""
    yield (
        "session_started",
        {
            "problem": "relu_scale",
            "kind": "module",
            "device": "cuda",
            "agents": "offline",
            "options": {"budget": candidates, "step": step},
        },
    )
    yield (
        "baseline",
        {
            "name": "eager",
            "ms": 0.05,
            "ci_low": 0.049,
            "ci_high": 0.051,
            "measured": True,
            "detail": "",
        },
    )
    dmap = {
        "records": [
            {
                "name": "relu",
                "kind": "triton",
                "share": 0.55,
                "ms": 0.0275,
                "flops": 262144,
                "bytes": 2097152,
                "bound": "memory",
            },
            {
                "name": "mul",
                "kind": "triton",
                "share": 0.40,
                "ms": 0.02,
                "flops": 262144,
                "bytes": 2097152,
                "bound": "memory",
            },
            {"name": "aten::empty", "kind": "other", "share": 0.05, "ms": 0.0025},
        ],
        "peak_gflops": 60000.0,
        "peak_gbps": 4300.0,
        "timeline": [
            {"name": "relu", "kind": "triton", "start_ms": 0.0, "dur_ms": 0.0275},
            {"name": "mul", "kind": "triton", "start_ms": 0.03, "dur_ms": 0.02},
        ],
    }
    yield ("profile", {"dispatch_map": dmap, "summary": "two memory-bound elementwise kernels"})
    parent = None
    best = None
    for i in range(candidates):
        stepno = i + 1
        plan_id = f"p{stepno}"
        plan = {
            "plan_id": plan_id,
            "agent": "planner",
            "title": f"fuse, BLOCK={256 << (i % 4)}",
            "rationale": "one pass over memory",
            "targets": ["relu", "mul"],
            "parent": parent,
        }
        # Unique per candidate (a repeated source is shown as a repeat, not as a new row).
        source = candidate_source(256 << (i % 4)) + (f"# round {i // 4}\n" if i >= 4 else "")
        # The search's order: an agent step, then (step mode) a pause on what it proposes.
        for agent in ("planner", "executor"):
            yield ("agent_started", {"agent": agent, "step": stepno, "iteration": i // 2})
            for k in range(text_deltas):
                yield ("agent_text", {"agent": agent, "step": stepno, "delta": f"token{k} "})
            yield (
                "tool_call",
                {
                    "agent": agent,
                    "step": stepno,
                    "tool": "read_profile",
                    "input": {"kernel": "relu"},
                },
            )
            yield (
                "agent_finished",
                {
                    "agent": agent,
                    "step": stepno,
                    "summary": f"{agent} done",
                    "usage": {"output_tokens": text_deltas},
                },
            )
            if agent == "planner":
                yield ("plan", plan)
                payload: dict[str, Any] = {"plans": [dict(plan, id=plan_id, action="retile")]}
                actions = ["approve", "reject", "edit_plan", "stop"]
            else:
                payload = {"plan_id": plan_id, "source": source, "explanation": "fused"}
                actions = ["approve", "reject", "edit_candidate", "stop"]
            if step:
                yield (
                    "step_paused",
                    {"agent": agent, "step": stepno, "actions": actions, "payload": payload},
                )
                yield ("step_resumed", {"action": "approve", "by": "person"})
        cid = f"c{stepno}"
        yield (
            "candidate",
            {
                "id": cid,
                "parent": parent,
                "agent": "executor",
                "plan_id": plan_id,
                "source": source,
                "diff": "",
                "dispatch_only": False,
                "note": "",
            },
        )
        wrong = i % 3 == 2
        yield (
            "gate",
            {"candidate": cid, "name": "static", "status": "pass", "detail": "", "metrics": {}},
        )
        yield (
            "gate",
            {
                "candidate": cid,
                "name": "correctness",
                "status": "fail" if wrong else "pass",
                "detail": "seed 1: max abs err 0.5 > 1e-3" if wrong else "3 seeds",
                "metrics": {"max_abs_err": 0.5 if wrong else 1e-7},
            },
        )
        if wrong:
            for g in ("fp64", "performance"):
                yield (
                    "gate",
                    {
                        "candidate": cid,
                        "name": g,
                        "status": "skipped",
                        "detail": "an earlier gate failed",
                        "metrics": {},
                    },
                )
            yield (
                "verdict",
                {
                    "candidate": cid,
                    "verdict": "fail",
                    "ms": None,
                    "speedup": None,
                    "ci_low": None,
                    "ci_high": None,
                },
            )
            yield ("decision", {"kind": "reject", "candidate": cid, "reason": "gate 2"})
        else:
            speed = 1.1 + 0.1 * i
            yield (
                "gate",
                {
                    "candidate": cid,
                    "name": "fp64",
                    "status": "pass",
                    "detail": "",
                    "metrics": {"err_ratio": 0.9},
                },
            )
            yield (
                "gate",
                {
                    "candidate": cid,
                    "name": "performance",
                    "status": "pass",
                    "detail": "",
                    "metrics": {"speedup": speed},
                },
            )
            yield (
                "verdict",
                {
                    "candidate": cid,
                    "verdict": "pass",
                    "ms": 0.05 / speed,
                    "speedup": speed,
                    "ci_low": speed - 0.02,
                    "ci_high": speed + 0.02,
                },
            )
            yield ("decision", {"kind": "keep", "candidate": cid, "reason": "faster"})
            yield (
                "profile",
                {
                    "candidate": cid,
                    "summary": "fused",
                    "dispatch_map": {
                        "records": [
                            {
                                "name": "_relu_scale",
                                "kind": "triton",
                                "share": 1.0,
                                "ms": 0.05 / speed,
                            }
                        ],
                        "timeline": [
                            {
                                "name": "_relu_scale",
                                "kind": "triton",
                                "start_ms": 0.0,
                                "dur_ms": 0.05 / speed,
                            }
                        ],
                    },
                },
            )
            parent = best = cid
        yield (
            "budget",
            {
                "candidates": stepno,
                "max_candidates": candidates,
                "seconds": stepno,
                "max_seconds": None,
                "tokens": stepno * text_deltas * 2,
                "max_tokens": None,
            },
        )
    yield ("explanation", {"candidate": best, "text": "one fused pass halves memory traffic"})
    yield (
        "session_finished",
        {"status": "finished", "best": best, "speedup_vs_eager": 1.5, "speedup_vs_compile": 1.2},
    )


#: A Triton problem with two kernels (a row max, then exp of the shifted row), launched naively:
#: the offline Planner has one retune plan per kernel, so a rejected plan leaves another.
TWO_KERNELS = """import torch
import triton
import triton.language as tl

KERNELOPT_ENTRY = "shifted_exp"
ROWS = 64
COLS = 129


@triton.jit
def _row_max_kernel(max_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    tl.store(max_ptr + row, tl.max(x, axis=0))


@triton.jit
def _shift_exp_kernel(out_ptr, in_ptr, max_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * stride + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride + cols, tl.exp(x - tl.load(max_ptr + row)), mask=mask)


def shifted_exp(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    n_rows, n_cols = x.shape
    row_max = torch.empty(n_rows, dtype=x.dtype, device=x.device)
    out = torch.empty_like(x)
    block = triton.next_power_of_2(n_cols)
    _row_max_kernel[(n_rows,)](row_max, x, x.stride(0), n_cols, BLOCK=block, num_warps=1, num_stages=1)
    _shift_exp_kernel[(n_rows,)](
        out, x, row_max, x.stride(0), n_cols, BLOCK=block, num_warps=1, num_stages=1
    )
    return out


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def reference(x):
    return torch.exp(x - x.max(dim=-1, keepdim=True).values)
"""
