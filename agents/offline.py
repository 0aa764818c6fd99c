"""The embedded offline policy: deterministic, profiling-guided rules that need no API key.

Its moves are the ones that pay on real hardware without an LLM: CUDA-graph capture where launch
overhead dominates, routing an op back to its vendor library where that beats Inductor's
lowering, keeping the faster of eager and torch.compile, and a measured search over the Triton
kernels' launch configurations. It never guesses a speed: every proposal is gated and timed.
"""

from __future__ import annotations

import dataclasses
import math
import re

from kernelopt_jupyter.agents.base import (
    PLAN_ACTIONS,
    AgentContext,
    AgentIO,
    Bottleneck,
    Edit,
    ExperienceItem,
    KernelUnit,
    Plan,
    ProfileReport,
    StepRecord,
    Summary,
    TuneProposal,
    plan_id_prefix,
)
from kernelopt_jupyter.agents.headroom import (
    Aim,
    Headroom,
    aim_families,
    aim_units,
    family_lines,
    headroom,
    main_family,
    roof_term,
)
from kernelopt_jupyter.agents.memory import ExperienceMemory, worth_keeping
from kernelopt_jupyter.agents.op_families import families_of_ops
from kernelopt_jupyter.agents.rewrites.moves import (
    GEMM_REMOVING,
    INDUCTOR_MOVES,
    VENDOR_CHOICES,
    cost_shares,
    inductor_moves,
    rewrite_priority,
    vendor_choices,
)
from kernelopt_jupyter.agents.rewrites.task import RewriteMatch, RewriteScan, find_rewrites
from kernelopt_jupyter.agents.transforms import (
    TransformError,
    config_neighbours,
    describe_config_change,
    eviction_hints,
    gemm_bias_operand,
    helion_config_variants,
    lift_launch_configs,
    streamed_loads,
    winograd_convolutions,
    wrap_cuda_graph,
    wrap_cudnn_benchmark,
)
from kernelopt_jupyter.analysis.capture import knob_exists
from kernelopt_jupyter.analysis.harvest import dispatch_choices, harvest_problem
from kernelopt_jupyter.candidate import Candidate, eager_dispatch_source, is_dispatch_only
from kernelopt_jupyter.gpu_peaks import roof_name
from kernelopt_jupyter.launch_configs import (
    LaunchConfigError,
    read_launch_configs,
    write_launch_configs,
)
from kernelopt_jupyter.problem import problem_from_source

#: Below this eager time (ms) a forward is dominated by launch overhead on an H200.
LAUNCH_BOUND_MS = 0.25
TUNE_VARIANTS = 4
#: A move's harvest (one Inductor compile in a worker) that takes longer than this has cost more
#: than a one-minute search can spend on one move: it is stopped and reported as failed.
HARVEST_LIMIT_S = 120.0
#: How far (priority units) a mixed rewrite (KernelOPT's kernels with PyTorch ops for the rest
#: of the forward) ranks below the same rules' candidate of kernels alone.
MIXED_PENALTY = 0.3

#: Seconds a move costs before its gate, roughly (an Inductor compile; max-autotune or
#: coordinate descent benchmark many variants). A move is skipped when the search's
#: ``budget_left`` could not also pay for its gate (``GATE_S``) after it.
COMPILE_S = 20.0
AUTOTUNE_S = 60.0
GATE_S = 10.0
#: Under a deadline that cannot fit every planned compile, a compile that would take all the
#: time left loses this much priority (``deadline_order``): about the spread between the
#: planner's first move and a marginal one.
DEADLINE_WEIGHT = 2.0
#: An autotuning compile's cost from the profile (``autotune_cost_s``): a base for compiling
#: and tuning the generated kernels, a template search per vendor GEMM or convolution, and the
#: benchmark runs of its candidates. Measured on the H200 (the bench's max-autotune peer):
#: 11 s for a LayerNorm with no GEMM, 10-13 s for one GEMM or convolution of under 1 ms, 32 s
#: for a residual block of convolutions, 61-69 s for a 16k-square GEMM (170 ms a run). One flat
#: cost for every problem would skip every such move in a one-minute search.
AUTOTUNE_BASE_S = 12.0
AUTOTUNE_PER_TEMPLATE_S = 10.0
AUTOTUNE_RUNS = 250
_TEMPLATE_OPS = ("mm", "conv", "scaled_dot_product")
#: A rewrite on a launch-bound forward is also offered already captured in a CUDA graph: the
#: reduce-overhead baseline replays Inductor's kernels in one, so an ungraphed rewrite of a
#: launch-bound model cannot beat it however much work it removes.
GRAPHED_BONUS = 0.3

#: Words of a direction that name no plan: a direction is matched on the rest.
_FILLER = frozenset(
    [
        "please",
        "instead",
        "first",
        "then",
        "after",
        "with",
        "without",
        "that",
        "this",
        "from",
        "into",
        "only",
        "them",
        "some",
        "plan",
        "plans",
        "kernel",
        "kernels",
        "code",
        "candidate",
        "make",
        "more",
        "less",
        "should",
        "would",
        "could",
        "again",
    ]
)


