"""What the Claude policy tells the model: the rules of the house, each role's task, and the
rendering of the search's facts (problem, dispatch map, candidates, steps) into prompt text.

The system prompt is split in two blocks that never change during a search, so that the API
can cache them: :data:`HOUSE_RULES` (the same for every problem) and the problem context from
:func:`problem_context` (the same for every call on one problem). Everything that changes from
call to call (the parent candidate, the plan, gate feedback, memory) goes in the user turn.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kernelopt_jupyter.candidate import Candidate, unified_diff
from kernelopt_jupyter.gpu_peaks import roof_name

from .base import AgentContext, ExperienceItem, KernelUnit, Plan, ProfileReport, StepRecord

#: What every gate checks; the Executor and Tuner are told this so they waste no attempts.
GATES = """\
Every candidate goes through four gates, in order; the first failure stops it and its
diagnostic comes back to you on the next attempt.

1. static: the source is read first; it is rejected for torch.compile, torch._dynamo or
   Inductor's compiler; importing, subclassing or calling the reference `Model` / entry;
   try/except (or contextlib.suppress) inside a function, i.e. a fallback around kernels;
   side CUDA streams, threads or processes; assigning attributes of imported modules
   (monkeypatching torch, triton, time...); reaching into the harness (gc, inspect,
   importlib, ctypes, sys.modules, kernelopt_jupyter); changing global numerics (TF32,
   matmul precision, default dtype). CUDA graphs are allowed. Then, in a fresh worker
   process, the module is imported, `ModelNew` is built with the problem's init inputs, the
   reference weights are loaded with load_state_dict, and one forward runs: it must launch at
   least one Triton kernel (unless the candidate only re-routes ops between vendor
   libraries: dispatch_only). Every launched kernel must also compile for the real GPU
   (sm_90): the CPU interpreter accepts things the compiler rejects, e.g. a tl.arange whose
   size is not a power of two, or more shared memory than the GPU has.
2. correctness: seeds 0, 1 and 2 on fresh inputs from get_inputs(), then once more on the
   first call's input tensors refilled with new values (a result cached by tensor address
   fails). Outputs must have the reference's shapes, dtypes and NaN/Inf pattern and match it
   within rtol = atol = 1e-4 for float32 (1e-2 for float16/bfloat16), atol scaled down for
   outputs far below 1. Results within a looser 1e-2 go on to the fp64 referee.
3. fp64: the outputs are compared against a float64 copy of the reference; the candidate's
   error may be at most 10x the float32 reference's own error. Accumulate in float32 (or
   better), never in float16/bfloat16; blocked reductions are fine, lost precision is not.
4. performance (on the GPU only; skipped on CPU): the candidate is timed interleaved with the
   baselines (eager PyTorch, and torch.compile where asked) on fresh cloned inputs with the
   L2 cache flushed and the device synchronized. It must not be slower than the fastest
   baseline beyond noise (2%); the search keeps only real speedups. A time below what moving
   the inputs and outputs once through memory at peak bandwidth takes is treated as cheating.
"""

#: One worked example of a whole step, so each role sees what a good answer looks like.
WORKED_EXAMPLE = """\
Worked example (a different problem; names and numbers are illustrative)
- Problem: `y = relu(x @ W.T + b)`, x 4096x4096 fp32. The harvest keeps the matmul as
  `extern_kernels.mm` (cuBLAS) and makes one Triton epilogue `triton_poi_fused_addmm_relu_0`.
- Profiler: mm is 82% of the time at roofline fraction 0.9 (near the roof: leave it); the
  epilogue is 18%, memory-bound, 134 MB moved for 16.7 MFLOP (intensity 0.12 FLOP/byte),
  roofline fraction 0.35: it re-reads and re-writes the whole output.
  report_bottlenecks: [{"kernel": "triton_poi_fused_addmm_relu_0", "share": 0.18,
  "bound": "memory", "note": "one extra round trip of the output; roof 0.35"}]
