"""Weights derived once per load: the weight-only part of a rewritten forward hoisted out of it.

A fold (BatchNorm into a conv, constant chains into a linear, a reduction into a weight) leaves
computations in the forward that read only parameters and buffers: ``rsqrt(var + eps) * gamma``,
``W * s``, ``W.sum(0)``. Run on every call they cost a handful of small kernel launches (and,
for a weight reduction, a pass over the whole weight) per forward, which can eat the fold's
gain on a launch-bound model. :func:`hoist_derived` splits such a graph in two:

* ``_kernelopt_derive``: the weight-only nodes, computing the derived tensors;
* the forward, which first calls ``_refresh_derived_weights`` and then reads the derived tensors.

``_refresh_derived_weights`` re-derives only when a source parameter or buffer changed: its key is each
source's device, dtype, shape, storage address and version counter (``load_state_dict`` copies
in place, which bumps the version; ``.to()`` moves the storage). So the derived weights follow
every reload, as the verifier's weight-reload check demands, without being recomputed per call.
A re-derivation writes into the previous tensors where their layout allows, so a CUDA graph
captured over the forward keeps reading valid memory (the graph wrapper calls the refresh
before each replay). Views (``t()``, ``reshape``, ``contiguous``...) of a weight are not hoisted:
they cost nothing and writing into them would write into the parameter itself.

Exactness: bit-exact with respect to the per-call derivation (the same operations on the same
values, computed once instead of per call).
"""

from __future__ import annotations

import operator
import textwrap

import torch
import torch.fx as fx

#: Ops that return a view or metadata of their input (or may return the input itself): not
#: hoisted; they are re-evaluated in the forward on the hoisted or parameter value.
_VIEWISH = {
    "t",
    "transpose",
    "permute",
    "reshape",
    "view",
    "unsqueeze",
    "squeeze",
    "flatten",
    "unflatten",
    "expand",
    "expand_as",
    "contiguous",
    "detach",
    "to",
    "float",
    "type_as",
    "size",
    "dim",
    "chunk",
    "split",
    "narrow",
    "select",
}
_VIEWISH_FUNCTIONS = {
    operator.getitem,
    getattr,
    torch.t,
    torch.transpose,
    torch.permute,
    torch.reshape,
    torch.unsqueeze,
    torch.squeeze,
    torch.flatten,
    torch.chunk,
    torch.split,
    torch.narrow,
    torch.select,
    torch.detach,
}
#: Calls whose result is not a function of their inputs alone.
_IMPURE = {torch.rand, torch.randn, torch.randint, torch.rand_like, torch.randn_like}

KEY_HELPER = '''
def _kernelopt_keep(old, new):
    """``new`` written into ``old`` where the layout matches (stable addresses), else ``new``."""
    if (
        isinstance(old, torch.Tensor)
        and isinstance(new, torch.Tensor)
        and old.shape == new.shape
        and old.dtype == new.dtype
        and old.device == new.device
        and old.stride() == new.stride()
    ):
        old.copy_(new)
        return old
    return new


def _kernelopt_state_key(tensors):
    """What identifies the state derived weights come from: layout, object and version (not
    the address: a candidate that reads raw addresses on the CPU makes that memory host data
    for the verifier)."""
    return tuple(
        (t.device, t.dtype, tuple(t.shape), id(t), t._version)
        if isinstance(t, torch.Tensor)
        else t
        for t in tensors
    )
'''


def _is_viewish(node: fx.Node) -> bool:
    if node.op == "call_method":
        return str(node.target) in _VIEWISH
    return node.op == "call_function" and node.target in _VIEWISH_FUNCTIONS


def _inputs(node: fx.Node) -> list[fx.Node]:
    return list(node.all_input_nodes)


def _static_nodes(g: fx.Graph) -> set[fx.Node]:
    """Nodes whose value depends on parameters and buffers only (no input, no randomness)."""
    static: set[fx.Node] = set()
    for node in g.nodes:
        if node.op == "get_attr":
            static.add(node)
        elif node.op in ("call_function", "call_method") and node.target not in _IMPURE:
            ins = _inputs(node)
            if ins and all(n in static for n in ins):
                static.add(node)
    return static


