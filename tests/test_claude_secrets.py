"""The secrets helper: names that mark a secret, environments scrubbed, values redacted."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt_jupyter.secrets import (
    REDACTED,
    is_secret_name,
    redact,
    redact_data,
    scrub_env,
    secret_values,
)

ENV = {
    "ANTHROPIC_API_KEY": "sk-ant-api03-abcdefghijklmnop",
    "ANTHROPIC_BASE_URL": "http://127.0.0.1:9999",
    "GITHUB_TOKEN": "ghp_0123456789abcdef",
    "db_password": "hunter2hunter2",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG",
    "GOOGLE_APPLICATION_CREDENTIALS": "/home/me/creds.json",
    "USE_TOKEN": "1",
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/me",
}


def test_secret_names() -> None:
    secret = {k for k in ENV if is_secret_name(k)}
    assert secret == {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "GITHUB_TOKEN",
        "db_password",
        "AWS_SECRET_ACCESS_KEY",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "USE_TOKEN",
    }


def test_scrub_env_keeps_only_harmless_variables() -> None:
    assert scrub_env(ENV) == {"PATH": "/usr/bin:/bin", "HOME": "/home/me"}
    assert "GITHUB_TOKEN" in ENV  # a copy: the caller's mapping is untouched


def test_redact_replaces_values_longest_first_and_key_shapes() -> None:
    text = (
        "key=sk-ant-api03-abcdefghijklmnop token ghp_0123456789abcdef pw hunter2hunter2 "
        "other sk-ant-admin01-zzzzzzzzzzzz and 1 stays"
    )
    out = redact(text, ENV)
    for value in ("sk-ant-", "ghp_0123456789abcdef", "hunter2hunter2"):
        assert value not in out
    assert out.count(REDACTED) == 4 and out.endswith("and 1 stays")
    assert "1" not in secret_values(ENV)  # too short to be treated as a secret in text


def test_redact_uses_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-live-7777777777")
    assert redact("got tok-live-7777777777!") == f"got {REDACTED}!"


def test_redact_data_walks_nested_payloads_and_copies_only_when_needed() -> None:
    clean = {"a": ["x", ("y", 2)], "b": {"c": None}}
    assert redact_data(clean, ENV) is clean
    dirty = {"report": {"gates": [{"detail": "leaked hunter2hunter2"}]}, "n": 3, "t": ("ok",)}
    out = redact_data(dirty, ENV)
    assert out["report"]["gates"][0]["detail"] == f"leaked {REDACTED}"
    assert out["n"] == 3 and out["t"] == ("ok",)
    assert dirty["report"]["gates"][0]["detail"] == "leaked hunter2hunter2"


def test_event_log_redacts_every_string_it_writes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from kernelopt_jupyter.events import EventLog

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-live-key-0000000000")
    log = EventLog(tmp_path / "events.jsonl")
    event = log.emit(
        "gate",
        candidate="c1",
        name="static",
        status="fail",
        detail="printed sk-ant-api03-live-key-0000000000",
        metrics={"stderr": ["env: sk-ant-api03-live-key-0000000000"]},
    )
    text = (tmp_path / "events.jsonl").read_text()
    assert "live-key" not in text and "live-key" not in str(event.data)
    assert event.data["metrics"]["stderr"] == [f"env: {REDACTED}"]


def test_session_files_are_written_redacted(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from kernelopt_jupyter.session.files import write_atomic

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-live-key-1111111111")
    write_atomic(tmp_path / "result.json", '{"detail": "sk-ant-api03-live-key-1111111111"}')
    assert (tmp_path / "result.json").read_text() == f'{{"detail": "{REDACTED}"}}'
