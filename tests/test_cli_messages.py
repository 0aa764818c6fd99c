"""House rules for what a person sees: every ``kernelopt CMD --flag`` the code tells a person to
type is a flag that command accepts, and warnings from the project's own modules are errors."""

from __future__ import annotations

import re
from pathlib import Path

from kernelopt_jupyter.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
MENTION = re.compile(
    r"kernelopt (verify|profile|optimize|bench)((?:\s+(?:--[a-z][a-z-]*|[A-Z.]+))+)"
)


def _flags(command: str) -> set[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    choices = getattr(sub, "choices", {}) or {}
    return {opt for action in choices[command]._actions for opt in action.option_strings}


def test_every_suggested_flag_exists() -> None:
    mentions: list[tuple[str, str, str]] = []
    for folder in ("kernelopt_jupyter", "agents", "verify"):
        for path in (ROOT / folder).rglob("*.py"):
            for match in MENTION.finditer(path.read_text()):
                for flag in re.findall(r"--[a-z][a-z-]*", match.group(2)):
                    mentions.append((str(path.relative_to(ROOT)), match.group(1), flag))
    assert mentions, "the pattern found no suggestion at all: the check would be vacuous"
    wrong = [m for m in mentions if m[2] not in _flags(m[1])]
    assert not wrong, wrong


def test_profile_ncu_flag_parses() -> None:
    args = build_parser().parse_args(["profile", "p.py", "--ncu"])
    assert args.ncu is True
    assert build_parser().parse_args(["profile", "p.py"]).ncu is False


def test_warnings_from_the_project_are_errors_third_party_ones_are_not() -> None:
    import warnings

    import pytest

    with pytest.raises(DeprecationWarning):
        warnings.warn_explicit("ours", DeprecationWarning, "x.py", 1, module="kernelopt_jupyter.x")
    warnings.warn_explicit("theirs", DeprecationWarning, "y.py", 1, module="torch._dynamo.y")
