"""Harvest round trips on CPU (Triton interpreter): harvested candidates pass gates 1-3."""

from __future__ import annotations

import ast
import copy
import dataclasses
from pathlib import Path

import pytest

from kernelopt_jupyter.agents.transforms import read_launch_configs
from kernelopt_jupyter.analysis import Harvest, harvest_problem
from kernelopt_jupyter.analysis.harvest import HARVEST_TITLE, dispatch_choices, titled
from kernelopt_jupyter.problem import Problem, load_problem, problem_from_source
from kernelopt_jupyter.verify import VerifyOptions, verify_candidate

DATA = Path(__file__).parent / "data" / "analysis"
PROBLEMS = [
    "pointwise_chain",
    "linear_norm_chain",
    "wide_row_stats",
    "conv_relu_bias",
    "plain_matmul",
    "avg_pool",
]
#: Problems whose harvest also builds vendor-dispatch variants.
WITH_VARIANTS = {"conv_relu_bias", "avg_pool"}


@pytest.fixture(scope="module")
def harvested() -> dict[str, tuple[Problem, Harvest]]:
    """One harvest per problem, shared by every test in this file (Inductor compiles are slow)."""
    out = {}
    for name in PROBLEMS:
        problem = load_problem(DATA / f"{name}.py")
        out[name] = (problem, harvest_problem(problem, "cpu", variants=name in WITH_VARIANTS))
    return out


#: The schedule seed these verifications use, as the red-team corpus's good candidates do
#: (``GOOD_SEED``): a verdict that depends on the draw is reproducible. With a fresh seed each
#: run, ``wide_row_stats``' harvest (Inductor's fp32 Welford variance over 2x1500 values)
#: failed the float64 referee in a CI run: at values near the row mean its relative error's
#: 99th percentile was 11.6x eager's on the CPU (limit 10x), and over 248 seeds on the CPU
#: machine it failed 5 times: a false failure on tiny rows. With the shift call left out of
#: the relative checks and the small-value mean pooled over the calls
#: (``judge.fp64_verdict``), 160 of 160 seeds pass, the largest ratio 2.5x. The seed stays
#: fixed all the same, as the corpus's good candidates' does.
SEED = 1


def _gates(problem: Problem, source: str) -> dict[str, str]:
    report = verify_candidate(problem, source, VerifyOptions(device="cpu", seeds=3, seed=SEED))
    return {g.name: f"{g.status}: {g.detail} (schedule seed {report.seed})" for g in report.gates}


@pytest.mark.parametrize("name", PROBLEMS)
def test_harvested_candidate_passes_gates_1_to_3(
    harvested: dict[str, tuple[Problem, Harvest]], name: str
) -> None:
    problem, h = harvested[name]
    assert h.ok, h.error + "\n" + "\n".join(h.notes)
    gates = _gates(problem, h.source)
    for gate in ("static", "correctness", "fp64"):
        assert gates[gate].startswith("pass"), f"{name} {gate}: {gates[gate]}"
    assert gates["performance"].startswith("skipped")


def test_kernels_are_plain_named_jit_units(harvested: dict[str, tuple[Problem, Harvest]]) -> None:
    _, h = harvested["linear_norm_chain"]
    assert h.kernels, "a norm/softmax chain must leave Triton kernels to optimise"
    tree = ast.parse(h.source)
    jitted = {
        n.name
        for n in tree.body
        if isinstance(n, ast.FunctionDef)
        and any(ast.unparse(d) == "triton.jit" for d in n.decorator_list)
    }
    configs = read_launch_configs(h.source)
    for k in h.kernels:
        assert k.kind == "triton" and k.name in jitted and k.name in configs
        assert "@triton.jit" in k.source and "triton_heuristics" not in k.source
        assert k.launches == 1 and k.ops
        assert {"num_warps", "num_stages"} <= set(configs[k.name])
    assert "triton_heuristics" not in h.source and "async_compile" not in h.source
    assert "tl_math" not in h.source and ".run(" not in h.source
    ops = {op for k in h.kernels for op in k.ops}
    assert {"aten.native_layer_norm", "aten._softmax"} <= ops
    assert [v.ops for v in h.vendor_calls] == [["aten.t", "aten.addmm"]] or [
        v.library for v in h.vendor_calls
    ] == ["cuBLAS"]


def test_imports_are_torch_triton_and_stdlib_only(
    harvested: dict[str, tuple[Problem, Harvest]],
) -> None:
    for name, (_, h) in harvested.items():
        tree = ast.parse(h.source)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                mods = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                )
                for mod in mods:
                    assert mod.split(".")[0] in {"torch", "triton"}, f"{name}: imports {mod}"


def test_conv_kept_as_labelled_vendor_call_with_triton_epilogue(
    harvested: dict[str, tuple[Problem, Harvest]],
) -> None:
    _, h = harvested["conv_relu_bias"]
    assert [(v.kind, v.library) for v in h.vendor_calls] == [("vendor", "cuDNN")]
    assert "aten.convolution" in h.vendor_calls[0].ops
    assert "# vendor call (kept): aten.convolution via cuDNN" in h.source
    epilogue = [k for k in h.kernels if {"aten.relu", "aten.add"} <= set(k.ops)]
    assert len(epilogue) == 1
    assert not h.library_dominated