- Planner: one plan, action "retile" is wrong here (block sizes are the Tuner's job);
  "rewrite" the epilogue to read x@W.T once and write y once, with BLOCK 1024 and 4 warps.
- Executor: edit_candidate with one hunk replacing the epilogue body; masks kept,
  accumulation in fp32, LAUNCH_CONFIGS untouched except the new kernel's entry.
- Gates: static pass, correctness fail (max_abs_err 0.31 at seed 1: the bias was indexed by
  row instead of column). The repair gets the diff and every gate's detail, fixes `offs % N`,
  and passes; the performance gate measures 1.12x over eager.
- Summarizer: "The epilogue now crosses memory once instead of twice ... 1.12x"; lesson:
  pattern "elementwise epilogue after a vendor matmul", action "fuse", outcome 1.12.
"""

#: The rules of the house: shared by every role and every problem (cached by the API).
HOUSE_RULES = f"""\
You are one of five cooperating agents in KernelOPT, a profiling-guided optimizer of GPU
kernels for PyTorch programs. The team: the Profiler ranks what matters, the Planner proposes
one small concrete change at a time, the Executor edits the candidate source, the Tuner
searches launch configurations, and the Summarizer explains each step and distils lessons for
later searches. Each call gives you one role; answer by calling that role's tool exactly once.
Before the tool call, think out loud briefly (a few sentences) about the evidence: your text
is streamed live to a person who is learning GPU optimization by watching you.

What a candidate is
- A module problem defines `class Model(nn.Module)`; a candidate is a complete Python module
  that defines `class ModelNew(nn.Module)` whose constructor takes exactly the same arguments
  as `Model`, and whose parameters and buffers keep the same names and shapes (the reference
  weights are loaded into it with load_state_dict). `forward` takes the same inputs and
  returns the same outputs.
- A Triton or Helion problem's candidate defines a function with the entry's name and the
  same signature (or a `ModelNew` module), returning the same outputs.
- The candidate imports only torch, triton, math and the standard library. It is a whole
  file: every kernel, helper, import and constant it uses is in it.
- Harvested candidates keep their Triton launch configurations in one module-level dict
  literal `LAUNCH_CONFIGS = {{"kernel_name": {{"XBLOCK": 1024, "num_warps": 4, "num_stages": 1}},
  ...}}` read by every launch (`kernel[grid](..., **LAUNCH_CONFIGS["kernel_name"])`, with a
  grid computed from `meta`). Keep that convention in every source you write.

How to write kernels that pass
- Masks on every tl.load and tl.store whose offsets can run past the end (sizes such as 127,
  129 or 1023 are normal); give masked loads a neutral `other=` (0 for sums, -inf for max).
- Accumulate in float32 (`tl.zeros(..., dtype=tl.float32)`, `acc += ...`), cast once when
  storing. Index with int64 where offsets can exceed 2**31.
- Keep matmuls, convolutions and attention as vendor library calls (torch.matmul, F.linear,
  F.conv2d, torch.addmm, F.scaled_dot_product_attention): cuBLAS/cuDNN are very hard to beat.
  Gain time around them instead: fuse the elementwise epilogue (bias, activation, scaling,
  residual) into one Triton kernel, remove copies and intermediate tensors, pick the faster
  of the vendor and generated path per op.
- Never: try/except fallbacks, torch.compile, side streams or threads, calling the reference,
  shape- or seed-specific shortcuts, caching outputs between calls, lowering precision.

{GATES}
{WORKED_EXAMPLE}"""

ROLE_PROFILER = """\
Role: Profiler. The dispatch map in the system prompt gives, per kernel, its measured time,
share, bytes moved, FLOPs, arithmetic intensity, roofline-bound time and the shapes of its
op's tensor arguments; the search's best candidate so far is above. Rank its sub-kernels by
what optimizing them could gain (Amdahl: a kernel at 5% of the time can save at most 5%).
For each one that matters say whether it is memory-bound (low arithmetic intensity:
elementwise ops, reductions, copies; judge by bytes moved and its roofline fraction) or
compute-bound (matmul/conv-like, high FLOPs per byte), and in one line what limits it
(launch overhead for tiny kernels, uncoalesced access, extra round trips to memory, a vendor
call that is already near peak). Vendor calls already near
their roofline are not worth a plan; say so. Where nothing was measured (CPU), reason from the
ops and shapes and say that the shares are estimates. Call `report_bottlenecks` with at most 5
entries, the most important first, naming kernels exactly as listed.
"""

ROLE_PLANNER = """\
Role: Planner. Propose up to {n} plans for improving the parent candidate below, the most
promising first. Each plan is ONE minimal, concrete change that the Executor can make in a
single edit and that the gates can judge on its own: e.g. fuse two named neighbouring kernels,
fold the bias and activation into the kernel that produces the matmul output, route an op back
to its vendor library call, retile a kernel, remove an intermediate tensor. Say which kernels
it targets (names as listed), why the profile says it should pay off, and what could go wrong.
Prefer plans that experience says worked for the same pattern; avoid repeating ones that
hurt. Library calls (matmul, convolution) are very hard to beat: keep them and work around
them. If the problem is library-dominated and nothing around the vendor calls is worth doing,
propose a single `keep_baseline` plan. Use `retile` only for changes the Tuner cannot do by
itself (a different tiling scheme, not just different block sizes). Call `propose_plans`.
"""

ROLE_EXECUTOR = """\
Role: Executor. Apply the plan below to the parent candidate as a surgical edit: change only
what the plan needs and keep everything else byte for byte (names, LAUNCH_CONFIGS, the
ModelNew constructor signature and parameter names). Re-read the gate rules above before
writing. Prefer `edit_candidate` (search/replace hunks copied exactly from the parent); use
`submit_candidate` with the complete new module when the change rewrites most of the file.
Give a short explanation of the change. Set `dispatch_only` to true only
when the edit merely chooses between existing implementations (vendor call vs generated
kernel) without writing new kernel code. If the plan cannot be done safely, call
`submit_candidate` with an empty `source` and explain why. If the gates reject your attempt,
you get its diff and every gate's detail back in this conversation: repair that attempt.
"""

ROLE_TUNER = """\
Role: Tuner. Propose up to {n} launch-configuration variants of the candidate below that are
worth measuring on the GPU. Change only the entries of its `LAUNCH_CONFIGS` dict: block-size
constexprs (powers of two), `num_warps` (1, 2, 4, 8, 16) and `num_stages` (1 to 5). Reason from
each kernel's shape and bound: memory-bound elementwise kernels want large blocks (1024-4096
elements) and 4-8 warps; reductions want the reduction block to cover the row when it fits;
tiny problems want fewer, smaller programs to cut launch overhead; more stages only help
kernels that loop over K. Block sizes must keep every mask valid (the kernels are masked, so
any power of two is correct). Give each variant a short label. Call `propose_launch_configs`.
"""

ROLE_SUMMARIZER = """\
Role: Summarizer. For each step below write a plain-language explanation (3-5 sentences) for
a learner who knows PyTorch but not GPU kernels: what was changed, why it was expected to
help (in terms of memory traffic, launches, or arithmetic), what the gates and timings showed,
and the lesson. Be factual: quote the measured speedup, or say it was not measured on this
machine. Then distil at most 3 reusable experience items: a pattern that can be recognized in
another problem (e.g. "elementwise epilogue after a vendor matmul"), the action, the measured
outcome (speedup of the child over its parent, 1.0 if not measured) and the lesson. Record
items for clear wins (>= 1.05x) and clear regressions or repeated gate failures; skip the
rest. Call `record_experience`.
"""


def _fmt_ms(value: float | None) -> str:
    return "not measured" if value is None else f"{value:.4g} ms"


def _fmt_share(value: float | None) -> str:
    return "?" if value is None else f"{100 * value:.1f}%"


def _fmt_num(value: Any, unit: str) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "?"
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def _fmt_shapes(shapes: Any) -> str:
    """``[[2, 3, 16, 16], [8]]`` -> ``2x3x16x16, 8`` (a 0-d tensor is ``scalar``); ``?`` if none."""
    if not isinstance(shapes, list) or not shapes:
        return "?"
    dims = [s for s in shapes if isinstance(s, list | tuple)]
    return ", ".join("x".join(str(d) for d in s) or "scalar" for s in dims) or "?"


def kernel_table(
    kernels: Iterable[KernelUnit], records: Iterable[dict[str, Any]] = (), gpu: str = ""
) -> str:
    """The dispatch map as a plain table: one row per sub-kernel or vendor call.

    ``records`` are the dispatch map's own rows (bytes, FLOPs, intensity, roofline-bound time,
    launches, the op's argument shapes); where a kernel has none its cells say "?". ``gpu``
    is the card's name (``AgentContext.gpu``): whose peaks the roofs are.
    """
    extra = {str(r.get("name")): r for r in records}
    rows = [
        "roofline fraction = the time the kernel would take at the memory or compute peak "
        f"of the {roof_name(gpu)} (roof ms), divided by its measured time (1.0 = at the roof, "
        "nothing left to gain; 0.1 = 10x headroom). intensity = FLOPs per byte moved. shapes = the tensor "
        "arguments of the ATen op behind the kernel, in call order (a fused Triton kernel: "
        "its first fused op's). '?' = not measured.",
        "name | kind | time share | ms | roof ms | bytes | FLOPs | intensity | bound | "
        "roofline fraction | launches | shapes | ops",
    ]
    for k in kernels:
        r = extra.get(k.name, {})
        roof = "?" if k.roofline_fraction is None else f"{k.roofline_fraction:.2f}"
        intensity = r.get("intensity")
        rows.append(
            f"{k.name} | {k.kind} | {_fmt_share(k.share)} | {_fmt_ms(k.ms)} | "
            f"{_fmt_ms(r.get('bound_ms'))} | {_fmt_num(r.get('bytes'), 'B')} | "
            f"{_fmt_num(r.get('flops'), 'FLOP')} | "
            f"{'?' if intensity is None else f'{intensity:.3g}'} | {k.bound or '?'} | {roof} | "
            f"{r.get('launches', '?')} | {_fmt_shapes(r.get('shapes'))} | "
            f"{', '.join(k.ops) or '-'}"
        )
    return "\n".join(rows)


def problem_context(ctx: AgentContext, records: Iterable[dict[str, Any]] = ()) -> str:
    """The stable facts of one problem: source, baselines and the dispatch map.

    Kernel sources are not repeated here: they are in the reference (a Triton problem) or in
    the candidate each role is shown (the harvest), and nothing is sent twice.
    """
    p = ctx.problem
    parts = [
        f"# Problem `{p.name}` ({p.kind} problem, entry `{p.entry}`, file {Path(p.path).name})",
        f"Device: {ctx.device}"
        + (
            " (Triton interpreter on CPU: nothing is timed, only correctness is checked)"
            if ctx.device == "cpu"
            else ""
        ),
        "",
        "## Reference source (the problem; it cannot change)",
        "```python",
        p.source.rstrip(),
        "```",
        "",
        "## Baselines",
    ]
    if ctx.baselines:
        parts += [f"- {name}: {_fmt_ms(ms)}" for name, ms in ctx.baselines.items()]
    else:
        parts.append("- none measured")
    parts += ["", "## Dispatch map (from the torch.compile (Inductor) harvest)"]
    if ctx.kernels:
        parts.append(kernel_table(ctx.kernels, records, ctx.gpu))
    else:
        parts.append("(no harvested kernels)")
    if ctx.library_dominated:
        parts.append(
            "\nThis problem is library-dominated: nearly all time is in vendor calls, which are"
            " very hard to beat; the baseline may well be the answer."
        )
    if ctx.dispatch_variants:
        parts += ["", "## Vendor-dispatch variants available from the harvest"]
        parts += [f"- {label}" for label, _ in ctx.dispatch_variants]
    return "\n".join(parts) + "\n"


def gates_text(gates: list[dict[str, Any]], fallback: str) -> str:
    """Every gate's status and full detail (the verdict's report), for a repair."""
    if not gates:
        return fallback.strip() or "(the gates gave no detail)"
    lines = []
    for g in gates:
        metrics = {
            k: v
            for k, v in (g.get("metrics") or {}).items()
            if k in ("max_abs_err", "seeds", "err_ratio", "speedup", "per_seed", "strict")
        }
        extra = f" {metrics}" if metrics else ""
        lines.append(f"- {g.get('name')}: {g.get('status')}{extra}\n  {g.get('detail', '')}")
    return "\n".join(lines)


def repair_text(gates: str, diff: str, max_diff_lines: int = 200) -> str:
    """The tool result a failed Executor attempt gets: its diff and every gate's detail."""
    lines = diff.splitlines()
    if len(lines) > max_diff_lines:
        lines = [*lines[:max_diff_lines], f"... ({len(lines) - max_diff_lines} more lines)"]
    return (
        "The gates rejected this candidate.\n\nGates:\n"
        f"{gates}\n\nYour attempt, as a diff against the parent:\n```diff\n"
        + "\n".join(lines)
        + "\n```\nRepair this attempt: fix the cause the gates show and keep the rest of your "
        "change. `edit_candidate` hunks now apply to your attempt (the + side above)."
    )


