"""Build the JupyterLab extension in labextension/ from source into
kernelopt_jupyter/labextension_build/ (git-ignored; shipped inside the wheel).

Steps: `npm install` (pinned by package-lock.json), the TypeScript compiler, the extension's
unit tests (vitest), then `@jupyter/builder`'s offline-capable bundler against the core
package.json of the installed JupyterLab. `@jupyterlab/builder` is not used: it downloads
metadata at build time and fails offline.

When the running interpreter has this checkout installed editable, the build folder is also
linked into its share/jupyter/labextensions (as `jupyter labextension develop` does), so
`jupyter labextension list` shows the extension enabled.

Usage: python scripts/build_labextension.py [--skip-install] [--skip-tests] [--no-develop]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXT = ROOT / "labextension"
OUT = ROOT / "kernelopt_jupyter" / "labextension_build"


def _fail(msg: str) -> None:
    print(f"build_labextension: {msg}", file=sys.stderr)
    raise SystemExit(1)


def _run(cmd: list[str]) -> None:
    print("+", " ".join(cmd), flush=True)
    done = subprocess.run(cmd, cwd=EXT, check=False)
    if done.returncode != 0:
        _fail(f"{' '.join(cmd[:3])} failed (exit {done.returncode}) in {EXT}")


def core_package_file() -> Path:
    """The package.json describing the JupyterLab core the extension is built against."""
    try:
        import jupyterlab
    except ImportError:
        jupyterlab = None
    if jupyterlab is not None:
        staged = Path(jupyterlab.__file__).parent / "staging" / "package.json"
        if staged.is_file():
            return staged
    # Without JupyterLab installed, the builder's own core metadata package is used.
    meta = EXT / "node_modules" / "@jupyterlab" / "core-meta" / "core.package.json"
    if meta.is_file():
        return meta
    _fail("no JupyterLab core package.json: install jupyterlab or run npm install first")
    raise AssertionError  # unreachable


def link_develop() -> Path | None:
    """Make an editable install of this checkout serve the fresh build, as
    `jupyter labextension develop` does: a symlink from this interpreter's prefix
    share/jupyter/labextensions/kernelopt-jupyter to the build folder.

    Returns the link, or None when this interpreter's kernelopt_jupyter is not this checkout
    (a regular install carries the prebuilt extension as wheel data instead).
    """
    try:
        import kernelopt_jupyter
    except ImportError:
        return None
    if Path(kernelopt_jupyter.__file__).resolve().parent != OUT.parent:
        return None
    link = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "kernelopt-jupyter"
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.is_file():
        link.unlink()
    elif link.is_dir():
        # A copy left by installing a wheel (or an editable install's data files): stale.
        shutil.rmtree(link)
    link.symlink_to(OUT, target_is_directory=True)
    return link


def main(argv: list[str] | None = None) -> int:
    """Install the extension's npm dependencies, test it and bundle it into OUT."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-install", action="store_true", help="reuse labextension/node_modules")
    ap.add_argument("--skip-tests", action="store_true", help="do not run the vitest unit tests")
    ap.add_argument(
        "--no-develop",
        action="store_true",
        help="do not link the build into this interpreter's prefix (editable installs only)",
    )
    args = ap.parse_args(argv)

    npm = shutil.which("npm")
    node = shutil.which("node")
    if npm is None or node is None:
        _fail("node and npm are required (Node >= 20.19) to build labextension/")
    if not args.skip_install or not (EXT / "node_modules").is_dir():
        # `npm install` honours package-lock.json; `npm ci` (npm 11) rejects this lock file
        # for an optional Windows-only dependency it does not record.
        _run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error"])
    tsc = EXT / "node_modules" / "typescript" / "bin" / "tsc"
    _run([node, str(tsc), "-p", "tsconfig.json"])
    if not args.skip_tests:
        _run([node, str(EXT / "node_modules" / "vitest" / "vitest.mjs"), "run"])
    builder = EXT / "node_modules" / "@jupyter" / "builder" / "lib" / "build-labextension.js"
    _run([node, str(builder), "--core-package-file", str(core_package_file()), "."])

    meta = json.loads((OUT / "package.json").read_text())
    if "_build" not in meta.get("jupyterlab", {}):
        _fail(f"{OUT / 'package.json'} has no jupyterlab._build entry: the bundle is incomplete")
    print(f"built {meta['name']} {meta['version']} into {OUT.relative_to(ROOT)}")
    if not args.no_develop:
        link = link_develop()
        if link is not None:
            print(f"linked {link} -> {OUT} for the editable install")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
