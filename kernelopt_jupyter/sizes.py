"""Problem sizes for the CPU tier: the one rule that shrinks a module problem to fit Triton's
interpreter (docs/problems.md, "Sizes on the CPU").

On the CPU every Triton program runs through the interpreter (about half a millisecond each),
so a problem at published sizes (KernelBench: inputs of several GB) is never gated. The rule:

* **What shrinks.** The module-level integer size constants of a module problem: top-level
  ``NAME = <int>`` assignments (``a = b = 256``, ``d, h, w = 16, 32, 32``, a constant
  expression such as ``1024 * 2``, and the ints of a tuple or list such as ``(32768,)``). A
  name bound more than once at the top level is left alone, and so is any constant of at most
  :data:`KEEP` or whose name says it is a window parameter (:data:`WINDOW`: kernel sizes,
  strides, padding, dilation).
* **When.** Only a problem too large for the interpreter: its input plus output elements, the
  largest tensor its forward makes, or its parameter and buffer elements, over
  :data:`ALREADY_SMALL` (counted on the meta device, nothing allocated). A problem within all
  three is left as written.
* **How.** The largest shrinkable constant (all constants tied with it at once) is halved,
  step by step, until the inputs plus outputs and the parameters are each within
  :data:`TARGET` elements, the largest tensor within a quarter of it (:data:`PEAK_SHARE`),
  and no shrunk constant exceeds :data:`SIDE`; never below
  :data:`FLOOR`. A divisibility that holds in the original between a constant and a constant
  that is kept, or a smaller one at a power-of-two ratio (``channels % groups``,
  ``embed_dim % num_heads``), is kept: the halved value is rounded down to a multiple (or a
  divisor) that keeps it. Every step is checked on the meta device (the model builds, the
  inputs are made, and the forward runs where it ran at published sizes); a step that fails,
  or that saves nothing a budget asks for, is undone and those constants stay where they are.
* **Checked for real.** The shrunk reference, ``Model(*get_init_inputs())(*get_inputs())``,
  runs once on the CPU. If it raises, the rule backs off and shrinks less (sixteen times the
  budget, four times the side); if that fails too the problem runs at its published sizes and
  the report says so.

The shrink never edits the file: the problem's *source text* is rewritten (only the literal
values of those assignments change) and carries a two-line header recording the published
values, so every process downstream (analysis, search, verifier, ``best.py``, export) runs the
same shrunk text, and :func:`published_source` gives the file's own text back. The rule is
deterministic: ``kernelopt verify PROBLEM best.py`` on the CPU shrinks the problem the same way
the search did.

``--sizes auto`` (the default) is ``small`` on the CPU and ``published`` on the GPU. Problems
that read ``KERNELOPT_SMALL`` (the bundled benchmark problems) shrink through that switch of
their own instead (:func:`shrink_for_cpu`).
"""

from __future__ import annotations

import ast
import dataclasses
import json
import math
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kernelopt_jupyter.problem import Problem

#: The ``--sizes`` choices.
SIZES = ("auto", "small", "published")
#: A problem whose input plus output elements, largest tensor made by its forward and
#: parameter elements are each at most this is already small: left as written.
ALREADY_SMALL = 1 << 20
#: What a shrunk problem aims at: inputs plus outputs, and parameters, each.
TARGET = 1 << 18
#: The largest tensor the forward makes aims at ``TARGET // PEAK_SHARE`` elements: Inductor
#: fuses what follows it (a pooling, a reduction) into kernels of many operations per
#: element, each one a numpy step per program in the interpreter.
PEAK_SHARE = 4
#: No shrunk constant stays above this (a matrix side: the interpreter's GEMM cost).
SIDE = 256
#: Constants at most this are never shrunk (kernel sizes, strides, groups, a reduced dim).
KEEP = 8
#: A shrunk constant never goes below this: a dimension of one changes what ``squeeze``,
#: broadcasting and batch statistics do.
FLOOR = 2
#: Name parts of window parameters, never shrunk at any value.
WINDOW = ("kernel", "stride", "pad", "dilation")
#: A step within :data:`SIDE` must save at least this share of what is over a budget (a
#: network's fixed weights are not shrunk by halving its class count).
SAVING = 0.01
#: The budgets tried in turn, (target, side): the rule, then shrinking less.
TRIES = ((TARGET, SIDE), (16 * TARGET, 4 * SIDE))
#: The problems' own switch (the bundled benchmark problems read it).
SMALL_ENV = "KERNELOPT_SMALL"

