"""Every lesson in notebooks/lessons/ runs top to bottom on the CPU (interpreter; offline or
replayed agents) and is saved small.

The structural checks are fast and run in the main suite. The executions are marked `lessons`
(and `slow`): scripts/test.sh deselects them, and .ci/run runs them as their own step with
``python -m pytest -m lessons`` (each lesson under 3 minutes on 2 cores)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

LESSONS = Path(__file__).resolve().parent.parent / "notebooks" / "lessons"
NOTEBOOKS = sorted(LESSONS.glob("[0-9][0-9]_*.ipynb"))


def test_there_are_at_least_seven_lessons_in_order() -> None:
    assert len(NOTEBOOKS) >= 7
    numbers = [int(p.name[:2]) for p in NOTEBOOKS]
    assert numbers == list(range(1, len(NOTEBOOKS) + 1))


def test_replayed_lessons_ship_their_recordings() -> None:
    replayed = 0
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        for cell in (c for c in nb.cells if c.cell_type == "code"):
            for recording in re.findall(r"replay:([\w./-]+)", cell.source):
                replayed += 1
                assert (LESSONS / recording).is_file(), f"{path.name} replays missing {recording}"
    assert replayed >= 2  # lessons 5 and 8


@pytest.mark.lessons
@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_lesson_runs(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNELOPT_HOME", str(tmp_path / "home"))  # the kernel inherits these
    monkeypatch.setenv("KERNELOPT_SMALL", "1")
    # A fresh analysis cache: a lesson never reads (nor leaves) facts of another run.
    monkeypatch.setenv("KERNELOPT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # lesson 8 replays
    work = tmp_path / "lessons"
    work.mkdir()
    shutil.copy(path, work / path.name)
    shutil.copytree(LESSONS / "sessions", work / "sessions")
    nb = nbformat.read(work / path.name, as_version=4)
    client = NotebookClient(
        nb,
        timeout=180,
        kernel_name="python3",
        store_widget_state=False,
        resources={"metadata": {"path": str(work)}},
    )
    client.execute()  # raises CellExecutionError on any cell error
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert not errors
    assert len(nbformat.writes(nb)) < 400_000  # no plotly bundle per output