def direction_words(text: str) -> set[str]:
    """The words of a person's direction that may name a plan (4 letters or more)."""
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 4} - _FILLER


def matches_direction(words: set[str], plan: Plan) -> bool:
    """Whether a plan's title, kind or rationale contains one of a direction's words."""
    said = f"{plan.title} {plan.action} {plan.rationale}".lower()
    return any(w in said for w in words)


_WHY = {a.name: a.description for a in PLAN_ACTIONS if a.offline}


def patterns_of(ctx: AgentContext) -> set[str]:
    """Pattern tags of a problem, the keys of the experience memory."""
    tags = {f"kind:{ctx.problem.kind}"}
    triton_kernels = [k for k in ctx.kernels if k.kind == "triton"]
    vendor = [k for k in ctx.kernels if k.kind == "vendor"]
    eager = ctx.baselines.get("eager")
    if eager is not None and eager < LAUNCH_BOUND_MS:
        tags.add("launch-bound")
    if ctx.library_dominated:
        tags.add("library-dominated")
    if len(triton_kernels) >= 3:
        tags.add("many-kernels")
    if vendor and triton_kernels:
        tags.add("vendor+epilogue")
    compile_ms = ctx.baselines.get("compile")
    if eager is not None and compile_ms is not None and eager < compile_ms:
        tags.add("eager-beats-compile")
    bounds = {k.bound for k in triton_kernels if k.bound}
    tags.update(f"{b}-bound" for b in bounds)
    # The op pattern: which vendor ops and which kinds of generated kernel the forward has, so
    # a lesson learnt on one problem's convolutions or reductions ranks moves on the next.
    for k in vendor:
        tags.update(f"op:{op.split('.')[1] if op.startswith('aten.') else op}" for op in k.ops)
    for k in triton_kernels:
        for prefix, tag in (("_per_", "persistent-reduction"), ("_red_", "looped-reduction")):
            if prefix in k.name:
                tags.add(tag)
        if "YBLOCK" in k.source:
            tags.add("2d-tile")
    return tags


def autotune_cost_s(kernels: list[KernelUnit] | None) -> float:
    """Seconds an autotuning compile of this forward takes, from its profile (``AUTOTUNE_S``
    where there is none)."""
    if not kernels:
        return AUTOTUNE_S
    templates = [
        k
        for k in kernels
        if k.kind == "vendor" and any(t in op for op in k.ops for t in _TEMPLATE_OPS)
    ]
    run_s = sum(float(k.ms or 0.0) for k in templates) / 1e3
    cost = AUTOTUNE_BASE_S + AUTOTUNE_PER_TEMPLATE_S * len(templates) + AUTOTUNE_RUNS * run_s
    return min(cost, 1.5 * AUTOTUNE_S)


def move_cost_s(
    action: str, params: dict[str, object], kernels: list[KernelUnit] | None = None
) -> float:
    """Seconds a move needs before its candidate can be gated (0: a source edit); an
    autotuning configuration's from the profile's ``kernels`` where given."""
    if action == "inductor_config":
        label = str(params.get("config", ""))
        if "autotune" in label or "coordinate" in label:
            return autotune_cost_s(kernels)
        return COMPILE_S
    if action == "graph_rewrite" and params.get("route") == "harvest":
        return COMPILE_S
    return 0.0


def deadline_order(
    options: list[tuple[float, Plan]], budget_left: float | None, kernels: list[KernelUnit]
) -> list[tuple[float, Plan]]:
    """Priorities under a deadline that cannot fit every compile the plans need: each compile
    move's drops by ``DEADLINE_WEIGHT`` times the fraction of the time left that it takes, so
    a source edit (a gate of a few seconds) goes before a compile move that ranks only a
    little above it. On the H200 three Inductor configurations of a one-kernel reduction took
    35 s of a 60 s search and gave the default code, and the launch configuration after them
    never ran. Without a deadline, or with time for every compile, the priorities stand."""
    if budget_left is None or budget_left <= 0:
        return options
    costs = [move_cost_s(plan.action, plan.params, kernels) for _, plan in options]
    if sum(cost + GATE_S for cost in costs if cost) <= budget_left:
        return options
    return [
        (p - DEADLINE_WEIGHT * cost / budget_left, plan) for (p, plan), cost in zip(options, costs)
    ]


def _labelled(title: str, parent: Candidate) -> str:
    """A plan title that names the moves behind it: its own, then its parent's chain."""
    if parent.agent == "harvest" or not parent.note:
        return title
    # The same move again on its own result (a retile of a retile) counts up instead of nesting.
    note = parent.note
    if note == title or note.startswith((f"{title} on [", f"{title} (x")):
        rest = note[len(title) :]
        times = 1
        if rest.startswith(" (x") and ")" in rest:
            count, rest = rest[3:].split(")", 1)
            times = int(count) if count.isdigit() else 1
        return f"{title} (x{times + 1}){rest}"
    return f"{title} on [{note}]"


