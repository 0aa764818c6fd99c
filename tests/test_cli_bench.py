"""``kernelopt bench``'s rows and per-level summary: geomean against each peer and the best of
them; an untimed problem is "not timed", never 1.0."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kernelopt_jupyter.cli.optimize import bench_row, summarize_rows

PEERS = {"eager": 2.0, "compile": 1.0, "max_autotune": 0.8, "reduce_overhead": 0.5}


def _session(baselines: dict[str, Any], ms: float | None, vs_eager: float | None) -> Any:
    best = SimpleNamespace(
        candidate=SimpleNamespace(id="c3", dispatch_only=False),
        ms=ms,
        speedup_vs_eager=vs_eager,
        speedup_vs_compile=None if vs_eager is None else vs_eager / 2.0,
        report=SimpleNamespace(gates=[], seconds=0.0),
    )
    result = SimpleNamespace(
        baselines=baselines,
        best=best,
        candidates=[best],
        library_dominated=False,
        status="finished",
    )
    return SimpleNamespace(result=result, out_dir=Path("runs/x"), error=None)


def test_a_timed_row_against_each_peer() -> None:
    row = bench_row(Path("level1/a.py"), _session(PEERS, 0.4, 5.0), 12.0)
    peers = row["speedup_vs_peer"]
    assert row["timed"] is True and row["reduce_overhead_ms"] == 0.5
    # 5x eager measured head to head; each peer's ratio to eager from the baselines run.
    assert peers["eager"] == 5.0 and peers["compile"] == 2.5
    assert peers["reduce_overhead"] == 1.25 and peers["best_baseline"] == 1.25


def test_untimed_problems_are_not_timed_never_one() -> None:
    untimed = {name: None for name in PEERS}
    row = bench_row(Path("level2/b.py"), _session(untimed, None, None), 3.0)
    assert row["verdict"] == "verified (not timed)" and row["speedup_vs_peer"] == "not timed"
    level = summarize_rows([row])["2"]
    assert level["timed"] == 0
    assert level["geomean_speedup_vs_compile"] == "not timed"
    assert set(level["geomean_speedup_vs_peer"].values()) == {"not timed"}


def test_the_summary_keeps_its_old_fields_and_adds_the_peers() -> None:
    rows = [
        bench_row(Path("level1/a.py"), _session(PEERS, 0.4, 5.0), 1.0),
        bench_row(Path("level1/b.py"), _session(PEERS, 2.5, 0.8), 1.0),  # slower than eager
        bench_row(Path("level1/c.py"), _session({n: None for n in PEERS}, None, None), 1.0),
    ]
    level = summarize_rows(rows)["1"]
    assert level["count"] == 3 and level["timed"] == 2 and level["improved"] == 1
    # old meaning: a candidate slower than eager counts as eager kept (1.0)
    assert level["geomean_speedup_vs_eager"] == pytest.approx((5.0 * 1.0) ** 0.5, abs=1e-4)
    # the peers: plain ratios, the untimed row left out
    assert level["geomean_speedup_vs_peer"]["eager"] == pytest.approx((5.0 * 0.8) ** 0.5, abs=1e-4)
    assert level["geomean_speedup_vs_peer"]["best_baseline"] == pytest.approx(
        (1.25 * 0.2) ** 0.5, abs=1e-4
    )


def test_search_timeline_reads_where_the_time_went(tmp_path: Path) -> None:
    from kernelopt_jupyter.cli.optimize import search_timeline

    events = tmp_path / "events.jsonl"
    rows = [
        {"type": "session_started", "t": 0.0, "data": {}},
        {"type": "profile", "t": 14.1, "data": {"step_seconds": {"baselines": 9.3, "dispatch": 4}}},
        {"type": "candidate", "t": 14.2, "data": {"id": "c0"}},
        {"type": "verdict", "t": 45.6, "data": {"candidate": "c0"}},
        {"type": "agent_started", "t": 45.7, "data": {"agent": "executor"}},
        {"type": "agent_finished", "t": 52.8, "data": {"agent": "executor", "output": {}}},
        {"type": "agent_started", "t": 52.8, "data": {"agent": "executor"}},
        {
            "type": "agent_finished",
            "t": 52.9,
            "data": {"agent": "executor", "output": {"source": "class ModelNew: ..."}},
        },
        {"type": "candidate", "t": 52.9, "data": {"id": "c1"}},
        {"type": "verdict", "t": 60.0, "data": {"candidate": "c1"}},
        {"type": "candidate", "t": 61.0, "data": {"id": "c2"}},
        {"type": "session_finished", "t": 63.5, "data": {}},
    ]
    events.write_text("\n".join(json.dumps(r) for r in rows) + "\nnot json\n")
    line = search_timeline(events)
    assert line["analysis_s"] == 14.1 and line["first_verdict_s"] == 45.6
    assert line["candidate_s"] == [31.4, 7.1] and line["verdicts"] == 2
    assert line["median_candidate_s"] == 31.4 and line["session_s"] == 63.5
    assert line["analysis_steps_s"] == {"baselines": 9.3, "dispatch": 4}
    # the Executor's 7.2 s, of which 7.1 s in a step that gave no candidate
    assert line["executor_s"] == 7.2 and line["executor_steps"] == 2
    assert line["executor_no_candidate_s"] == 7.1 and line["executor_no_candidate_steps"] == 1
    assert search_timeline(tmp_path / "missing.jsonl") == {}
    # A quick-start candidate gated while the analysis ran: its verdict is the first, and
    # the analysis still ends at the profile event (not at the first candidate).
    rows = [
        {"type": "session_started", "t": 0.0, "data": {}},
        {"type": "candidate", "t": 1.5, "data": {"id": "c1"}},
        {"type": "verdict", "t": 6.5, "data": {"candidate": "c1"}},
        {"type": "profile", "t": 12.0, "data": {"step_seconds": {"dispatch": 9}}},
        {"type": "candidate", "t": 12.1, "data": {"id": "c0"}},
        {"type": "verdict", "t": 18.1, "data": {"candidate": "c0"}},
        {"type": "profile", "t": 30.0, "data": {"candidate": "c0", "step_seconds": {}}},
    ]
    events.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    line = search_timeline(events)
    assert line["analysis_s"] == 12.0 and line["first_verdict_s"] == 6.5
    assert line["candidate_s"] == [5.0, 6.0] and line["analysis_steps_s"] == {"dispatch": 9}


def test_rows_carry_what_verification_cost() -> None:
    from kernelopt_jupyter.cli.optimize import verification_costs
    from kernelopt_jupyter.verify.report import GateResult

    def gated(peak: float, checker: float, checks: float, total: float) -> Any:
        memory = {
            "footprint_bytes": 1000,
            "reference_peak_bytes": int(peak * 1000),
            "checker_peak_bytes": int(checker * 1000),
            "peak_over_footprint": peak,
            "checker_over_footprint": checker,
        }
        gates = [
            GateResult("static", "pass", ""),
            GateResult(
                "correctness",
                "pass",
                "",
                {
                    "memory": memory,
                    "timings": {
                        "seconds": checks,
                        "call_parts_s": {"candidate forward": checks / 10, "bad": "x"},
                    },
                },
            ),
            GateResult("performance", "pass", "", {"seconds": 4.0}),
        ]
        return SimpleNamespace(report=SimpleNamespace(gates=gates, seconds=total))

    costs = verification_costs(
        [gated(2.0, 3.0, 5.0, 12.0), gated(2.5, 2.8, 9.0, 20.0), gated(1.2, 1.0, 7.0, 13.0)]
    )
    mem = costs["memory"]
    assert mem["peak_over_footprint"] == 2.5 and mem["checker_over_footprint"] == 3.0
    assert mem["reference_peak_bytes"] == 2500 and mem["footprint_bytes"] == 1000
    # medians of (5, 9, 7) s of checks and 4 s of timing
    assert costs["verify_seconds"] == {"checks": 7.0, "timing": 4.0}
    assert costs["verify_parts_s"] == {"candidate forward": 0.7}  # a figure's median, per part
    assert verification_costs([]) == {
        "memory": None,
        "verify_seconds": None,
        "verify_parts_s": None,
    }


def test_markdown_shows_memory_per_problem() -> None:
    from benchmarks.summarize import memory_cell

    cell = memory_cell(
        {"footprint_bytes": 12.9e9, "peak_over_footprint": 2.54, "checker_over_footprint": 3.12}
    )
    assert cell == "2.54x (checker 3.12x) of 12.90 GB"
    assert memory_cell({}) == "-"


def test_the_verdict_follows_the_side_by_side_run() -> None:
    """The search's own baselines said torch.compile was faster than the winner (noise on the
    H200: compile 0.392 ms there, 0.489 ms head to head), the side-by-side run measured the
    winner 11% ahead of every peer: the row says improved, as its ratios do; and a winner the
    side-by-side run finds slower is not improved, whatever the search measured."""
    search = {"eager": 0.424, "compile": 0.392, "max_autotune": None, "reduce_overhead": None}
    side = {
        "eager_ms": 0.464,
        "compile_ms": 0.489,
        "max_autotune_ms": 0.494,
        "reduce_overhead_ms": 0.534,
        "candidate_ms": 0.418,
        "agrees": True,
    }
    row = bench_row(Path("level2/a.py"), _session(search, 0.41, 1.03), 1.0, peers=side)
    assert row["verdict"] == "improved" and row["improved_vs_best_peer"] is True
    slower = {**side, "candidate_ms": 0.47}
    row = bench_row(Path("level2/a.py"), _session(search, 0.30, 1.4), 1.0, peers=slower)
    assert row["verdict"] == "not improved" and row["improved_vs_best_peer"] is False


def test_the_side_by_side_run_never_repeats_an_input(monkeypatch: pytest.MonkeyPatch) -> None:
    """A winner with a memo of recent inputs passes the gates (its values are right) and would
    time as a lookup where calls repeat an input: the side-by-side run salts every call's
    inputs, as the performance gate does, so no two calls see the same values."""
    import torch

    from kernelopt_jupyter.analysis.baselines import time_interleaved

    monkeypatch.setenv("KERNELOPT_PERF_WARM_MS", "0")  # no warm calls (the next test's)

    seen: list[bytes] = []

    def memo(x: torch.Tensor, scale: float) -> torch.Tensor:
        seen.append(x.numpy().tobytes())
        return x * scale

    pool = [[torch.randn(64), 2.0], [torch.randn(64), 2.0]]
    times, outs = time_interleaved({"memo": memo, "other": memo}, pool, budget_s=0.0)
    assert len(times["memo"]) == 10 and len(seen) == 2 * (2 + 10)
    assert len(set(seen)) == len(seen)  # every call its own values
    assert all(x != pool[0][0].numpy().tobytes() for x in seen)
    # The salt keeps signs and stays within 5% element by element (the last call: round 9,
    # pool input 1).
    ratio = torch.frombuffer(bytearray(seen[-1]), dtype=torch.float32) / pool[1][0]
    assert outs["memo"].shape == (64,) and bool(((ratio > 0.94) & (ratio < 1.06)).all())


def test_side_by_side_warms_each_sub_millisecond_call_like_the_gate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under ``WARM_MS`` every timed call follows an untimed call of the same function on
    other salted inputs (the performance gate's rule, on every function alike): in shuffled
    rounds the call before a timed one would otherwise be another function's."""
    import torch

    from kernelopt_jupyter.analysis.baselines import time_interleaved

    monkeypatch.setenv("KERNELOPT_PERF_WARM_MS", "1e9")
    calls: list[tuple[str, bytes]] = []

    def named(name: str) -> Any:
        def fn(x: torch.Tensor) -> torch.Tensor:
            calls.append((name, x.numpy().tobytes()))
            return x + 1

        return fn

    pool = [[torch.randn(32)]]
    times, _ = time_interleaved({"a": named("a"), "b": named("b")}, pool, budget_s=0.0)
    assert len(times["a"]) == len(times["b"]) == 10
    timed = calls[4:]  # after the two estimate calls of each
    assert len(timed) == 2 * 2 * 10
    pairs = list(zip(timed[::2], timed[1::2], strict=True))
    assert all(warm[0] == call[0] for warm, call in pairs)  # the same function, back to back
    assert all(warm[1] != call[1] for warm, call in pairs)  # on other values
    # At or above WARM_MS nothing is warmed.
    monkeypatch.setenv("KERNELOPT_PERF_WARM_MS", "0")
    calls.clear()
    time_interleaved({"a": named("a"), "b": named("b")}, pool, budget_s=0.0)
    assert len(calls) == 2 * 2 + 2 * 10


