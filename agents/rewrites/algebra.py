"""Exact tensor algebra by equality saturation: the ``algebra`` rewrite.

The canonical FX graph (``canonical.py``) is lifted into an e-graph (``egraph.py``): matrix
products and linear layers, arithmetic by tensors and scalars, sum/mean/amax/amin, softmax and
log_softmax, transposes, squeeze/unsqueeze/reshape by literal sizes, and elementwise functions
become e-nodes; placeholders, parameters, Python numbers and every op the engine does not model
are leaves. The rules in :data:`RULES` add the equal terms they prove, each in one of the two
exactness classes of ``rules.py`` (its docstring says which). Because they act on the lifted
terms, not on FX spellings, they fire however the user wrote the op, and they compose: a scale
moved into a weight, a mean folded through the GEMM, and a maximum over a size-1 dimension
dropped are three steps of one saturation.

Extraction picks, per e-class, the term of least estimated cost (:func:`node_cost`: FLOPs,
bytes moved and launches, from the propagated shapes). A region (a connected part of the lifted
graph) is lowered back to FX only where that cost falls by :data:`MIN_GAIN` of the region's
cost, so a rewrite with no gain changes nothing. Weight-only subterms (``W.sum(0)``, ``W * c``)
are computed from the parameters, never copied, so a candidate stays right when its
``state_dict`` is reloaded (the eager candidate derives them once per load, ``derive.py``).

Shapes decide a rule (a dimension of size 1, a bias that spans the reduced dimension) but are
never written into the rewritten graph, except where the user's own reshape wrote them.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from kernelopt_jupyter.agents.rewrites.algebra_rules import RULES
from kernelopt_jupyter.agents.rewrites.algebra_terms import (
    BINARY,
    REDUCE,
    new_graph,
    node_cost,
    torch_call,
)
from kernelopt_jupyter.agents.rewrites.canonical import UNARY
from kernelopt_jupyter.agents.rewrites.egraph import (
    EGraph,
    ENode,
    Invalid,
    Saturation,
    extract,
    saturate,
    selection_cost,
)
from kernelopt_jupyter.agents.rewrites.graph import cleanup, module_of, plain_torch_layer, scalar

__all__ = ["RULES", "algebra", "lift", "node_cost", "rewrite"]

#: A region is rewritten only where its estimated cost falls by at least this fraction.
MIN_GAIN = 0.10
#: Saturation limits: e-nodes in the graph, and rule-application rounds.
MAX_NODES = 20_000
MAX_ITERATIONS = 12


# --------------------------------------------------------------------------- lifting from FX


@dataclass
class Lifted:
    """The e-graph of a canonical FX graph: the class of each lifted node, its e-node as
    lifted, and the FX value each leaf stands for."""

    graph: EGraph
    classes: dict[fx.Node, int]
    enodes: dict[fx.Node, ENode]
    leaves: dict[str, Any]  # leaf key -> an fx.Node, or a get_attr target (str)
    operands: dict[fx.Node, list[Any]]  # what each lifted node reads, in e-node order


def _tensor_meta(node: Any) -> Any:
    return node.meta.get("tensor_meta") if isinstance(node, fx.Node) else None


def _rank(value: Any) -> int:
    """The propagated rank of a tensor operand; -1 (no dimension index fits) when unknown."""
    meta = _tensor_meta(value)
    shape = getattr(meta, "shape", None)
    return len(shape) if shape is not None else -1


def _floating(node: Any) -> bool:
    meta = _tensor_meta(node)
    dtype = getattr(meta, "dtype", None)
    return dtype is not None and dtype.is_floating_point and not dtype.is_complex


def _term(gm: fx.GraphModule, node: fx.Node) -> tuple[str, Any, list[Any]] | None:
    """``(op, attrs, operands)`` of a node the engine models; operands are FX values (an
    ``("attr", target)`` pair for a layer's parameter); None for any other node."""
    args, kw = node.args, node.kwargs
    if node.op == "call_module":
        mod = module_of(gm, node)
        if isinstance(mod, nn.Linear) and plain_torch_layer(mod) and len(args) == 1 and not kw:
            t = str(node.target)
            bias = [("attr", f"{t}.bias")] if mod.bias is not None else []
            return "linear", (), [args[0], ("attr", f"{t}.weight"), *bias]
        return None
    views = {torch.squeeze: "squeeze", torch.unsqueeze: "unsqueeze", torch.reshape: "reshape"}
    if node.op == "call_method" or (node.op == "call_function" and node.target in views):
        # The function forms are what this rewrite writes back: a later pass reads them too.
        target = views.get(node.target, node.target)  # type: ignore[arg-type]
        if target == "squeeze" and len(args) == 2 and not kw:
            dims = args[1] if isinstance(args[1], tuple) else (args[1],)
            rank = _rank(args[0])
            if all(type(d) is int and -rank <= d < rank for d in dims):
                return "squeeze", tuple(sorted({d % rank for d in dims})), [args[0]]
        if target == "unsqueeze" and len(args) == 2 and type(args[1]) is int and not kw:
            rank = _rank(args[0]) + 1
            return ("unsqueeze", args[1] % rank, [args[0]]) if -rank <= args[1] < rank else None
        if target in ("reshape", "view") and len(args) >= 2 and not kw:
            sizes = args[1] if len(args) == 2 and isinstance(args[1], tuple | list) else args[1:]
            if all(type(v) is int for v in sizes):
                return "reshape", tuple(sizes), [args[0]]
        return None
    if node.op != "call_function":
        return None
    fn = node.target
    for name, op in BINARY.items():
        if fn is op and len(args) == 2 and not kw:
            return name, (), list(args)
    if fn is operator.neg and len(args) == 1 and not kw:
        return "neg", (), list(args)
    for name, unary in UNARY.items():
        if fn is unary and len(args) == 1 and not kw:
            return "fn", (name, ()), [args[0]]
    numbers = all(v is None or scalar(v) is not None for v in args[1:])
    if fn is torch.clamp and len(args) == 3 and not kw and numbers:
        return "fn", ("clamp", tuple(args[1:])), [args[0]]
    if fn is F.leaky_relu and len(args) == 1 and set(kw) == {"negative_slope"}:
        slope = scalar(kw["negative_slope"])
        return ("fn", ("leaky_relu", (slope,)), [args[0]]) if slope is not None else None
    for kind, red in REDUCE.items():
        if fn is red and not kw:
            if len(args) == 1:
                return "reduce", (kind, None, False), [args[0]]
            if len(args) == 3 and isinstance(args[1], tuple) and isinstance(args[2], bool):
                return "reduce", (kind, tuple(args[1]), args[2]), [args[0]]
    dims = args[1:] if len(args) >= 2 else ()
    fixed = all(type(d) is int and d >= 0 for d in dims)  # canonical: non-negative
    if fn in (torch.softmax, torch.log_softmax) and len(args) == 2 and not kw and fixed:
        return "softmax", (fn.__name__, args[1]), [args[0]]
    if fn is torch.matmul and len(args) == 2 and not kw:
        return "matmul", (), list(args)
    if fn is F.linear and not kw and len(args) in (2, 3):
        return "linear", (), [a for a in args if a is not None]
    if fn is torch.transpose and len(args) == 3 and not kw and fixed:
        return "transpose", tuple(args[1:]), [args[0]]
    return None


def lift(gm: fx.GraphModule) -> Lifted:
    """The e-graph of ``gm``'s modeled nodes (shapes must have been propagated)."""
    eg = new_graph()
    lifted = Lifted(eg, {}, {}, {}, {})

    def operand(value: Any, dtype: Any) -> int:
        if isinstance(value, tuple) and len(value) == 2 and value[0] == "attr":
            param = gm.get_parameter(value[1]) if value[1] else None
            assert param is not None
            if param.dtype != dtype:
                raise Invalid("another dtype")
            lifted.leaves[value[1]] = value[1]
            return eg.add("leaf", ("attr", value[1], tuple(param.shape), True))
        if isinstance(value, fx.Node):
            if value in lifted.classes:
                return lifted.classes[value]
            meta = _tensor_meta(value)
            if meta is None or getattr(meta, "dtype", None) != dtype:
                raise Invalid("not a tensor of the op's dtype")
            lifted.leaves[value.name] = value
            shape = tuple(int(s) for s in meta.shape)
            return eg.add("leaf", ("node", value.name, shape, value.op == "get_attr"))
        number = scalar(value)
        if number is None:
            raise Invalid("not a tensor or a number")
        return eg.add("const", (number,))

    for node in gm.graph.nodes:
        if not _floating(node):
            continue
        term = _term(gm, node)
        if term is None:
            continue
        op, attrs, operands = term
        dtype = _tensor_meta(node).dtype
        try:
            children = tuple(operand(v, dtype) for v in operands)
            cid = eg.add(op, attrs, children)
        except Invalid:
            continue
        if eg.data(cid).shape != tuple(int(s) for s in _tensor_meta(node).shape):
            continue  # the engine reads this op differently from torch: leave it alone
        lifted.classes[node] = cid
        lifted.enodes[node] = eg.canonical(ENode(op, attrs, children))
        lifted.operands[node] = operands
    return lifted


# --------------------------------------------------------------------------- lowering to FX


def _regions(lifted: Lifted) -> list[list[fx.Node]]:
    """The lifted nodes in connected groups (edges between lifted nodes), in graph order."""
    owner: dict[fx.Node, fx.Node] = {n: n for n in lifted.classes}

    def find(n: fx.Node) -> fx.Node:
        while owner[n] is not n:
            owner[n] = owner[owner[n]]
            n = owner[n]
        return n

    for node in lifted.classes:
        for arg in node.all_input_nodes:
            if arg in owner:
                owner[find(arg)] = find(node)
    groups: dict[fx.Node, list[fx.Node]] = {}
    for node in lifted.classes:
        groups.setdefault(find(node), []).append(node)
    return list(groups.values())


@dataclass
class _Lowering:
    """Writes extracted terms into the FX graph, reusing an original node wherever the term
    is the one that node computes from the same operands."""

    gm: fx.GraphModule
    lifted: Lifted
    choice: dict[int, ENode]
    origin: dict[int, fx.Node]
    position: dict[fx.Node, int]
    made: dict[int, Any] = field(default_factory=dict)
    active: set[int] = field(default_factory=set)
    limit: int = 0  # the position every reused node must precede

    def value(self, cid: int) -> Any:
        """The FX value (a node or a number) computing class ``cid``'s chosen term."""
        eg = self.lifted.graph
        cid = eg.find(cid)
        if cid in self.made:
            return self.made[cid]
        node = self.choice.get(cid)
        if node is None or cid in self.active:
            raise Invalid("no finite term")
        if node.op == "const":
            return node.attrs[0]  # type: ignore[index]
        if node.op == "leaf":
            kind, key = node.attrs[:2]  # type: ignore[index]
            if kind == "attr":
                leaf = self.gm.graph.get_attr(key)
            else:
                leaf = self._reuse(self.lifted.leaves[key])
            self.made[cid] = leaf
            return leaf
        self.active.add(cid)
        args = [self.value(c) for c in node.children]
        self.active.discard(cid)
        old = self.origin.get(cid)
        if (
            old is not None
            and eg.canonical(self.lifted.enodes[old]) == node
            and all(self._same(a, o) for a, o in zip(args, self.lifted.operands[old], strict=True))
        ):
            self.made[cid] = self._reuse(old)
            return old
        g = self.gm.graph
        if node.op == "ones":
            zero = g.call_function(operator.mul, (args[0], 0.0))
            new = g.call_function(operator.add, (zero, 1.0))
        elif node.op == "zeros":
            new = g.call_function(operator.sub, (args[0], args[0]))
        else:
            fn, call_args = torch_call(node.op, node.attrs, args)
            new = g.call_function(fn, call_args)
        self.made[cid] = new
        return new

    @staticmethod
    def _same(value: Any, operand: Any) -> bool:
        """Whether a lowered child is the operand the original node reads."""
        if isinstance(operand, tuple):  # a layer's own parameter
            return (
                isinstance(value, fx.Node)
                and value.op == "get_attr"
                and (value.target == operand[1])
            )
        if isinstance(operand, fx.Node):
            return value is operand
        return not isinstance(value, fx.Node) and value == operand

    def _reuse(self, node: fx.Node) -> fx.Node:
        if self.position.get(node, -1) >= self.limit:
            raise Invalid(f"{node.name} comes after the value it would compute")
        return node


def rewrite(gm: fx.GraphModule) -> tuple[int, Saturation | None]:
    """Simplify ``gm`` (canonical, shapes propagated) in place: the number of regions
    rewritten, and what saturation did (None when nothing was lifted)."""
    lifted = lift(gm)
    if not lifted.classes:
        return 0, None
    eg = lifted.graph
    sat = saturate(eg, RULES, max_iterations=MAX_ITERATIONS, max_nodes=MAX_NODES)
    origin: dict[int, fx.Node] = {}
    for node, cid in lifted.classes.items():
        origin.setdefault(eg.find(cid), node)
    originals = {eg.canonical(e) for e in lifted.enodes.values()}
    choice = extract(eg, node_cost, prefer=lambda n: n in originals)
    position = {n: i for i, n in enumerate(gm.graph.nodes)}
    count = 0
    for region in _regions(lifted):
        inside = set(region)
        roots = [n for n in region if any(u not in inside for u in n.users)]
        before = sum(node_cost(eg, eg.canonical(lifted.enodes[n])) for n in region)
        after = selection_cost(eg, [lifted.classes[n] for n in roots], choice, node_cost)
        if before <= 0.0 or after > (1.0 - MIN_GAIN) * before:
            continue  # no material gain: the region stays as written
        if _lower_region(gm, lifted, roots, choice, origin, position):
            count += 1
    if count:
        cleanup(gm)
    return count, sat


def _lower_region(
    gm: fx.GraphModule,
    lifted: Lifted,
    roots: list[fx.Node],
    choice: dict[int, ENode],
    origin: dict[int, fx.Node],
    position: dict[fx.Node, int],
) -> bool:
    """Write the extracted terms of ``roots`` into ``gm`` before each root; False (nothing
    replaced; what was written is dead code) where a term would read a later value or is a
    number."""
    lowering = _Lowering(gm, lifted, choice, origin, position)
    replaced: list[tuple[fx.Node, fx.Node]] = []
    try:
        for root in roots:
            lowering.limit = position[root] + 1
            with gm.graph.inserting_before(root):
                new = lowering.value(lifted.classes[root])
            if not isinstance(new, fx.Node):
                return False
            if new is not root:
                replaced.append((root, new))
    except Invalid:
        return False
    for root, new in replaced:
        root.replace_all_uses_with(new)
    return bool(replaced)


def algebra(gm: fx.GraphModule) -> int:
    """The ``algebra`` rewrite: equality saturation over the lifted tensor algebra, the
    cheapest equivalent written back where it is at least ``MIN_GAIN`` cheaper.

    Faster: whatever the extracted term saves under the cost model (a GEMM turned into a
    matrix-vector product, a pass removed, a function run on a reduced tensor). A
    reassociation: the rules are bit-exact or reorder the same sums and products
    (:data:`RULES` says which), which the float64 referee accepts.
    """
    return rewrite(gm)[0]
