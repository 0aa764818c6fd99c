"""A small equality-saturation engine: an e-graph with pattern rules and cheapest extraction.

An e-graph stores many equivalent terms at once. Each *e-class* is a set of *e-nodes* (an
operator, its constant attributes, and child e-classes) that compute the same value; a
union-find merges classes that rules prove equal, and :meth:`EGraph.rebuild` restores
congruence (two e-nodes with the same operator, attributes and children are the same value, so
their classes merge too). Rules are patterns with variables plus a Python right-hand side that
checks side conditions and builds the equal term; :func:`saturate` applies every rule to every
match until nothing changes or a node/iteration limit is hit; :func:`extract` picks, per class,
the e-node of least total cost.

Pure Python and independent of torch: the tensor algebra (operators, shapes, costs) is in
``algebra.py``. The design follows the *egg* paper (Willsey et al., POPL 2021): deferred
rebuilding, per-class analysis data joined on merge.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple


class ENode(NamedTuple):
    """An operator applied to child e-classes (ids), with hashable constant attributes."""

    op: str
    attrs: Hashable
    children: tuple[int, ...]


@dataclass
class EClass:
    """The e-nodes of one class, the e-nodes that use it, and its analysis data."""

    nodes: set[ENode]
    parents: list[tuple[ENode, int]]
    data: Any


class Invalid(Exception):
    """A rule's right-hand side does not apply (a side condition or a shape failed)."""


@dataclass
class EGraph:
    """Hash-consed e-nodes in union-find classes, with analysis data per class.

    ``make(graph, enode)`` computes the data of a new e-node's class (its children are
    canonical); it raises :class:`Invalid` when the node is ill-formed (it is then not added).
    ``join(a, b)`` combines the data of two classes that merge.
    """

    make: Callable[[EGraph, ENode], Any]
    join: Callable[[Any, Any], Any]
    parent: list[int] = field(default_factory=list)
    classes: dict[int, EClass] = field(default_factory=dict)
    memo: dict[ENode, int] = field(default_factory=dict)
    pending: list[int] = field(default_factory=list)
    #: Merges done since the graph was built (a rule application that merges nothing new
    #: changed nothing).
    unions: int = 0

    def find(self, cid: int) -> int:
        """The canonical id of ``cid``'s class (with path halving)."""
        parent = self.parent
        while parent[cid] != cid:
            parent[cid] = parent[parent[cid]]
            cid = parent[cid]
        return cid

    def canonical(self, node: ENode) -> ENode:
        """``node`` with its children replaced by their canonical ids."""
        return ENode(node.op, node.attrs, tuple(self.find(c) for c in node.children))

    def add(self, op: str, attrs: Hashable = (), children: tuple[int, ...] = ()) -> int:
        """The class of ``op(attrs)(children)``: an existing one (hash-consing) or a new one;
        :class:`Invalid` when ``make`` refuses the node."""
        node = self.canonical(ENode(op, attrs, children))
        found = self.memo.get(node)
        if found is not None:
            return self.find(found)
        data = self.make(self, node)
        cid = len(self.parent)
        self.parent.append(cid)
        self.classes[cid] = EClass({node}, [], data)
        self.memo[node] = cid
        for child in node.children:
            self.classes[child].parents.append((node, cid))
        return cid

    def data(self, cid: int) -> Any:
        """The analysis data of ``cid``'s class."""
        return self.classes[self.find(cid)].data

    def nodes(self, cid: int) -> set[ENode]:
        """The e-nodes of ``cid``'s class."""
        return self.classes[self.find(cid)].nodes

    def merge(self, a: int, b: int) -> int:
        """Union the classes of ``a`` and ``b`` (congruence is restored by :meth:`rebuild`)."""
        a, b = self.find(a), self.find(b)
        if a == b:
            return a
        ca, cb = self.classes[a], self.classes[b]
        if len(ca.parents) < len(cb.parents):  # keep the class with more users as the root
            a, b, ca, cb = b, a, cb, ca
        self.parent[b] = a
        ca.nodes |= cb.nodes
        ca.parents += cb.parents
        ca.data = self.join(ca.data, cb.data)
        del self.classes[b]
        self.pending.append(a)
        self.unions += 1
        return a

    def rebuild(self) -> None:
        """Restore the invariants after merges: canonical e-nodes in the hash-cons and in
        every class, and congruent e-nodes in one class."""
        while self.pending:
            todo = {self.find(c) for c in self.pending}
            self.pending = []
            for cid in todo:
                self._repair(self.find(cid))
        for eclass in self.classes.values():
            eclass.nodes = {self.canonical(n) for n in eclass.nodes}

    def _repair(self, cid: int) -> None:
        eclass = self.classes[cid]
        parents = eclass.parents
        snapshot = list(parents)
        for node, owner in snapshot:
            self.memo.pop(node, None)
            self.memo[self.canonical(node)] = self.find(owner)
        seen: dict[ENode, int] = {}
        for node, owner in snapshot:
            canon = self.canonical(node)
            if canon in seen:
                self.merge(seen[canon], owner)
            seen[canon] = self.find(owner)
        # A merge above may have appended this class's list in place (it stays pending).
        eclass.parents = list(seen.items()) + parents[len(snapshot) :]

    def size(self) -> int:
        """The number of e-nodes."""
        return len(self.memo)


# --------------------------------------------------------------------------- patterns


@dataclass(frozen=True)
class Var:
    """A pattern variable: binds an e-class (as a child) or an attribute value."""

    name: str


