"""Exercises graded by the gates: a kernel with a blank the learner fills, checked by the verifier.

An exercise is a reference problem (a small ``Model``, sized for Triton's CPU interpreter) and a
candidate file the learner completes. The blank is the region between two marker lines::

    # >>> your code: what to write
    mask = ...
    # <<< your code

:func:`check` reads the file, runs the verifier's gates on it (static, correctness, the float64
referee; never the performance gate: an exercise is about getting the kernel right), and prints
whether the exercise is solved, each gate's line and, when it is not, the hint for the gate that
stopped it (a blank still holding ``...`` is not verified). Lesson 9
(``notebooks/lessons/09_exercises.ipynb``) holds the exercises' text, their blanks and their
solutions; this module holds what grades them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kernelopt_jupyter.verify.report import VerifyOptions, VerifyReport

if TYPE_CHECKING:
    from kernelopt_jupyter.problem import Problem

#: The lines that open and close the blank (the text after them is the task, for the reader).
BLANK_START = "# >>> your code"
BLANK_END = "# <<< your code"
#: A line of a blank not filled yet: ``...`` alone or assigned (``mask = ...``).
_PLACEHOLDER = re.compile(r"(?:[\w\[\], ]+=\s*)?\.\.\.")


@dataclass(frozen=True)
class Exercise:
    """One exercise: the reference it is graded against and the hints its failures get.

    ``hints`` maps a gate name to the hint shown when that gate stops the candidate; ``""``
    is the hint for any other gate. A *cheat* exercise (``cheat=True``) is solved when the
    verifier catches the candidate: it fails the correctness or fp64 gate after loading and
    compiling (so it did run), and ``hints["pass"]`` is shown when the verifier passes it.
    """

    name: str
    reference: str
    hints: dict[str, str] = field(default_factory=dict)
    cheat: bool = False

    def hint(self, gate: str | None) -> str:
        """The hint for a candidate stopped by ``gate`` (``None``: it passed every gate)."""
        return self.hints.get(gate or "pass") or self.hints.get("", "")

    def problem(self) -> Problem:
        """The reference as a verifiable problem."""
        from kernelopt_jupyter.problem import problem_from_source

        return problem_from_source(self.reference, f"{self.name}_reference.py")


def _reference(body: str) -> str:
    return "import torch\nimport torch.nn as nn\n\n" + body.strip("\n") + "\n"


EXERCISES: dict[str, Exercise] = {
    e.name: e
    for e in (
        Exercise(
            "masked_load",
            _reference(
                """
N = 1000  # not a multiple of the block: the last program runs past the end


class Model(nn.Module):
    def forward(self, x):
        return x * 3.0 + 1.0


def get_inputs():
    return [torch.randn(N)]
"""
            ),
            {
                "": "The last program owns lanes past element n - 1: the mask must switch off "
                "exactly those, and keep every real element.",
            },
        ),
        Exercise(
            "broadcast_2d",
            _reference(
                """
ROWS, COLS = 40, 72


class Model(nn.Module):
    def forward(self, x, col_scale, row_bias):
        return x * col_scale[None, :] + row_bias[:, None]


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randn(COLS), torch.randn(ROWS)]
"""
            ),
            {
                "": "Element (r, c) of a row-major ROWS x COLS tensor is at r * n_cols + c. Make "
                "`rows` a column (`rows[:, None]`) and `cols` a row (`cols[None, :]`) so that "
                "they broadcast to a BR x BC tile; the mask needs both bounds.",
            },
        ),
        Exercise(
            "row_min",
            _reference(
                """
ROWS, COLS = 24, 100


class Model(nn.Module):
    def forward(self, x):
        return x.amin(dim=-1)


def get_inputs():
    return [torch.rand(ROWS, COLS) + 0.5]  # positive, like distances
"""
            ),
            {
                "": "Masked lanes take the `other=` value, and then they take part in the "
                "reduction: for a minimum they must hold a value that can never win "
                '(`float("inf")`), not 0.',
            },
        ),
        Exercise(
            "multi_block_sum",
            _reference(
                """
N = 3000  # six programs of 512


class Model(nn.Module):
    def forward(self, x):
        return x.sum()


def get_inputs():
    return [torch.randn(N)]
"""
            ),
            {
                "": "Every program holds one partial sum, and all of them must reach the same "
                "output. A plain store lets the last program's value win; an atomic add "
                "(`tl.atomic_add`) adds to memory without losing another program's update "
                "(which is why the output starts at zero).",
            },
        ),
        Exercise(
            "online_softmax",
            _reference(
                """
ROWS, COLS = 8, 300  # a row is five blocks of 64


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(ROWS, COLS) * 3.0]
"""
            ),
            {
                "": "`l` is a sum of exp(x - m) for the old max `m`. When the max rises to "
                "`m_new`, each of those terms must be rescaled by exp(m - m_new) before the "
                "new block's exp(x - m_new) are added.",
            },
        ),
        Exercise(
            "layer_norm",
            _reference(
                """
ROWS, COLS = 8, 200


class Model(nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.norm = nn.LayerNorm(cols)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(ROWS, COLS) + 2.0]  # activations off zero, as they often are


def get_init_inputs():
    return [COLS]
"""
            ),
            {
                "correctness": "Two things to check: the masked lanes loaded 0, so `x - mean` is "
                "`-mean` there, not 0 (use `tl.where(mask, x - mean, 0.0)`); and the variance "
                "is the mean of the squared differences, divided by n_cols (biased, as "
                "LayerNorm uses).",
                "fp64": "The values are close but less accurate than the reference's: "
                "E[x^2] - mean^2 cancels catastrophically when the mean is large compared with "
                "the spread (the verifier's shifted call). Square the differences from the mean "
                "instead (two passes over the row in registers).",
                "": "The variance is the mean of (x - mean)^2 over the row's real elements.",
            },
        ),
        Exercise(
            "matmul_k_loop",
            _reference(
                """
