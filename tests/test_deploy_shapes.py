"""Shape sets: the convention (declared, fixed, person's), derived sizes, and the evidence of
hard-coded sizes; ``kernelopt shapes``. Nothing here runs a kernel."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from kernelopt_jupyter.cli.main import main
from kernelopt_jupyter.deploy import generalize
from kernelopt_jupyter.deploy.evidence import hard_coded_sizes
from kernelopt_jupyter.deploy.shapes import (
    DERIVED_SIZES,
    ShapeSet,
    parse_shape_spec,
    shape_problem,
    shape_sets,
    variable_dims,
)
from kernelopt_jupyter.problem import ProblemError, materialize, problem_from_source
from kernelopt_jupyter.verify import GateResult, VerifyOptions, VerifyReport

BASE = """
import torch
import torch.nn as nn

ROWS = 64
COLS = 128


class Model(nn.Module):
    def __init__(self, cols):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(cols))

    def forward(self, x):
        return torch.relu(x + self.bias)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [COLS]
"""


def _problem(extra: str = "", base: str = BASE):
    return problem_from_source(textwrap.dedent(base) + textwrap.dedent(extra), "p.py")


def test_only_sizes_that_get_inputs_alone_reads_can_vary() -> None:
    assert variable_dims(_problem()) == {"ROWS": 64}  # COLS also builds the model


def test_a_size_read_in_a_default_argument_or_another_function_is_fixed() -> None:
    source = BASE.replace("def get_inputs():", "def get_inputs(n=ROWS):")
    assert variable_dims(_problem(base=source)) == {}
    helper = BASE + "\n\ndef reference(x):\n    return x[:ROWS]\n"
    assert variable_dims(_problem(base=helper)) == {}


def test_derived_shapes_try_odd_sizes_and_a_batch_twice_as_large() -> None:
    sets = shape_sets(_problem())
    assert sets[0] == ShapeSet("as given", {}, "problem")
    derived = {s.overrides["ROWS"] for s in sets[1:]}
    assert derived == {*DERIVED_SIZES, 128} - {1023}  # 1023 rows outgrow 4x the own bytes
    assert all(s.origin == "derived" for s in sets[1:])


def test_declared_person_and_fixed_shapes() -> None:
    problem = _problem(
        "\nKERNELOPT_SHAPES = [{'ROWS': 3}, {'ROWS': 64}]\nKERNELOPT_FIXED_SHAPE = True\n"
    )
    sets = shape_sets(problem, person=[{"ROWS": 5}, {"ROWS": 3}])
    # ROWS=64 is the problem's own shape and ROWS=3 is declared already: each set once.
    assert [(s.name, s.origin) for s in sets] == [
        ("as given", "problem"),
        ("ROWS=3", "declared"),
        ("ROWS=5", "person"),
    ]


def test_get_shape_sets_and_the_fixed_flag() -> None:
    problem = _problem("\n\ndef get_shape_sets():\n    return [{'ROWS': r} for r in (7, 9)]\n")
    sets = shape_sets(problem, fixed=True)
    assert [s.name for s in sets] == ["as given", "ROWS=7", "ROWS=9"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("\nKERNELOPT_SHAPES = [{'COLS': 3}]\n", "sets COLS, which is read by more than"),
        ("\nKERNELOPT_SHAPES = [{'DEPTH': 3}]\n", "not a module-level integer constant"),
        ("\nKERNELOPT_SHAPES = [{'ROWS': 0}]\n", "whole numbers >= 1"),
        ("\nKERNELOPT_SHAPES = {'ROWS': 3}\n", "must be a list of dicts"),
        ("\nKERNELOPT_FIXED_SHAPE = 'yes'\n", "KERNELOPT_FIXED_SHAPE must be True or False"),
    ],
)
def test_bad_declarations_are_one_line_errors(extra: str, message: str) -> None:
    with pytest.raises(ProblemError, match=message) as info:
        shape_sets(_problem(extra))
    assert str(info.value).startswith("p.py: ") and "\n" not in str(info.value)


def test_a_shape_problem_makes_inputs_at_its_sizes_and_keeps_the_model() -> None:
    problem = _problem()
    loaded = materialize(shape_problem(problem, ShapeSet("ROWS=129", {"ROWS": 129}, "person")))
    assert list(loaded.make_inputs(seed=0)[0].shape) == [129, 128]
    assert list(loaded.make_model().bias.shape) == [128]
    assert shape_problem(problem, ShapeSet("as given")) is problem


def test_parse_shape_spec() -> None:
    assert parse_shape_spec("ROWS=3,COLS=5") == {"ROWS": 3, "COLS": 5}
    for bad in ("ROWS", "ROWS=x", "ROWS=0", "3=3"):
        with pytest.raises(ValueError, match="--shape"):
            parse_shape_spec(bad)


def test_hard_coded_sizes_of_the_own_shape_are_evidence_launch_settings_are_not() -> None:
    source = textwrap.dedent(
        """
        LAUNCH_CONFIGS = {"k": {"XBLOCK": 8192, "num_warps": 4}}
        def forward(x):
            buf = empty_strided((64, 128), (128, 1))
            k[(8,)](buf, 8192, XBLOCK=8192)
            return buf
        """
    )
    own = {64, 128, 8192}
    assert hard_coded_sizes(source, own, {129, 128, 16512}) == [64, 8192]
    assert hard_coded_sizes(source, own, own) == []
    clean = "def forward(x):\n    return k[(8,)](x, x.numel(), XBLOCK=8192, num_warps=4)\n"
    assert hard_coded_sizes(clean, own, {129, 128, 16512}) == []
    # A copy of the problem's input code and a size constant only it reads are no evidence;
    # the same constant read by the launcher is.
    copied = "ROWS = 64\n\ndef get_inputs():\n    return [randn(ROWS, 8192)]\n"
    assert hard_coded_sizes(copied, own, {129, 128, 16512}) == []
    used = copied + "\ndef forward(x):\n    return k[(ROWS,)](x)\n"
    assert hard_coded_sizes(used, own, {129, 128, 16512}) == [64]


def test_cli_lists_the_shape_sets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.py"
    path.write_text(textwrap.dedent(BASE))
    assert main(["shapes", str(path), "--shape", "ROWS=5", "--fixed-shape", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["variable"] == {"ROWS": 64} and data["fixed_shape"] is True
    assert [s["name"] for s in data["shape_sets"]] == ["as given", "ROWS=5"]
    assert [s["inputs"] for s in data["shape_sets"]] == [[[64, 128]], [[5, 128]]]
    assert main(["shapes", str(path), "--shape", "COLS=5"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("kernelopt shapes: ") and "COLS" in err and "\n" not in err
    with pytest.raises(SystemExit) as exit_info:
        main(["shapes", str(path), "--shape", "ROWS=zero"])
    assert exit_info.value.code == 2


def _report(performance: str, correctness: str = "pass") -> VerifyReport:
    gates = [
        GateResult("static", "pass", "ok"),
        GateResult("correctness", correctness, "seeds match", {"max_abs_err": 1e-6}),
        GateResult("fp64", "pass", "ok", {"err_ratio": 0.5}),
        GateResult("performance", performance, "0.91x (CI 0.88-0.93)", {"speedup": 0.91}),
    ]
    return VerifyReport("p.py", "<candidate>", "cuda", gates)


@pytest.mark.parametrize(
    ("performance", "correctness", "verdict", "failed"),
    [
        ("fail", "pass", "pass", None),  # correct but slower: the shape stays admitted
        ("pass", "pass", "pass", None),
        ("skipped", "fail", "fail", "correctness"),
    ],
)
def test_a_shape_is_admitted_for_correctness_not_speed(
    monkeypatch: pytest.MonkeyPatch, performance: str, correctness: str, verdict: str, failed: str
) -> None:
    # The verifier's answer is given here so the mapping of its gates to a shape's verdict is
    # checked without a GPU (the performance gate runs only there).
    monkeypatch.setattr(
        generalize, "verify_candidate", lambda *a, **k: _report(performance, correctness)
    )
    check = generalize._verify_one(
        _problem(), "", ShapeSet("as given"), VerifyOptions(device="cuda"), first=True
    )
    assert (check.verdict, check.failed_gate, check.speedup) == (verdict, failed, 0.91)
    assert ("performance gate failed: 0.91x" in check.detail) == (performance == "fail")
