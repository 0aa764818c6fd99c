"""Shared test setup: GPU tests fail loudly where there is no GPU, never skip silently."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


def pytest_configure(config: pytest.Config) -> None:
    # Every event any test emits (in this process or a CLI/worker subprocess, which inherit the
    # environment) is checked against EVENT_TYPES: an undeclared field fails the test.
    from kernelopt_jupyter.events import STRICT_ENV

    os.environ[STRICT_ENV] = "1"
    # The analysis cache of a test session is its own: no test reads an entry an older run of
    # the code left in ~/.cache (tests within the session may share, as users' runs do).
    import tempfile

    os.environ["KERNELOPT_CACHE_DIR"] = tempfile.mkdtemp(prefix="kernelopt-test-cache-")


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