def test_plain_matmul_is_library_dominated_not_an_error(
    harvested: dict[str, tuple[Problem, Harvest]],
) -> None:
    _, h = harvested["plain_matmul"]
    assert h.ok and h.library_dominated and not h.kernels
    assert "KERNELOPT_DISPATCH_ONLY = True" in h.source  # the baseline's vendor call, kept
    assert [v.library for v in h.vendor_calls] == ["cuBLAS"]
    assert any("library-dominated" in n for n in h.notes)


def test_conv_variant_routes_conv_to_vendor_and_keeps_epilogue(
    harvested: dict[str, tuple[Problem, Harvest]],
) -> None:
    problem, h = harvested["conv_relu_bias"]
    variants = dict(h.dispatch_variants)
    label = next(lbl for lbl in variants if "convolution" in lbl)
    source = variants[label]
    configs = read_launch_configs(source)
    assert len(configs) == 1 and "relu" in next(iter(configs))  # layout kernels gone
    assert "KERNELOPT_DISPATCH_ONLY" not in source
    gates = _gates(problem, source)
    assert all(gates[g].startswith("pass") for g in ("static", "correctness", "fp64")), gates


def test_pool_variant_is_dispatch_only(harvested: dict[str, tuple[Problem, Harvest]]) -> None:
    problem, h = harvested["avg_pool"]
    assert any("avg_pool2d" in op for k in h.kernels for op in k.ops)
    variants = dict(h.dispatch_variants)
    label = next(lbl for lbl in variants if "pooling" in lbl)
    assert label in h.dispatch_only_variants
    source = variants[label]
    assert "KERNELOPT_DISPATCH_ONLY = True" in source and "aten.avg_pool2d" in source
    assert read_launch_configs(source) == {}
    report = verify_candidate(problem, source, VerifyOptions(device="cpu", dispatch_only=True))
    assert report.verdict == "pass", [(g.name, g.detail) for g in report.gates]


def test_harvest_roundtrips_through_plain_data(
    harvested: dict[str, tuple[Problem, Harvest]],
) -> None:
    _, h = harvested["conv_relu_bias"]
    again = Harvest.from_dict(h.to_dict())
    assert again == h


def test_kernel_problem_is_reported_not_harvested() -> None:
    problem = load_problem(Path(__file__).parents[1] / "kernelopt_jupyter/problems/row_softmax.py")
    h = harvest_problem(problem, "cpu")
    assert not h.ok and "already kernel code" in h.error


def test_max_autotune_matmul_template_is_harvested() -> None:
    # Inductor's tl.dot template (FixedGrid launch, config baked into the body) as a plain kernel.
    problem = load_problem(DATA / "plain_matmul.py")
    h = harvest_problem(
        problem,
        "cpu",
        variants=False,
        mode="max-autotune",
        inductor_config={
            "max_autotune_gemm_backends": "TRITON",
            "benchmark_epilogue_fusion": False,
        },
    )
    assert h.ok, h.error
    [kernel] = h.kernels
    assert kernel.name.startswith("triton_tem_") and "tl.dot" in kernel.source
    assert not h.vendor_calls and not h.library_dominated
    gates = _gates(problem, h.source)
    assert all(gates[g].startswith("pass") for g in ("static", "correctness", "fp64")), gates


def test_a_cells_harvest_names_the_sessions_problem() -> None:
    """A notebook cell's problem is named by its session (``softmax_study-cell2``); the worker
    gets only the cell's source, which alone names it "cell"."""
    source = (DATA / "plain_matmul.py").read_text()
    problem = dataclasses.replace(
        problem_from_source(source, "<cell>", validate=False), name="softmax_study-cell2"
    )
    h = harvest_problem(problem, "cpu", variants=False)
    assert h.ok, h.error
    assert "for problem 'softmax_study-cell2'" in h.source
    assert "problem 'cell'" not in h.source


def test_titled_names_the_problem_in_the_harvest_title_only() -> None:
    title = HARVEST_TITLE.format(name="cell")
    source = f'"""{title}.\n\nmore text for problem \'cell\'\n"""\nx = 1\n'
    renamed = titled(source, "nb-cell2")
    assert (
        renamed.splitlines()[0]
        == '"""Harvested from torch.compile (Inductor) for problem \'nb-cell2\'.'
    )
    assert "more text for problem 'cell'" in renamed  # only the title line
    assert titled("x = 1\n", "nb") == "x = 1\n"  # no harvest title: unchanged
    assert titled(titled(source, "it's"), "b").splitlines()[0].endswith("problem 'b'.")


def test_the_dispatch_choices_are_read_through_a_copy() -> None:
    # The search and the dispatch map read the harvest's vendor routes; what a reader does
    # to its copy cannot change the variants later harvests build.
    before = copy.deepcopy(dispatch_choices())
    assert before and all(len(ops) and isinstance(cfg, dict) for _, ops, cfg, _ in before)
    mine = dispatch_choices()
    mine[0][2]["changed"] = True
    mine.clear()
    assert dispatch_choices() == before