#: A pattern's attributes that match anything (and bind nothing).
ANY: Any = object()


@dataclass(frozen=True)
class Pat:
    """``op(children)`` with attributes ``attrs`` (a literal, a :class:`Var`, or ``ANY``)."""

    op: str
    children: tuple[Pat | Var, ...] = ()
    attrs: Any = ANY


Subst = dict[str, Any]


def ematch(graph: EGraph, pattern: Pat | Var, cid: int, subst: Subst) -> Iterator[Subst]:
    """Every way ``pattern`` matches a term of class ``cid``, extending ``subst``."""
    cid = graph.find(cid)
    if isinstance(pattern, Var):
        bound = subst.get(pattern.name)
        if bound is None:
            yield {**subst, pattern.name: cid}
        elif graph.find(bound) == cid:
            yield subst
        return
    for node in list(graph.nodes(cid)):
        if node.op != pattern.op or len(node.children) != len(pattern.children):
            continue
        start = subst
        if isinstance(pattern.attrs, Var):
            bound = subst.get(pattern.attrs.name, ANY)
            if bound is ANY:
                start = {**subst, pattern.attrs.name: node.attrs}
            elif bound != node.attrs:
                continue
        elif pattern.attrs is not ANY and pattern.attrs != node.attrs:
            continue
        yield from _match_children(graph, pattern.children, node.children, start)


def _match_children(
    graph: EGraph, patterns: tuple[Pat | Var, ...], children: tuple[int, ...], subst: Subst
) -> Iterator[Subst]:
    if not patterns:
        yield subst
        return
    for found in ematch(graph, patterns[0], children[0], subst):
        yield from _match_children(graph, patterns[1:], children[1:], found)


@dataclass(frozen=True)
class Rule:
    """``lhs => rhs``: ``rhs(graph, subst, root)`` returns the class equal to the match of
    class ``root`` (it may add e-nodes), or raises :class:`Invalid` where a side condition fails. ``exact`` is the rule's
    exactness class (``bit-exact`` or ``reassociation``)."""

    name: str
    exact: str
    lhs: Pat
    rhs: Callable[[EGraph, Subst, int], int]


@dataclass
class Saturation:
    """What :func:`saturate` did: iterations run, whether it reached a fixed point (False:
    a limit stopped it), and how often each rule merged a new equality."""

    iterations: int = 0
    saturated: bool = False
    fired: dict[str, int] = field(default_factory=dict)


def saturate(
    graph: EGraph, rules: list[Rule], *, max_iterations: int = 12, max_nodes: int = 20_000
) -> Saturation:
    """Apply every rule to every match (all matches read first, then applied, then one
    rebuild) until an iteration changes nothing or a limit is reached."""
    result = Saturation()
    for _ in range(max_iterations):
        result.iterations += 1
        by_op: dict[str, list[int]] = {}
        for cid, eclass in graph.classes.items():
            for op in {n.op for n in eclass.nodes}:
                by_op.setdefault(op, []).append(cid)
        matches: list[tuple[Rule, int, Subst]] = []
        for rule in rules:
            for cid in by_op.get(rule.lhs.op, ()):
                matches.extend((rule, cid, s) for s in ematch(graph, rule.lhs, cid, {}))
        before = (graph.size(), graph.unions)
        for rule, cid, subst in matches:
            if graph.size() > max_nodes:
                graph.rebuild()
                return result
            try:
                new = rule.rhs(graph, subst, cid)
            except Invalid:
                continue
            if graph.find(new) != graph.find(cid):
                graph.merge(cid, new)
                result.fired[rule.name] = result.fired.get(rule.name, 0) + 1
        graph.rebuild()
        if (graph.size(), graph.unions) == before:
            result.saturated = True
            return result
    return result


# --------------------------------------------------------------------------- extraction


def extract(
    graph: EGraph,
    cost: Callable[[EGraph, ENode], float],
    prefer: Callable[[ENode], bool] = lambda node: False,
) -> dict[int, ENode]:
    """The cheapest e-node of every class whose terms are finite: the one minimising its own
    ``cost`` plus its children's best costs (a tree cost: a shared child counts once per
    use), ties broken toward ``prefer``-red e-nodes, then toward fewer children."""
    best: dict[int, tuple[tuple[float, int, int], ENode]] = {}
    changed = True
    while changed:
        changed = False
        for cid, eclass in graph.classes.items():
            for node in eclass.nodes:
                if not all(c in best for c in node.children):
                    continue
                total = cost(graph, node) + sum(best[c][0][0] for c in node.children)
                key = (total, 0 if prefer(node) else 1, len(node.children))
                old = best.get(cid)
                if old is None or key < old[0]:
                    best[cid] = (key, node)
                    changed = True
    return {cid: node for cid, (_, node) in best.items()}


def selection_cost(
    graph: EGraph,
    roots: list[int],
    choice: dict[int, ENode],
    cost: Callable[[EGraph, ENode], float],
) -> float:
    """The cost of computing ``roots`` with the chosen e-nodes, each class counted once (a
    shared subterm is computed once, as in the lowered graph)."""
    seen: set[int] = set()
    total = 0.0
    todo = [graph.find(r) for r in roots]
    while todo:
        cid = todo.pop()
        if cid in seen:
            continue
        seen.add(cid)
        node = choice[cid]
        total += cost(graph, node)
        todo.extend(node.children)
    return total