def eager_gap(eager: float | None, compiled: float | None) -> float:
    """How far an eager-route move starts behind torch.compile's forward, as a priority
    penalty: twice the log of eager's time over compile's where compile is more than 10%
    faster (it fuses what eager runs op by op), else 0. A move on the eager route has to
    remove more than that gap to win (VGG on the H200: eager 8.5 ms, compile 5.1 ms, and the
    eager routes' candidates ran 0.61-0.64x the harvest)."""
    if eager and compiled and eager > 1.1 * compiled:
        return 2.0 * math.log(eager / compiled)
    return 0.0


def memory_action(plan: Plan) -> str:
    """The experience memory's key for a plan: the action, plus the rewrite or config name."""
    move = str(
        plan.params.get("rewrite")
        or plan.params.get("config")
        or plan.params.get("body")
        or plan.params.get("choice")
        or ""
    )
    if plan.params.get("graphed"):
        move += "+graph"
    return f"{plan.action}:{move}" if move else plan.action


#: The families each vendor choice changes.
_CHOICE_FAMILIES: dict[str, set[str]] = {
    "cudnn_benchmark": {"conv", "conv-transpose"},
    "gemm_bias_operand": {"gemm"},
    "winograd_conv": {"conv"},
}


def _choice_ops(label: str) -> tuple[str, ...]:
    """The aten ops a harvest's dispatch variant routes back to its vendor library."""
    return next((ops for name, ops, _, _ in dispatch_choices() if name == label), ())


def _touched(h: Headroom, touches: tuple[str, ...]) -> Aim:
    """The units an Inductor configuration changes: those of its families, and every
    generated kernel where it names "generated"."""
    families = {t for t in touches if t != "generated"}
    units = aim_units(h, families=families).units if families else frozenset()
    if "generated" in touches:
        units |= aim_units(h, kinds={"triton"}).units
    return Aim(frozenset(units))


def _aim_words(h: Headroom, aim: Aim | None) -> str:
    """What a move aims at, for its rationale: its main family's units and the time between
    kernels."""
    parts = []
    family = main_family(h, aim)
    if family:
        parts.append(f"aims at {family}")
    if aim is not None and aim.overhead and h.overhead:
        parts.append(f"{h.overhead:.0%} of the time outside kernels")
    return ", ".join(parts) or "aims at nothing measured"


def _ranked(kernels: list[KernelUnit]) -> list[KernelUnit]:
    return sorted(kernels, key=lambda k: -(k.share or 0.0))


