"""Fixtures for real-browser tests: a JupyterLab server on 127.0.0.1 and headless Chromium.

Chromium is Debian's (`apt-get install chromium`, /usr/bin/chromium) driven by Python
Playwright: `playwright install` cannot download browsers on these machines. Screenshots of
the key states go to test-artifacts/browser/ at the repository root (git-ignored).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
ARTIFACTS = ROOT / "test-artifacts" / "browser"  # emptied per run by tests/conftest.py
CHROMIUM = os.environ.get("KERNELOPT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Everything under tests/browser/ drives a browser.
    for item in items:
        if Path(str(item.fspath)).resolve().is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.browser)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Lab:
    """A running JupyterLab server."""

    url: str
    token: str
    root: Path
    log: Path

    def notebook_url(self, name: str) -> str:
        """The URL opening notebook ``name`` (relative to root) in a fresh workspace."""
        return f"{self.url}/lab/tree/{name}?token={self.token}&reset"

    def api(self, path: str) -> Any:
        """GET a server REST endpoint and decode its JSON."""
        req = urllib.request.Request(
            f"{self.url}{path}", headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())

    def shut_kernel(self, kernel_id: str) -> None:
        """Shut a kernel down through the server (as the Kernel menu's shut down does)."""
        req = urllib.request.Request(
            f"{self.url}/api/kernels/{kernel_id}",
            method="DELETE",
            headers={"Authorization": f"token {self.token}"},
        )
        try:
            with urllib.request.urlopen(req, timeout=30):
                pass
        except urllib.error.HTTPError as exc:
            if exc.code != 404:  # 404: it ended already (a test that shut it itself)
                raise


def write_notebook(path: Path, cells: list[tuple[str, str]]) -> Path:
    """Write a notebook of code cells given as (cell id, source), with a python3 kernelspec
    (without one a kernel-picker dialog blocks the page)."""
    nb = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
        },
        "cells": [
            {
                "cell_type": "code",
                "id": cid,
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": src,
            }
            for cid, src in cells
        ],
    }
    path.write_text(json.dumps(nb, indent=1))
    return path


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """JupyterLab on a free port of 127.0.0.1 with a token, in a temporary root folder."""
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"{CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium)",
            pytrace=False,
        )
    base = tmp_path_factory.mktemp("lab")
    root = base / "root"
    root.mkdir()
    port = _free_port()
    token = secrets.token_hex(16)
    env = dict(os.environ)
    # A private config, runtime, settings and workspace state: nothing from the machine's user.
    for var, sub in (
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("JUPYTERLAB_SETTINGS_DIR", "settings"),
        ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
        ("IPYTHONDIR", "ipython"),
    ):
        (base / sub).mkdir()
        env[var] = str(base / sub)
    # No "get notified about Jupyter news?" toast over the notebook.
    notif = base / "settings" / "@jupyterlab" / "apputils-extension"
    notif.mkdir(parents=True)
    (notif / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    env.pop("ANTHROPIC_API_KEY", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    cmd = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    log = base / "lab.log"
    with log.open("w") as log_file:
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log_file, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    server = Lab(url=url, token=token, root=root, log=log)
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"jupyter lab exited: {log.read_text()[-2000:]}", pytrace=False)
            try:
                server.api("/api/status")
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"jupyter lab did not start: {log.read_text()[-2000:]}")
                time.sleep(0.3)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@pytest.fixture(scope="session")
def browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A headless Chromium with a fresh user-data-dir."""
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1000},
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture(autouse=True)
def _kernels_shut_after(lab: Lab) -> Iterator[None]:
    """The kernels a test started are shut down when it ends (after its tab is closed): a
    closed tab leaves its kernel running, with the search's spare verification workers and
    any search still going, and on one JupyterLab for the whole folder they piled up (19
    kernels, over 5 GB, some still searching while later tests ran)."""
    before = {k["id"] for k in lab.api("/api/kernels")}
    yield
    for kernel in lab.api("/api/kernels"):
        if kernel["id"] not in before:
            lab.shut_kernel(kernel["id"])


@pytest.fixture
def page(browser_context: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A new tab; on failure a screenshot is left in test-artifacts/browser/."""
    pg = browser_context.new_page()
    pg.set_default_timeout(30_000)
    console: list[str] = []
    pg.on("console", lambda msg: console.append(f"{msg.type}: {msg.text}"))
    pg.console_log = console  # type: ignore[attr-defined]
    yield pg
    failed = getattr(request.node, "_failed", False)
    if failed:
        shot(pg, f"{request.node.name}-FAILED")
        print("browser console, last lines:", *console[-20:], sep="\n  ")
    pg.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Any:
    report = yield
    if report.when == "call" and report.failed:
        item._failed = True  # type: ignore[attr-defined]
    return report


