"""GPU-only paths, which the CPU suite reaches only in their host form (run on the H200 with
scripts/gpu_checks.sh):

* the device checksum on CUDA memory (32-bit words; an unaligned start; one bit changed);
* the comparison, the referee and the linear bound in one walk with the steps moved to the
  device (``compare.WORK_DEVICE``), against the walks apart;
* the float64 referee converting a real cuDNN LSTM in place and back;
* the CUDA-graph wrapper letting the first graph's memory go before a re-capture.
"""

from __future__ import annotations

import copy
import weakref
from typing import Any

import pytest
import torch
from _checksum import checksum_by_formula

pytestmark = pytest.mark.gpu


def test_the_device_checksum_on_cuda_memory_is_the_formula() -> None:
    from kernelopt_jupyter.verify import sandbox

    raw = torch.randint(0, 256, (50_003,), dtype=torch.uint8, device="cuda")
    whole = sandbox._device_checksum(raw)
    assert whole == checksum_by_formula(raw)
    padded = torch.cat([torch.zeros(3, dtype=torch.uint8, device="cuda"), raw])
    assert sandbox._device_checksum(padded[3:]) == whole  # an unaligned start
    changed = raw.clone()
    changed[40_001] ^= 128
    assert sandbox._device_checksum(changed) != whole
    # A float tensor's digest goes this way too, and sees a one-ulp change.
    x = torch.randn(1 << 22, device="cuda")
    y = x.clone()
    y[12345] = torch.nextafter(y[12345], torch.tensor(float("inf"), device="cuda"))
    assert sandbox.digest(x) != sandbox.digest(y) and sandbox.digest(x) == sandbox.digest(x.clone())


def test_one_walk_with_steps_on_the_device_gives_the_walks_apart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kernelopt_jupyter.verify import compare

    monkeypatch.setattr(compare, "WORK_DEVICE", "cuda")
    torch.manual_seed(4)
    n = (1 << 22) + 77
    ref64 = torch.randn(n, dtype=torch.float64) * torch.logspace(-6, 1, n, dtype=torch.float64)
    ref32 = ref64.float().pin_memory()
    out = (ref64 * (1 + 1e-6 * torch.randn(n, dtype=torch.float64))).float().pin_memory()
    bound = (ref64.abs().float() * 1e4).pin_memory()
    ref64 = ref64.pin_memory()
    for key_part in (ref32, ref64):  # as the key arrives: its scale taken on the device
        compare.note_scale(key_part, key_part.cuda())
    apart = compare.compare_outputs(out, ref32)
    rows_apart = compare.referee_sides([out, ref32], ref64, own=ref32)
    bound_apart = compare.within_linear_bound(out, ref64, bound)
    together, rows, bound_ok = compare.compare_and_referee(out, ref32, ref64, bound64=bound)
    assert together == apart and rows == rows_apart and bound_ok == bound_apart


def test_the_referee_converts_a_cudnn_lstm_in_place_and_back() -> None:
    from kernelopt_jupyter.verify import reference

    torch.manual_seed(0)
    lstm = torch.nn.LSTM(64, 128, num_layers=2, batch_first=True).cuda().eval()
    x = torch.randn(8, 16, 64, device="cuda")
    with torch.no_grad():
        before = lstm(x)[0]
        expected = copy.deepcopy(lstm).double()(x.double())[0]
    state = {k: v.clone() for k, v in lstm.state_dict().items()}
    in64 = reference._InFloat64(lstm)
    with torch.no_grad():
        got = lstm(x.double())[0]
    in64.restore()
    assert got.dtype == torch.float64 and torch.allclose(got, expected, rtol=1e-12, atol=1e-12)
    assert all(torch.equal(v, state[k]) for k, v in lstm.state_dict().items())
    with torch.no_grad():  # the float32 model runs as before (its weights re-flattened)
        assert torch.allclose(lstm(x)[0], before, rtol=1e-6, atol=1e-7)


def _graph_model(args: str, result: str) -> Any:
    """A candidate whose forward(``args``) returns ``result``, in the CUDA-graph wrapper."""
    from kernelopt_jupyter.agents.transforms import wrap_cuda_graph

    source = (
        "import torch\n\n\nclass ModelNew(torch.nn.Module):\n"
        f"    def forward(self, {args}):\n        return {result}\n"
    )
    scope: dict[str, Any] = {"__name__": "candidate"}
    exec(compile(wrap_cuda_graph(source), "<candidate>", "exec"), scope)
    return scope["ModelNew"]()


def test_a_recapture_lets_the_first_graph_go() -> None:
    model = _graph_model("x", "torch.relu(x * 2.0 + 1.0)")
    first = torch.randn(64, 1 << 18, device="cuda")
    assert torch.equal(model(first), torch.relu(first * 2.0 + 1.0))
    assert model._static_inputs[0] is first  # read where the caller keeps it
    old = weakref.ref(model._static_output)
    second = torch.randn(33, 1 << 18, device="cuda")
    assert torch.equal(model(second), torch.relu(second * 2.0 + 1.0))
    assert old() is None and all(x is not first for x in model._static_inputs)
    assert first.untyped_storage().data_ptr() not in [h.data_ptr() for h in model._held]
    assert tuple(model._static_output.shape) == (33, 1 << 18)


def test_the_graph_replays_on_inputs_refilled_in_place_without_a_copy() -> None:
    """The CUDA-graph wrapper holds no copy of inputs that stay where they are: its capture
    allocates no input-sized buffer, each replay of inputs refilled in place is right, and
    inputs elsewhere are right too (captured again on the wrapper's own buffers)."""
    model = _graph_model("x, y", "torch.relu(x * 2.0 + y)")
    x = torch.randn(256, 1 << 18, device="cuda")  # 256 MiB each
    y = torch.randn(256, 1 << 18, device="cuda")
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    assert torch.equal(model(x, y), torch.relu(x * 2.0 + y))
    held = torch.cuda.memory_allocated() - before
    # the graph's pool (its output) stays; no copy of the two inputs (512 MiB) does
    assert held < x.nbytes + (64 << 20), held
    for _ in range(3):
        x.normal_()
        y.normal_()
        assert torch.equal(model(x, y), torch.relu(x * 2.0 + y))
    other = torch.randn_like(x)
    assert torch.equal(model(other, y), torch.relu(other * 2.0 + y))
    assert model._borrowed is None  # the wrapper's own buffers from here on
    x.normal_()
    assert torch.equal(model(x, y), torch.relu(x * 2.0 + y))
