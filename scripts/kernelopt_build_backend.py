"""The build backend: setuptools, after building the JupyterLab extension when it is stale.

``pip install .``, ``pip wheel .`` and ``python -m build`` run this (pyproject.toml's
``[build-system]`` names it, ``backend-path = ["scripts"]``). Before setuptools builds a wheel
(or an editable wheel) it makes sure ``kernelopt_jupyter/labextension_build/`` holds a bundle
of ``labextension/`` at least as new as its sources, running scripts/build_labextension.py
(npm install, tsc, the builder; Node >= 20 and npm) when not. Setuptools then ships the bundle
as data files under ``share/jupyter/labextensions/kernelopt-jupyter``, where JupyterLab finds it
enabled. setuptools stays the builder because its ``package-dir`` mapping installs ``agents/``
and ``verify/`` inside the package for editable installs and wheels alike.

``KERNELOPT_SKIP_LABEXTENSION=1`` builds without the extension; so does a machine without node
and npm (an engine-only install, e.g. the GPU machine), with a warning. The notebook then falls
back to ``%kernelopt accept``. Node present but the build failing stops the install.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path
from typing import Any

from setuptools import build_meta as _setuptools

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "labextension"
BUNDLE = ROOT / "kernelopt_jupyter" / "labextension_build"
SHARE = "share/jupyter/labextensions/kernelopt-jupyter"

# Everything not overridden below is setuptools' own hook.
get_requires_for_build_wheel = _setuptools.get_requires_for_build_wheel
get_requires_for_build_sdist = _setuptools.get_requires_for_build_sdist
get_requires_for_build_editable = _setuptools.get_requires_for_build_editable
prepare_metadata_for_build_wheel = _setuptools.prepare_metadata_for_build_wheel
prepare_metadata_for_build_editable = _setuptools.prepare_metadata_for_build_editable
build_sdist = _setuptools.build_sdist


def _newest(folder: Path) -> float:
    """The newest modification time of the files under ``folder`` (0 when there are none)."""
    times = [p.stat().st_mtime for p in folder.rglob("*") if p.is_file()]
    return max(times, default=0.0)


def bundle_is_current() -> bool:
    """Whether the built extension exists and is newer than every source file it is made of."""
    meta = BUNDLE / "package.json"
    if not meta.is_file():
        return False
    inputs = [SOURCES / "src", SOURCES / "package.json", SOURCES / "tsconfig.json"]
    newest = max(_newest(p) if p.is_dir() else p.stat().st_mtime for p in inputs if p.exists())
    return meta.stat().st_mtime >= newest


def ensure_labextension() -> None:
    """Build the extension unless it is current or the build is skipped on purpose."""
    if os.environ.get("KERNELOPT_SKIP_LABEXTENSION") == "1" or not SOURCES.is_dir():
        return
    if bundle_is_current():
        return
    if shutil.which("node") is None or shutil.which("npm") is None:
        # An engine-only machine (the GPU box has no Node): install, and say what is missing.
        print(
            "kernelopt build: WARNING: no node/npm (Node >= 20): installing without the "
            "JupyterLab extension; Accept then falls back to %kernelopt accept N",
            file=sys.stderr,
        )
        return
    print("kernelopt build: building the JupyterLab extension (labextension/)", file=sys.stderr)
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "build_labextension.py"),
            "--skip-tests",
            "--no-develop",
        ],
        cwd=ROOT,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(
            "kernelopt build: the JupyterLab extension did not build (needs Node >= 20 and npm; "
            "see the output above), or set KERNELOPT_SKIP_LABEXTENSION=1 to install without it"
        )


def build_wheel(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """A wheel carrying the built extension."""
    ensure_labextension()
    return str(_setuptools.build_wheel(wheel_directory, config_settings, metadata_directory))


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """An editable wheel carrying the built extension (a copy: rebuild to refresh it, or run
    scripts/build_labextension.py, which links the build folder instead)."""
    ensure_labextension()
    from setuptools.warnings import InformationOnly

    with warnings.catch_warnings():
        # setuptools' notice on every editable install through its import finder (this
        # project's package-dir mapping needs one) says a folder named like the package in the
        # working directory may shadow it: here that folder is the package's own source.
        warnings.filterwarnings("ignore", "Editable installation", InformationOnly)
        name = str(_setuptools.build_editable(wheel_directory, config_settings, metadata_directory))
    add_labextension_data(Path(wheel_directory) / name)
    return name


def _record_row(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def add_labextension_data(wheel: Path) -> None:
    """Put the extension into ``wheel``'s data files (setuptools' editable wheels leave
    ``data-files`` out), with RECORD updated; nothing when it is there or not built."""
    if not (BUNDLE / "package.json").is_file():
        return
    with zipfile.ZipFile(wheel) as zf:
        items = [(info, zf.read(info)) for info in zf.infolist()]
    record = next(info.filename for info, _ in items if info.filename.endswith(".dist-info/RECORD"))
    data_root = f"{record.split('.dist-info/')[0]}.data/data/{SHARE}"
    if any(info.filename.startswith(data_root) for info, _ in items):
        return
    added = [
        (f"{data_root}/{path.relative_to(BUNDLE).as_posix()}", path.read_bytes())
        for path in sorted(BUNDLE.rglob("*"))
        if path.is_file()
    ]
    rows = [
        row
        for info, data in items
        if info.filename == record
        for row in data.decode().splitlines()
        if row and not row.startswith(record)
    ]
    rows += [_record_row(arcname, data) for arcname, data in added] + [f"{record},,"]
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for info, data in items:
            if info.filename != record:
                zf.writestr(info, data)
        for arcname, data in added:
            zf.writestr(arcname, data)
        zf.writestr(record, "\n".join(rows) + "\n")