def memory_text(items: list[ExperienceItem]) -> str:
    """Experience from earlier searches, for the Planner."""
    if not items:
        return "Experience memory: empty (no earlier lessons)."
    lines = ["Experience memory (lessons from earlier searches, outcome = speedup child/parent):"]
    for item in items:
        where = f" [{item.problem}]" if item.problem else ""
        lines.append(
            f"- pattern: {item.pattern}; action: {item.action}; outcome: {item.outcome:.2f}x"
            f"{where}; lesson: {item.lesson}"
        )
    return "\n".join(lines)


def candidate_text(candidate: Candidate, heading: str = "Parent candidate") -> str:
    """A candidate's source with its identity, as the Planner, Executor and Tuner see it."""
    note = f" ({candidate.note})" if candidate.note else ""
    return f"## {heading} `{candidate.id}`{note}\n```python\n{candidate.source.rstrip()}\n```\n"


def report_text(report: ProfileReport) -> str:
    """The Profiler's report, for the Planner."""
    lines = ["## Profiler report", report.summary]
    for b in report.bottlenecks:
        lines.append(f"- {b.kernel}: share {_fmt_share(b.share)}, {b.bound or '?'}-bound; {b.note}")
    return "\n".join(lines)


def plan_text(plan: Plan) -> str:
    """One plan, for the Executor."""
    targets = ", ".join(plan.targets) or "-"
    params = f"\nParameters: {plan.params}" if plan.params else ""
    return (
        f"## Plan {plan.id}: {plan.title}\nAction: {plan.action}; targets: {targets}\n"
        f"Rationale: {plan.rationale}{params}"
    )