class OfflinePolicy:
    """Rule-table agents over the dispatch map, the baselines and the experience memory."""

    name = "offline"
    #: The Executor applies a plan by its kind of change (``action``), never by its text.
    reads_plan_text = False

    def __init__(self, memory: ExperienceMemory | None = None) -> None:
        self.memory = memory or ExperienceMemory(None)
        self._tried: set[tuple[str, str, str]] = set()
        self._scans: dict[str, RewriteScan] = {}
        #: Vendor choices already planned in this search: each is timed once, on the first
        #: parent it fits (a winner carries it on in the beam). On the H200, cuDNN's timed
        #: search planned on every parent of a search took 5 of its 16 slots and won none.
        self._choices: set[str] = set()
        #: How many of the context's directions the Planner has answered (each once).
        self._directions_seen = 0
        #: Plan id -> the op family its move targeted, for the Summarizer's lessons.
        self._families: dict[str, str] = {}
        #: The roofline lines last said, so the Planner says them again only when they change
        #: (torch.compile's time arriving after the first planning).
        self._roof_said: list[str] = []

    # ------------------------------------------------------------------ Profiler
    def profile(self, ctx: AgentContext, io: AgentIO) -> ProfileReport:
        """Rank sub-kernels by time share and say what bounds each one."""
        ranked = _ranked(ctx.kernels)
        measured = any(k.ms is not None for k in ranked)
        bottlenecks = [
            Bottleneck(
                kernel=k.name,
                share=k.share,
                bound=k.bound,
                note=_kernel_note(k, ctx.gpu),
            )
            for k in ranked[:4]
        ]
        eager, compiled = ctx.baselines.get("eager"), ctx.baselines.get("compile")
        lines = []
        if eager is not None and compiled is not None:
            faster = "eager" if eager < compiled else "torch.compile"
            lines.append(
                f"Baselines: eager {eager:.4f} ms, torch.compile {compiled:.4f} ms; "
                f"{faster} is the one to beat."
            )
        else:
            lines.append("Baselines are not timed here (no GPU): ranking by estimated work.")
        if ctx.library_dominated:
            lines.append(
                "All the work is in vendor library calls (cuBLAS/cuDNN); Inductor generated no "
                "Triton kernel worth editing, so only dispatch-level moves remain."
            )
        if bottlenecks:
            top = bottlenecks[0]
            share = f"{top.share:.0%}" if top.share is not None else "an unmeasured share"
            bound = f", {top.bound}-bound" if top.bound else ""
            lines.append(f"Largest: {top.kernel} with {share} of the time{bound}.")
            if top.share and top.share < 1:
                lines.append(
                    f"Amdahl: making only this kernel infinitely fast gives at most "
                    f"{1 / (1 - top.share):.2f}x."
                )
        if eager is not None and eager < LAUNCH_BOUND_MS:
            lines.append(
                f"The whole forward takes {eager * 1000:.0f} µs in eager mode: launch overhead "
                f"is a large part of that, so CUDA-graph replay is promising."
            )
        if not measured and ranked:
            lines.append("(time shares are estimates from FLOPs and bytes, not measurements)")
        summary = " ".join(lines)
        io.text(summary)
        return ProfileReport(bottlenecks=bottlenecks, summary=summary)

    # ------------------------------------------------------------------ Planner
    def plan(
        self, ctx: AgentContext, report: ProfileReport, parent: Candidate, n: int, io: AgentIO
    ) -> list[Plan]:
        """Concrete plans from the rule table, ordered by memory, minus those already tried.

        A person's new direction (``ctx.directions``) keeps only the plans whose names contain
        its words, tried ones included (a plan rejected earlier may be what the person now
        wants); where it names none, the Planner says which plans it knows."""
        if ctx.rejections:  # rejected plans count as tried: they are not proposed again
            io.text("Rejected in step mode: " + "; ".join(ctx.rejections) + ".\n")
        fresh = ctx.directions[self._directions_seen :]
        self._directions_seen = len(ctx.directions)
        direction = fresh[-1] if fresh else None
        withheld: list[tuple[float, Plan]] = []
        patterns = patterns_of(ctx)
        graphed = "KernelOPT: CUDA-graph capture" in parent.source
        parent_dispatch = parent.dispatch_only or is_dispatch_only(parent.source)
        options: list[tuple[float, Plan]] = []

        skipped: list[str] = []

        h = headroom(ctx)
        lines = family_lines(h)
        if lines and lines != self._roof_said:
            io.text("\n".join(lines) + "\n")
            self._roof_said = lines
        generated = aim_units(h, kinds={"triton"})
        aimed: dict[int, str] = {}  # id of a plan -> the family it targets

        def add(
            priority: float,
            action: str,
            title: str,
            why: str = "",
            aim: Aim | None = None,
            **params: object,
        ) -> None:
            key = (parent.id, action, repr(sorted(params.items())))
            tried = key in self._tried
            if tried and direction is None:
                return
            # Late in a search, a move whose compile could not finish before the deadline
            # (with its gate after it) is not proposed: the cheap moves get the time.
            cost = move_cost_s(action, params, ctx.kernels)
            if cost and ctx.budget_left is not None and ctx.budget_left < cost + GATE_S:
                skipped.append(title)
                return
            plan = Plan(
                id="",
                title=_labelled(title, parent),
                rationale=why or _WHY[action],
                action=action,
                targets=[str(params.get("kernel", ""))] if params.get("kernel") else [],
                params=dict(params),
            )
            # The memory keys a rewrite or configuration by its name, so a lesson learnt on
            # one problem's op pattern ranks the same move on the next problem with it.
            prior = self.memory.score(patterns, memory_action(plan))
            if prior:
                plan.rationale += f" (memory: {prior:+.2f} log-speedup)"
            # The worst-placed kernels' moves first: what the move could gain at most, with
            # the measured roof positions, against the static estimate the priority assumes.
            roof = roof_term(h, aim)
            if abs(roof) >= 0.01:
                plan.rationale += f" (roofline: {roof:+.2f}, {_aim_words(h, aim)})"
            # What the same move did on the same op family, on earlier problems (capped).
            family = main_family(h, aim)
            boost = self.memory.family_score(aim_families(h, aim), memory_action(plan))
            if boost:
                plan.rationale += f" (memory on {family or 'its family'}: {boost:+.2f})"
            aimed[id(plan)] = family
            (withheld if tried else options).append((priority + prior + roof + boost, plan))

        cuda = ctx.device == "cuda"
        eager, compiled = ctx.baselines.get("eager"), ctx.baselines.get("compile")
        # Many launches per forward also mean launch-bound: plain @triton.jit launches cost more
        # host time than Inductor's own launchers, so a harvest pays per kernel until graphed.
        launch_bound = (eager is not None and eager < LAUNCH_BOUND_MS) or len(ctx.kernels) >= 4
        if cuda and not graphed:
            add(3.0 if launch_bound else 1.0, "cuda_graph", "CUDA graph", aim=Aim(overhead=True))
        if ctx.problem.kind == "module" and parent.agent == "harvest":
            eager_wins = eager is not None and compiled is not None and eager < compiled
            behind = eager_gap(eager, compiled)
            if eager_wins or ctx.library_dominated:
                add(
                    2.5,
                    "eager_dispatch",
                    "dispatch: vendor libraries (eager) for every op",
                    aim=generated,
                )
            if cuda and (eager_wins or ctx.library_dominated or launch_bound):
                add(
                    (2.8 if launch_bound else 2.0) - behind,
                    "eager_graph",
                    "dispatch: vendor libraries (eager) in a CUDA graph",
                    aim=Aim(generated.units, overhead=True),
                )
            for label, _source in ctx.dispatch_variants:
                families = set(families_of_ops(_choice_ops(label)))
                aim = aim_units(h, families=families, kinds={"triton"}) if families else None
                add(2.2, "vendor_dispatch", f"dispatch: {label}", aim=aim, variant=label)
            for priority, match, route in self._rewrite_options(ctx, io):
                title = match.title + (" (eager vendor path)" if route == "eager" else "")
                # A rewrite to KernelOPT's own kernel runs the op nearer its roof; the others
                # delete work (algebra, folds), which no roof bounds.
                aim = (
                    aim_units(h, families=set(match.families), deletes=not match.kernels)
                    if match.families
                    else None
                )
                why = f"{_WHY['graph_rewrite']}; {match.exact}"
                if cuda and launch_bound and route == "eager":
                    # Rewrite and graph capture in one candidate: under a one-minute search
                    # there is rarely a second iteration to add the graph.
                    add(
                        priority + GRAPHED_BONUS,
                        "graph_rewrite",
                        title + " in a CUDA graph",
                        why=why + "; replayed as one CUDA graph",
                        aim=None if aim is None else Aim(aim.units, True, aim.deletes),
                        rewrite="+".join(match.names),
                        route=route,
                        graphed=True,
                    )
                    priority -= 0.5
                add(
                    priority,
                    "graph_rewrite",
                    title,
                    why=why,
                    aim=aim,
                    rewrite="+".join(match.names),
                    route=route,
                )
            for priority, move in inductor_moves(ctx):
                add(
                    priority,
                    "inductor_config",
                    f"inductor config: {move.label}",
                    why=f"{_WHY['inductor_config']}: {move.why}",
                    aim=_touched(h, move.touches),
                    config=move.label,
                )
        for priority, choice in vendor_choices(ctx, parent.source):
            if choice not in self._choices:
                title, why = VENDOR_CHOICES[choice]
                aim = aim_units(
                    h,
                    families=_CHOICE_FAMILIES[choice],
                    kinds={"vendor"},
                    deletes=choice == "winograd_conv",  # 2.25x fewer FLOPs: past the roof
                )
                add(priority, "vendor_choice", title, why=why, aim=aim, choice=choice)
        if not parent_dispatch and (
            read_launch_configs(parent.source) or ctx.problem.kind != "module"
        ):
            for priority, title, kernel, body in self._kernel_moves(ctx, parent):
                aim = aim_units(h, names={kernel}) if kernel else None
                if body:
                    add(priority, "retile", title, aim=aim, kernel=kernel, body=body)
                else:
                    add(priority, "retile", title, aim=aim, kernel=kernel)
        if direction is not None:
            options = self._directed(direction, options, withheld, parent, io)
        if skipped:
            left = ctx.budget_left or 0.0
            io.text(f"Skipped with {left:.0f} s left (no time to compile): {'; '.join(skipped)}.")
        options = deadline_order(options, ctx.budget_left, ctx.kernels)
        options.sort(key=lambda pair: -pair[0])
        plans = []
        # Ids never reused within the session: c0.p0 the first time c0 is planned, c0.r1.p0
        # the next time (a later iteration, or a re-plan after a person's rejection).
        prefix = plan_id_prefix(parent.id, ctx.plan_ids)
        for index, (_, plan) in enumerate(options[:n]):
            plan.id = f"{prefix}{index}"
            self._tried.add((parent.id, plan.action, repr(sorted(plan.params.items()))))
            self._families[plan.id] = aimed.get(id(plan), "")
            if plan.action == "vendor_choice":
                self._choices.add(str(plan.params.get("choice")))
            plans.append(plan)
        if plans:
            io.text(
                "Plans for "
                + parent.id
                + ": "
                + "; ".join(f"[{p.action}] {p.title}" for p in plans)
                + (f". Patterns: {', '.join(sorted(patterns))}." if patterns else ".")
            )
        else:
            io.text(f"No untried plan applies to {parent.id}.")
        return plans

    @staticmethod
    def _directed(
        direction: str,
        options: list[tuple[float, Plan]],
        withheld: list[tuple[float, Plan]],
        parent: Candidate,
        io: AgentIO,
    ) -> list[tuple[float, Plan]]:
        """The plans (untried or not) a direction names, or, where it names none, the untried
        ones, with a line saying which plans there are to name."""
        words = direction_words(direction)
        named = [pair for pair in options + withheld if matches_direction(words, pair[1])]
        if named:
            io.text(f"Following your direction '{direction}'. ")
            return named
        known = [plan.title for _, plan in options + withheld]
        io.text(
            f"Your direction '{direction}' names none of the plans the offline Planner knows "
            f"for {parent.id}"
            + (f" ({'; '.join(known[:6])})" if known else " (it knows none)")
            + "; it reads a direction as words of those plans' names. "
        )
        return options

    # ------------------------------------------------------------------ Executor
    def execute(
        self,
        ctx: AgentContext,
        plan: Plan,
        parent: Candidate,
        feedback: str | None,
        io: AgentIO,
    ) -> Edit:
        """Apply the plan's transform; a retry after a gate failure gives up honestly."""
        if feedback is not None:
            io.text(f"The gate rejected the last attempt ({feedback[:200]}); no safer variant.")
            return Edit(None, "no safer variant of this transform")
        try:
            if plan.action == "cuda_graph":
                return Edit(
                    wrap_cuda_graph(parent.source), _WHY["cuda_graph"], parent.dispatch_only
                )
            if plan.action == "eager_dispatch":
                return Edit(eager_dispatch_source(ctx.problem), _WHY["eager_dispatch"], True)
            if plan.action == "eager_graph":
                source = wrap_cuda_graph(eager_dispatch_source(ctx.problem))
                return Edit(source, _WHY["eager_graph"], True)
            if plan.action == "vendor_dispatch":
                for label, source in ctx.dispatch_variants:
                    if label == plan.params.get("variant"):
                        return Edit(source, _WHY["vendor_dispatch"], is_dispatch_only(source))
                return Edit(None, f"dispatch variant {plan.params.get('variant')} is gone")
            if plan.action == "vendor_choice":
                choice = str(plan.params.get("choice", ""))
                if choice == "cudnn_benchmark":
                    source = wrap_cudnn_benchmark(parent.source)
                elif choice == "gemm_bias_operand":
                    source = gemm_bias_operand(parent.source)
                elif choice == "winograd_conv":
                    source = winograd_convolutions(parent.source)
                else:
                    return Edit(None, f"unknown vendor choice {choice!r}")
                why = VENDOR_CHOICES[choice][1]
                return Edit(source, why, parent.dispatch_only or is_dispatch_only(source))
            if plan.action == "retile":
                return self._retile(ctx, plan, parent, io)
            if plan.action == "graph_rewrite":
                return self._graph_rewrite(ctx, plan, io)
            if plan.action == "inductor_config":
                return self._inductor_config(ctx, plan, parent, io)
        except ValueError as exc:  # TransformError, or a problem kind the move does not fit
            io.text(f"Cannot apply {plan.action}: {exc}")
            return Edit(None, str(exc))
        return Edit(None, f"the offline executor has no transform for {plan.action!r}")

    def _kernel_moves(
        self, ctx: AgentContext, parent: Candidate
    ) -> list[tuple[float, str, str, str]]:
        """``(priority, title, kernel, body)``: launch-configuration and kernel-body moves on the parent's own Triton kernels.

        Kernel names come from the parent's ``LAUNCH_CONFIGS`` (a rewritten harvest has other
        kernels than the reference's), ranked by the profile's share where the names match.
        The heaviest kernel's retune ranks by its share of the time; a memory-bound kernel
        with streamed loads also gets the eviction-hint move (bit-exact).
        """
        shares = {k.name: k for k in ctx.kernels}
        names = list(read_launch_configs(parent.source))
        if not names and ctx.problem.kind != "module":
            names = [k.name for k in _ranked([k for k in ctx.kernels if k.kind == "triton"])]
        if not names:
            return [(1.2, "launch config: retune the kernel", "", "")]
        ranked = sorted(names, key=lambda n: -(shares[n].share or 0.0) if n in shares else 0.0)
        out: list[tuple[float, str, str, str]] = []
        for rank, name in enumerate(ranked[:2]):
            unit = shares.get(name)
            share = unit.share if unit is not None and unit.share is not None else 0.5
            out.append((1.3 + 0.4 * share - 0.3 * rank, f"launch config: retune {name}", name, ""))
            if rank == 0 and (unit is None or unit.bound != "compute"):
                try:
                    loads = streamed_loads(parent.source, name)
                except TransformError:
                    loads = 0
                if loads:
                    title = f"kernel body: evict_first on {name}'s {loads} streamed load(s)"
                    out.append((1.2 + 0.3 * share, title, name, "evict_first"))
        return out

    def _scan(self, ctx: AgentContext, io: AgentIO) -> RewriteScan:
        """The rewrites matching the reference's graph, found once per problem (in a worker)."""
        key = ctx.problem.source
        if key not in self._scans:
            found = find_rewrites(ctx.problem)
            self._scans[key] = found
            names = ", ".join("+".join(m.names) for m in found.matches) or "none"
            io.tool_call("rewrite_scan", {"matches": names, "error": found.error[:300]})
            io.text(f"Graph patterns found in the reference: {names}.")
        return self._scans[key]

    def _rewrite_options(
        self, ctx: AgentContext, io: AgentIO
    ) -> list[tuple[float, RewriteMatch, str]]:
        """``(priority, match, route)`` per applicable rewrite, ordered by the cost model."""
        if ctx.problem.kind != "module":
            return []
        shares = cost_shares(ctx)
        eager, compiled = ctx.baselines.get("eager"), ctx.baselines.get("compile")
        # Where eager already beats torch.compile (Inductor lowers an op worse than its
        # vendor kernel), the rewritten eager forward is the likelier winner too.
        eager_wins = eager is not None and compiled is not None and eager < compiled
        # Where torch.compile's forward is far faster than eager's (it fuses what eager runs
        # op by op), the eager route starts that far behind: a rewrite there has to remove
        # more than the gap to win, so it drops by the gap (log units, doubled).
        gap = eager_gap(eager, compiled)
        out = []
        for match in self._scan(ctx, io).matches:
            priority = rewrite_priority(match.names, shares)
            # Where the rewrite leaves a vendor call plus a little elementwise work (a GEMM
            # turned into a broadcast or a matrix-vector product), the eager forward costs no
            # compile and Inductor has little left to fuse: try it first. Otherwise Inductor's
            # harvest fuses what the rewrite exposed (a folded conv's activation) and leads.
            eager_first = match.eager_only or bool(set(match.names) & GEMM_REMOVING) or eager_wins
            behind = 0.0 if match.eager_only else gap
            if match.beside:
                # A mixed candidate runs the rest of the forward op by op in eager PyTorch:
                # after the same kernels with nothing beside them, and behind by the gap.
                behind = max(gap, 0.0) + MIXED_PENALTY
            if not match.eager_only:
                out.append((priority - (0.1 if eager_first else 0.0), match, "harvest"))
            out.append((priority - (0.0 if eager_first else 0.4) - behind, match, "eager"))
        return out

    def _graph_rewrite(self, ctx: AgentContext, plan: Plan, io: AgentIO) -> Edit:
        names = str(plan.params.get("rewrite", ""))
        match = next((m for m in self._scan(ctx, io).matches if "+".join(m.names) == names), None)
        if match is None:
            return Edit(None, f"rewrite {names} no longer matches")
        why = f"{match.title} ({match.exact})"
        if plan.params.get("route") == "eager":
            where = (
                ", with KernelOPT's own kernel" if match.kernels else ", on the vendor libraries"
            )
            if plan.params.get("graphed"):
                source = wrap_cuda_graph(match.eager_source)
                return Edit(source, why + where + ", in a CUDA graph", not match.kernels)
            return Edit(match.eager_source, why + where, not match.kernels)
        rewritten = problem_from_source(match.problem_source, ctx.problem.path, validate=False)
        rewritten = dataclasses.replace(rewritten, name=ctx.problem.name)
        harvest = harvest_problem(
            rewritten, ctx.device, variants=False, time_limit_s=HARVEST_LIMIT_S
        )
        if not harvest.ok:
            io.text(f"The rewritten graph did not harvest ({harvest.error[:200]}).")
            return Edit(None, f"harvest of the rewritten graph failed: {harvest.error[:300]}")
        io.text(f"Harvested the rewritten graph: {len(harvest.kernels)} Triton kernel(s).")
        return Edit(harvest.source, why + ", harvested by Inductor", not harvest.kernels)

    def _inductor_config(
        self, ctx: AgentContext, plan: Plan, parent: Candidate, io: AgentIO
    ) -> Edit:
        label = str(plan.params.get("config", ""))
        move = next((m for m in INDUCTOR_MOVES if m.label == label), None)
        if move is None:
            return Edit(None, f"unknown Inductor configuration {label!r}")
        missing = [k for k in move.overrides if not knob_exists(k)]
        if missing:
            io.text(f"This torch has no Inductor option {', '.join(missing)}: skipped.")
            return Edit(None, f"Inductor option(s) {', '.join(missing)} absent in this torch")
        harvest = harvest_problem(
            ctx.problem,
            ctx.device,
            variants=False,
            mode=move.mode,
            inductor_config=dict(move.overrides),
            time_limit_s=HARVEST_LIMIT_S * (2 if move.mode == "max-autotune" else 1),
        )
        if not harvest.ok:
            return Edit(None, f"harvest under {label} failed: {harvest.error[:300]}")
        fallback = [n for n in harvest.notes if "harvested the default mode" in n]
        if fallback:
            return Edit(None, f"{label}: {fallback[0]}")
        if harvest.source == parent.source:
            return Edit(None, f"{label} generates the same code as the default harvest")
        io.text(f"Harvested under {label}: {len(harvest.kernels)} Triton kernel(s).")
        return Edit(harvest.source, f"Inductor configuration: {label}", not harvest.kernels)

    def _retile(self, ctx: AgentContext, plan: Plan, parent: Candidate, io: AgentIO) -> Edit:
        if ctx.problem.kind == "helion":
            label, new_source = helion_config_variants(parent.source)[0]
            io.text(f"Retune the Helion config: {label}. The Tuner measures the other neighbours.")
            return Edit(new_source, f"Helion config: {label}")
        source = lift_launch_configs(parent.source)
        configs = read_launch_configs(source)
        kernel = str(plan.params.get("kernel") or "")
        name = kernel if kernel in configs else next(iter(configs))
        if plan.params.get("body") == "evict_first":
            loads = streamed_loads(source, name)
            io.text(f"Kernel {name}: evict_first on its {loads} streamed load(s).")
            return Edit(eviction_hints(source, name), f"{name}: evict_first on {loads} load(s)")
        moves = config_neighbours(configs[name])
        if not moves:
            return Edit(None, f"{name} has no tunable launch setting")
        label, new = moves[0]
        io.text(f"Retile {name}: {label}. The Tuner measures the other neighbours.")
        return Edit(write_launch_configs(source, {**configs, name: new}), f"{name}: {label}")

    # ------------------------------------------------------------------ Tuner
    def tune(self, ctx: AgentContext, candidate: Candidate, io: AgentIO) -> TuneProposal:
        """Neighbouring launch configurations of the heaviest kernels, to be measured."""
        limit = max(1, ctx.tune_variants or TUNE_VARIANTS)
        if ctx.problem.kind == "helion":
            try:
                helion_variants = helion_config_variants(candidate.source, limit=limit)
            except TransformError as exc:
                return TuneProposal([], f"nothing to tune: {exc}")
            text = f"Measuring {len(helion_variants)} Helion configs around {candidate.id}."
            io.text(text)
            return TuneProposal(helion_variants, text)
        try:
            source = lift_launch_configs(candidate.source)
            configs = read_launch_configs(source)
        except (TransformError, LaunchConfigError) as exc:
            return TuneProposal([], f"nothing to tune: {exc}")
        shares = {k.name: k.share or 0.0 for k in ctx.kernels}
        order = sorted(configs, key=lambda name: -shares.get(name, 0.0))
        variants: list[tuple[str, str]] = []
        # A kernel-body move among the launch settings: cache hints on the heaviest kernel's
        # streamed loads (bit-exact; measured like any other variant).
        for name in order[:1]:
            try:
                loads = streamed_loads(source, name)
                if loads:
                    hinted = eviction_hints(source, name)
                    label = f"kernel {name}: evict_first on {loads} streamed load(s)"
                    variants.append((label, hinted))
            except TransformError:
                pass  # a name in LAUNCH_CONFIGS without a kernel of its own: nothing to hint
        for name in order:
            for label, new in config_neighbours(configs[name]):
                variants.append(
                    (f"{name}: {label}", write_launch_configs(source, {**configs, name: new}))
                )
                if len(variants) >= limit:
                    break
            if len(variants) >= limit:
                break
        text = f"Measuring {len(variants)} launch configurations around {candidate.id}."
        io.text(text)
        return TuneProposal(variants, text)

    # ------------------------------------------------------------------ Summarizer
    def summarize(self, ctx: AgentContext, steps: list[StepRecord], io: AgentIO) -> Summary:
        """A plain-language explanation per step and the lessons worth remembering."""
        explanations: dict[str, str] = {}
        experience: list[ExperienceItem] = []
        patterns = sorted(patterns_of(ctx))
        for step in steps:
            text = explain_step(step)
            explanations[step.candidate.id] = text
            io.text(text + "\n")
            if step.plan and step.speedup and step.parent_speedup:
                outcome = step.speedup / step.parent_speedup
                if worth_keeping(outcome):
                    for pattern in patterns:
                        experience.append(
                            ExperienceItem(
                                pattern=pattern,
                                action=memory_action(step.plan),
                                outcome=round(outcome, 4),
                                lesson=text,
                                problem=ctx.problem.name,
                                family=self._families.get(step.plan.id, ""),
                            )
                        )
        return Summary(explanations, experience)


