"""The CPU tier's size rule (``kernelopt_jupyter.sizes``) on small inline problems: which
constants shrink and how far, the divisibility kept, the constants left alone, the back-off
when the shrunk reference raises, a problem already small left as written, the published
text given back, and the session, CLI and export that carry it (docs/problems.md, "Sizes on
the CPU")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kernelopt_jupyter import sizes
from kernelopt_jupyter.problem import Problem, materialize, problem_from_source
from kernelopt_jupyter.sizes import (
    SIDE,
    TARGET,
    SizesError,
    published_source,
    resolve_sizes,
    size_slots,
)

HEAD = "import torch\nimport torch.nn as nn\n\n"

ELEMENTWISE = (
    HEAD
    + """
class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x):
        return torch.relu(x)

batch_size = 4096
dim = 393216

def get_inputs():
    return [torch.rand(batch_size, dim)]

def get_init_inputs():
    return []
"""
)


def _problem(source: str, name: str = "inline.py") -> Problem:
    return problem_from_source(source, name, validate=False)


def _shrunk(source: str, name: str = "inline.py") -> tuple[Problem, sizes.SizesReport]:
    return resolve_sizes(_problem(source, name), "auto", "cpu")


def _values(problem: Problem) -> dict[str, Any]:
    """The module's constants as the shrunk text sets them."""
    module = materialize(problem).module
    return {k: v for k, v in vars(module).items() if isinstance(v, int | tuple | list)}


def _elements(problem: Problem) -> int:
    loaded = materialize(problem)
    model = loaded.make_model("cpu")
    inputs = loaded.make_inputs(seed=0, device="cpu")
    return sum(t.numel() for t in inputs) + model(*inputs).numel()


def test_an_elementwise_problem_shrinks_within_the_budget() -> None:
    small, report = _shrunk(ELEMENTWISE)
    assert report.mode == "small" and set(report.changed) == {"batch_size", "dim"}
    assert report.changed["batch_size"][0] == 4096 and report.changed["dim"][0] == 393216
    values = _values(small)
    assert 2 <= values["batch_size"] <= SIDE and 2 <= values["dim"] <= SIDE
    assert _elements(small) <= TARGET
    assert report.check_s is not None and report.elements["published"]["io"] > 1e9
    # What the opening notice says: every constant, from what to what.
    said = report.describe()
    assert f"batch_size 4096 -> {values['batch_size']}" in said
    assert f"dim 393216 -> {values['dim']}" in said
    # The file is not edited: its own text comes back from the shrunk one.
    assert published_source(small.source) == ELEMENTWISE
    assert small.meta["sizes"]["changed"] == report.changed


def test_the_rule_is_deterministic_and_idempotent() -> None:
    small, report = _shrunk(ELEMENTWISE)
    sizes._MEMO.clear()  # as a fresh process (kernelopt verify) would run it
    again, second = _shrunk(ELEMENTWISE)
    assert again.source == small.source and second.changed == report.changed
    # A problem already shrunk (a run's problem.py) is shrunk the same way again.
    twice, third = resolve_sizes(small, "auto", "cpu")
    assert twice.source == small.source and third.changed == report.changed


def test_divisibility_between_constants_is_kept() -> None:
    source = (
        HEAD
        + """
class Model(nn.Module):
    def __init__(self, channels, groups, heads):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)
        self.heads = heads

    def forward(self, x):
        y = self.norm(x)
        b, c, n = y.shape
        return y.reshape(b, self.heads, c // self.heads, n).sum(2)

batch_size = 64
channels = 3072
groups = 6
heads = 48
length = 4096

def get_inputs():
    return [torch.rand(batch_size, channels, length)]

def get_init_inputs():
    return [channels, groups, heads]
"""
    )
    small, report = _shrunk(source)
    values = _values(small)
    assert report.mode == "small" and "channels" in report.changed
    assert values["channels"] < 3072 and values["channels"] % values["groups"] == 0
    assert values["channels"] % values["heads"] == 0  # 3072 = 48 * 64: a power-of-two ratio
    assert values["groups"] == 6  # at most KEEP: never shrunk