M, N, K = 32, 48, 64


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]
"""
            ),
            {
                "": "At step k the A tile is rows x (k + ks) and the B tile is (k + ks) x cols: "
                "offset both by k, mask the K edge with `other=0.0`, and add `tl.dot(a, b, "
                'input_precision="ieee")` to `acc`.',
            },
        ),
        Exercise(
            "catch_a_cheat",
            _reference(
                """
N = 2048


class Model(nn.Module):
    def forward(self, x):
        return x * 2.0


def get_inputs():
    return [torch.randn(N)]
"""
            ),
            {
                "pass": "The verifier passed it: the forward returned what this call "
                "computed, which is honest work. Make it return something this call did not "
                "compute, for instance the answer it kept for the same input buffer "
                "(`x.data_ptr()` as the key).",
                "static": "A cheat must still load and launch its kernel; read the static "
                "gate's line and fix what stops it.",
                "": "",
            },
            cheat=True,
        ),
    )
}


@dataclass
class Grade:
    """How a candidate did on an exercise: solved or not, the verifier's report, and the text
    :func:`check` prints."""

    exercise: str
    solved: bool
    message: str
    report: VerifyReport | None = None


def exercise(name: str) -> Exercise:
    """The exercise called ``name``; ValueError (one line) when there is none."""
    if name not in EXERCISES:
        raise ValueError(f"no exercise {name!r}; the exercises are: {', '.join(EXERCISES)}")
    return EXERCISES[name]


def _blank_lines(source: str) -> tuple[int, int] | None:
    lines = source.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip().startswith(BLANK_START)), None)
    if start is None:
        return None
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].strip().startswith(BLANK_END)), None
    )
    return None if end is None else (start, end)


def blank(source: str) -> str | None:
    """The text between the blank's markers, or None when the source has no blank."""
    span = _blank_lines(source)
    if span is None:
        return None
    return "\n".join(source.splitlines()[span[0] + 1 : span[1]])


def is_unfilled(source: str) -> bool:
    """Whether the blank still holds only placeholders (``...``) and comments."""
    text = blank(source)
    if text is None:
        return False
    code = [line.strip() for line in text.splitlines() if line.strip()]
    code = [line for line in code if not line.startswith("#")]
    return all(_PLACEHOLDER.fullmatch(line) for line in code)


def fill(source: str, answer: str) -> str:
    """``source`` with its blank replaced by ``answer``, indented as the opening marker is
    (the markers stay). ValueError when the source has no blank."""
    span = _blank_lines(source)
    if span is None:
        raise ValueError(f"no blank ({BLANK_START} ... {BLANK_END}) in the source")
    lines = source.splitlines()
    indent = lines[span[0]][: len(lines[span[0]]) - len(lines[span[0]].lstrip())]
    body = [indent + line if line.strip() else "" for line in answer.strip("\n").splitlines()]
    trailing = "\n" if source.endswith("\n") else ""
    return "\n".join(lines[: span[0] + 1] + body + lines[span[1] :]) + trailing


def _gate_lines(report: VerifyReport) -> list[str]:
    return [f"  {g.name:12} {g.status:8} {g.detail}" for g in report.gates]


def _judge(ex: Exercise, report: VerifyReport) -> Grade:
    failed = report.failed_gate
    if ex.cheat:
        solved = failed in ("correctness", "fp64")
        if solved:
            head = f"Solved: the {failed} gate caught the cheat."
        elif failed is None:
            head = "Not yet: the verifier passed it, so it is not a cheat."
        else:
            head = f"Not yet: the {failed} gate stopped it before any cheating could show."
    else:
        solved = failed is None
        head = (
            "Solved: every gate that ran passed."
            if solved
            else f"Not yet: the {failed} gate failed."
        )
    lines = [head, *_gate_lines(report)]
    hint = "" if solved else ex.hint(failed)
    if hint:
        lines.append(f"Hint: {hint}")
    return Grade(ex.name, solved, "\n".join(lines), report)


def grade(name: str, sources: list[str], *, device: str = "auto") -> list[Grade]:
    """Grade candidate sources for the exercise ``name``, with one verification worker for all
    of them (each candidate still in a fresh process). An unfilled blank is not verified."""
    from kernelopt_jupyter.verify import verify_candidates

    ex = exercise(name)
    options = VerifyOptions(device=device, seeds=1, run_performance=False)
    todo = [s for s in sources if not is_unfilled(s)]
    reports = iter(verify_candidates(ex.problem(), todo, options) if todo else [])
    grades = []
    for source in sources:
        if is_unfilled(source):
            message = (
                "Not yet: the blank still holds `...`; write your code there and run the "
                "%%writefile cell again."
            )
            grades.append(Grade(ex.name, False, message))
        else:
            grades.append(_judge(ex, next(reports)))
    return grades


def check(name: str, path: str, *, device: str = "auto") -> Grade:
    """Grade the candidate file ``path`` for the exercise ``name`` and print the outcome (the
    gates' lines, and a hint when it is not solved yet)."""
    exercise(name)
    file = Path(path)
    if not file.is_file():
        result = Grade(name, False, f"{path} not found: run the %%writefile cell above it first")
    else:
        result = grade(name, [file.read_text()], device=device)[0]
    print(result.message)
    return result
