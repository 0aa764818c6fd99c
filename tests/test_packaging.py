"""Packaging: every package folder ships, and `pip install .` carries the JupyterLab extension.

The install test builds from a copy of the tracked files plus the already built extension
(scripts/build_labextension.py made it; the build backend rebuilds it only when stale) into a
fresh virtual environment that borrows this environment's packages through a .pth file, with
``--no-deps --no-build-isolation``: seconds, no network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUNDLE = ROOT / "kernelopt_jupyter" / "labextension_build"
# Installed names of the folders that install under another name (pyproject's package-dir).
REMAPPED = {"agents": "kernelopt_jupyter.agents", "verify": "kernelopt_jupyter.verify"}


def package_folders() -> set[str]:
    """Installed names of every folder with an __init__.py that must ship."""
    names = set()
    for top, installed in {"kernelopt_jupyter": "kernelopt_jupyter", **REMAPPED}.items():
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top)
            names.add(".".join([installed, *rel.parts]))
    return names


def test_every_package_folder_is_listed() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    missing = package_folders() - listed
    assert not missing, f"pyproject.toml [tool.setuptools] packages lacks {sorted(missing)}"


def _tracked_copy(dest: Path) -> Path:
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, files):
        src = ROOT / name.decode()
        if src.is_file():  # a file deleted in the working tree is not copied
            target = dest / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    shutil.copytree(BUNDLE, dest / BUNDLE.relative_to(ROOT))  # mtimes kept: still current
    return dest


def _venv(where: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    site = next((where / "lib").glob("python3*/site-packages"))
    # This environment's packages (jupyterlab, setuptools, torch...) without its editable
    # install of the project: a .pth adds the folder, but not the .pth files inside it.
    borrowed = [p for p in sys.path if p.endswith("site-packages")]
    (site / "borrowed.pth").write_text("\n".join(borrowed) + "\n")
    return where / "bin" / "python"


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "PYTHONPATH"))}
    env["JUPYTER_DATA_DIR"] = str(tmp / "jupyter-data")  # no user-level extensions
    env["JUPYTER_CONFIG_DIR"] = str(tmp / "jupyter-config")
    return env


@pytest.mark.slow
@pytest.mark.parametrize("editable", [False, True], ids=["wheel", "editable"])
def test_pip_install_lists_the_labextension_enabled(tmp_path: Path, editable: bool) -> None:
    if not (BUNDLE / "package.json").is_file():
        pytest.fail("the extension is not built: run scripts/build_labextension.py", pytrace=False)
    source = _tracked_copy(tmp_path / "src")
    python = _venv(tmp_path / "venv")
    env = _env(tmp_path)
    install = [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
    install += ["-e", str(source)] if editable else [str(source)]
    done = subprocess.run(install, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-1500:] + done.stderr[-1500:]
    listing = subprocess.run(
        # What `jupyter labextension list` runs (its script is not on this PATH).
        [
            str(python),
            "-c",
            "import sys; from jupyterlab.labextensions import main; sys.exit(main())",
            "list",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    text = listing.stdout + listing.stderr
    line = next((x for x in text.splitlines() if "kernelopt-jupyter" in x), "")
    assert "enabled" in line and "OK" in line, text
    assert str(tmp_path / "venv") in text  # found in the new environment's share/jupyter
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import kernelopt_jupyter.agents.search as a, kernelopt_jupyter.verify as v, "
            "kernelopt_jupyter.notebook.magic as m, kernelopt_jupyter.cli as c; "
            "print(a.__file__, v.__file__, m.__file__, c.__file__)",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert where.returncode == 0, where.stderr[-1500:]
    home = str(source) if editable else str(tmp_path / "venv")
    assert all(path.startswith(home) for path in where.stdout.split()), where.stdout


@pytest.mark.slow
def test_without_node_the_engine_still_installs(tmp_path: Path) -> None:
    """The GPU machine has no Node: the install warns and goes on without the extension."""
    source = _tracked_copy(tmp_path / "src")
    shutil.rmtree(source / BUNDLE.relative_to(ROOT))  # nothing prebuilt either
    python = _venv(tmp_path / "venv")
    env = _env(tmp_path)
    (tmp_path / "bin").mkdir()
    env["PATH"] = str(tmp_path / "bin")  # no node, no npm
    done = subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-v",
            "--no-deps",
            "--no-build-isolation",
            str(source),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-1500:] + done.stderr[-1500:]
    assert "installing without the JupyterLab extension" in done.stdout + done.stderr
    share = tmp_path / "venv" / "share" / "jupyter" / "labextensions" / "kernelopt-jupyter"
    assert not share.exists()