def shot(page: Any, name: str) -> Path:
    """Save a full-page screenshot as test-artifacts/browser/<name>.png."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


# JavaScript helpers evaluated in the page (window.jupyterapp exists because of
# --LabApp.expose_app_in_browser).
JS_NOTEBOOK_READY = """() => {
  const app = window.jupyterapp;
  if (!app || !app.shell) return false;
  const w = app.shell.currentWidget;
  if (!w || !w.content || !w.content.model || !w.sessionContext) return false;
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.connectionStatus === 'connected' && w.sessionContext.kernelDisplayStatus === 'idle';
}"""

JS_CELLS = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  return w.content.model.sharedModel.cells.map(c => ({id: c.id, source: c.getSource(),
    type: c.cell_type}));
}"""

JS_RUN_CELL = """async (cellId) => {
  const app = window.jupyterapp;
  const w = app.shell.currentWidget;
  const index = w.content.model.sharedModel.cells.findIndex(c => c.id === cellId);
  if (index < 0) throw new Error('no cell ' + cellId);
  w.content.activeCellIndex = index;
  w.content.deselectAll();
  await app.commands.execute('notebook:run-cell');
  return index;
}"""

JS_CELL_OUTPUT_TEXT = """(cellId) => {
  const w = window.jupyterapp.shell.currentWidget;
  const cell = w.content.widgets.find(c => c.model.id === cellId);
  return cell && cell.outputArea ? cell.outputArea.node.innerText : null;
}"""

#: The number a cell shows in its prompt ([2]), as the notebook model holds it.
CELL_NUMBER_JS = """(cellId) => {
  const w = window.jupyterapp.shell.currentWidget;
  const cell = w.content.widgets.find(c => c.model.id === cellId);
  return cell ? cell.model.executionCount : null;
}"""

JS_KERNEL_IDLE = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  return w.sessionContext.kernelDisplayStatus === 'idle';
}"""


def open_notebook(page: Any, lab: Lab, name: str, timeout_ms: int = 60_000) -> None:
    """Open notebook ``name`` and wait until its kernel is connected and idle."""
    page.goto(lab.notebook_url(name))
    page.wait_for_function(JS_NOTEBOOK_READY, timeout=timeout_ms)


JS_MESSAGE_CHANGED = (
    "(msg) => { const m = document.querySelector('.kernelopt-panel .kernelopt-message');"
    " return m && m.innerText.trim() !== msg; }"
)


def wait_message_changes(page: Any, message: str, wait_ms: int = 30_000) -> None:
    """Wait until the panel's message line says something else than ``message`` (the paused
    step was answered and the search moved on)."""
    page.wait_for_function(JS_MESSAGE_CHANGED, arg=message, timeout=wait_ms)


def click_until_answered(page: Any, button: Any, message: str, wait_ms: int = 30_000) -> None:
    """Click a step button until the panel's message line leaves ``message`` (the pause was
    answered), at most four times.

    A click can be lost before it reaches the kernel (under load, CI saw a pause stay for
    150 s with the kernel idle and Approve enabled; a handler that raised would have said so
    on the message line). A person then clicks again, and so does this: each button names
    its pause, so a second click on a pause already answered is dropped, never taken as the
    next pause's answer. Each lost click is printed, with the browser console's last lines.
    """
    from playwright.sync_api import TimeoutError as WaitTimeout

    for attempt in range(4):
        button.click()
        try:
            wait_message_changes(page, message, wait_ms)
            return
        except WaitTimeout:
            if attempt == 3:
                raise
            print(
                f"click {attempt + 1} not answered in {wait_ms // 1000} s at {message!r}; "
                "clicking again. Browser console, last lines:",
                *getattr(page, "console_log", [])[-5:],
                sep="\n  ",
            )


def run_cell(page: Any, cell_id: str, wait_idle: bool = True, timeout_ms: int = 60_000) -> None:
    """Run the cell with id ``cell_id`` (as shift-enter would) and by default wait for idle."""
    page.evaluate(JS_RUN_CELL, cell_id)
    if wait_idle:
        page.wait_for_function(JS_KERNEL_IDLE, timeout=timeout_ms)


def cell_output(page: Any, cell_id: str) -> str:
    """The rendered output text of a cell."""
    return str(page.evaluate(JS_CELL_OUTPUT_TEXT, cell_id) or "")


def cells(page: Any) -> list[dict[str, str]]:
    """The notebook's cells as the shared model holds them."""
    return list(page.evaluate(JS_CELLS))


@pytest.fixture(scope="session", autouse=True)
def _artifacts_folder() -> None:
    # The folder is emptied once per run by tests/conftest.py (in the controller, before any
    # xdist worker starts: two workers emptying it in turn raced each other's mkdir).
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
