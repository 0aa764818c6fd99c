"""What a verification varies beyond the inputs' values (``verify/contract.py`` and the
schedule's contract draws): these are unit tests on plain data; the cheats each variation
catches are corpus cases (``tests/adversarial/cheats``, class ``contract``)."""

from __future__ import annotations

import torch

from kernelopt_jupyter.verify import contract
from kernelopt_jupyter.verify.schedule import (
    INFERENCE_CALLS,
    SILENT_CALLS,
    VIEW_CALLS,
    draw_schedule,
)


def _state() -> tuple[dict[str, torch.Tensor], list[str]]:
    norm = torch.nn.LayerNorm(8)
    bn = torch.nn.BatchNorm1d(8)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), norm, bn)
    model.register_buffer("mask", torch.tril(torch.ones(8, 8)))
    return dict(model.state_dict()), [n for n, _ in model.named_parameters()]


def test_jitter_moves_every_parameter_and_no_buffer() -> None:
    state, params = _state()
    moved = contract.jittered(state, 5, params)
    for name in params:
        assert not torch.equal(moved[name], state[name]), name
    for name in set(state) - set(params):
        assert moved[name] is state[name], name  # buffers (a mask, running statistics) kept
    # a gain of ones stays positive; a zero bias gets a spread of its own
    assert bool((moved["1.weight"] > 0).all()) and moved["1.weight"].std() > 0.1
    assert moved["1.bias"].abs().max() > 0
    assert torch.equal(contract.jittered(state, 5, params)["0.weight"], moved["0.weight"])


def test_nudge_changes_one_element_of_each_parameter() -> None:
    state, params = _state()
    for seed in range(20):
        nudged = contract.nudged(state, params, seed)
        for name in state:
            changed = int((nudged[name] != state[name]).sum())
            assert changed == (1 if name in params else 0), (seed, name)


def test_state_differences_name_shape_and_values() -> None:
    state, _ = _state()
    ref = contract.summarize_state(state)
    assert contract.state_differences(ref, ref, set()) == []
    transposed = dict(state, **{"0.weight": torch.randn(8, 4)})
    found = contract.state_differences(ref, contract.summarize_state(transposed), set())
    assert found and "0.weight" in found[0] and "(8, 4)" in found[0]
    other = dict(state, **{"2.running_mean": torch.ones(8)})
    summary = contract.summarize_state(other)
    assert contract.state_differences(ref, summary, set()) == [
        "2.running_mean holds other values than were loaded"
    ]
    assert contract.state_differences(ref, summary, {"2.running_mean"}) == []
    missing = {k: v for k, v in ref.items() if k != "mask"}
    assert contract.state_differences(ref, missing, set()) == ["mask is missing"]


def test_view_refill_gives_new_objects_over_the_same_memory() -> None:
    buf = torch.zeros(4)
    (view,) = contract.handed_over([buf], "view")
    assert view is not buf and view.data_ptr() == buf.data_ptr()
    assert contract.handed_over([buf], "inplace")[0] is buf


def test_silent_refill_bumps_no_version_counter() -> None:
    buf = torch.zeros(4)
    version = buf._version
    contract.refill_silently(buf, torch.ones(4))
    assert buf._version == version and bool((buf == 1).all())


def test_rng_fingerprint_sees_torch_and_python_generators() -> None:
    import random

    before = contract.rng_fingerprint()
    assert contract.rng_fingerprint() == before
    state = torch.random.get_rng_state()
    torch.rand(1)
    assert contract.rng_fingerprint() != before
    torch.random.set_rng_state(state)
    assert contract.rng_fingerprint() == before
    py = random.getstate()
    random.random()
    assert contract.rng_fingerprint() != before
    random.setstate(py)


def test_every_schedule_varies_the_contract() -> None:
    signs = set()
    for seed in range(300):
        calls = draw_schedule(seed, 3, "cpu")
        kinds = [c.kind for c in calls]
        for kind in ("signs", "tiny", "jitter", "nudge", "shift"):
            assert kinds.count(kind) == 1, (seed, kind)
        assert {c.reload_kind for c in calls if c.reload_seed is not None} == {
            "draw",
            "jitter",
            "nudge",
            "twin",
            "back",
        }
        twin = kinds.index("twin")
        assert kinds[twin + 1] == "back", seed
        first = calls[0]
        assert (first.refill, first.context) == ("inplace", "no_grad")
        assert sum(c.refill == "view" for c in calls) == VIEW_CALLS
        assert sum(c.context == "inference" for c in calls) == INFERENCE_CALLS
        silent = [i for i, c in enumerate(calls) if c.refill == "silent"]
        assert 1 <= len(silent) <= SILENT_CALLS, seed
        assert all(calls[i - 1].refill == "inplace" for i in silent), seed
        assert all(c.checked and not c.burst for c in calls if c.refill != "inplace")
        signs.add(next(c.transform["sign"] for c in calls if c.kind == "shift"))
        assert draw_schedule(seed, 3, "cpu") == calls
    assert signs == {1.0, -1.0}
