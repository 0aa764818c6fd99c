"""The agent interface: five roles, one protocol, three policies (offline, Claude, replay).

A policy is the brain behind all five agents. The search calls it role by role and gives each
call an :class:`AgentIO`, through which the policy streams its reasoning and tool calls into the
event stream. Policies return plain data (below); the search turns proposed sources into
:class:`~kernelopt_jupyter.candidate.Candidate` records and sends every one through the gates.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from kernelopt_jupyter.candidate import Candidate
from kernelopt_jupyter.events import EventLog
from kernelopt_jupyter.problem import Problem

AGENTS = ("profiler", "planner", "executor", "tuner", "summarizer")


@dataclass(frozen=True)
class PlanAction:
    """A kind of change a :class:`Plan` may name, with what it does (shown to people and LLMs).

    ``offline`` says whether the offline Executor has a source transform for it; every action
    may be carried out by an LLM Executor, which writes the whole new source itself.
    """

    name: str
    description: str
    offline: bool


#: The one list of plan actions (the offline policy, the Claude tool schema and the prompts use
#: it). ``rewrite`` is an LLM plan whose change is described in free text in its rationale.
PLAN_ACTIONS: tuple[PlanAction, ...] = (
    PlanAction(
        "retile",
        "measure nearby launch configurations of the heaviest Triton kernel",
        offline=True,
    ),
    PlanAction(
        "cuda_graph",
        "replay the whole forward as one CUDA graph, removing per-kernel launch gaps",
        offline=True,
    ),
    PlanAction(
        "eager_dispatch",
        "route every op to the vendor libraries (eager) instead of Inductor's kernels",
        offline=True,
    ),
    PlanAction("eager_graph", "eager vendor kernels, replayed as one CUDA graph", offline=True),
    PlanAction(
        "vendor_dispatch",
        "route one op back to its vendor library, keep Inductor's other kernels",
        offline=True,
    ),
    PlanAction(
        "fuse",
        "fuse named neighbouring kernels (or an epilogue into its producer) into one kernel",
        offline=False,
    ),
    PlanAction(
        "keep_baseline",
        "nothing around the vendor calls is worth changing: keep the reference's path",
        offline=False,
    ),
    PlanAction("rewrite", "a change described in free text in the plan's rationale", False),
    PlanAction(
        "graph_rewrite",
        "rewrite the reference's FX graph (a named rule of agents/rewrites) and harvest it",
        offline=True,
    ),
    PlanAction(
        "vendor_choice",
        "pick a vendor library's algorithm or call form by measurement (cuDNN's timed "
        "algorithm search, a GEMM bias as cuBLAS's C operand)",
        offline=True,
    ),
    PlanAction(
        "inductor_config",
        "harvest Inductor's code under another configuration (autotuning, fusion, reductions)",
        offline=True,
    ),
)
PLAN_ACTION_NAMES: tuple[str, ...] = tuple(a.name for a in PLAN_ACTIONS)


class PolicyError(Exception):
    """A policy cannot go on (no API key, the API failing after retries, a recording used up).

    The search ends cleanly with this one-line message; decided results are kept.
    """


@dataclass
class KernelUnit:
    """One harvested Triton sub-kernel, or a kept vendor call, as the agents see it."""

    name: str
    kind: str  # "triton" | "vendor" | "other"
    source: str = ""
    ops: list[str] = field(default_factory=list)
    share: float | None = None  # fraction of measured time, None where not measured
    ms: float | None = None
    bound: str | None = None  # "memory" | "compute" | None
    roofline_fraction: float | None = None
    #: The unit's FLOPs and bytes moved per forward, and the roofline's lower bound on its
    #: time (ms), where the dispatch map counted them: on the CPU, where nothing is timed,
    #: they weigh the units instead of a count.
    flops: int | None = None
    bytes: int | None = None
    bound_ms: float | None = None
    #: The vendor library behind a kept call ("cuBLAS", "cuDNN"), "" for the rest.
    library: str = ""
    #: Tensor argument shapes of the ATen op behind the unit (``[bias, mat1, mat2, out]`` for
    #: an ``addmm``), where the dispatch recorder saw them.
    shapes: list[list[int]] = field(default_factory=list)
    #: The same vendor call in other forms, timed alone at its shapes (GPU, ms; the dispatch
    #: map's ``alternatives``): ``{"as called": ..., "gemm_bias_operand": ...}``.
    alternatives: dict[str, float] = field(default_factory=dict)


@dataclass
class AgentContext:
    """Facts the search cannot change, given to every agent call."""

    problem: Problem
    device: str
    baselines: dict[str, float | None]  # name -> ms (None where not measured)
    kernels: list[KernelUnit]
    library_dominated: bool = False
    #: Harvest variants that route an op back to its vendor library: (label, source).
    dispatch_variants: list[tuple[str, str]] = field(default_factory=list)
    memory: list[ExperienceItem] = field(default_factory=list)
    #: What a person rejected in step mode, with the reason: the Planner reads these.
    rejections: list[str] = field(default_factory=list)
    #: A person's directions in words, given at step mode's pauses, oldest first: the Planner
    #: reads these (the offline one matches their words to the plans it knows).
    directions: list[str] = field(default_factory=list)
    iteration: int = 0
    #: Seconds left before the search's deadline (the nearer of ``--time-limit`` and the
    #: search's own time budget), refreshed by the search before every agent call; None when
    #: the search has no deadline. A policy reads it to skip moves too expensive to finish.
    budget_left: float | None = None
    #: How many variants the Tuner may propose: more when the search screens them together in
    #: one timed run and gates only the fastest (``search.SCREEN_VARIANTS``).
    tune_variants: int = 4
    #: Every plan id the search has given out in this run (replayed plans included). A plan
    #: id names one plan for the whole session; a Planner numbers new plans around these
    #: (:func:`plan_id_prefix`) and the search renames any that would reuse one.
    plan_ids: set[str] = field(default_factory=set)
    #: The GPU the search runs on, as the driver names it ("NVIDIA H100 80GB HBM3"); "" off
    #: the GPU. The roofline ranking names whose roofs it places kernels under.
    gpu: str = ""


def plan_id_prefix(parent_id: str, taken: set[str]) -> str:
    """Where the ids of a new round of plans for ``parent_id`` start, unused in ``taken``.

    The first planning of a parent numbers its plans ``{parent}.p0``, ``{parent}.p1``, ...;
    a later planning of the same parent (a later iteration, or a re-plan after a person's
    rejection) ``{parent}.r1.p0``, then ``{parent}.r2.p0``, and so on: readable, and never an
    older plan's id. The round comes from the ids already given out, so a resumed search that
    replays the recorded plans numbers its new ones as the original run did.
    """
    round_ = 0
    while True:
        prefix = f"{parent_id}.p" if round_ == 0 else f"{parent_id}.r{round_}.p"
        if not any(pid.startswith(prefix) for pid in taken):
            return prefix
        round_ += 1


@dataclass
class Bottleneck:
    """A sub-kernel that matters, and why."""

    kernel: str
    share: float | None
    bound: str | None
    note: str

    def to_dict(self) -> dict[str, Any]:
        """Plain data for events."""
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Bottleneck:
        """Read back :meth:`to_dict` output."""
        share = raw.get("share")
        return cls(
            kernel=str(raw.get("kernel", "")),
            share=None if share is None else float(share),
            bound=None if raw.get("bound") is None else str(raw["bound"]),
            note=str(raw.get("note", "")),
        )


@dataclass
class ProfileReport:
    """The Profiler's answer: what to work on, ranked."""

    bottlenecks: list[Bottleneck]
    summary: str

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the ``agent_finished`` event (replay reads it back)."""
        return {"bottlenecks": [b.to_dict() for b in self.bottlenecks], "summary": self.summary}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ProfileReport:
        """Read back :meth:`to_dict` output."""
        return cls(
            [Bottleneck.from_dict(b) for b in raw.get("bottlenecks", [])],
            str(raw.get("summary", "")),
        )


@dataclass
class Plan:
    """One concrete, minimal change to try.

    ``action`` is one of :data:`PLAN_ACTION_NAMES`; an LLM plan may use ``rewrite`` with free
    text in ``rationale``. ``params`` carries the transform's arguments.
    """

    id: str
    title: str
    rationale: str
    action: str
    targets: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for events."""
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Plan:
        """Read back :meth:`to_dict` output."""
        return cls(
            id=str(raw.get("id", "")),
            title=str(raw.get("title", "")),
            rationale=str(raw.get("rationale", "")),
            action=str(raw.get("action", "")),
            targets=[str(t) for t in raw.get("targets", [])],
            params=dict(raw.get("params", {})),
        )


