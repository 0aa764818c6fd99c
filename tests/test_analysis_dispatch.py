"""The dispatch map, baselines and ``kernelopt profile`` on CPU (ranked by roofline estimates)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelopt_jupyter.analysis import DispatchMap, measure_baselines, profile_problem
from kernelopt_jupyter.analysis.dispatch import dispatch_map_from_dict
from kernelopt_jupyter.cli import build_parser
from kernelopt_jupyter.cli import profile as cmd_profile
from kernelopt_jupyter.problem import load_problem

DATA = Path(__file__).parent / "data" / "analysis"


@pytest.fixture(scope="module")
def conv_map() -> DispatchMap:
    """The map of Conv2d -> ReLU -> bias add, built once."""
    return profile_problem(load_problem(DATA / "conv_relu_bias.py"), "cpu")


def test_conv_is_a_kept_vendor_call_and_epilogue_a_triton_kernel(conv_map: DispatchMap) -> None:
    assert conv_map.ok, conv_map.error
    vendor = [r for r in conv_map.records if r.kind == "vendor"]
    assert [(r.library, r.ops) for r in vendor] == [("cuDNN", ["aten.convolution"])]
    assert vendor[0].flops == 2 * 2 * 8 * 14 * 14 * 3 * 3 * 3  # FlopCounter's conv formula
    epilogue = [r for r in conv_map.records if r.kind == "triton" and "aten.relu" in r.ops]
    assert len(epilogue) == 1 and epilogue[0].bytes and epilogue[0].launches == 1
    for rec in conv_map.records:
        assert rec.ms is None and rec.share is None  # interpreter times are never reported
        assert rec.bound in ("memory", "compute") and rec.bound_ms and rec.bound_ms > 0
        assert "no GPU" in str(rec.ncu)


def test_records_carry_the_aten_argument_shapes_the_recorder_saw(conv_map: DispatchMap) -> None:
    by_name = {r.name: r for r in conv_map.records}
    [vendor] = [r for r in conv_map.records if r.kind == "vendor"]
    assert vendor.shapes == [[2, 3, 16, 16], [8, 3, 3, 3], [8]]  # input, weight, bias
    [epilogue] = [r for r in conv_map.records if r.kind == "triton" and "aten.relu" in r.ops]
    assert epilogue.shapes == [[2, 8, 14, 14]]  # relu's input in the reference's forward
    assert all(r.shapes for r in by_name.values())  # a layout kernel shares its op's shapes
    again = dispatch_map_from_dict(json.loads(json.dumps(conv_map.to_dict())))
    assert [r.shapes for r in again.records] == [r.shapes for r in conv_map.records]


def test_cpu_map_is_ranked_by_roofline_estimate_and_says_so(conv_map: DispatchMap) -> None:
    assert "estimated" in conv_map.ranked_by and "not meaningful" in conv_map.ranked_by
    bounds = [r.bound_ms or 0.0 for r in conv_map.records]
    assert bounds == sorted(bounds, reverse=True)


def test_dispatch_choice_for_conv_is_offered_but_not_decided_on_cpu(conv_map: DispatchMap) -> None:
    [choice] = conv_map.choices
    assert "convolution" in choice.label and choice.variant_available
    assert choice.vendor_beats_inductor is None and "CPU" in choice.detail
    assert conv_map.harvest is not None and conv_map.harvest.dispatch_variants


def test_map_json_schema_roundtrip(conv_map: DispatchMap) -> None:
    data = json.loads(json.dumps(conv_map.to_dict()))
    assert data["schema"] == 1 and data["device"] == "cpu"
    again = dispatch_map_from_dict(data)
    assert [r.name for r in again.records] == [r.name for r in conv_map.records]
    units = conv_map.units()
    assert set(units[0]) == {
        "name",
        "kind",
        "source",
        "ops",
        "share",
        "ms",
        "bound",
        "roofline_fraction",
        "flops",
        "bytes",
        "bound_ms",
        "library",
        "shapes",
        "alternatives",
    }


def test_cpu_units_carry_their_costs_and_are_weighed_by_their_bound(
    conv_map: DispatchMap,
) -> None:
    # Nothing is timed on the CPU: the search weighs each unit by its roofline time bound
    # (its FLOPs and bytes against the roofs), not by a count, where every unit has one.
    from kernelopt_jupyter.agents.base import AgentContext, KernelUnit
    from kernelopt_jupyter.agents.headroom import family_lines, headroom

    units = [KernelUnit(**u) for u in conv_map.units()]
    records = {r.name: r for r in conv_map.records}
    assert len(units) >= 2
    for u in units:
        rec = records[u.name]
        assert (u.flops, u.bytes, u.bound_ms) == (rec.flops, rec.bytes, rec.bound_ms)
    ctx = AgentContext(load_problem(DATA / "conv_relu_bias.py"), "cpu", {}, units)
    h = headroom(ctx)
    bounds = [float(u.bound_ms or 0.0) for u in units]
    assert len(set(bounds)) > 1  # a count would give every unit the same share
    assert [p.share for p in h.placements] == pytest.approx([b / sum(bounds) for b in bounds])
    assert h.by_bound and "roofline time bound" in family_lines(h)[0]
    units[0].bound_ms = None  # one unit the map could not cost: every unit by count again
    h = headroom(ctx)
    assert not h.by_bound and {p.share for p in h.placements} == {1.0 / len(units)}


def test_baselines_not_measured_on_cpu() -> None:
    base = measure_baselines(load_problem(DATA / "plain_matmul.py"), "cpu")
    assert not base.measured and "no GPU" in base.detail
    assert base.as_ms() == {
        "eager": None,
        "compile": None,
        "max_autotune": None,
        "reduce_overhead": None,
    }


def test_profile_command_json_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(
        ["profile", str(DATA / "plain_matmul.py"), "--device", "cpu", "--json"]
    )
    assert cmd_profile.run(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == 1 and data["library_dominated"] is True
    assert data["harvest"]["kernels"] == [] and data["baselines"]["measured"] is False
    assert [r["kind"] for r in data["records"]] == ["vendor"]
    args.json = False
    assert cmd_profile.run(args) == 0
    table = capsys.readouterr().out
    # On the CPU the kept matmul ran ATen's CPU kernel: the table does not call it cuBLAS.
    assert "vendor_0_mm [CPU ATen; cuBLAS on GPU, kept]" in table and "library-dominated" in table


def test_profile_table_names_the_vendor_library_only_on_the_gpu() -> None:
    from kernelopt_jupyter.analysis.dispatch import DispatchRecord
    from kernelopt_jupyter.cli.profile import render_table

    vendor = DispatchRecord(name="vendor_0_mm", kind="vendor", ops=["aten.mm"], library="cuBLAS")
    on_gpu = render_table(DispatchMap(problem="p.py", device="cuda", records=[vendor]))
    assert "vendor_0_mm [cuBLAS, kept]" in on_gpu
    on_cpu = render_table(DispatchMap(problem="p.py", device="cpu", records=[vendor]))
    assert "[cuBLAS, kept]" not in on_cpu and "CPU ATen; cuBLAS on GPU" in on_cpu


def test_profile_command_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(
        ["profile", str(tmp_path / "missing.py"), "--device", "cpu", "--json"]
    )
    assert cmd_profile.run(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("kernelopt profile: ") and "missing.py" in err and err.count("\n") == 1


def test_gpu_time_attribution_logic() -> None:
    # The GPU path's bookkeeping on synthetic profiler totals (ms per forward).
    from kernelopt_jupyter.analysis.dispatch import DispatchRecord, _attribute_times

    records = [
        DispatchRecord(name="triton_poi_fused_add_relu_0", kind="triton"),
        DispatchRecord(
            name="vendor_0_convolution", kind="vendor", source="torch.convolution(a)", flops=300
        ),
        DispatchRecord(
            name="vendor_1_convolution", kind="vendor", source="torch.convolution(b)", flops=100
        ),
        DispatchRecord(
            name="aten_0_avg_pool2d", kind="other", source="torch.ops.aten.avg_pool2d.default(x)"
        ),
    ]
    times = {
        "kernel:triton_poi_fused_add_relu_0": 0.5,
        "op:aten::convolution": 2.0,
        "op:aten::avg_pool2d": 0.25,
        "kernel:sm90_xmma_fprop": 2.0,
        "__total__": 3.25 + 0.5,
    }
    total = _attribute_times(records, times)
    by_name = {r.name: r.ms for r in records}
    assert total == pytest.approx(3.75)
    assert by_name["vendor_0_convolution"] == pytest.approx(1.5)  # split by FLOPs
    assert by_name["vendor_1_convolution"] == pytest.approx(0.5)
    assert by_name["aten_0_avg_pool2d"] == pytest.approx(0.25)
    assert by_name["unattributed"] == pytest.approx(3.75 - 0.5 - 2.0 - 0.25)
