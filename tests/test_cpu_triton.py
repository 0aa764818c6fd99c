"""The interpreter shims: libdevice mapped, bf16 arithmetic, the stub driver (CPU, in workers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelopt_jupyter import cpu_triton
from kernelopt_jupyter.worker import run_task

ENV = {"PYTHONPATH": str(Path(__file__).parent / "data" / "analysis")}


def test_libdevice_and_bf16_match_torch() -> None:
    res = run_task("interp_tasks:libdevice_and_bf16", {}, device="cpu", extra_env=ENV)
    assert res.ok, res.describe() + res.traceback
    assert res.value["first"] is True and res.value["second"] is True  # idempotent
    assert res.value["math_err"] < 1e-5
    assert res.value["bf16_err"] == 0.0  # rounded per op, exactly as torch's bf16 does


def test_autotune_and_do_bench_run_on_the_stub_driver() -> None:
    res = run_task("interp_tasks:autotune_and_bench", {}, device="cpu", extra_env=ENV)
    assert res.ok, res.describe() + res.traceback
    assert res.value["err"] == 0.0
    assert res.value["target"] == ["cuda", 90, 32]
    assert res.value["ms"] >= 0.0 and res.value["chosen"] is not None


def test_unmapped_libdevice_function_names_itself() -> None:
    res = run_task("interp_tasks:unmapped_libdevice", {}, device="cpu", extra_env=ENV)
    assert res.ok, res.describe() + res.traceback
    assert "libdevice.byte_perm" in res.value and "interpreter" in res.value


def test_shims_do_nothing_without_the_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setattr(cpu_triton, "_INSTALLED", False)
    assert cpu_triton.install_interpreter_shims() is False


def test_stub_driver_refused_where_a_gpu_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setattr(cpu_triton, "_INSTALLED", False)
    monkeypatch.setattr(cpu_triton, "_STUB_INSTALLED", False)
    monkeypatch.setattr(cpu_triton, "_cuda_present", lambda: True)
    assert cpu_triton.install_interpreter_shims() is False
    assert cpu_triton.install_stub_driver() is False


def test_reductions_with_their_own_combine_function_are_exact_and_in_order() -> None:
    """The interpreter's element-by-element path for a combine function of its own (Inductor's
    Welford in every norm took minutes on a 24x4097 LayerNorm) is replaced by a pairwise one:
    an order-sensitive combine still returns the first match, a tuple combine over a ragged
    4097-wide row its mean, an axis=None reduction its total."""
    res = run_task("interp_tasks:custom_combine_reduce", {}, device="cpu", extra_env=ENV)
    assert res.ok, res.describe() + res.traceback
    assert res.value["wrapped"] is True
    # Blocks, not elements: 3 programs x 3 reductions x (13 levels x a few) against ~200 000.
    assert res.value["tensors_made"] < 2000, res.value
    assert res.value["first_err"] == 0.0
    assert res.value["mean_err"] < 1e-5 and res.value["total_err"] < 1e-3


def test_scans_with_their_own_combine_function_match_sequential_ones() -> None:
    """Scans with a combine function of their own run by doubling strides: forward and
    reverse order-sensitive scans and a tuple scan equal the sequential ones."""
    res = run_task("interp_tasks:custom_combine_scan", {}, device="cpu", extra_env=ENV)
    assert res.ok, res.describe() + res.traceback
    assert res.value["wrapped"] is True
    assert res.value["last_err"] == 0.0 and res.value["back_err"] == 0.0
    assert res.value["sum_err"] < 1e-4 and res.value["count_err"] == 0.0


def test_the_cached_builtin_lookup_patches_what_the_walk_patches() -> None:
    res = run_task("interp_tasks:builtin_lookup", {}, device="cpu", extra_env=ENV)
    assert res.ok, res.describe() + res.traceback
    assert res.value["wrapped"] and all(res.value["same"]), res.value
    assert res.value["counts"][0] > 50  # triton.language's builtins, unpatched between launches
    assert res.value["err"] < 1e-4


def test_the_interpreter_builds_no_overflow_check_it_would_drop() -> None:
    res = run_task("interp_tasks:overflow_checks", {}, device="cpu", extra_env=ENV)
    assert res.ok, res.describe() + res.traceback
    assert res.value["debug"] is False and res.value["sanitize"] is False, res.value
    assert res.value["overflowed"] > 500  # the case does wrap ...
    assert res.value["wrapped"] == 0  # ... and wraps as int32 does on the device


def test_float_arguments_are_float32_scalars_as_when_compiled() -> None:
    res = run_task("interp_tasks:float_arguments", {}, device="cpu", extra_env=ENV)
    assert res.ok, res.describe() + res.traceback
    assert res.value["err"] == 0.0


def test_erf_on_whole_blocks_equals_math_erf_rounded() -> None:
    res = run_task("interp_tasks:erf_blocks", {}, device="cpu", extra_env=ENV)
    assert res.ok, res.describe() + res.traceback
    assert res.value == {"torch.float32": 0, "torch.float64": 0, "whole_block": True}, res.value
