"""Shared test setup: GPU tests fail loudly where there is no GPU, never skip silently."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
CACHE_ENV, CACHE_PREFIX = "KERNELOPT_CACHE_DIR", "kernelopt-test-cache-"
#: Where the browser tests leave their screenshots (tests/browser/conftest.py writes there).
BROWSER_ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "browser"


def pytest_configure(config: pytest.Config) -> None:
    # Every event any test emits (in this process or a CLI/worker subprocess, which inherit the
    # environment) is checked against EVENT_TYPES: an undeclared field fails the test.
    from kernelopt_jupyter.events import STRICT_ENV

    os.environ[STRICT_ENV] = "1"
    # The analysis cache of a test session is its own: no test reads an entry an older run of
    # the code left in ~/.cache. Tests within the session share it, as users' runs do, and so
    # do the xdist workers: they inherit the controller's folder (configured before they start).
    import tempfile

    if not (
        hasattr(config, "workerinput")
        and os.environ.get(CACHE_ENV, "").startswith(
            os.path.join(tempfile.gettempdir(), CACHE_PREFIX)
        )
    ):
        os.environ[CACHE_ENV] = tempfile.mkdtemp(prefix=CACHE_PREFIX)
    # Screenshots of this run only: emptied once, by the controller (an xdist worker has
    # ``workerinput``), never by workers that may be writing into it already.
    if not hasattr(config, "workerinput"):
        import shutil

        shutil.rmtree(BROWSER_ARTIFACTS, ignore_errors=True)


#: Files whose tests are shared out between pytest-xdist workers in this many parts: whole,
#: the adversarial corpus (each case a verification of its own) took one worker about as long
#: as every other file took the other, and was the suite's critical path.
SPLIT_FILES = {"test_adversarial.py": 2}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """One xdist group per file (``--dist loadgroup`` then keeps a file's module fixtures on
    one worker, as ``loadfile`` does), the files of ``SPLIT_FILES`` in parts taken in turn."""
    seen: dict[Path, int] = {}
    for item in items:
        path = Path(item.path)
        parts = SPLIT_FILES.get(path.name, 1)
        index = seen.get(path, 0)
        seen[path] = index + 1
        group = str(path) if parts == 1 else f"{path}:{index % parts}"
        item.add_marker(pytest.mark.xdist_group(group))


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("gpu") is not None:
        import torch

        if not torch.cuda.is_available():
            pytest.fail(
                "this test is marked gpu but no CUDA GPU is visible: run it on the GPU machine "
                "(scripts/gpu_checks.sh) or deselect it with -m 'not gpu'",
                pytrace=False,
            )


@pytest.fixture
def data_dir() -> Path:
    """The folder of test problems and candidates."""
    return DATA


@pytest.fixture(autouse=True)
def _no_api_key_leak(monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests never talk to the real Claude API; a test that needs a key sets a fake one.
    if os.environ.get("ANTHROPIC_API_KEY"):
        monkeypatch.delenv("ANTHROPIC_API_KEY")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """With ``KERNELOPT_TEST_LOG=FILE``, each test's outcome, seconds and (on failure) its
    traceback and captured output are appended to FILE as soon as it ends: a run cut off by
    a time limit (the GPU machine's) keeps what failed and why."""
    path = os.environ.get("KERNELOPT_TEST_LOG")
    if not path or (report.when != "call" and report.passed):
        return
    with open(path, "a", encoding="utf-8") as log:
        log.write(f"{report.nodeid} {report.when} {report.outcome} {report.duration:.1f}s\n")
        if report.failed:
            log.write(f"{report.longreprtext}\n")
            for name, text in report.sections:
                log.write(f"--- {name}\n{text[-4000:]}\n")
        elif report.when == "call":
            for name, text in report.sections:
                if "stdout" in name:
                    log.write(f"--- {name}\n{text[-2000:]}\n")