def test_a_row_says_its_winners_moves_and_why_candidates_failed() -> None:
    """The row itself carries the winner's chain of moves and the commonest failures, so a
    bench JSON explains itself without its run folders (which a GPU run may not bring back);
    the Markdown shows the failures where there is no winner."""
    from benchmarks.summarize import attach_moves, markdown

    def gated(cid: str, parent: str | None, note: str, fail: str | None) -> Any:
        gates = [SimpleNamespace(name="static", status="pass", detail="ok", metrics={})]
        if fail:
            gates.append(
                SimpleNamespace(name="correctness", status="fail", detail=fail, metrics={})
            )
        return SimpleNamespace(
            candidate=SimpleNamespace(id=cid, parent=parent, note=note, dispatch_only=False),
            report=SimpleNamespace(gates=gates, seconds=0.0),
        )

    session = _session(PEERS, 0.4, 5.0)
    best = gated("c3", "c1", "tune k: XBLOCK 1->2", None)
    best.ms, best.speedup_vs_eager, best.speedup_vs_compile = 0.4, 5.0, 2.5
    session.result.best = best
    session.result.candidates = [
        gated("c0", None, "Inductor harvest", None),
        gated("c1", "c0", "rewrite: fold X", None),
        gated("c2", "c0", "CUDA graph", "call 2: max abs err 3.1 | strict"),
        gated("c4", "c1", "CUDA graph", "call 2: max abs err 3.1 | strict"),
        best,
    ]
    row = bench_row(Path("level1/a.py"), session, 1.0)
    assert row["winner_moves"] == ["rewrite: fold X", "tune k: XBLOCK 1->2"]
    assert row["failures"] == [
        {"gate": "correctness", "detail": "call 2: max abs err 3.1 | strict", "count": 2}
    ]
    attach_moves(row)
    assert row["moves"] == row["winner_moves"] and row["move_kinds"]
    lost = {**row, "winner_moves": [], "out_dir": None, "best": None}
    attach_moves(lost)
    text = markdown({"rows": [lost], "summary": summarize_rows([lost]), "move_kinds": {}})
    assert "(none: 2x correctness: call 2: max abs err 3.1 / strict)" in text


