"""Renaming a class through the syntax tree (``kernelopt_jupyter.renaming``), and every generated
candidate built from sources written the way KernelBench writes them: ``super(Model,
self).__init__()``, constructor arguments, plain tensor attributes (an RNN's ``self.hidden``),
docstrings that say "Model", tuple outputs and tuple init inputs."""

from __future__ import annotations

import ast
import importlib
import itertools
import json
import types
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn as nn

from kernelopt_jupyter.agents.rewrites.graph import rnn_meta_output
from kernelopt_jupyter.agents.rewrites.task import scan
from kernelopt_jupyter.agents.transforms import (
    TransformError,
    wrap_cuda_graph,
    wrap_cudnn_benchmark,
)
from kernelopt_jupyter.candidate import eager_dispatch_source
from kernelopt_jupyter.deploy.guard import accepted_cell_source, guard_best_source
from kernelopt_jupyter.problem import load_source_module, materialize, problem_from_source
from kernelopt_jupyter.renaming import RenameError, defines_class, rename_class

_names = itertools.count()

#: Written the way KernelBench writes its problems (the class named in its own body, a
#: docstring and a string that say "Model", positional and keyword constructor arguments with
#: defaults, a tuple init input, a hidden state kept as a plain attribute, a tuple output).
RNN_CELL = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """Model that runs an RNN cell over a sequence (a Model with its hidden state)."""

    def __init__(self, input_size: int, hidden_size: int, scale_shape=(1, 1), bias=True):
        super(Model, self).__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size, bias=bias)
        self.scale = nn.Parameter(torch.ones(scale_shape + (hidden_size,)))
        self.register_buffer("steps", torch.zeros(()))
        self.hidden = torch.randn((batch_size, hidden_size))  # kept outside the state_dict
        self.label = "Model"

    @staticmethod
    def squash(x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x)

    def forward(self, x: torch.Tensor):
        hidden = self.hidden.to(x.device)
        for t in range(x.shape[0]):
            hidden = Model.squash(self.i2h(torch.cat((x[t], hidden), dim=1)))
        assert isinstance(self, Model)
        return hidden * self.scale[0], hidden.sum(dim=1)


batch_size = 3
input_size = 5
hidden_size = 4


def get_inputs():
    return [torch.randn(6, batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, (1,)]
'''

#: A GEMM + bias + ReLU, which a graph rewrite turns into the cuBLASLt epilogue.
GEMM_RELU = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Model that performs a matrix multiplication and a ReLU.
    """

    def __init__(self, in_features, out_features):
        super(Model, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.gemm(x))


batch_size = 4
in_features = 16
out_features = 8


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
'''


def _load(source: str) -> types.ModuleType:
    return load_source_module(source, f"renaming_test_{next(_names)}")


def _reference(source: str) -> tuple[Any, Any, list[Any], list[Any]]:
    """The problem, its reference model (weights and hidden state under seed 0), init, inputs."""
    problem = problem_from_source(source, "<kernelbench-style>", validate=False)
    loaded = materialize(problem)
    return problem, loaded.make_model("cpu", seed=0), loaded.init_inputs(), loaded.make_inputs(1)


def _same_outputs(got: Any, want: Any) -> None:
    if isinstance(want, torch.Tensor):
        torch.testing.assert_close(got, want)
        return
    assert type(got) is type(want) and len(got) == len(want)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)


def _built_like_the_reference(source: str, reference_source: str, run: bool = True) -> None:
    """``source``'s ModelNew, built like the reference (seed 0) with its init inputs, loads the
    reference's weights strictly and (``run``) computes the same outputs on the CPU."""
    _problem, reference, init, inputs = _reference(reference_source)
    torch.manual_seed(0)
    model = _load(source).ModelNew(*init)
    model.load_state_dict(reference.state_dict(), strict=True)
    if run:
        with torch.no_grad():
            _same_outputs(model(*inputs), reference(*inputs))


# ---------------------------------------------------------------------- the rename itself


def test_rename_follows_every_reference_and_leaves_text_alone() -> None:
    source = '''import torch.nn as nn


class Model(nn.Module):  # the reference: Model
    """Model that does a thing; see Model."""

    def __init__(self, n, Model_size=3):
        super(Model, self).__init__()
        self.Model = "Model"
        self.ModelFacts = Model_size

    def forward(self, x, Model=None):
        kind = Model  # a parameter of that name is its own
        return x if isinstance(x, type(self)) else Model_of(x), f"{Model}"

    def copy(self):
        return Model(self.ModelFacts)


def Model_of(x):
    return Model.forward(None, x, Model=1)


ALIAS = Model
'''
    text = rename_class(source, "Model", "ModelNew")
    assert "class ModelNew(nn.Module):  # the reference: Model\n" in text
    assert '"""Model that does a thing; see Model."""' in text
    assert "super(ModelNew, self).__init__()" in text
    assert 'self.Model = "Model"' in text and "self.ModelFacts = Model_size" in text
    assert "kind = Model  # a parameter" in text and 'f"{Model}"' in text
    assert "return ModelNew(self.ModelFacts)" in text
    assert "def Model_of(x):" in text and "return ModelNew.forward(None, x, Model=1)" in text
    assert "ALIAS = ModelNew" in text
    # Only identifiers changed: the text is the same once they are put back.
    assert text.replace("ModelNew", "Model") == source
    assert defines_class(text, "ModelNew") and not defines_class(text, "Model")


