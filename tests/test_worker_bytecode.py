"""The opening note on a missing bytecode cache: where Python may neither read nor write one for
torch, every worker start compiles torch's source again (13-14.5 s instead of 4.5-5 s per
process on the H200 machine, whose image sets PYTHONDONTWRITEBYTECODE=1)."""

from __future__ import annotations

import importlib
import py_compile
import sys
from pathlib import Path

import pytest

from kernelopt_jupyter.worker import uncached_bytecode_note


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    pkg = tmp_path / "kopt_fake_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    return pkg


def test_no_cache_and_no_writing_is_said_with_the_fix(
    package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    note = uncached_bytecode_note("kopt_fake_pkg")
    assert "PYTHONDONTWRITEBYTECODE is set" in note
    assert "-m compileall" in note and str(package) in note


def test_a_cache_present_or_writable_says_nothing(
    package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert uncached_bytecode_note("kopt_fake_pkg") == ""  # the first import writes it
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    py_compile.compile(str(package / "__init__.py"))  # as compileall writes it
    assert uncached_bytecode_note("kopt_fake_pkg") == ""


def test_a_missing_package_says_nothing() -> None:
    assert uncached_bytecode_note("kopt_no_such_package_here") == ""