class Hoisted:
    """A forward split into its weight-only part and the rest (graphs to render)."""

    def __init__(self, derive: fx.Graph, sources: fx.Graph, main: fx.Graph, count: int) -> None:
        self.derive, self.sources, self.main, self.count = derive, sources, main, count

    def members(self, derive_body: str, sources_body: str) -> str:
        """Class attributes and methods, given the rendered derive and sources ``def`` texts."""
        names = [f"self._kernelopt_derived_{i}" for i in range(self.count)]
        attrs = "\n".join(f"_kernelopt_derived_{i} = None" for i in range(self.count))
        olds = ", ".join(names) + ("," if self.count == 1 else "")
        refresh = textwrap.dedent(
            f'''
            def {REFRESH}(self):
                """Re-derive the hoisted weights when a parameter or buffer they read changed."""
                key = _kernelopt_state_key(self._kernelopt_sources())
                if key == self._kernelopt_key:
                    return
                with torch.no_grad():
                    values = self._kernelopt_derive()
                    old = ({olds})
                    values = tuple(_kernelopt_keep(o, v) for o, v in zip(old, values))
                {olds} = values
                self._kernelopt_key = key
            '''
        ).strip("\n")
        return "\n\n".join(
            [
                "_kernelopt_key = None\n" + attrs,
                _renamed(sources_body, "_kernelopt_sources"),
                _renamed(derive_body, "_kernelopt_derive"),
                refresh,
            ]
        )

    @staticmethod
    def forward(main_body: str) -> str:
        """The rendered forward with the refresh as its first statement."""
        lines = main_body.strip("\n").splitlines()
        head = next(i for i, ln in enumerate(lines) if ln.rstrip().endswith(":"))
        return "\n".join([*lines[: head + 1], f"    self.{REFRESH}()", *lines[head + 1 :]])


#: The refresh method's name; the CUDA-graph wrapper (agents/transforms.py) calls a method of
#: this name before every replay when the candidate defines one.
REFRESH = "_refresh_derived_weights"


def hoist_derived(gm: fx.GraphModule) -> Hoisted | None:
    """The forward with its weight-only work hoisted into a cached derivation; None: nothing to
    hoist (no computation reads only parameters and buffers)."""
    g = gm.graph
    static = _static_nodes(g)
    # A static value the forward itself needs: used by an input-dependent node, or viewed by
    # a view the forward needs (walked from the end, users before their inputs).
    in_main: set[fx.Node] = set()
    for n in reversed(list(g.nodes)):
        if n in static and any(
            u not in static or (_is_viewish(u) and u in in_main) for u in n.users
        ):
            in_main.add(n)
    crossing = [n for n in g.nodes if n in in_main and n.op != "get_attr" and not _is_viewish(n)]
    if not crossing:
        return None
    needed: set[fx.Node] = set()
    stack = list(crossing)
    while stack:
        n = stack.pop()
        if n not in needed:
            needed.add(n)
            stack.extend(_inputs(n))
    derive = fx.Graph()
    env: dict[fx.Node, fx.Node] = {}
    for n in g.nodes:
        if n in needed:
            env[n] = derive.node_copy(n, lambda x: env[x])
    derive.output(tuple(env[n] for n in crossing))
    sources = fx.Graph()
    sources.output(
        tuple(
            sources.get_attr(str(n.target)) for n in g.nodes if n in needed and n.op == "get_attr"
        )
    )
    main = fx.Graph()
    menv: dict[fx.Node, fx.Node] = {}
    index = {n: i for i, n in enumerate(crossing)}
    for n in g.nodes:
        if n in index:
            menv[n] = main.get_attr(f"_kernelopt_derived_{index[n]}")
        elif n in static and n not in in_main:
            continue  # feeds only hoisted nodes
        else:
            menv[n] = main.node_copy(n, lambda x: menv[x])
    return Hoisted(derive, sources, main, len(crossing))


def _renamed(code: str, name: str) -> str:
    """An FX ``def forward(self...)`` renamed to ``name``."""
    return code.strip("\n").replace("def forward(self", f"def {name}(self", 1)


def helper_text() -> str:
    """The module-level helpers a hoisted candidate needs (plain torch, no KernelOPT import)."""
    return KEY_HELPER.strip("\n")
