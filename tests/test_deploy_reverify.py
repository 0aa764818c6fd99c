"""Fingerprints: an export warns once at import on a setup it was not verified on, and
``kernelopt reverify`` says what changed, re-runs the gates and narrows the guard."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from deploy_cases import CANDIDATE, SPECIALIZED, make_run

from kernelopt_jupyter.cli.main import main
from kernelopt_jupyter.deploy import op_runtime, reverify


def _cli(*argv: str) -> tuple[int, dict[str, Any] | None, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    text = out.getvalue().strip()
    return code, json.loads(text) if text else None, err.getvalue()


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = make_run(tmp_path_factory.mktemp("run"), CANDIDATE)
    code, data, err = _cli(
        "export", str(run), "--device", "cpu", "--seeds", "1", "--fixed-shape",
        "--shape", "ROWS=129", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert data is not None and data["verified_shapes"] == ["as given", "ROWS=129"]
    # The problem declares no mode: verified as constructed (training mode).
    assert json.loads((Path(data["package"]) / "manifest.json").read_text())["verified"]["training"]
    return Path(data["package"])


@pytest.fixture
def copy(package: Path, tmp_path: Path) -> Path:
    """A private copy of the export (these tests rewrite its manifest)."""
    return Path(shutil.copytree(package, tmp_path / package.name))


IMPORT = """
import json, sys, warnings
sys.path.insert(0, sys.argv[1])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import kernelopt_p as k
    # A second look (another Export of the same op) must not warn again.
    k.op_runtime.warn_unverified(k.EXPORT.folder, k.MANIFEST)
print(json.dumps([(w.category.__name__, str(w.message)) for w in caught
                  if w.category.__name__ == "KernelOPTUnverifiedWarning"]))
"""


def _import_warnings(folder: Path, tmp_path: Path) -> list[list[str]]:
    script = tmp_path / "imp.py"
    script.write_text(IMPORT)
    proc = subprocess.run(
        [sys.executable, str(script), str(folder.parent)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TRITON_INTERPRET": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return list(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_unchanged_export_needs_no_reverification(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert (
        op_runtime.package_changes(copy, json.loads((copy / "manifest.json").read_text()), "cpu")
        == []
    )
    code, data, _ = _cli("reverify", str(copy), "--device", "cpu", "--json")
    assert code == 0 and data is not None
    assert data["changes"] == [] and data["reverified"] is False
    result = reverify(copy, device="cpu")  # the Python API the notebook uses
    assert result.changes == [] and result.report is None and result.ok
    monkeypatch.syspath_prepend(str(copy.parent))  # MODULE may be the name it imports by
    code, data, _ = _cli("reverify", copy.name, "--device", "cpu", "--json")
    assert code == 0 and data is not None and data["package"] == str(copy)


def test_changed_fingerprint_warns_once_and_reverify_restores_it(
    copy: Path, tmp_path: Path
) -> None:
    manifest = json.loads((copy / "manifest.json").read_text())
    real = manifest["fingerprint"]["torch"]
    manifest["fingerprint"]["torch"] = "0.0.1"
    (copy / "manifest.json").write_text(json.dumps(manifest))
    warned = _import_warnings(copy, tmp_path)
    assert len(warned) == 1
    assert f"torch: 0.0.1 -> {real}" in warned[0][1] and "kernelopt reverify" in warned[0][1]

    code, data, err = _cli("reverify", str(copy / "__init__.py"), "--device", "cpu", "--json")
    assert code == 0, err
    assert data is not None and data["changes"] == [f"torch: 0.0.1 -> {real}"]
    assert data["reverified"] is True and data["lost"] == []
    assert "ROWS=129" in err and "pass" in err  # each shape's check is shown as it is decided
    after = json.loads((copy / "manifest.json").read_text())
    assert after["fingerprint"]["torch"] == real
    assert after["verified"]["shapes"] == ["as given", "ROWS=129"]
    # What the import-time warning checks (op_runtime.warn_unverified) now finds nothing.
    assert op_runtime.package_changes(copy, after, "cpu") == []


def test_an_edited_candidate_is_a_change_and_a_shape_it_loses_leaves_the_guard(
    copy: Path,
) -> None:
    (copy / "candidate.py").write_text(SPECIALIZED)
    code, data, err = _cli("reverify", str(copy), "--device", "cpu", "--json")
    assert code == 1, err
    assert data is not None and data["changes"] == ["candidate.py: edited since it was verified"]
    assert data["lost"] == ["ROWS=129"]
    after = json.loads((copy / "manifest.json").read_text())
    assert after["verified"]["shapes"] == ["as given"]
    assert after["candidate"]["digest"] == op_runtime.file_digest(copy / "candidate.py")


def test_reverify_of_something_else_is_a_one_line_error(tmp_path: Path) -> None:
    code, _, err = _cli("reverify", str(tmp_path), "--device", "cpu")
    assert code == 2 and "not a KernelOPT export" in err and err.count("\n") == 1


def test_a_winner_wrong_at_its_own_shape_leaves_nothing_to_admit(copy: Path) -> None:
    wrong = CANDIDATE.replace("tl.maximum(x + b, 0.0)", "x + b")  # the relu forgotten
    assert wrong != CANDIDATE
    (copy / "candidate.py").write_text(wrong)
    code, data, _ = _cli("reverify", str(copy), "--device", "cpu", "--json")
    assert code == 1 and data is not None and data["ok"] is False
    assert data["shapes"]["checks"][0]["failed_gate"] == "correctness"
    verified = json.loads((copy / "manifest.json").read_text())["verified"]
    assert verified["signatures"] == [] and verified["shapes"] == []  # every call: the reference
