"""The ``LAUNCH_CONFIGS`` codec: the one reader and writer of a candidate's launch settings.

The convention (docs/engine.md, "Editable candidates"): a candidate's Triton launch
configurations live in ONE module-level dict literal,

    LAUNCH_CONFIGS = {
        "kernel_name": {"XBLOCK": 1024, "num_warps": 4, "num_stages": 1},
    }

keys are kernel names, values map a setting (a block-size constexpr, ``num_warps``,
``num_stages``) to a positive integer. The harvest writes it, the Tuner and the Executor rewrite
only it. Every module that reads or writes the dict goes through here, so the rules cannot drift.

API:

- ``read_launch_configs(source) -> LaunchConfigs``: the dict, ``{}`` when the source has none.
- ``format_launch_configs(configs) -> str``: the ``LAUNCH_CONFIGS = {...}`` statement text.
- ``write_launch_configs(source, configs) -> str``: ``source`` with the literal replaced.
- ``has_launch_configs(source) -> bool``.
- ``LaunchConfigError``: the source's dict breaks the convention (not a literal, not a dict of
  dicts of integers, unparsable source) or there is no dict to rewrite.
"""

from __future__ import annotations

import ast

LaunchConfigs = dict[str, dict[str, int]]

NAME = "LAUNCH_CONFIGS"


class LaunchConfigError(ValueError):
    """A candidate's ``LAUNCH_CONFIGS`` breaks the convention, or there is none to rewrite."""


def _parse(source: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise LaunchConfigError(f"source does not parse (line {exc.lineno}): {exc.msg}") from None


def _node(tree: ast.Module) -> ast.Assign | None:
    # Only a module-level plain assignment counts: a dict built inside a function or mutated
    # later would not be what the launches read at import time.
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == NAME for t in node.targets
        ):
            return node
    return None


def _checked(value: object) -> LaunchConfigs:
    if not isinstance(value, dict):
        raise LaunchConfigError(f"{NAME} is not a dict")
    out: LaunchConfigs = {}
    for kernel, cfg in value.items():
        if not isinstance(kernel, str):
            raise LaunchConfigError(f"{NAME} key {kernel!r} is not a kernel name")
        if not isinstance(cfg, dict):
            raise LaunchConfigError(f"{NAME}[{kernel!r}] is not a dict of settings")
        settings: dict[str, int] = {}
        for key, number in cfg.items():
            # bool is an int subclass; True as a block size is a typo, not a setting.
            if not isinstance(key, str) or isinstance(number, bool) or not isinstance(number, int):
                raise LaunchConfigError(
                    f"{NAME}[{kernel!r}][{key!r}] = {number!r} is not a named integer setting"
                )
            if number < 1:
                raise LaunchConfigError(f"{NAME}[{kernel!r}][{key!r}] = {number} is not positive")
            settings[key] = number
        out[kernel] = settings
    return out


def has_launch_configs(source: str) -> bool:
    """Whether ``source`` assigns a module-level ``LAUNCH_CONFIGS`` (checked or not)."""
    return _node(_parse(source)) is not None


def read_launch_configs(source: str) -> LaunchConfigs:
    """The candidate's ``LAUNCH_CONFIGS`` dict, or ``{}`` when it has none.

    Raises ``LaunchConfigError`` when the source does not parse or the dict is not a literal
    mapping kernel names to dicts of positive integers.
    """
    node = _node(_parse(source))
    if node is None:
        return {}
    try:
        value = ast.literal_eval(node.value)
    except ValueError as exc:
        raise LaunchConfigError(f"{NAME} is not a literal dict: {exc}") from None
    return _checked(value)


def format_launch_configs(configs: LaunchConfigs) -> str:
    """The ``LAUNCH_CONFIGS = {...}`` statement (no trailing newline), one kernel a line."""
    checked = _checked(configs)
    lines = [f"{NAME} = {{"]
    for name, cfg in checked.items():
        inner = ", ".join(f"{k!r}: {v}" for k, v in cfg.items())
        lines.append(f"    {name!r}: {{{inner}}},")
    lines.append("}")
    return "\n".join(lines)


def write_launch_configs(source: str, configs: LaunchConfigs) -> str:
    """``source`` with its ``LAUNCH_CONFIGS`` literal replaced by ``configs``; the rest is kept
    byte for byte. Raises ``LaunchConfigError`` when the source has no such dict."""
    node = _node(_parse(source))
    if node is None or node.end_lineno is None:
        raise LaunchConfigError(f"candidate has no {NAME} dict to retune")
    text = format_launch_configs(configs)
    lines = source.splitlines(keepends=True)
    before = "".join(lines[: node.lineno - 1])
    after = "".join(lines[node.end_lineno :])
    return before + text + "\n" + after