_HEADER = "# KernelOPT --sizes small: size constants shrunk for the CPU tier (docs/problems.md)."
_RECORD = "# kernelopt-published-sizes: "


class SizesError(ValueError):
    """An unknown ``--sizes`` value (a user error: one line)."""


@dataclass
class SizesReport:
    """Which sizes a problem runs at and why (``result.json``'s ``sizes``, the notices)."""

    requested: str = "auto"
    mode: str = "published"  # what runs: small | published
    #: constant -> [published, shrunk] (ints, or lists for a tuple's ints)
    changed: dict[str, list[Any]] = field(default_factory=dict)
    note: str = ""
    #: seconds the shrunk reference took to build and run once on the CPU (the check)
    check_s: float | None = None
    #: measured on the meta device, per side ("published", "small"): {"io": elements of the
    #: inputs and outputs, "peak": of the largest tensor the forward made, "params"}
    elements: dict[str, dict[str, int]] = field(default_factory=dict)
    #: small sizes were asked for, but the shrunk reference raised: published ones run
    fell_back: bool = False

    @property
    def worth_saying(self) -> bool:
        """Whether a command should say which sizes run (something shrank, or fell back)."""
        return bool(self.changed) or self.fell_back

    def to_dict(self) -> dict[str, Any]:
        """Plain data (result.json, the session_started event, ``--json`` outputs)."""
        return dataclasses.asdict(self)

    def describe(self) -> str:
        """One sentence for the opening notice."""
        if self.changed:
            moves = ", ".join(f"{k} {_text(a)} -> {_text(b)}" for k, (a, b) in self.changed.items())
            return f"Sizes: small (shrunk from the published sizes: {moves})."
        if self.mode == "small":
            return f"Sizes: small ({self.note or 'as written'})."
        return f"Sizes: published{f' ({self.note})' if self.note else ''}."


def _text(value: Any) -> str:
    return "(" + ", ".join(map(str, value)) + ")" if isinstance(value, list) else str(value)


def wanted_mode(requested: str, device: str) -> str:
    """``small`` or ``published`` for ``--sizes requested`` on ``device``."""
    if requested not in SIZES:
        raise SizesError(f"unknown sizes {requested!r}; use one of {', '.join(SIZES)}")
    if requested == "auto":
        return "small" if device == "cpu" else "published"
    return requested


# --------------------------------------------------------------------------- the constants


@dataclass(frozen=True)
class _Slot:
    """One shrinkable integer: a top-level assignment's value or one int of its tuple."""

    stmt: int  # index of the statement in the module body
    index: int | None  # element of a tuple/list value; None: the whole value
    names: tuple[str, ...]  # the names it is bound to
    value: int
    node: ast.expr  # the value's node (where its text is)

    @property
    def key(self) -> str:
        return self.names[0]

    @property
    def shrinkable(self) -> bool:
        return self.value > KEEP and not _window(self)


def _window(slot: _Slot) -> bool:
    """Whether the slot's name says it is a window parameter (kernel size, stride...)."""
    low = " ".join(slot.names).lower()
    return any(part in low for part in WINDOW)


_OPS: dict[type, Any] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b if b else None,
    ast.Pow: lambda a, b: a**b if 0 <= b <= 64 else None,
    ast.LShift: lambda a, b: a << b if 0 <= b <= 64 else None,
}


def _int_value(node: ast.expr) -> int | None:
    """The value of an integer literal or a constant expression of them (``1024 * 2``)."""
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) is int else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _int_value(node.operand)
        if inner is None:
            return None
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _int_value(node.left), _int_value(node.right)
        if left is None or right is None:
            return None
        value = _OPS[type(node.op)](left, right)
        return value if isinstance(value, int) and abs(value) < 1 << 62 else None
    return None


def _bound_names(tree: ast.Module) -> dict[str, int]:
    """How many times each name is bound by a top-level statement."""
    counts: dict[str, int] = {}

    def bind(name: str) -> None:
        counts[name] = counts.get(name, 0) + 1

    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bind(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                bind((alias.asname or alias.name).split(".")[0])
        else:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store | ast.Del):
                    bind(sub.id)
    return counts


