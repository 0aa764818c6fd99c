"""The float64 referee runs the reference model itself, converted in place and converted back
(``reference._InFloat64``): no float64 copy of the weights is kept beside the float32 model.
Driven through the reference process's own commands (``setup``, ``case``, ``referee``) in
this process, on the CPU: what is checked is that the float32 model comes back bit for bit
(parameters, buffers, a BatchNorm's statistics in training, bf16 weights, a forward that
raises), that the referee's figures are those of a float64 copy, and that a model whose
forward changes its own parameters gets a copy instead."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import torch

from kernelopt_jupyter.problem import problem_from_source
from kernelopt_jupyter.verify import reference, wire

TRAINING_BN = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(24, 16)
        self.bn = nn.BatchNorm1d(16)
        self.register_buffer("shift", torch.linspace(-1.0, 1.0, 16))

    def forward(self, x):
        return torch.tanh(self.bn(self.fc(x)) + self.shift)


def get_inputs():
    return [torch.randn(32, 24)]


def get_init_inputs():
    return []
"""


def _reference(source: str) -> reference.Reference:
    ref = reference.Reference()
    fields, blobs = wire.pack(
        [("problem", problem_from_source(source, "bn_problem.py"))], allow_pickle=True
    )
    reply, _ = ref.setup({"device": "cpu", "weights_seed": 0, **fields}, blobs)
    assert reply["ok"]
    return ref


def _state(model: torch.nn.Module) -> dict[str, tuple[Any, torch.Tensor]]:
    return {k: (v.dtype, v.detach().clone()) for k, v in model.state_dict().items()}


def _same(a: dict[str, tuple[Any, torch.Tensor]], b: dict[str, tuple[Any, torch.Tensor]]) -> bool:
    return a.keys() == b.keys() and all(
        a[k][0] == b[k][0] and torch.equal(a[k][1], b[k][1]) for k in a
    )


def _case(ref: reference.Reference, seed: int) -> tuple[dict[str, Any], list[Any]]:
    reply, blobs = ref.case({"seed": seed, "referee": True})
    assert reply["ok"] and reply.get("referee_pending")
    return reply, blobs


def test_the_referee_leaves_the_float32_model_as_it_was() -> None:
    ref = _reference(TRAINING_BN)
    model = ref.model
    assert model.training  # as constructed: the BatchNorm updates its statistics
    weight = model.fc.weight
    _case(ref, 1)
    after_case = _state(model)  # the float32 forward moved the running statistics
    reply, blobs = ref.referee()
    assert reply["ok"] and reply["fp64_reason"] is None
    assert _same(_state(model), after_case)  # the referee's forward changed nothing of it
    assert model.fc.weight is weight and weight.dtype == torch.float32
    assert ref.in64 is None and ref.model64 is None  # no float64 model kept

    # The referee's output is a float64 copy's on the same inputs (as before the change).
    inputs, _ = reference.transform_inputs(ref.loaded.make_inputs(1, "cpu"), {})
    twin = _reference(TRAINING_BN)  # setup's weights: the model as the case's forward began
    with torch.no_grad():
        expected = copy.deepcopy(twin.model).to(torch.float64)(inputs[0].double())
    out64 = wire.decode(reply["out64"], blobs, trusted=True).tensor
    assert out64.dtype == torch.float64 and torch.equal(out64, expected)


def test_low_precision_weights_come_back_exactly_and_a_raise_restores() -> None:
    ref = _reference(TRAINING_BN)
    ref.model.fc.to(torch.bfloat16)
    before = _state(ref.model)
    in64 = reference._InFloat64(ref.model)
    assert ref.model.fc.weight.dtype == torch.float64 == ref.model.bn.running_mean.dtype
    in64.restore()
    in64.restore()  # once only
    assert _same(_state(ref.model), before)
    assert ref.model.fc.weight.dtype == torch.bfloat16

    # A referee whose float64 forward raises: the reason, and the model back as it was.
    ref.model.float()
    before = _state(ref.model)
    ref.model.forward = lambda x: (_ for _ in ()).throw(RuntimeError("no float64 here"))
    ref.pending = (False, ref.loaded.make_inputs(2, "cpu"), 2, {}, [torch.float32])
    reply, _ = ref.referee()
    assert "cannot run in float64" in str(reply["fp64_reason"])
    assert _same(_state(ref.model), before) and ref.in64 is None


PARAM_CHANGING = TRAINING_BN.replace(
    "        return torch.tanh(self.bn(self.fc(x)) + self.shift)",
    "        with torch.no_grad():\n"
    "            self.fc.bias.add_(1.0)\n"
    "        return torch.tanh(self.bn(self.fc(x)) + self.shift)",
)


def test_a_forward_that_changes_its_parameters_gets_a_float64_copy() -> None:
    ref = _reference(PARAM_CHANGING)
    _case(ref, 1)
    assert ref.params_change
    after_case = _state(ref.model)
    reply, _ = ref.referee()
    assert reply["fp64_reason"] is None
    assert _same(_state(ref.model), after_case)  # the copy's bias moved, not the model's
    assert ref.model64 is not None and ref.in64 is None


@pytest.mark.parametrize("seed", [3, 4])
def test_referees_of_successive_cases_agree_with_a_copy(seed: int) -> None:
    """Several cases in a row (the model converted and restored each time) give the same
    float64 outputs as a float64 copy of the model as it stands before each referee."""
    ref = _reference(TRAINING_BN.replace("torch.tanh(", "torch.sigmoid("))
    ref.model.eval()
    for s in (seed, seed + 10):
        _case(ref, s)
        copy64 = copy.deepcopy(ref.model).to(torch.float64)
        reply, blobs = ref.referee()
        inputs = ref.loaded.make_inputs(s, "cpu")
        with torch.no_grad():
            expected = copy64(inputs[0].double())
        assert torch.equal(wire.decode(reply["out64"], blobs, trusted=True).tensor, expected)


def test_a_float64_buffer_is_copied_for_the_referee_too() -> None:
    """A buffer already in float64 is not converted, yet what the referee writes into it
    stays in the referee's copy."""
    module = torch.nn.BatchNorm1d(4).double()
    module.register_buffer("count", torch.zeros((), dtype=torch.float64))
    count = module.count
    in64 = reference._InFloat64(module)
    module.count.add_(1.0)  # the referee's forward writes it
    in64.restore()
    assert module.count is count and float(count) == 0.0