@dataclass
class Edit:
    """The Executor's answer: a whole new candidate source, or why it could not make one."""

    source: str | None
    explanation: str
    dispatch_only: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the ``agent_finished`` event (replay reads it back)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Edit:
        """Read back :meth:`to_dict` output (extra keys, such as the plan id, are ignored)."""
        source = raw.get("source")
        return cls(
            None if source is None else str(source),
            str(raw.get("explanation", "")),
            bool(raw.get("dispatch_only", False)),
        )


@dataclass
class TuneProposal:
    """The Tuner's answer: variants of a candidate to measure (each a full source)."""

    variants: list[tuple[str, str]]  # (label, source)
    explanation: str

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the ``agent_finished`` event (replay reads it back)."""
        return {"variants": [list(v) for v in self.variants], "explanation": self.explanation}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> TuneProposal:
        """Read back :meth:`to_dict` output."""
        return cls(
            [(str(label), str(source)) for label, source in raw.get("variants", [])],
            str(raw.get("explanation", "")),
        )


@dataclass
class StepRecord:
    """What one search step did, for the Summarizer."""

    candidate: Candidate
    parent_source: str
    plan: Plan | None
    verdict: str
    speedup: float | None
    parent_speedup: float | None
    gate_details: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ExperienceItem:
    """A reusable lesson: what worked (or hurt) for which pattern."""

    pattern: str
    action: str
    outcome: float  # speedup of the step (child over parent)
    lesson: str
    problem: str = ""
    #: The op family the move targeted (``agents/op_families.py``): most of the time its
    #: units took. "" where it aimed at none, and in files written before the field.
    family: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the memory file and events."""
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ExperienceItem:
        """Read back :meth:`to_dict` output (the memory file, an ``experience`` event)."""
        return cls(
            pattern=str(raw.get("pattern", "")),
            action=str(raw.get("action", "")),
            outcome=float(raw["outcome"]),  # no default: a lesson without its outcome is noise
            lesson=str(raw.get("lesson", "")),
            problem=str(raw.get("problem", "")),
            family=str(raw.get("family", "")),
        )