def _slots_of(stmt: int, targets: list[ast.expr], value: ast.expr) -> list[_Slot]:
    if all(isinstance(t, ast.Name) for t in targets):
        names = tuple(t.id for t in targets if isinstance(t, ast.Name))
        whole = _int_value(value)
        if whole is not None:
            return [_Slot(stmt, None, names, whole, value)]
        if isinstance(value, ast.Tuple | ast.List):
            found = []
            for i, elt in enumerate(value.elts):
                number = _int_value(elt)
                if number is not None:
                    found.append(_Slot(stmt, i, tuple(f"{n}[{i}]" for n in names), number, elt))
            return found
        return []
    if len(targets) != 1 or not isinstance(targets[0], ast.Tuple | ast.List):
        return []
    names_node = targets[0].elts
    if not isinstance(value, ast.Tuple | ast.List) or len(value.elts) != len(names_node):
        return []
    found = []
    for target, elt in zip(names_node, value.elts, strict=True):
        number = _int_value(elt)
        if isinstance(target, ast.Name) and number is not None:
            found.append(_Slot(stmt, None, (target.id,), number, elt))
    return found


def size_slots(source: str) -> list[_Slot]:
    """The module-level integer constants the rule may shrink (and those it keeps), in file
    order. Names bound more than once at the top level, and ``KERNELOPT_*``, are left out."""
    tree = ast.parse(source)
    counts = _bound_names(tree)
    slots: list[_Slot] = []
    for i, node in enumerate(tree.body):
        if isinstance(node, ast.Assign):
            slots += _slots_of(i, list(node.targets), node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None and node.simple:
            slots += _slots_of(i, [node.target], node.value)
    return [
        s
        for s in slots
        if all(counts.get(n.split("[")[0], 0) == 1 for n in s.names)
        and not any(n.startswith("KERNELOPT_") for n in s.names)
    ]


def _offsets(source: str) -> list[int]:
    """Character offset of each line's start (1-based line numbers index it)."""
    starts, total = [0, 0], 0
    for line in source.splitlines(keepends=True):
        total += len(line)
        starts.append(total)
    return starts


def _char(source_lines: list[str], starts: list[int], line: int, col: int) -> int:
    """The character offset of an AST (line, UTF-8 byte column) position."""
    text = source_lines[line - 1] if line - 1 < len(source_lines) else ""
    return starts[line] + len(text.encode()[:col].decode(errors="ignore"))


def _replace(source: str, edits: dict[int, str], slots: list[_Slot]) -> str:
    """``source`` with each slot's value text replaced (``edits``: slot index -> text)."""
    lines = source.splitlines(keepends=True)
    starts = _offsets(source)
    spans = []
    for i, text in edits.items():
        node = slots[i].node
        assert node.end_lineno is not None and node.end_col_offset is not None
        begin = _char(lines, starts, node.lineno, node.col_offset)
        end = _char(lines, starts, node.end_lineno, node.end_col_offset)
        spans.append((begin, end, text))
    for begin, end, text in sorted(spans, reverse=True):
        source = source[:begin] + text + source[end:]
    return source


def _strip_header(source: str) -> tuple[str, dict[str, str]]:
    """``source`` without the shrink's header, and the published value texts it recorded."""
    lines = source.splitlines(keepends=True)
    if len(lines) < 2 or not lines[0].startswith(_HEADER) or not lines[1].startswith(_RECORD):
        return source, {}
    try:
        record = json.loads(lines[1][len(_RECORD) :])
    except json.JSONDecodeError:
        return source, {}
    if not isinstance(record, dict):
        return source, {}
    return "".join(lines[2:]), {str(k): str(v) for k, v in record.items()}


def published_source(source: str) -> str:
    """The problem's own text back from a shrunk one (unchanged when it was not shrunk)."""
    body, record = _strip_header(source)
    if not record:
        return source
    slots = size_slots(body)
    edits = {i: record[s.key] for i, s in enumerate(slots) if s.key in record}
    return _replace(body, edits, slots)


def shrunk_source(source: str, values: dict[int, int]) -> str:
    """``source`` (published) with the slots' new ``values`` and the header recording the
    published value texts."""
    slots = size_slots(source)
    edits = {i: str(v) for i, v in values.items() if v != slots[i].value}
    if not edits:
        return source
    record = {slots[i].key: ast.get_source_segment(source, slots[i].node) for i in sorted(edits)}
    header = _HEADER + "\n" + _RECORD + json.dumps(record) + "\n"
    return header + _replace(source, edits, slots)


# --------------------------------------------------------------------------- measuring


#: Seconds the forward may take on the meta device (where a recurrent network's steps are
#: decomposed one by one in Python: minutes at published sizes); past it the forward is not
#: counted or checked at that step.
META_FORWARD_S = 1.0


@dataclass
class _Measure:
    io: int  # elements of the inputs and outputs
    params: int  # elements of the parameters and buffers
    forward: str  # on the meta device the forward: ran | raised | slow
    peak: int = 0  # elements of the largest tensor an operator of the forward made

    def budgets(self) -> tuple[int, int, int]:
        """What the budgets bound: inputs plus outputs, the largest tensor, parameters."""
        return self.io, self.peak, self.params

    def to_dict(self) -> dict[str, int]:
        return {"io": self.io, "peak": self.peak, "params": self.params}


class _TooSlow(Exception):
    pass


def _deadline_mode(seconds: float) -> Any:
    """A dispatch mode that raises ``_TooSlow`` at the first operator past ``seconds`` and
    keeps the element count of the largest tensor an operator made (``peak``): an
    intermediate (a transposed convolution's output before a pooling) can dwarf the inputs
    and outputs, and the interpreter runs every element of it."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Deadline(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.end = time.monotonic() + seconds
            self.peak = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            if time.monotonic() > self.end:
                raise _TooSlow
            out = func(*args, **(kwargs or {}))
            made = out if isinstance(out, list | tuple) else (out,)
            self.peak = max([self.peak, *(_numel(t) for t in made)])
            return out

    return Deadline()


def _numel(value: Any) -> int:
    import torch

    if isinstance(value, torch.Tensor):
        return int(value.numel())
    if isinstance(value, list | tuple):
        return sum(_numel(v) for v in value)
    if isinstance(value, dict):
        return sum(_numel(v) for v in value.values())
    return 0


_WARM: list[bool] = []


def _warm_up() -> None:
    """One operator under the deadline mode, unmeasured: its first use imports and sets up
    what later calls reuse (seconds on a loaded machine, which a deadline would count)."""
    if _WARM:
        return
    import torch

    try:
        with torch.no_grad(), _deadline_mode(60.0):
            (torch.ones(2, 2, device="meta") @ torch.ones(2, 2, device="meta")).sum()
    except Exception:
        pass
    _WARM.append(True)


def _measure(problem: Problem, source: str) -> _Measure:
    """Elements of the inputs, outputs and parameters of ``source`` on the meta device;
    raises when the model cannot be built or its inputs made there."""
    import torch

    from kernelopt_jupyter.problem import materialize

    loaded = materialize(dataclasses.replace(problem, source=source))
    inputs = loaded.make_inputs(seed=0, device="meta")
    model = loaded.make_model("meta")
    params = sum(p.numel() for p in model.parameters()) + sum(b.numel() for b in model.buffers())
    io = _numel(inputs)
    forward = "ran"
    _warm_up()
    mode = _deadline_mode(META_FORWARD_S)
    try:
        with torch.no_grad(), mode:
            io += _numel(model(*inputs))
    except _TooSlow:
        forward = "slow"
    except Exception:
        forward = "raised"
    return _Measure(io, int(params), forward, int(mode.peak))


def _check_runs(problem: Problem) -> tuple[str | None, float]:
    """Run the reference once on the CPU: (None or the error in one line, seconds)."""
    import torch

    from kernelopt_jupyter.problem import materialize

    start = time.monotonic()
    try:
        loaded = materialize(problem)
        model = loaded.make_model("cpu")
        inputs = loaded.make_inputs(seed=0, device="cpu")
        with torch.no_grad():
            model(*inputs)
    except Exception as exc:
        detail = " ".join(str(exc).split())[:200]
        return f"{type(exc).__name__}: {detail}", time.monotonic() - start
    return None, time.monotonic() - start


# --------------------------------------------------------------------------- the rule


def _relations(slots: list[_Slot]) -> list[tuple[int, int]]:
    """(a, b): slot a must stay a multiple of slot b, as in the original. Only where b is kept,
    or shrinks too and a is b times a power of two (a coincidence such as 480 % 10 is not a
    relation)."""
    found = []
    for a, big in enumerate(slots):
        for b, small in enumerate(slots):
            if a == b or not (big.value > small.value > 1) or big.value % small.value:
                continue
            if _window(small):
                continue  # a spatial size that a kernel size divides: a coincidence
            ratio = big.value // small.value
            if not small.shrinkable or ratio & (ratio - 1) == 0:
                found.append((a, b))
    return found


def _halved(members: list[int], values: list[int], relations: list[tuple[int, int]]) -> int | None:
    """The shared new value of ``members`` (all at the same value): the largest at most half
    of it (rounded up) that keeps every relation to the other constants, or None."""
    group = set(members)
    multiple_of = [values[b] for a, b in relations if a in group and b not in group]
    divides = [values[a] for a, b in relations if b in group and a not in group]
    step = math.lcm(*multiple_of) if multiple_of else 1
    common = math.gcd(*divides) if divides else 0
    candidate = (values[members[0]] + 1) // 2 // step * step
    while candidate >= FLOOR:
        if common == 0 or common % candidate == 0:
            return candidate
        candidate -= step
    return None


def _step(
    members: list[int],
    values: list[int],
    relations: list[tuple[int, int]],
    attempt: Any,
) -> bool:
    """Halve ``members``: keeping their relations where a value can, else plainly (the meta
    check then decides whether the relation mattered); whether a step was taken."""
    kept = _halved(members, values, relations)
    if kept is not None:
        return bool(attempt(members, kept))
    plain = _halved(members, values, [])
    return plain is not None and bool(attempt(members, plain))


def _plan(
    problem: Problem, slots: list[_Slot], base: _Measure, target: int, side: int
) -> tuple[list[int], _Measure]:
    """The rule's halving steps from the published values, each checked on the meta device."""
    values = [s.value for s in slots]
    relations = _relations(slots)
    frozen = {i for i, s in enumerate(slots) if not s.shrinkable}
    current = base
    # inputs plus outputs, the largest tensor (what a fused kernel runs over), parameters
    limits = (target, target // PEAK_SHARE, target)

    def over(m: _Measure) -> int:
        return sum(max(0, v - limit) for v, limit in zip(m.budgets(), limits, strict=True))

    def saves(before: _Measure, after: _Measure) -> bool:
        """Whether a step saves a share of an over-budget measure (inputs plus outputs, the
        largest tensor, or parameters) worth taking."""
        return any(
            old > limit and old - new >= SAVING * (old - limit)
            for old, new, limit in zip(before.budgets(), after.budgets(), limits, strict=True)
        )

    def attempt(members: list[int], value: int) -> bool:
        nonlocal values, current
        proposal = list(values)
        for i in members:
            proposal[i] = value
        try:
            measured = _measure(problem, shrunk_source(problem.source, dict(enumerate(proposal))))
        except Exception:
            return False
        if measured.forward == "raised" and base.forward != "raised":
            return False  # the forward ran (or was not seen to fail) at published sizes
        if values[members[0]] <= side and not saves(current, measured):
            return False  # saves (next to) nothing a budget asks for
        values, current = proposal, measured
        return True

    while True:
        live = [i for i in range(len(slots)) if i not in frozen and values[i] > FLOOR]
        if not live:
            break
        top = max(values[i] for i in live)
        if not over(current) and top <= side:
            break
        group = sorted(i for i in live if values[i] == top)
        if _step(group, values, relations, attempt):
            continue
        if len(group) == 1:
            frozen.update(group)
            continue
        for i in group:  # one at a time, where the group as a whole could not move
            if not _step([i], values, relations, attempt):
                frozen.add(i)
    return values, current


_MEMO: dict[tuple[str, str, str], tuple[str, SizesReport]] = {}


def small_source(problem: Problem) -> tuple[str, SizesReport]:
    """The rule applied to ``problem`` (at its published sizes): the source it runs at and
    the report. Memoised per process (the check runs the reference)."""
    memo_key = (problem.source, problem.path, problem.mode)
    if memo_key in _MEMO:
        source, report = _MEMO[memo_key]
        return source, dataclasses.replace(report, changed=dict(report.changed))
    source, report = _small_source(problem)
    _MEMO[memo_key] = (source, report)
    return source, dataclasses.replace(report, changed=dict(report.changed))


def _small_source(problem: Problem) -> tuple[str, SizesReport]:
    report = SizesReport(mode="small")
    if problem.kind != "module":
        report.mode, report.note = "published", "the size rule applies to module problems only"
        return problem.source, report
    if SMALL_ENV in problem.source:
        report.note = f"the problem's own {SMALL_ENV} switch"
        return problem.source, report
    try:
        slots = size_slots(problem.source)
        base = _measure(problem, problem.source)
    except Exception as exc:
        report.mode = "published"
        report.note = f"not shrunk: the problem could not be measured ({type(exc).__name__})"
        return problem.source, report
    published = base.to_dict()
    report.elements = {"published": published}
    if max(base.budgets()) <= ALREADY_SMALL:
        report.note = "already within the interpreter's budget; as written"
        return problem.source, report
    errors: list[str] = []
    tried: set[tuple[int, ...]] = set()
    for target, side in TRIES:
        values, measured = _plan(problem, slots, base, target, side)
        if tuple(values) in tried:
            continue
        tried.add(tuple(values))
        if values == [s.value for s in slots]:
            report.note = "no size constant could shrink; as written"
            return problem.source, report
        source = shrunk_source(problem.source, dict(enumerate(values)))
        error, seconds = _check_runs(dataclasses.replace(problem, source=source))
        if error is None:
            report.changed = _changes(slots, values)
            report.check_s = round(seconds, 3)
            report.elements["small"] = measured.to_dict()
            if target != TARGET:
                report.note = f"shrunk less: at the rule's sizes the reference raised {errors[0]}"
            return source, report
        errors.append(error)
    report.mode, report.fell_back = "published", True
    report.note = f"runs at the published sizes: shrunk, the reference raised {errors[-1]}"
    return problem.source, report


def _changes(slots: list[_Slot], values: list[int]) -> dict[str, list[Any]]:
    """constant -> [published, shrunk], a tuple's ints gathered under its name."""
    changed: dict[str, list[Any]] = {}
    tuples: dict[str, tuple[list[int], list[int]]] = {}
    for slot, value in zip(slots, values, strict=True):
        for label in slot.names:  # ``h = w = 512``: both names
            if slot.index is None:
                if value != slot.value:
                    changed[label] = [slot.value, value]
                continue
            old, new = tuples.setdefault(label.split("[")[0], ([], []))
            old.append(slot.value)
            new.append(value)
    for name, (old, new) in tuples.items():
        if old != new:
            changed[name] = [old, new]
    return changed


def resolve_sizes(problem: Problem, requested: str, device: str) -> tuple[Problem, SizesReport]:
    """``problem`` at the sizes ``--sizes requested`` gives on ``device`` (``auto``: small on
    the CPU, published on the GPU), and the report. A problem already shrunk (its source
    carries the header) is first given its published sizes back, so this is idempotent."""
    mode = wanted_mode(requested, device)
    own = published_source(problem.source)
    base = problem if own == problem.source else dataclasses.replace(problem, source=own)
    if mode == "published":
        report = SizesReport(requested=requested, mode="published")
        if SMALL_ENV in own:
            report.note = f"unless {SMALL_ENV}=1 is set"
    else:
        source, report = small_source(base)
        report.requested = requested
        if source != own:
            base = dataclasses.replace(base, source=source)
    meta = {**base.meta, "sizes": report.to_dict()}
    return dataclasses.replace(base, meta=meta), report


def shrink_for_cpu(source: str, device: str, sizes: str = "auto") -> str | None:
    """For a problem that reads ``KERNELOPT_SMALL`` (the bundled benchmark problems): turn the
    switch on where the sizes are small (``auto``: on the CPU) and say so; None when nothing
    changed. Call it before the problem is loaded: loading draws its inputs."""
    if SMALL_ENV not in source or os.environ.get(SMALL_ENV):
        return None
    if wanted_mode(sizes, device) != "small":
        return None
    os.environ[SMALL_ENV] = "1"  # workers inherit it (KERNELOPT_* passes their env filter)
    where = "on the CPU " if device == "cpu" else ""
    return (
        f"{SMALL_ENV}=1 set: {where}this problem runs at its small sizes (Triton's "
        "interpreter runs one program at a time); unset it by setting it to 0"
    )


def switch_for_file(path: str, device: str, sizes: str = "auto") -> str | None:
    """:func:`shrink_for_cpu` for a problem file; None when it cannot be read (loading it
    then says why, in its one-line error)."""
    from pathlib import Path

    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError):
        return None
    return shrink_for_cpu(text, device, sizes)