def test_a_peer_whose_compile_runs_past_its_box_is_not_timed_and_the_rest_are() -> None:
    """On the H200 max-autotune of a ResNet bottleneck stage compiled for over 280 s: the side-by-
    side worker hit its limit and every peer's time was lost. A compile past its box is
    stopped (even where an ``except Exception`` sits in its way, as in Inductor's autotuning),
    that peer is left out with a note, the others are compiled and timed, and the row's best
    peer is the best of those timed, said in the row."""
    import time

    import torch

    from kernelopt_jupyter.analysis import baselines

    def fake_compile(model: Any, mode: str = "default") -> Any:
        def run(*args: Any) -> Any:
            if mode.startswith("max-autotune"):
                deadline = time.monotonic() + 30.0
                while time.monotonic() < deadline:  # a long autotuning loop that swallows errors
                    try:
                        time.sleep(0.05)
                    except Exception:
                        pass
            return model(*args)

        return run

    orig_compile, orig_sync = torch.compile, torch.cuda.synchronize
    torch.compile, torch.cuda.synchronize = fake_compile, lambda: None  # type: ignore[assignment]
    try:
        started = time.monotonic()
        fns, compile_s, notes = baselines._compile_modes(
            torch.nn.Identity(), list(baselines.MODES), [torch.ones(2)], compile_limit_s=0.5
        )
        took = time.monotonic() - started
    finally:
        torch.compile, torch.cuda.synchronize = orig_compile, orig_sync  # type: ignore[assignment]
    assert took < 5.0
    assert set(fns) == {"eager", "compile", "reduce_overhead"}
    assert "max_autotune" not in compile_s
    assert any(n.startswith("max_autotune not timed: its compile ran past 0.5 s") for n in notes)
    side = {
        "eager_ms": 2.0,
        "compile_ms": 1.0,
        "max_autotune_ms": None,
        "reduce_overhead_ms": 0.8,
        "candidate_ms": 0.5,
        "agrees": True,
        "notes": notes,
    }
    row = bench_row(Path("level3/a.py"), _session(PEERS, 0.5, 4.0), 1.0, peers=side)
    assert row["speedup_vs_peer"]["max_autotune"] is None
    assert row["speedup_vs_peer"]["best_baseline"] == 1.6
    assert "max_autotune not timed" in row["side_by_side"]