def test_rename_follows_globals_comprehensions_and_nested_scopes() -> None:
    source = """class Model:
    pass


def f():
    global Model
    Model = Model
    return [Model for _ in range(2)], [Model for Model in range(2)], lambda Model: Model


class Holder:
    Model = 1
    seen = Model

    def method(self):
        return Model
"""
    text = rename_class(source, "Model", "Renamed")
    assert "global Renamed\n    Renamed = Renamed" in text
    assert "[Renamed for _ in range(2)], [Model for Model in range(2)], lambda Model: Model" in text
    assert "    Model = 1\n    seen = Model\n" in text  # the class body's own name
    assert "        return Renamed\n" in text  # a method sees the module's name
    ast.parse(text)


def test_rename_says_what_is_wrong() -> None:
    with pytest.raises(RenameError, match="defines no top-level class Model"):
        rename_class("def Model():\n    pass\n", "Model", "ModelNew")
    with pytest.raises(RenameError, match="already defines ModelNew"):
        rename_class("class Model:\n    pass\n\n\nModelNew = 1\n", "Model", "ModelNew")
    with pytest.raises(RenameError, match="does not parse"):
        rename_class("class Model(:\n", "Model", "ModelNew")


# ---------------------------------------------------------------------- generated candidates


def test_eager_dispatch_candidate_of_a_kernelbench_source_matches_the_reference() -> None:
    problem, *_ = _reference(RNN_CELL)
    source = eager_dispatch_source(problem)
    assert "super(ModelNew, self).__init__()" in source and "ModelNew.squash(" in source
    assert '"""Model that runs an RNN cell' in source and 'self.label = "Model"' in source
    _built_like_the_reference(source, RNN_CELL)


def test_cuda_graph_wrapper_over_the_eager_candidate_builds_and_runs_on_the_cpu() -> None:
    problem, *_ = _reference(RNN_CELL)
    graphed = wrap_cuda_graph(eager_dispatch_source(problem))
    assert "super(_ModelNewEager, self).__init__()" in graphed
    # On the CPU the wrapper runs the plain forward: the same outputs as the reference.
    _built_like_the_reference(graphed, RNN_CELL)
    # Wrapped again (the vendor choice over a graphed candidate), still one chain of classes.
    _built_like_the_reference(wrap_cudnn_benchmark(graphed), RNN_CELL)
    with pytest.raises(TransformError, match="already replays"):
        wrap_cuda_graph(graphed)


def test_keyword_init_arguments_reach_the_wrapped_candidate() -> None:
    problem, reference, _init, inputs = _reference(RNN_CELL)
    graphed = _load(wrap_cuda_graph(eager_dispatch_source(problem)))
    torch.manual_seed(0)
    model = graphed.ModelNew(5, hidden_size=4, scale_shape=(1,), bias=True)
    model.load_state_dict(reference.state_dict(), strict=True)
    with torch.no_grad():
        _same_outputs(model(*inputs), reference(*inputs))


def test_rewrite_candidates_of_a_kernelbench_source_build() -> None:
    found = scan(GEMM_RELU, "<gemm-relu>")
    assert found.matches, found.error  # the docstring's "Model" no longer stops the rewrite
    for match in found.matches:
        assert "super(_KernelOptReference, self).__init__()" in match.eager_source
        assert "Model that performs a matrix multiplication" in match.eager_source
        # A candidate launching KernelOPT's own Triton kernel runs on the CPU only under
        # Triton's interpreter (its values are checked in tests/test_pointwise_kernel.py): the
        # renaming is about building it and loading the reference's weights.
        run = not match.kernels
        _built_like_the_reference(match.eager_source, GEMM_RELU, run)
        _built_like_the_reference(wrap_cuda_graph(match.eager_source), GEMM_RELU, run)
        problem = _load(match.problem_source)
        assert issubclass(problem.Model, problem._KernelOptReference)


def test_the_scan_reports_instead_of_raising_on_a_log_of_an_input() -> None:
    source = GEMM_RELU.replace(
        "return torch.relu(self.gemm(x))", "return torch.relu(self.gemm(torch.log(x)))"
    )
    found = scan(source, "<log-input>")  # raised IndexError before
    assert found.matches