def _kernel_note(k: KernelUnit, gpu: str = "") -> str:
    if k.kind == "vendor":
        return "vendor library call: kept (very hard to beat); fuse around it instead"
    if k.roofline_fraction is not None and k.bound:
        return f"{k.bound}-bound at {k.roofline_fraction:.0%} of the {roof_name(gpu)} roofline"
    return f"{k.kind} kernel"


def explain_step(step: StepRecord) -> str:
    """Templated, data-driven explanation of one step for the panel and the report."""
    c = step.candidate
    what = step.plan.title if step.plan else (c.note or "candidate")
    if step.verdict != "pass":
        failing = next((g for g in step.gate_details if g.get("status") == "fail"), None)
        why = f"{failing['name']} gate: {failing['detail']}" if failing else "a gate failed"
        return f"{c.id} ({what}) was rejected by the {why}."
    if step.speedup is None:
        return f"{c.id} ({what}) passed gates 1-3; its speed is not measured without a GPU."
    change = ""
    if step.parent_speedup:
        ratio = step.speedup / step.parent_speedup
        change = f", {ratio:.2f}x its parent"
        if step.plan and step.plan.action == "retile":
            old = read_launch_configs(step.parent_source)
            new = read_launch_configs(c.source)
            for name, cfg in new.items():
                if old.get(name) != cfg:
                    change += f" ({name}: {describe_config_change(old.get(name, {}), cfg)})"
    verdict = "faster" if step.speedup > 1 else "slower"
    return (
        f"{c.id} ({what}) passed all gates and runs {step.speedup:.2f}x the baseline "
        f"({verdict}{change}). {_lesson(step, math.log(max(step.speedup, 1e-9)))}"
    )


def _lesson(step: StepRecord, log_gain: float) -> str:
    action = step.plan.action if step.plan else ""
    if action in ("cuda_graph", "eager_graph") and log_gain > 0:
        return "Launch overhead was a real cost: one graph replay replaced many launches."
    if action == "eager_dispatch" and log_gain > 0:
        return "The vendor library beat Inductor's generated code for this problem."
    if action == "retile" and log_gain > 0:
        return "A better launch shape kept more memory transactions in flight."
    return ""