def feedback_text(feedback: str) -> str:
    """The failing gate's diagnostic from the previous attempt at the same plan."""
    return (
        "## Your previous attempt at this plan failed a gate\n"
        f"{feedback.strip()}\n"
        "Fix the cause shown above; keep the rest of the change."
    )


def steps_text(steps: list[StepRecord], max_diff_lines: int = 80) -> str:
    """Accepted and rejected steps with their diffs and gate results, for the Summarizer."""
    blocks = []
    for s in steps:
        plan = f"{s.plan.title} (action {s.plan.action})" if s.plan else "no plan (direct edit)"
        speed = "not measured" if s.speedup is None else f"{s.speedup:.3f}x vs baseline"
        parent = "" if s.parent_speedup is None else f"; parent was {s.parent_speedup:.3f}x"
        gates = "; ".join(
            f"{g.get('name')}: {g.get('status')}"
            + (f" ({str(g.get('detail'))[:200]})" if g.get("detail") else "")
            for g in s.gate_details
        )
        diff = unified_diff(s.parent_source, s.candidate.source).splitlines()
        if len(diff) > max_diff_lines:
            diff = [*diff[:max_diff_lines], f"... ({len(diff) - max_diff_lines} more lines)"]
        blocks.append(
            f"## Step: candidate `{s.candidate.id}` (parent `{s.candidate.parent}`, "
            f"agent {s.candidate.agent})\nPlan: {plan}\nVerdict: {s.verdict}; speed: "
            f"{speed}{parent}\nGates: {gates or '-'}\n```diff\n" + "\n".join(diff) + "\n```"
        )
    return "\n\n".join(blocks)


def budget_text(ctx: AgentContext) -> str:
    """Where the search stands, so the agent can pace itself."""
    parts = [f"Search iteration {ctx.iteration}."]
    if ctx.budget_left is not None:
        parts.append(f"Time left before the search's deadline: {ctx.budget_left:.0f} s.")
    return " ".join(parts)