@pytest.mark.parametrize(
    "layer",
    [
        nn.LSTM(4, 6, num_layers=2),
        nn.LSTM(4, 6, num_layers=2, bidirectional=True, batch_first=True, proj_size=3),
        nn.GRU(4, 6, num_layers=3, bidirectional=True),
        nn.RNN(4, 6, batch_first=True),
    ],
    ids=["lstm", "lstm-bidirectional-proj", "gru-bidirectional", "rnn-batch-first"],
)
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_state", [True, False])
def test_rnn_shapes_on_meta_are_the_layers_own(layer: Any, batched: bool, with_state: bool) -> None:
    layer = layer.to("meta")
    x = torch.empty((2, 5, 4) if batched else (5, 4), device="meta")
    args: list[Any] = [x]
    if with_state:
        _, state = layer(x)
        args.append(state)
    want = layer(*args)
    got = rnn_meta_output(layer, tuple(args), {})

    def shapes(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return (tuple(value.shape), value.dtype, value.device.type)
        return [shapes(v) for v in value]

    assert shapes(got) == shapes(want)


def test_the_guard_and_the_accepted_cell_keep_tuple_init_inputs() -> None:
    source = RNN_CELL.replace(
        "self.scale = nn.Parameter(torch.ones(scale_shape + (hidden_size,)))",
        "assert isinstance(scale_shape, tuple)\n"
        "        self.scale = nn.Parameter(torch.ones(scale_shape + (hidden_size,)))",
    )
    # The guard carries parameters and buffers only: a hidden state drawn at random in the
    # constructor would be the candidate's own draw (see the report of this change).
    source = source.replace("self.hidden = torch.randn(", "self.hidden = torch.zeros(")
    problem, reference, _init, inputs = _reference(source)
    eager = eager_dispatch_source(problem)
    for text in (
        guard_best_source(problem, eager, "cpu"),
        accepted_cell_source(problem, eager, "cpu"),
    ):
        assert "guard not added" not in text and "KERNELOPT_INIT = [5, 4, (1,)]" in text
        guarded = _load(text).kernelopt_guarded(reference)
        with torch.no_grad():
            out = guarded(*inputs)
        _same_outputs(out, reference(*inputs))
    assert json.loads(json.dumps([5, 4, (1,)])) == [5, 4, [1]]  # why JSON alone lost them


def test_the_report_notebook_check_builds_both_models_alike() -> None:
    """The report's last cell builds the reference and the winner and compares them on one
    input: a hidden state the constructor draws is the same in both."""
    from kernelopt_jupyter.event_payloads import SessionStarted
    from kernelopt_jupyter.session.report import _final_cells

    problem, *_ = _reference(RNN_CELL)
    best = types.SimpleNamespace(id="c1", source=eager_dispatch_source(problem))
    state = types.SimpleNamespace(candidates={"c1": best}, best="c1")
    started = SessionStarted(kind="module")
    check = "".join(_final_cells(state, started, True)[-1]["source"])  # type: ignore[arg-type]
    scope: dict[str, Any] = {"__name__": "report"}
    for text in (RNN_CELL, "REFERENCE = Model\n", best.source, check):
        exec(compile(text, "<report cell>", "exec"), scope)


def test_the_harvest_builds_from_a_kernelbench_source_or_says_why_not() -> None:
    from kernelopt_jupyter.analysis import harvest_problem

    problem, reference, init, _inputs = _reference(GEMM_RELU)
    harvest = harvest_problem(problem, "cpu", variants=False)
    assert harvest.ok, harvest.error
    model = _load(harvest.source).ModelNew(*init)
    model.load_state_dict(reference.state_dict(), strict=True)
    # A forward that reads a tensor kept outside the state_dict cannot be harvested: said so.
    problem, *_ = _reference(RNN_CELL)
    harvest = harvest_problem(problem, "cpu", variants=False)
    assert not harvest.ok and "self.hidden" in harvest.error, harvest.error


def test_an_export_of_a_kernelbench_candidate_loads_with_tuple_init_inputs(
    tmp_path: Path,
) -> None:
    """``kernelopt export`` of the eager candidate, then the package's ``load()``: the
    manifest's JSON turned ``(1,)`` into ``[1]``, which a constructor adding to it refused."""
    import contextlib
    import io
    import sys

    from deploy_cases import make_run

    from kernelopt_jupyter.cli.main import main

    source = RNN_CELL.replace("self.hidden = torch.randn(", "self.hidden = torch.zeros(")
    problem, reference, _init, inputs = _reference(source)
    run = make_run(tmp_path / "run", eager_dispatch_source(problem), source)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(
            ["export", str(run), "--device", "cpu", "--seeds", "1", "--fixed-shape", "--json"]
        )
    assert code == 0, out.getvalue()[-800:]
    package = Path(json.loads(out.getvalue())["package"])
    sys.path.insert(0, str(package.parent))
    try:
        exported = importlib.import_module(package.name)
        model = exported.load()
        model.reference.load_state_dict(reference.state_dict())
        with torch.no_grad():
            _same_outputs(model(*inputs), reference(*inputs))
    finally:
        sys.path.remove(str(package.parent))
        for name in [n for n in sys.modules if n.split(".")[0] == package.name]:
            del sys.modules[name]
