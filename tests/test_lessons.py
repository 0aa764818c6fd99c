"""Every lesson in notebooks/lessons/ runs top to bottom on the CPU (interpreter; offline or
replayed agents) and is saved small.

The structural checks are fast and run in the main suite. The executions are marked `lessons`
(and `slow`): scripts/test.sh deselects them, and .ci/run runs them as their own step with
``python -m pytest -m lessons`` (each lesson under 3 minutes on 2 cores)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from kernelopt_jupyter.exercises import (
    EXERCISES,
    _judge,
    blank,
    check,
    exercise,
    fill,
    grade,
    is_unfilled,
)
from kernelopt_jupyter.verify.report import GATE_NAMES, GateResult, GateStatus, VerifyReport

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
    if (LESSONS / "recordings").is_dir():  # GPU measurements shown to CPU readers (lesson 10)
        shutil.copytree(LESSONS / "recordings", work / "recordings")
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


# ---------------------------------------------------------------- lesson 9: the exercises

EXERCISE_LESSON = LESSONS / "09_exercises.ipynb"
_CHECK_CALL = re.compile(r'exercises\.check\("(\w+)", "(ex\d+_\w+\.py)"\)')
_SOLUTION = re.compile(r"<details>.*?```python\n(.*?)```.*?</details>", re.S)

#: Wrong answers for each exercise's blank, with the gate that must stop each (None: the
#: verifier passes it, which leaves the cheat exercise unsolved).
WRONG_ANSWERS: dict[str, list[tuple[str, str | None]]] = {
    "masked_load": [("mask = offsets < n - 1", "correctness")],
    "broadcast_2d": [
        (
            "offsets = rows[:, None] + cols[None, :] * n_rows\n"
            "mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)",
            "correctness",
        )
    ],
    "row_min": [
        (
            "x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)\n"
            "smallest = tl.min(x, axis=0)",
            "correctness",
        )
    ],
    "multi_block_sum": [("tl.store(out_ptr, partial)", "correctness")],
    "online_softmax": [("l = l + tl.sum(tl.exp(x - m_new), axis=0)", "correctness")],
    "layer_norm": [
        ("var = tl.sum((x - mean) * (x - mean), axis=0) / n_cols", "correctness"),
        ("var = tl.sum(x * x, axis=0) / n_cols - mean * mean", "fp64"),
    ],
    "matmul_k_loop": [
        (
            "a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=rows[:, None] < M)\n"
            "b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=cols[None, :] < N)\n"
            'acc = acc + tl.dot(a, b, input_precision="ieee")',
            "correctness",
        )
    ],
    "catch_a_cheat": [("return out", None)],
}


def _exercise_cells() -> dict[str, tuple[str, str]]:
    """Each exercise of lesson 9: its candidate file as the ``%%writefile`` cell writes it (the
    blank unfilled) and the solution in the disclosure after its check."""
    cells = nbformat.read(EXERCISE_LESSON, as_version=4).cells
    found: dict[str, tuple[str, str]] = {}
    for i, cell in enumerate(cells):
        call = _CHECK_CALL.search(cell.source) if cell.cell_type == "code" else None
        if call is None:
            continue
        name, path = call.groups()
        magic, template = cells[i - 1].source.split("\n", 1)
        assert magic == f"%%writefile {path}", f"the cell before {name}'s check writes {path}"
        solution = _SOLUTION.search(cells[i + 1].source)
        assert solution is not None, f"no solution after {name}'s check"
        found[name] = (template, solution.group(1))
    return found


def test_every_exercise_is_in_lesson_9_with_an_empty_blank_and_a_solution() -> None:
    cells = _exercise_cells()
    assert list(cells) == list(EXERCISES) and len(cells) >= 6
    assert set(WRONG_ANSWERS) == set(EXERCISES)
    for name, (template, solution) in cells.items():
        assert is_unfilled(template), f"{name}'s blank ships filled"
        filled = fill(template, solution)
        assert not is_unfilled(filled) and blank(filled) is not None
        assert solution.strip().splitlines()[0] in filled


def test_fill_replaces_the_blank_only_and_keeps_its_indentation() -> None:
    source = (
        "def f(x):\n"
        "    y = x\n"
        "    # >>> your code: the mask\n"
        "    mask = ...\n"
        "    # <<< your code\n"
        "    return mask\n"
    )
    assert blank(source) == "    mask = ..."
    assert is_unfilled(source)
    filled = fill(source, "mask = y > 0\nmask = mask & (y < 9)")
    assert filled == source.replace(
        "    mask = ...\n", "    mask = y > 0\n    mask = mask & (y < 9)\n"
    )
    assert not is_unfilled(filled)
    assert not is_unfilled("def f(x):\n    return x\n")  # no blank: nothing left to fill
    with pytest.raises(ValueError, match="no blank"):
        fill("def f(x):\n    return x\n", "y = 1")


def test_an_empty_blank_is_not_verified_and_gets_no_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template, _ = _exercise_cells()["row_min"]
    (tmp_path / "ex.py").write_text(template)
    result = check("row_min", str(tmp_path / "ex.py"))
    out = capsys.readouterr().out
    assert not result.solved and result.report is None
    assert "the blank still holds `...`" in out
    assert "Hint" not in out  # a hint answers a failed attempt, not an empty blank


def test_check_names_a_missing_file_and_an_unknown_exercise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "ex1.py"
    assert not check("masked_load", str(missing)).solved
    assert capsys.readouterr().out.strip() == (
        f"{missing} not found: run the %%writefile cell above it first"
    )
    with pytest.raises(ValueError, match=r"^no exercise 'nope'; the exercises are: masked_load"):
        check("nope", str(missing))


def _report(*statuses: GateStatus) -> VerifyReport:
    gates = [GateResult(n, s, f"{n} said so") for n, s in zip(GATE_NAMES, statuses, strict=False)]
    return VerifyReport(problem="p", candidate="c", device="cpu", gates=gates)


@pytest.mark.parametrize(
    ("name", "statuses", "solved", "hint_of"),
    [
        ("layer_norm", ("pass", "pass", "pass", "skipped"), True, None),
        ("layer_norm", ("pass", "pass", "fail", "skipped"), False, "fp64"),
        ("layer_norm", ("pass", "fail", "skipped", "skipped"), False, "correctness"),
        ("layer_norm", ("fail", "skipped", "skipped", "skipped"), False, ""),
        ("catch_a_cheat", ("pass", "fail", "skipped", "skipped"), True, None),
        ("catch_a_cheat", ("pass", "pass", "fail", "skipped"), True, None),
        ("catch_a_cheat", ("pass", "pass", "pass", "skipped"), False, "pass"),
        ("catch_a_cheat", ("fail", "skipped", "skipped", "skipped"), False, "static"),
    ],
)
def test_a_grade_follows_the_gate_that_stopped_the_candidate(
    name: str, statuses: tuple[GateStatus, ...], solved: bool, hint_of: str | None
) -> None:
    ex = exercise(name)
    result = _judge(ex, _report(*statuses))
    assert result.solved is solved
    assert all(f"{s}" in result.message for s in ("static said so", "correctness said so"))
    if hint_of is None:
        assert "Hint:" not in result.message
    else:
        assert f"Hint: {ex.hints[hint_of]}" in result.message


@pytest.mark.lessons
@pytest.mark.slow
@pytest.mark.parametrize("name", list(WRONG_ANSWERS))
def test_exercise_solution_is_solved_and_wrong_answers_are_not(name: str) -> None:
    template, solution = _exercise_cells()[name]
    wrong = WRONG_ANSWERS[name]
    sources = [fill(template, solution)] + [fill(template, answer) for answer, _ in wrong]
    right, *graded = grade(name, sources, device="cpu")
    assert right.solved, right.message
    for result, (answer, gate) in zip(graded, wrong, strict=True):
        assert not result.solved, f"{answer!r} solved {name}:\n{result.message}"
        assert result.report is not None and result.report.failed_gate == gate, result.message
        assert "Hint:" in result.message


# ------------------------------------------------------- lesson 10: measured on a GPU only


def _run_lesson(path: Path, work: Path) -> nbformat.NotebookNode:
    shutil.copy(path, work / path.name)
    nb = nbformat.read(work / path.name, as_version=4)
    NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(work)}}
    ).execute()
    return nb


def _outputs(nb: nbformat.NotebookNode) -> tuple[str, int]:
    text = "".join(
        o.get("text", "")
        for c in nb.cells
        for o in c.get("outputs", [])
        if o["output_type"] == "stream"
    )
    charts = sum(
        1 for c in nb.cells for o in c.get("outputs", []) if "image/svg+xml" in o.get("data", {})
    )
    return text, charts


@pytest.mark.lessons
@pytest.mark.slow
def test_measured_lesson_shows_a_recording_only_where_one_exists(tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("with a GPU the lesson measures; this checks what a CPU reader sees")
    lesson = LESSONS / "10_measured.ipynb"
    bare = tmp_path / "bare"
    bare.mkdir()
    text, charts = _outputs(_run_lesson(lesson, bare))
    assert "no GPU recording ships with this lesson" in text and charts == 0
    # SYNTHETIC figures, made up for this test only (never shipped): the recording's shape.
    recorded = tmp_path / "recorded"
    (recorded / "recordings").mkdir(parents=True)
    elements = [4**k for k in range(6, 15)]
    sizes = [512, 1024, 2048, 4096, 8192]
    (recorded / "recordings" / "10_measured.json").write_text(
        json.dumps(
            {
                "schema": 1,
                "date": "2000-01-01",
                "machine": {"gpu": "SYNTHETIC H100", "torch": "t", "triton": "tr", "cuda": "c"},
                "bandwidth": {
                    "elements": elements,
                    "series": {"eager": [float(i + 1) for i in range(len(elements))]},
                },
                "matmul": {"sizes": sizes, "series": {"cuBLAS": [1.0, 2.0, 3.0, 4.0, 5.0]}},
            }
        )
    )
    text, charts = _outputs(_run_lesson(lesson, recorded))
    assert "RECORDING of a run on SYNTHETIC H100 on 2000-01-01" in text
    assert "not measured on this machine" in text and charts == 2
