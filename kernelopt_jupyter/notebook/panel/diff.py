"""Side-by-side, syntax-highlighted diffs of candidate sources, Triton kernels first.

Sources are split into top-level blocks (functions, classes, the rest) with ``ast``; blocks are
paired by name and each pair is diffed on its own, so a change inside a ``@triton.jit`` kernel
is shown at the top however the file is ordered. The output is one self-contained HTML string
(inline styles: it must survive in a saved notebook without our CSS).
"""

from __future__ import annotations

import ast
import difflib
import html
from dataclasses import dataclass

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

_COLORS = {"del": "#ffebe9", "add": "#e6ffec", "chg_old": "#ffebe9", "chg_new": "#e6ffec"}


@dataclass(frozen=True)
class Block:
    """A top-level piece of a source file."""

    name: str
    kind: str  # "triton" | "function" | "class" | "module"
    text: str


def _is_triton(node: ast.AST) -> bool:
    if not isinstance(node, ast.FunctionDef):
        return False
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = ast.unparse(target)
        if name.endswith("jit") or "autotune" in name or "heuristics" in name:
            return True
    return False


def split_blocks(source: str) -> list[Block]:
    """Top-level blocks of ``source``; unparsable text is one ``module`` block."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return [Block("<module>", "module", source)]
    lines = source.splitlines(keepends=True)
    blocks: list[Block] = []
    rest: list[str] = []
    cursor = 0
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
        end = node.end_lineno or node.lineno
        rest.extend(lines[cursor:start])
        if isinstance(node, ast.ClassDef):
            kind = "class"
        else:
            kind = "triton" if _is_triton(node) else "function"
        blocks.append(Block(node.name, kind, "".join(lines[start:end])))
        cursor = end
    rest.extend(lines[cursor:])
    module_text = "".join(rest).strip("\n")
    if module_text:
        blocks.append(Block("<module>", "module", module_text + "\n"))
    return blocks


_ORDER = {"triton": 0, "class": 1, "function": 2, "module": 3}


def paired_blocks(old: str, new: str) -> list[tuple[str, str, str, str]]:
    """(name, kind, old text, new text) for every block of either side, Triton kernels first."""
    old_blocks = {b.name: b for b in split_blocks(old)}
    new_blocks = {b.name: b for b in split_blocks(new)}
    # A candidate's ModelNew is the reference's Model rewritten: diff them against each other.
    if "ModelNew" in new_blocks and "ModelNew" not in old_blocks and "Model" in old_blocks:
        old_blocks["ModelNew"] = old_blocks.pop("Model")
    names = list(dict.fromkeys([*new_blocks, *old_blocks]))
    pairs = []
    for name in names:
        o, n = old_blocks.get(name), new_blocks.get(name)
        kind = (n or o).kind  # type: ignore[union-attr]
        pairs.append((name, kind, o.text if o else "", n.text if n else ""))
    pairs.sort(key=lambda p: _ORDER.get(p[1], 9))
    return pairs


def _highlight_lines(text: str) -> list[str]:
    if not text:
        return []
    formatter = HtmlFormatter(nowrap=True, noclasses=True, style="default")
    out = highlight(text, PythonLexer(stripnl=False, ensurenl=False), formatter)
    lines = out.split("\n")
    want = len(text.splitlines())
    return (lines + [""] * want)[:want]


def _cell(number: int | None, code: str, color: str | None) -> str:
    bg = f"background:{color};" if color else ""
    num = "" if number is None else str(number)
    return (
        f'<td style="{bg}color:#888;text-align:right;padding:0 6px;user-select:none">{num}</td>'
        f'<td style="{bg}white-space:pre-wrap;word-break:break-all;padding:0 6px;font-family:monospace">{code}</td>'
    )


def side_by_side(
    old: str, new: str, old_label: str = "parent", new_label: str = "candidate", context: int = 3
) -> str:
    """HTML of a side-by-side diff of two sources, block by block, Triton kernels first."""
    sections = []
    changed_any = False
    for name, kind, o, n in paired_blocks(old, new):
        if o == n:
            continue
        changed_any = True
        sections.append(_block_table(name, kind, o, n, context))
    head = (
        '<div class="kernelopt-diff-html" style="font-size:12px">'
        f"<div style='display:flex;font-weight:bold'><div style='flex:1'>{html.escape(old_label)}"
        f"</div><div style='flex:1'>{html.escape(new_label)}</div></div>"
    )
    if not changed_any:
        return head + "<div style='color:#666;padding:4px'>no changes</div></div>"
    return head + "".join(sections) + "</div>"


def _block_table(name: str, kind: str, old: str, new: str, context: int) -> str:
    old_lines, new_lines = old.splitlines(), new.splitlines()
    old_hl, new_hl = _highlight_lines(old), _highlight_lines(new)
    tag = {"triton": "Triton kernel", "class": "class", "function": "function"}.get(kind, "")
    title = "module level" if name == "<module>" else f"{tag} {name}"
    if not old:
        title += " (added)"
    elif not new:
        title += " (removed)"
    rows = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        rows.append('<tr><td colspan="4" style="color:#888;background:#f6f8fa">⋯</td></tr>')
        for op, i1, i2, j1, j2 in group:
            if op == "equal":
                for k in range(i2 - i1):
                    rows.append(
                        "<tr>"
                        + _cell(i1 + k + 1, old_hl[i1 + k], None)
                        + _cell(j1 + k + 1, new_hl[j1 + k], None)
                        + "</tr>"
                    )
                continue
            span = max(i2 - i1, j2 - j1)
            for k in range(span):
                left = (
                    _cell(i1 + k + 1, old_hl[i1 + k], _COLORS["del"])
                    if i1 + k < i2
                    else _cell(None, "", None)
                )
                right = (
                    _cell(j1 + k + 1, new_hl[j1 + k], _COLORS["add"])
                    if j1 + k < j2
                    else _cell(None, "", None)
                )
                rows.append(f"<tr>{left}{right}</tr>")
    return (
        f"<div style='margin-top:6px;font-weight:bold;font-family:sans-serif'>"
        f"{html.escape(title)}</div>"
        "<table style='border-collapse:collapse;width:100%;table-layout:fixed'>"
        "<colgroup><col style='width:3em'><col><col style='width:3em'><col></colgroup>"
        + "".join(rows)
        + "</table>"
    )
