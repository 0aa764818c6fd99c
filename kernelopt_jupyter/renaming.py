"""Renaming a module's top-level class through its syntax tree, with the text kept as written.

Candidates are built from other people's sources (a problem's ``class Model``, a candidate's
``ModelNew``), which name their class wherever Python allows: ``super(Model, self)``,
``Model.forward(self, x)``, ``isinstance(x, Model)``, a default argument, a decorator. A
rename by regular expression on the text finds some of those and misses others, and it cannot
tell a reference from a string, a comment, an attribute (``self.Model``) or a longer name
(``ModelFacts``). :func:`rename_class` renames the class definition and every reference that
resolves to it, as Python resolves names, by editing the text at the positions the syntax tree
gives: comments, strings and formatting stay as written.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator

__all__ = ["RenameError", "defines_class", "rename_class"]

_FUNCTION = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSION = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_SCOPES = (*_FUNCTION, ast.ClassDef, *_COMPREHENSION)
_IDENTIFIER = re.compile(r"[^\W\d]\w*")


class RenameError(ValueError):
    """The class cannot be renamed in this source (absent, the new name taken, no parse)."""


def defines_class(source: str, name: str) -> bool:
    """Whether ``source`` parses and defines a top-level class ``name``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return any(isinstance(n, ast.ClassDef) and n.name == name for n in tree.body)


def rename_class(source: str, old: str, new: str) -> str:
    """``source`` with its top-level ``class old`` renamed ``new``, and every name that refers to
    it: ``super(old, self)``, ``old.forward(...)``, ``isinstance(x, old)``, module-level uses.

    Only identifiers that Python resolves to the module-level ``old`` change; a local variable
    or parameter of that name, an attribute ``obj.old``, a keyword argument ``old=...``, a
    string or a comment mentioning it, and longer identifiers containing it stay as they are.
    Raises :class:`RenameError` when the source does not parse, defines no top-level class
    ``old``, or already binds ``new`` at module level.
    """
    if not (_IDENTIFIER.fullmatch(old) and _IDENTIFIER.fullmatch(new)):
        raise RenameError(f"cannot rename {old!r} to {new!r}: both must be identifiers")
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise RenameError(f"the source does not parse (line {exc.lineno}: {exc.msg})") from None
    if not any(isinstance(n, ast.ClassDef) and n.name == old for n in tree.body):
        raise RenameError(f"the source defines no top-level class {old}")
    if old == new:
        return source
    if new in _bound_here(tree.body):
        raise RenameError(f"the source already defines {new} at module level")
    edits = list(_Collector(source, old, new).collect(tree))
    text = _apply(source, edits)
    check = ast.parse(text)
    if not any(isinstance(n, ast.ClassDef) and n.name == new for n in check.body):
        raise RenameError(f"renaming {old} to {new} left no class {new}")  # pragma: no cover
    return text


# --------------------------------------------------------------------------- scopes


def _scope_children(node: ast.AST) -> Iterator[ast.AST]:
    """What runs in ``node``'s own scope: its children, minus the bodies of nested scopes (their
    names, decorators, defaults and bases still belong to this scope)."""
    for child in ast.iter_child_nodes(node):
        yield child
        if not isinstance(child, _SCOPES):
            yield from _scope_children(child)
        else:
            yield from _outer_parts(child)


