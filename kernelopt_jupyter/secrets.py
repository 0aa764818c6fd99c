"""Secrets kept out of everything the tool writes or sends, and out of candidates' processes.

Two defences, both cheap enough to run on every event:

- :func:`scrub_env` drops every variable whose *name* says it holds a secret (``KEY``,
  ``TOKEN``, ``SECRET``, ``PASSWORD``, ``CREDENTIAL`` anywhere in it, and every ``ANTHROPIC_*``)
  from an environment before a worker process gets it, so a candidate has nothing to read.
- :func:`redact` replaces, in any text, the literal *values* of such variables found in the
  current environment, and anything shaped like an Anthropic API key, with ``[redacted]``;
  :func:`redact_data` does the same through nested dicts and lists (event payloads).

Values shorter than :data:`MIN_SECRET_LEN` are not redacted from text: a variable such as
``USE_TOKEN=1`` would otherwise blank every "1" in a log.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

REDACTED = "[redacted]"
#: Values shorter than this are not treated as secrets in text (too common to be one).
MIN_SECRET_LEN = 8

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE", re.IGNORECASE)
# Values that look like credentials whatever their variable's name (a key pasted into a
# harmless-looking variable): Anthropic/OpenAI keys, GitHub and Slack tokens, AWS key ids.
_SECRET_VALUE = re.compile(
    r"(sk-ant-|sk-[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abp]-|AKIA[0-9A-Z]{16})"
)
# Anthropic keys (sk-ant-api03-..., sk-ant-admin01-...) even when they are not in the
# environment, e.g. pasted into a problem file or read by a candidate from a dotfile.
_KEY_SHAPE = re.compile(r"sk-ant-[A-Za-z0-9_\-]{8,}")


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret."""
    return bool(_SECRET_NAME.search(name)) or name.upper().startswith("ANTHROPIC_")


def looks_like_secret(value: str) -> bool:
    """Whether a value has the shape of a credential (an API key or token), whatever its name."""
    return _SECRET_VALUE.search(value) is not None


def scrub_env(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``env`` without the variables whose names mark them as secrets."""
    return {k: v for k, v in env.items() if not is_secret_name(k)}


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    """The values of secret-named variables (longest first, so no secret is half-replaced)."""
    source = os.environ if env is None else env
    values = {v.strip() for k, v in source.items() if is_secret_name(k)}
    return sorted((v for v in values if len(v) >= MIN_SECRET_LEN), key=len, reverse=True)


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with every secret value of ``env`` (default: this process's) and key replaced."""
    return _redact_with(text, secret_values(env)) if text else text


def redact_data(value: Any, env: Mapping[str, str] | None = None) -> Any:
    """``value`` with :func:`redact` applied to every string inside dicts, lists and tuples.

    Returns the same object when nothing needed changing, so the common case copies nothing.
    """
    return _walk(value, secret_values(env))


def _walk(value: Any, values: list[str]) -> Any:
    if isinstance(value, str):
        return _redact_with(value, values)
    if isinstance(value, dict):
        out = {k: _walk(v, values) for k, v in value.items()}
        return value if all(out[k] is value[k] for k in value) else out
    if isinstance(value, list | tuple):
        items = [_walk(v, values) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return type(value)(items) if isinstance(value, tuple) else items
    return value


def _redact_with(text: str, values: list[str]) -> str:
    changed = text
    for secret in values:
        if secret in changed:
            changed = changed.replace(secret, REDACTED)
    if "sk-ant-" in changed:
        changed = _KEY_SHAPE.sub(REDACTED, changed)
    # Keep the identity of untouched strings: callers test `is` to skip copying containers.
    return text if changed == text else changed