@dataclass
class Summary:
    """The Summarizer's answer."""

    explanations: dict[str, str]  # candidate id -> plain-language explanation
    experience: list[ExperienceItem]

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the ``agent_finished`` event (replay reads it back)."""
        return {
            "explanations": dict(self.explanations),
            "experience": [e.to_dict() for e in self.experience],
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Summary:
        """Read back :meth:`to_dict` output."""
        return cls(
            {str(k): str(v) for k, v in raw.get("explanations", {}).items()},
            [ExperienceItem.from_dict(e) for e in raw.get("experience", [])],
        )


class AgentIO:
    """What one agent call may say while it works: streamed into the event stream."""

    def __init__(self, log: EventLog, agent: str, step: int) -> None:
        self.log = log
        self.agent = agent
        self.step = step
        self.usage: dict[str, float] = {}

    def text(self, delta: str) -> None:
        """Stream a piece of the agent's reasoning."""
        if delta:
            self.log.emit("agent_text", agent=self.agent, step=self.step, delta=delta)

    def tool_call(self, tool: str, payload: dict[str, Any]) -> None:
        """Record a structured tool call the agent made."""
        self.log.emit("tool_call", agent=self.agent, step=self.step, tool=tool, input=payload)

    def add_usage(self, **counts: float) -> None:
        """Accumulate token and cost counts (input_tokens, output_tokens, cost_usd, ...)."""
        for key, value in counts.items():
            self.usage[key] = self.usage.get(key, 0) + value


class Policy(Protocol):
    """The five roles. Every method may stream through ``io``; none may run candidate code."""

    name: str

    def profile(self, ctx: AgentContext, io: AgentIO) -> ProfileReport:
        """Profiler: rank what matters (Amdahl) and say memory- or compute-bound."""
        ...

    def plan(
        self, ctx: AgentContext, report: ProfileReport, parent: Candidate, n: int, io: AgentIO
    ) -> list[Plan]:
        """Planner: up to ``n`` concrete plans for improving ``parent``."""
        ...

    def execute(
        self,
        ctx: AgentContext,
        plan: Plan,
        parent: Candidate,
        feedback: str | None,
        io: AgentIO,
    ) -> Edit:
        """Executor: apply ``plan`` to ``parent``; ``feedback`` is the failing gate's diagnostic."""
        ...

    def tune(self, ctx: AgentContext, candidate: Candidate, io: AgentIO) -> TuneProposal:
        """Tuner: launch-configuration variants of ``candidate`` worth measuring."""
        ...

    def summarize(self, ctx: AgentContext, steps: list[StepRecord], io: AgentIO) -> Summary:
        """Summarizer: explain each step in plain words and distil reusable experience."""
        ...