def _outer_parts(node: ast.AST) -> Iterator[ast.AST]:
    """The parts of a nested scope that the enclosing scope evaluates, walked whole."""
    parts: list[ast.AST] = []
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        parts += [*node.decorator_list, *_defaults(node.args), *_annotations(node)]
    elif isinstance(node, ast.Lambda):
        parts += _defaults(node.args)
    elif isinstance(node, ast.ClassDef):
        parts += [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
    elif isinstance(node, _COMPREHENSION):
        parts.append(node.generators[0].iter)
    for part in parts:
        yield part
        if not isinstance(part, _SCOPES):
            yield from _scope_children(part)
        else:
            yield from _outer_parts(part)


def _defaults(args: ast.arguments) -> list[ast.expr]:
    return [*args.defaults, *(d for d in args.kw_defaults if d is not None)]


def _annotations(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    args = node.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    found = [a.annotation for a in every if a is not None and a.annotation is not None]
    return [*found, *([node.returns] if node.returns is not None else [])]


def _bound_names(nodes: Iterable[ast.AST]) -> set[str]:
    """Names that the given nodes (one scope's own) bind."""
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    return names


def _bound_here(body: list[ast.stmt]) -> set[str]:
    module = ast.Module(body=body, type_ignores=[])
    return _bound_names(_scope_children(module))


def _declared(nodes: Iterable[ast.AST], kind: type[ast.Global] | type[ast.Nonlocal]) -> set[str]:
    return {name for n in nodes if isinstance(n, kind) for name in n.names}


def _arg_names(args: ast.arguments) -> set[str]:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return {a.arg for a in every if a is not None}


# --------------------------------------------------------------------------- edits

#: One replacement: (line, byte column, end line, end byte column, new text); lines from 1.
_Edit = tuple[int, int, int, int, str]


class _Collector:
    """Finds every place to edit: names resolving to the module's ``old``, its definitions."""

    def __init__(self, source: str, old: str, new: str) -> None:
        self.lines = _lines(source)
        self.old = old
        self.new = new

    def collect(self, tree: ast.Module) -> Iterator[_Edit]:
        yield from self._scope(tree, here=True, enclosing=True)

    def _scope(self, scope: ast.AST, *, here: bool, enclosing: bool) -> Iterator[_Edit]:
        """Edits in ``scope``'s own code; ``here``: whether a free ``old`` in it is the module's
        class; ``enclosing``: the same for functions nested in it (a class body's names are not
        seen by its methods)."""
        for node in _scope_children(scope):
            if isinstance(node, ast.Name) and node.id == self.old and here:
                yield self._name(node)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                if node.name == self.old and here:
                    yield self._definition(node)
            elif isinstance(node, ast.alias) and here:
                if (node.asname or node.name.split(".")[0]) == self.old and "." not in node.name:
                    yield self._alias(node)
            elif isinstance(node, ast.Global) and self.old in node.names:
                yield self._declaration(node)  # always the module's name
            if isinstance(node, _SCOPES):
                yield from self._nested(node, enclosing)

    def _nested(self, node: ast.AST, outer: bool) -> Iterator[_Edit]:
        """The body of a nested scope, ``outer`` saying what a free ``old`` is where it sits."""
        body = _body(node)
        own = list(_scope_children(_Body(body)))
        if isinstance(node, ast.ClassDef):
            local = self.old in _bound_names(own)
            here = (outer and not local) or self.old in _declared(own, ast.Global)
            yield from self._scope(_Body(body), here=here, enclosing=outer)
            return
        if self.old in _declared(own, ast.Global):
            here = True
        elif self.old in _declared(own, ast.Nonlocal):
            here = outer
        else:
            bound = _bound_names(own)
            if isinstance(node, _FUNCTION):
                bound |= _arg_names(node.args)
            here = outer and self.old not in bound
        yield from self._scope(_Body(body), here=here, enclosing=here)

    # ---- one edit each

    def _segment(self, line: int, col: int, end_line: int, end_col: int) -> str:
        if line == end_line:
            return self.lines[line - 1][col:end_col].decode()
        parts = [self.lines[line - 1][col:]]
        parts += self.lines[line : end_line - 1]
        parts.append(self.lines[end_line - 1][:end_col])
        return b"".join(parts).decode()

    def _name(self, node: ast.Name) -> _Edit:
        assert node.end_lineno is not None and node.end_col_offset is not None
        span = (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)
        if self._segment(*span) != self.old:
            # Python 3.11 gives some f-string fields no true position.
            raise RenameError(
                f"cannot place the reference to {self.old} on line {node.lineno} (inside an "
                "f-string?): rename it by hand"
            )
        return (*span, self.new)

    def _definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> _Edit:
        line = self.lines[node.lineno - 1]
        found = re.compile(
            rb"(?:async\s+)?(?:def|class)\s+(" + re.escape(node.name.encode()) + rb")\b"
        )
        match = found.match(line, node.col_offset)
        if match is None:
            raise RenameError(f"cannot place the definition of {node.name} on line {node.lineno}")
        return (node.lineno, match.start(1), node.lineno, match.end(1), self.new)

    def _alias(self, node: ast.alias) -> _Edit:
        assert node.end_lineno is not None and node.end_col_offset is not None
        return (
            node.lineno,
            node.col_offset,
            node.end_lineno,
            node.end_col_offset,
            f"{node.name} as {self.new}",
        )

    def _declaration(self, node: ast.Global | ast.Nonlocal) -> _Edit:
        assert node.end_lineno is not None and node.end_col_offset is not None
        word = "global" if isinstance(node, ast.Global) else "nonlocal"
        names = ", ".join(self.new if n == self.old else n for n in node.names)
        return (
            node.lineno,
            node.col_offset,
            node.end_lineno,
            node.end_col_offset,
            f"{word} {names}",
        )


class _Body(ast.AST):
    """A scope's statements as one node, so they are walked as that scope's own code."""

    _fields = ("body",)

    def __init__(self, body: list[ast.stmt]) -> None:
        super().__init__()
        self.body = body


def _body(node: ast.AST) -> list[ast.stmt]:
    """A nested scope's own code as statements: a def's or class's body, a lambda's expression,
    a comprehension's targets, conditions, later iterables and element."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return list(node.body)
    if isinstance(node, ast.Lambda):
        return [ast.Expr(node.body)]
    assert isinstance(node, _COMPREHENSION)
    parts: list[ast.expr] = []
    for number, gen in enumerate(node.generators):
        parts += [gen.target, *gen.ifs, *([gen.iter] if number else [])]
    parts += [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
    return [ast.Expr(p) for p in parts]


def _lines(source: str) -> list[bytes]:
    """The source's lines as UTF-8 bytes, split where Python's tokenizer ends a line."""
    return [line.encode() for line in re.split(r"(?<=\r\n)|(?<=\r)(?!\n)|(?<=\n)", source)]


def _apply(source: str, edits: list[_Edit]) -> str:
    starts = [0]
    for text_line in _lines(source):
        starts.append(starts[-1] + len(text_line))
    data = source.encode()
    seen: set[tuple[int, int]] = set()
    for line, col, end_line, end_col, text in sorted(edits, reverse=True):
        if (line, col) in seen:
            continue
        seen.add((line, col))
        start = starts[line - 1] + col
        end = starts[end_line - 1] + end_col
        data = data[:start] + text.encode() + data[end:]
    return data.decode()
