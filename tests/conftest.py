"""Shared test setup: GPU tests fail loudly where there is no GPU, never skip silently."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
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
    config.pluginmanager.register(LongestFirst(), "kernelopt-longest-first")


#: Seconds each ``slow`` test takes, roughly (the marker's own definition), to order groups.
SLOW_SECONDS = 20.0
#: Files of unmarked tests that take far longer than their count says (seconds of one run on
#: two workers of a 2-core machine, ``--durations=0``), so that they are not left to the end.
FILE_SECONDS = {
    "test_magic.py": 135,
    "test_resume_replay.py": 130,
    "test_session.py": 120,
    "test_cli_verify.py": 85,
    "test_verify_good.py": 85,
    "test_claude_keyscan.py": 70,
    "test_verify_cheats.py": 70,
    "test_helion.py": 65,
    "test_analysis_harvest.py": 60,
    "test_deploy_export.py": 60,
    "test_worker_import_path.py": 55,
    "test_cli_deadline.py": 45,
    "test_winograd.py": 45,
}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """``--dist loadgroup``: one group per file (a file's module fixtures made on one worker),
    the files of ``SPLIT_FILES`` in parts, the folders of ``SHARED_FOLDERS`` whole (tests/
    _groups.py), taken in the order of the collection (``LongestFirst``)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from _groups import FileGroupScheduling

    config.option.loadscopereorder = False  # the collection is in the order wanted
    return FileGroupScheduling(config, log)


class LongestFirst:
    """Puts the tests in order of the estimated seconds of their file (or shared folder),
    longest first, once they are chosen (``-m``): the workers take the groups in that order
    and the short ones even out the end. xdist's own order, by count of tests, left the
    one-test files, among them the longest, to the end, with one worker idle meanwhile.
    A file's tests keep their order (a split file's parts stay interleaved, as counted)."""

    @pytest.hookimpl(wrapper=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> Iterator[None]:
        yield
        from _groups import unit

        paths = [item.nodeid.split("::", 1)[0] for item in items]
        in_file = Counter(paths)
        units = [unit(path) for path in paths]
        seconds: Counter[str] = Counter()
        for item, path, name in zip(items, paths, units):
            seconds[name] += _seconds(item, in_file[path])
        first = {name: i for i, name in reversed(list(enumerate(units)))}
        order = sorted(range(len(items)), key=lambda i: (-seconds[units[i]], first[units[i]]))
        items[:] = [items[i] for i in order]


def _seconds(item: pytest.Item, tests_in_file: int) -> float:
    from _groups import SHARED_FOLDERS

    path = Path(item.path)
    own = SHARED_FOLDERS.get(path.parent.name)
    if own is None:
        own = SLOW_SECONDS if item.get_closest_marker("slow") is not None else 1.0
    return own + FILE_SECONDS.get(path.name, 0) / tests_in_file


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