def test_small_and_window_constants_are_left_alone() -> None:
    source = (
        HEAD
        + """
class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding)
        self.pool = nn.AvgPool2d(pool_kernel_size)

    def forward(self, x):
        return self.pool(self.conv(x)).sum(dim)

batch_size = 16
in_channels = 3
out_channels = 64
kernel_size = (3, 5)
stride = 2
padding = 1
pool_kernel_size = 11
dim = 1
height = width = 1024

def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
"""
    )
    small, report = _shrunk(source)
    values = _values(small)
    assert report.mode == "small" and {"height", "width"} <= set(report.changed)
    assert values["height"] == values["width"] < 1024  # one assignment, both names
    kept = {"in_channels": 3, "kernel_size": (3, 5), "stride": 2, "padding": 1}
    kept |= {"pool_kernel_size": 11, "dim": 1}
    assert {k: values[k] for k in kept} == kept
    assert not set(kept) & set(report.changed)


def test_assignment_forms_the_rule_reads() -> None:
    source = """
M = 1024 * 2
h = w = 512
d, rows, cols = 16, 512, 512
shape = (4096, 3)
twice = 4096
twice = 8192
KERNELOPT_SHAPES = 4096
ratio = 0.5
flag = True
"""
    found = {s.key: s.value for s in size_slots(source)}
    assert found == {
        "M": 2048,
        "h": 512,
        "d": 16,
        "rows": 512,
        "cols": 512,
        "shape[0]": 4096,
        "shape[1]": 3,
    }
    chained = next(s for s in size_slots(source) if s.key == "h")
    assert chained.names == ("h", "w")
    shrinkable = {s.key for s in size_slots(source) if s.shrinkable}
    assert shrinkable == {"M", "h", "d", "rows", "cols", "shape[0]"}


def test_a_tuple_of_sizes_and_a_constant_expression_shrink() -> None:
    source = (
        HEAD
        + """
class Model(nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=1)

batch_size = 8192 * 2
input_shape = (8192 * 2,)

def get_inputs():
    return [torch.rand(batch_size, *input_shape)]
"""
    )
    small, report = _shrunk(source)
    values = _values(small)
    assert report.changed["batch_size"][0] == 16384
    assert report.changed["input_shape"] == [[16384], list(values["input_shape"])]
    assert values["input_shape"][0] <= SIDE
    assert published_source(small.source) == source


BACK_OFF = (
    HEAD
    + """
class Model(nn.Module):
    def forward(self, x):
        x[0, 0].item()  # a value: the meta device cannot run it, only the CPU run can tell
        if x.shape[1] < {needed}:
            raise ValueError("needs {needed} columns")
        return x * 2

batch_size = 64
dim = 100000

def get_inputs():
    return [torch.rand(batch_size, dim)]
"""
)


def test_a_reference_that_fails_shrunk_is_shrunk_less() -> None:
    small, report = _shrunk(BACK_OFF.replace("{needed}", "700"), "needs_700.py")
    values = _values(small)
    assert report.mode == "small" and "shrunk less" in report.note
    assert "needs 700 columns" in report.note
    assert 700 <= values["dim"] < 100000


def test_a_reference_that_fails_at_every_shrink_runs_at_published_sizes() -> None:
    problem = _problem(BACK_OFF.replace("{needed}", "50000"), "needs_50000.py")
    kept, report = resolve_sizes(problem, "auto", "cpu")
    assert kept.source == problem.source and not report.changed
    assert report.mode == "published" and report.fell_back and report.worth_saying
    assert "published sizes" in report.note and "needs 50000 columns" in report.note