def test_the_best_target_peer_leaves_max_autotune_out_and_old_rows_get_it() -> None:
    """The offline policy's targets are set against eager, compile and reduce-overhead; the
    row and the level say both that ratio and the one against the fastest of all four."""
    import importlib.util
    import tempfile

    spec = importlib.util.spec_from_file_location(
        "bench_summarize", Path(__file__).resolve().parents[1] / "benchmarks" / "summarize.py"
    )
    assert spec is not None and spec.loader is not None
    summarize = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(summarize)
    side = {
        "eager_ms": 2.0,
        "compile_ms": 1.0,
        "max_autotune_ms": 0.4,  # faster than the winner: best_baseline below 1
        "reduce_overhead_ms": 0.8,
        "candidate_ms": 0.5,
        "agrees": True,
    }
    fast = bench_row(Path("level3/a.py"), _session(PEERS, 0.5, 4.0), 1.0, peers=side)
    assert fast["speedup_vs_peer"]["best_baseline"] == 0.8
    assert fast["speedup_vs_peer"]["best_target_peer"] == 1.6
    slow = bench_row(Path("level3/b.py"), _session(PEERS, 0.4, 5.0), 1.0)
    assert slow["speedup_vs_peer"]["best_target_peer"] == 1.25  # reduce-overhead's 0.5 ms
    level = summarize_rows([fast, slow])["3"]
    assert level["geomean_speedup_vs_peer"]["best_target_peer"] == pytest.approx(
        (1.6 * 1.25) ** 0.5, abs=1e-4
    )
    assert level["geomean_speedup_vs_peer"]["best_baseline"] == pytest.approx(
        (0.8 * 1.25) ** 0.5, abs=1e-4
    )
    # Beaten by max-autotune, so not over the best peer; over the target peers both are.
    assert level["improved_vs_best_peer"] == 0 and level["improved_vs_target_peers"] == 2
    # A row written before the field existed gets it when merged.
    old = {k: v for k, v in fast.items()}
    old["speedup_vs_peer"] = {k: v for k, v in fast["speedup_vs_peer"].items()}
    del old["speedup_vs_peer"]["best_target_peer"]
    del old["out_dir"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.json"
        path.write_text(json.dumps({"rows": [old]}))
        merged = summarize.merge([path])
    assert merged["rows"][0]["speedup_vs_peer"]["best_target_peer"] == 1.6
    text = summarize.markdown(merged)
    assert "vs best target peer" in text and "| 1.60 |" in text


def test_the_cli_starts_the_gpu_workers_before_it_reads_the_problem(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """On the GPU ``optimize`` starts the analysis and verification workers first (their
    process starts and imports overlap this process's torch import and the problem's
    validation); not on the CPU; no verification worker with ``KERNELOPT_VERIFY_SERVICE=0``;
    the verification pool is the session's."""
    from kernelopt_jupyter.analysis import pipeline
    from kernelopt_jupyter.cli import optimize
    from kernelopt_jupyter.problem import ProblemError
    from kernelopt_jupyter.session import SearchOptions
    from kernelopt_jupyter.verify import service

    order: list[object] = []
    monkeypatch.setattr(service, "prestart", lambda d, p: order.append(("verify", d, p)))
    monkeypatch.setattr(pipeline, "prestart_analysis", lambda d: order.append(("analysis", d)))

    def shrink(path: str, device: str) -> None:
        order.append("read")
        raise ProblemError("stop here")

    monkeypatch.setattr(optimize, "_shrink_note", shrink)
    both = [("analysis", "cuda"), ("verify", "cuda", 9), "read"]
    for device, env, want in (
        ("cuda", None, both),
        ("cpu", None, ["read"]),
        ("cuda", "0", [("analysis", "cuda"), "read"]),
    ):
        order.clear()
        if env is None:
            monkeypatch.delenv("KERNELOPT_VERIFY_SERVICE", raising=False)
        else:
            monkeypatch.setenv("KERNELOPT_VERIFY_SERVICE", env)
        opts = SearchOptions(device=device, budget=8, out_dir=tmp_path / device)
        with pytest.raises(ProblemError):
            optimize.optimize_one("p.py", opts, quiet=True)
        assert order == want


def test_a_winning_quick_start_names_its_move() -> None:
    """The quick start (no parent, not the harvest) is a move of its own; the harvest is none."""
    from kernelopt_jupyter.cli.optimize import move_chain

    links = {
        "c0": (None, "Inductor harvest"),
        "c1": (None, "dispatch: vendor libraries (eager) in a CUDA graph"),
        "c2": ("c0", "CUDA graph"),
        "c3": ("c2", "tune k: XBLOCK 64->128"),
    }
    assert move_chain(links, "c1") == ["dispatch: vendor libraries (eager) in a CUDA graph"]
    assert move_chain(links, "c3") == ["CUDA graph", "tune k: XBLOCK 64->128"]
    assert move_chain(links, "c0") == [] and move_chain(links, None) == []