def test_a_problem_already_small_is_unchanged() -> None:
    source = ELEMENTWISE.replace("4096", "16").replace("393216", "16384")
    problem = _problem(source)
    kept, report = resolve_sizes(problem, "auto", "cpu")
    assert kept.source == source and report.mode == "small" and not report.changed
    assert "already" in report.note and not report.worth_saying


def test_the_gpu_runs_published_sizes_unless_told() -> None:
    problem = _problem(ELEMENTWISE)
    kept, report = resolve_sizes(problem, "auto", "cuda")
    assert kept.source == ELEMENTWISE and report.mode == "published"
    small, told = resolve_sizes(problem, "small", "cuda")
    assert told.mode == "small" and told.changed and small.source != ELEMENTWISE
    # A shrunk problem asked for published sizes gets the file's own text back.
    back, again = resolve_sizes(small, "published", "cpu")
    assert back.source == ELEMENTWISE and again.mode == "published"
    with pytest.raises(SizesError):
        resolve_sizes(problem, "tiny", "cpu")


def test_problems_with_their_own_switch_and_kernel_problems_are_left_alone() -> None:
    switch = ELEMENTWISE.replace("import torch\n", "import os\nimport torch\n", 1).replace(
        "batch_size = 4096",
        'batch_size = 64 if os.environ.get("KERNELOPT_SMALL") == "1" else 4096',
    )
    kept, report = resolve_sizes(_problem(switch), "auto", "cpu")
    assert kept.source == switch and "KERNELOPT_SMALL" in report.note
    triton = """
import torch
import triton
import triton.language as tl

@triton.jit
def _k(x_ptr):
    pass

def launch(x):
    return x

N = 1 << 24

def get_inputs():
    return [torch.rand(N)]
"""
    kept, report = resolve_sizes(_problem(triton), "auto", "cpu")
    assert kept.source == triton and report.mode == "published" and "module" in report.note


def test_a_cpu_session_runs_the_shrunk_problem_and_says_so(tmp_path: Path) -> None:
    from kernelopt_jupyter.session import OptimizationSession, SearchOptions

    problem = _problem(ELEMENTWISE, str(tmp_path / "relu.py"))
    options = SearchOptions(device="cpu", out_dir=tmp_path / "run", memory_path=None)
    session = OptimizationSession(problem, options)
    assert session.sizes.mode == "small" and session.problem.source != ELEMENTWISE
    assert (tmp_path / "run" / "problem.py").read_text() == session.problem.source
    notice = session.opening_notice()
    assert notice.startswith("CPU run:") and "batch_size 4096 -> " in notice
    payload = session._write_files(None, "failed")
    assert payload["sizes"]["mode"] == "small" and "dim" in payload["sizes"]["changed"]
    written = json.loads((tmp_path / "run" / "result.json").read_text())
    assert written["sizes"] == json.loads(json.dumps(payload["sizes"]))
    # A resumed session (its problem.py holds the shrunk text) runs the same sizes.
    session.log.emit("session_started", problem=problem.path, options=options.to_dict())
    opened = OptimizationSession.open(tmp_path / "run")
    assert opened.problem.source == session.problem.source
    assert opened.sizes.changed == session.sizes.changed
    published = OptimizationSession(
        problem,
        SearchOptions(device="cpu", out_dir=tmp_path / "pub", memory_path=None, sizes="published"),
    )
    assert published.problem.source == ELEMENTWISE and "Sizes: published" in (
        published.opening_notice()
    )


def test_the_commands_take_sizes() -> None:
    from kernelopt_jupyter.cli.main import build_parser

    parser = build_parser()
    for argv in (
        ["optimize", "p.py"],
        ["verify", "p.py", "c.py"],
        ["bench", "p.py"],
        ["profile", "p.py"],
        ["export", "run"],
    ):
        assert parser.parse_args(argv).sizes == "auto"
        assert parser.parse_args([*argv, "--sizes", "published"]).sizes == "published"
    with pytest.raises(SystemExit):
        parser.parse_args(["optimize", "p.py", "--sizes", "tiny"])
