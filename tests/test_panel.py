"""The panel, headless: event folding, incremental widgets, diffs, step buttons, accept, report."""

from __future__ import annotations

import difflib
import html as html_lib
import io
import json
import os
import re
import sys
import threading
import time
import types
from pathlib import Path
from typing import Any

import pytest
from panel_sample import REFERENCE, candidate_source, sample_events

from kernelopt_jupyter.agents.stepping import StepControl
from kernelopt_jupyter.event_payloads import Profile
from kernelopt_jupyter.events import Event, EventLog
from kernelopt_jupyter.notebook.accept import render_accepted_cell
from kernelopt_jupyter.notebook.panel import plots
from kernelopt_jupyter.notebook.panel.diff import paired_blocks, side_by_side, split_blocks
from kernelopt_jupyter.notebook.panel.stream import StreamView
from kernelopt_jupyter.notebook.panel.view import TAB_TITLES, SessionPanel
from kernelopt_jupyter.notebook.report import (
    render_summary,
    state_from_events,
    summary_of_events,
)
from kernelopt_jupyter.problem import problem_from_source
from kernelopt_jupyter.session.progress import TextProgress
from kernelopt_jupyter.session.state import SessionState


def events_of(**kwargs: Any) -> list[Event]:
    """The sample session as Event records (through a real in-memory EventLog)."""
    log = EventLog()
    for kind, data in sample_events(**kwargs):
        log.emit(kind, **data)
    return log.events


class Controller:
    """Records what the panel asks of the session (the session's control surface)."""

    def __init__(self, step: bool = False) -> None:
        self.step = StepControl(enabled=step)
        self.stopped = False
        self.submitted: list[tuple[str, str | None, str]] = []

    def stop(self) -> None:
        self.stopped = True
        self.step.stop()

    def submit(self, source: str, parent: str | None = None, agent: str = "person") -> str:
        self.submitted.append((source, parent, agent))
        return f"c{100 + len(self.submitted)}"


def plain(html_text: str) -> str:
    """The text of an HTML fragment (highlighting splits tokens into spans)."""
    return html_lib.unescape(re.sub(r"<[^>]+>", "", html_text))


def wait_for(predicate: Any, timeout: float = 10.0) -> bool:
    """Poll until ``predicate()`` holds (threads hand results back asynchronously)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


# --------------------------------------------------------------------------- state


def test_state_folds_a_session() -> None:
    state = state_from_events(events_of(candidates=6))
    assert state.status == "finished"
    assert list(state.candidates) == [f"c{i}" for i in range(1, 7)]
    assert state.candidates["c3"].gates["correctness"].status == "fail"
    assert state.candidates["c3"].verdict == "fail"
    assert state.candidates["c2"].verdict == "pass"
    assert state.best == "c5"  # the fastest passing one (speed grows with i; c6 failed)
    assert [round(b, 2) for _, b in state.progress] == [1.1, 1.2, 1.4, 1.5]
    assert state.budget_line().startswith("candidates 6/6")
    assert state.agents["planner"].full_text.startswith("── step 1, iteration 0 ──\ntoken0 token1")
    assert "\n── step 2, iteration 0 ──\n" in state.agents["planner"].full_text
    assert state.agents["planner"].tool_calls == 6
    assert state.plan_title("p2") == "fuse, BLOCK=512"


def test_state_reports_only_what_changed() -> None:
    state = SessionState()
    evs = events_of(candidates=2)
    cut = next(i for i, e in enumerate(evs) if e.type == "candidate")
    state.apply_all(evs[: cut + 1])
    first = state.take_changes()
    assert first.new_candidates == ["c1"]
    state.apply(Event("gate", {"candidate": "c1", "name": "static", "status": "pass"}))
    second = state.take_changes()
    assert second.new_candidates == [] and second.candidates == {"c1"}
    assert not second.text and not second.profile
    assert not state.take_changes().any()


def test_unknown_event_types_are_ignored() -> None:
    state = SessionState()
    state.apply(Event("from_a_newer_engine", {"x": 1}))
    assert state.events_seen == 1 and not state.take_changes().any()


# --------------------------------------------------------------------------- widgets


def fed_panel(controller: Any = None, **kwargs: Any) -> SessionPanel:
    panel = SessionPanel(controller=controller, reference_source=REFERENCE)
    panel.feed(events_of(**kwargs))
    return panel


def test_table_rows_badges_and_speedups() -> None:
    panel = fed_panel(candidates=6)
    rows = panel.table.rows_box.children[1:]
    assert len(rows) == 6
    assert "kernelopt-candidate-c3" in rows[2]._dom_classes
    badges = panel.table.rows["c3"]["badges"]
    assert "kernelopt-gate-fail" in badges["correctness"]._dom_classes
    assert "kernelopt-gate-pass" not in badges["correctness"]._dom_classes
    assert badges["correctness"].button_style == "danger"
    assert badges["fp64"].description.endswith("fp64")
    assert "kernelopt-gate-skipped" in badges["fp64"]._dom_classes
    assert "1.50x [1.48, 1.52]" in panel.table.rows["c5"]["speed"].value
    assert "<b>c5</b> ★" in panel.table.rows["c5"]["info"].value
    assert "one fused pass halves memory traffic" in panel.table.rows["c5"]["info"].value
    assert (
        panel.table.rows["c3"]["accept"].disabled and not panel.table.rows["c5"]["accept"].disabled
    )
    assert "best <b>c5</b>" in panel.header.html.value


def test_table_shows_the_concrete_change_and_no_repeated_source() -> None:
    panel = fed_panel(candidates=3)
    c2 = panel.state.candidates["c2"]
    panel.feed(
        [
            Event("candidate", {"id": "c9", "parent": "c1", "agent": "tuner", "source": c2.source}),
            Event(
                "candidate", {"id": "c10", "parent": "c2", "agent": "tuner", "source": "x = 1\n"}
            ),
        ]
    )
    assert "c9" not in panel.table.rows and "c10" in panel.table.rows  # a repeat gets no row
    assert len(panel.table.rows_box.children) == 1 + 4
    assert "same code as c9" in panel.table.rows["c2"]["info"].value
    # The change comes from the two LAUNCH_CONFIGS, whatever the note says.
    base = "LAUNCH_CONFIGS = {'k': {'XBLOCK': 2, 'num_warps': 4}}\n"
    moved = "LAUNCH_CONFIGS = {'k': {'XBLOCK': 4, 'num_warps': 4}}\n"
    panel.feed(
        [
            Event("candidate", {"id": "c11", "parent": None, "agent": "harvest", "source": base}),
            Event("candidate", {"id": "c12", "parent": "c11", "agent": "tuner", "source": moved}),
        ]
    )
    # The change, its "old->new" on one line (it wrapped after the "-").
    assert (
        "<span style='white-space:nowrap'>2-&gt;4</span>" in panel.table.rows["c12"]["info"].value
    )
    assert "k: XBLOCK" in panel.table.rows["c12"]["info"].value
    # An executor's edit names its change in its answer; the row shows it, then the plan.
    panel.feed(
        [
            Event("plan", {"plan_id": "p9", "title": "Retune k", "parent": "c11"}),
            Event(
                "agent_finished",
                {"agent": "executor", "output": {"plan_id": "p9", "explanation": "k: warps 1->2"}},
            ),
            Event(
                "candidate",
                {"id": "c13", "parent": "c10", "agent": "executor", "plan_id": "p9", "source": "y"},
            ),
        ]
    )
    info = panel.table.rows["c13"]["info"].value
    assert "k: warps <span style='white-space:nowrap'>1-&gt;2</span>" in info
    assert "plan: Retune k" in info


def test_gate_diagnostics_on_demand() -> None:
    panel = fed_panel(candidates=3)
    assert panel.table.gate_detail.value == ""
    panel.table.rows["c3"]["badges"]["correctness"].click()
    shown = panel.table.gate_detail.value
    assert "max abs err 0.5" in shown
    # A sentence and the numbers first; the raw record (JSON keys) only behind a disclosure.
    summary, _, record = shown.partition("<details")
    assert "Correctness failed: " in summary and "max_abs_err" not in summary
    assert "max_abs_err" in record and "full record" in record


def test_gate_detail_is_a_sentence_numbers_and_a_folded_record() -> None:
    from kernelopt_jupyter.notebook.panel.gatedetail import gate_detail_html
    from kernelopt_jupyter.session.state import GateView

    long_detail = "call 1 (input seed 0): " + "mismatch at [3, 4] " * 40
    view = GateView(
        "correctness",
        "fail",
        long_detail,
        {"seeds": [0, 1], "calls": 2, "max_abs_err": 0.25, "per_seed": [{"x": 1}] * 200},
    )
    shown = gate_detail_html("c4", view)
    summary, _, record = shown.partition("<details")
    assert len(plain(summary)) < 500  # a sentence and a few numbers, not the record
    assert "largest absolute error" in summary and "0.25" in summary
    assert "input seeds" in summary and "0, 1" in summary
    assert "calls that passed" in summary  # what the verifier counts: not the failing call
    assert "per_seed" not in summary and "per_seed" in record
    assert long_detail.strip() in html_lib.unescape(record)
    # A failing candidate that never compared anything shows no error number.
    never = GateView("correctness", "fail", "c4 raised", {"max_abs_err": None, "seeds": []})
    assert "largest absolute error" not in gate_detail_html("c4", never)


def test_live_events_are_batched_and_rows_are_not_rebuilt() -> None:
    log = EventLog()
    panel = SessionPanel(interval=0.05)
    panel.attach(log)
    evs = list(sample_events(candidates=4))

    def emit_all() -> None:
        for kind, data in evs:
            log.emit(kind, **data)

    emit_all_thread = threading.Thread(target=emit_all)
    emit_all_thread.start()
    emit_all_thread.join()
    assert wait_for(lambda: panel.rendered == len(evs))
    first_row = panel.table.rows_box.children[1]
    log.emit("gate", candidate="c1", name="performance", status="pass", detail="again")
    assert wait_for(lambda: "again" in panel.table.rows["c1"]["badges"]["performance"].tooltip)
    assert panel.table.rows_box.children[1] is first_row  # updated in place
    assert panel.state.events_seen == len(evs) + 1
    assert panel.first_render_s is not None
    panel.close()


def test_agent_text_is_appended_not_resent(monkeypatch: pytest.MonkeyPatch) -> None:
    panel = SessionPanel()
    sent: list[dict[str, Any]] = []
    evs = events_of(candidates=1, text_deltas=50)
    start = [e for e in evs if e.type == "session_started" or e.type == "agent_started"][:2]
    for e in start:
        panel._on_event(e)
    panel.flush()
    stream = panel.agents.streams["planner"]
    monkeypatch.setattr(stream, "send", lambda msg, buffers=None: sent.append(msg))
    deltas = [
        Event("agent_text", {"agent": "planner", "step": 1, "delta": f"w{i} "}) for i in range(50)
    ]
    for e in deltas[:30]:
        panel._on_event(e)
    panel.flush()
    for e in deltas[30:]:
        panel._on_event(e)
    panel.flush()
    assert [m["op"] for m in sent] == ["append", "append"]  # one message per refresh
    assert sent[0]["text"] == "".join(f"w{i} " for i in range(30))
    assert sent[1]["text"] == "".join(f"w{i} " for i in range(30, 50))  # only the new text
    assert stream.value == "── step 1, iteration 0 ──\n" + sent[0]["text"] + sent[1]["text"]
    stream._on_front_end_msg(stream, {"op": "sync"}, [])  # a new view asks for the history once
    assert sent[-1] == {"op": "reset", "text": stream.value}


def test_stream_view_append_only() -> None:
    view = StreamView()
    view.append("a")
    view.append("")
    view.append("bc")
    assert view.value == "abc"


def test_diff_against_parent_and_reference_triton_first() -> None:
    panel = fed_panel(candidates=3)
    panel.show_diff("c2")
    assert panel.tabs.selected_index == TAB_TITLES.index("Diff")
    view = plain(panel.diff.view.value)
    assert "parent c1" in view and "BLOCK=512" in view and "BLOCK=256" in view
    panel.show_diff("c2", against="reference")
    view = plain(panel.diff.view.value)
    assert "reference" in view and "Triton kernel _relu_scale (added)" in view
    assert view.index("Triton kernel") < view.index("class ModelNew")
    assert "torch.relu" in view  # the reference's Model is diffed against ModelNew


def test_diff_blocks_put_triton_kernels_first() -> None:
    old = candidate_source(256)
    new = candidate_source(1024, scale="3.0")
    names = [p[0] for p in paired_blocks(old, new)]
    assert names[0] == "_relu_scale"
    html = side_by_side(old, new)
    assert html.index("Triton kernel _relu_scale") < html.index("class ModelNew")
    assert "3.0" in plain(html) and "#e6ffec" in html  # added lines are highlighted
    assert [b.kind for b in split_blocks(new)][:2] == ["triton", "class"]
    assert "no changes" in side_by_side(old, old)


def paused_at(evs: list[Event], agent: str, nth: int = 0) -> int:
    """Index of the ``nth`` step_paused event of ``agent``."""
    hits = [i for i, e in enumerate(evs) if e.type == "step_paused" and e.data["agent"] == agent]
    return hits[nth]


def test_step_buttons_drive_step_control() -> None:
    ctl = Controller(step=True)
    panel = SessionPanel(controller=ctl, step_mode=True, reference_source=REFERENCE)
    assert panel.controls.step_box.layout.display == "flex"
    assert all(b.disabled for b in panel.controls.step_buttons.values())
    evs = events_of(candidates=2, step=True)
    first = paused_at(evs, "executor")
    panel.feed(evs[: first + 1])
    assert panel.state.status == "paused"
    assert not panel.controls.step_buttons["approve"].disabled
    assert not panel.controls.step_buttons["reject"].disabled
    assert (
        "executor proposes" in panel.controls.pending_text.value
        and "proposed" in panel.controls.pending_text.value
    )
    assert "BLOCK=256" in plain(
        panel.controls.pending_text.value
    )  # the edit, as a diff against its parent
    panel.controls.step_buttons["approve"].click()
    assert ctl.step.wait(timeout=1) == ("approve", None)
    assert panel.controls.step_buttons["approve"].disabled  # until the next pause

    panel.feed(evs[first + 1 : first + 2])  # step_resumed
    assert panel.controls.pending_text.value == "" and panel.state.status == "running"
    second = paused_at(evs, "executor", 1)
    panel.feed(evs[first + 2 : second + 1])
    panel.controls.reject_reason.value = "too clever"
    panel.controls.step_buttons["reject"].click()
    assert ctl.step.wait(timeout=1) == ("reject", "too clever")

    panel.feed(evs[second : second + 1])  # paused again on the same proposal
    panel.controls.step_buttons["edit"].click()
    assert panel.tabs.selected_index == TAB_TITLES.index("Edit")
    assert panel.editor.kind.value == "code"
    assert panel.editor.source.value == candidate_source(512)  # the pending proposal, not c1
    panel.editor.source.value = "class ModelNew: pass\n"
    panel.editor.submit.click()
    assert ctl.step.wait(timeout=1) == ("edit_candidate", "class ModelNew: pass\n")

    panel.feed(evs[second : second + 1])  # paused once more, then the session ends
    assert not panel.controls.step_buttons["approve"].disabled
    panel.feed([e for e in evs if e.type == "session_finished"])
    assert all(b.disabled for b in panel.controls.step_buttons.values())  # nothing left to approve
    assert panel.controls.pending_text.value == ""


def test_step_plan_edit_and_next() -> None:
    ctl = Controller(step=True)
    panel = SessionPanel(controller=ctl, step_mode=True)
    evs = events_of(candidates=1, step=True)
    panel.feed(evs[: paused_at(evs, "planner") + 1])
    assert not panel.controls.step_buttons["next"].disabled
    assert "fuse, BLOCK=256" in panel.controls.pending_text.value
    panel.controls.step_buttons["edit"].click()
    assert panel.editor.kind.value == "plan"
    assert panel.editor.source.value == "one pass over memory"
    panel.editor.source.value = "fuse, and use BLOCK=2048"
    panel.editor.submit.click()
    assert ctl.step.wait(timeout=1) == ("edit_plan", "fuse, and use BLOCK=2048")
    panel.feed(
        [
            Event(
                "step_paused",
                {
                    "agent": "profiler",
                    "step": 2,
                    "actions": ["approve", "stop"],
                    "payload": {"summary": "matmul dominates"},
                },
            )
        ]
    )
    assert (
        panel.controls.step_buttons["reject"].disabled
        and panel.controls.step_buttons["edit"].disabled
    )
    assert "matmul dominates" in panel.controls.pending_text.value
    panel.controls.step_buttons["next"].click()
    assert ctl.step.wait(timeout=1) == ("approve", None)


def test_no_plan_pause_offers_end_code_and_direction_and_answers_the_rest() -> None:
    from kernelopt_jupyter.agents.stepping import ACTIONS

    ctl = Controller(step=True)
    panel = SessionPanel(controller=ctl, step_mode=True, reference_source=REFERENCE)
    panel.feed(events_of(candidates=1))
    decided: list[tuple[str, Any]] = []
    waiting = threading.Thread(
        target=lambda: decided.append(ctl.step.wait(agent="no_plan", offered=ACTIONS["no_plan"]))
    )
    waiting.start()
    assert wait_for(lambda: ctl.step.pending)
    no_plan = "No untried plan applies to c1."
    panel.feed(
        [
            Event(
                "step_paused",
                {
                    "agent": "planner",
                    "step": 5,
                    "actions": ACTIONS["no_plan"],
                    "payload": {"plans": [], "parent": "c1", "no_plan": no_plan},
                    "pause": 1,
                },
            )
        ]
    )
    buttons = panel.controls.step_buttons
    assert not buttons["end"].disabled and not buttons["edit"].disabled
    assert buttons["reject"].disabled
    assert "no plan left" in panel.controls.pending_text.value
    assert no_plan in panel.controls.pending_text.value
    assert "End to finish" in panel.header.message.value
    # Edit opens the parent's code; a plan edit is not taken here and says why at once.
    buttons["edit"].click()
    assert panel.editor.kind.value == "code"
    assert panel.editor.source.value == panel.state.candidates["c1"].source
    panel.editor.kind.value = "plan"
    panel.editor.source.value = "use the vendor libraries"
    panel.editor.submit.click()
    said = html_lib.unescape(panel.header.message.value)
    assert "Not sent (edit the plan): no plan is left to edit" in said
    assert "give a direction" in said
    assert ctl.step.pending and not decided  # the search still waits, nothing was lost
    assert not panel.controls.step_buttons["end"].disabled  # the pause can still be answered
    panel.editor.kind.value = "direction"
    panel.editor.submit.click()
    waiting.join(2)
    assert decided == [("direction", "use the vendor libraries")]


def test_submit_outside_step_mode_goes_to_the_gates() -> None:
    ctl = Controller()
    panel = fed_panel(controller=ctl, candidates=2)
    panel.open_editor("c2")
    assert panel.editor.parent.value == "c2"
    panel.editor.source.value += "# tweaked\n"
    panel.editor.submit.click()
    assert ctl.submitted == [(candidate_source(512) + "# tweaked\n", "c2", "person")]
    assert "c101" in panel.header.message.value

    def refuse(source: str, parent: str | None = None, agent: str = "person") -> str:
        raise RuntimeError("the search has not started yet")

    ctl.submit = refuse  # type: ignore[method-assign]
    panel.editor.submit.click()
    assert "Not submitted: the search has not started yet" in panel.header.message.value


def test_a_candidate_being_gated_says_so() -> None:
    panel = SessionPanel()
    evs = events_of(candidates=1)
    upto = next(i for i, e in enumerate(evs) if e.type == "candidate")
    panel.feed(evs[: upto + 1])
    assert "gating…" in panel.table.rows["c1"]["speed"].value
    assert panel.table.rows["c1"]["accept"].disabled


def test_stop_and_read_only() -> None:
    ctl = Controller()
    panel = SessionPanel(controller=ctl)
    panel.controls.stop_button.click()
    assert ctl.stopped and panel.controls.stop_button.disabled
    read_only = fed_panel(controller=None, candidates=2)
    assert read_only.controls.stop_button.disabled and read_only.editor.submit.disabled


def test_accept_uses_the_bridge_then_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, str, str]] = []
    answer = {"ok": True}

    def request_insert(
        cell_id: str, source: str, mode: str = "below", timeout: float = 2.0
    ) -> bool:
        calls.append((cell_id, source, mode))
        return answer["ok"]

    fake = types.ModuleType("kernelopt_jupyter.notebook.bridge")
    fake.request_insert = request_insert  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "kernelopt_jupyter.notebook.bridge", fake)
    problem = problem_from_source(REFERENCE, validate=False)
    panel = SessionPanel(problem=problem, cell_id="cell-42")
    panel.feed(events_of(candidates=2))
    panel.table.rows["c2"]["accept"].click()
    assert wait_for(lambda: "Inserted c2" in panel.header.message.value)
    cell_id, source, mode = calls[0]
    assert (cell_id, mode) == ("cell-42", "below")
    assert source.startswith("# KernelOPT: accepted candidate c2")
    assert "BLOCK=512" in source
    answer["ok"] = False
    panel.controls.accept_mode.value = "replace"
    panel.accept("c2")
    assert wait_for(lambda: "%kernelopt accept c2" in panel.header.message.value)
    assert calls[-1][2] == "replace"
    # No cell was made: the panel says so and shows the code to copy.
    assert "No cell was inserted" in panel.header.message.value
    code = panel.header.code.value
    assert "kernelopt-code-view" in code and "kernelopt-copy" in code
    assert "BLOCK=512" in html_lib.unescape(code)


def test_accept_through_the_async_bridge(monkeypatch: pytest.MonkeyPatch) -> None:
    from concurrent.futures import Future

    calls: list[tuple[str, str]] = []

    def request_insert_async(
        cell_id: str, source: str, mode: str = "below", timeout: float = 2.0, *, on_done: Any = None
    ) -> Future[Any]:
        calls.append((cell_id, mode))
        future: Future[Any] = Future()

        def answer() -> None:
            reply = types.SimpleNamespace(ok=False, detail="cell cell-1 not found")
            future.set_result(reply)
            on_done(False, reply)

        threading.Thread(target=answer).start()
        return future

    fake = types.ModuleType("kernelopt_jupyter.notebook.bridge")
    fake.request_insert_async = request_insert_async  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "kernelopt_jupyter.notebook.bridge", fake)
    panel = SessionPanel(cell_id="cell-1")
    panel.feed(events_of(candidates=2))
    panel.accept("c2")
    assert wait_for(lambda: "cell cell-1 not found" in panel.header.message.value)
    assert "%kernelopt accept c2" in panel.header.message.value and calls == [("cell-1", "below")]


def test_accept_without_cell_id_offers_the_line_magic() -> None:
    panel = fed_panel(candidates=2)
    panel.accept("c1")
    assert wait_for(lambda: "%kernelopt accept c1" in panel.header.message.value)


def test_plots_follow_the_profiles() -> None:
    import plotly.graph_objects as go

    state = state_from_events(events_of(candidates=3))
    fig = plots.new_charts(go.Figure)
    plots.update_dispatch(fig, state.reference_profile())
    triton = fig.data[plots.DISPATCH][plots.KINDS.index("triton")]
    assert list(triton.y) == ["relu", "mul"] and list(triton.x) == [55.0, 40.0]
    plots.update_roofline(fig, state.reference_profile())
    assert len(fig.data[plots.ROOFLINE][plots.KINDS.index("triton")].x) == 2
    assert len(fig.data[plots.ROOF].x) >= 2
    plots.update_timeline(fig, state.reference_profile(), state.candidate_profile("c2"), "c2")
    ys = fig.data[plots.TIMELINE][plots.KINDS.index("triton")].y
    assert sorted(set(ys)) == ["c2", "reference"]
    assert plots.update_progress(fig, [], 0.0) == "no timed candidate yet"
    assert plots.update_progress(fig, state.progress, state.last_t) == ""
    assert [round(y, 2) for y in fig.data[plots.PROGRESS].y][:2] == [1.1, 1.2]
    one = Profile.from_dict({"dispatch_map": [{"name": "k", "kind": "triton", "share": 1}]})
    assert "needs FLOPs" in plots.update_roofline(fig, one)
    cpu = Profile.from_dict(
        {
            "dispatch_map": {
                "records": [
                    {
                        "name": "a",
                        "kind": "vendor",
                        "share": None,
                        "ms": None,
                        "flops": 8e6,
                        "bytes": 4e6,
                        "bound_ms": 3.0,
                    },
                    {
                        "name": "b",
                        "kind": "triton",
                        "share": None,
                        "ms": None,
                        "flops": 1e6,
                        "bytes": 4e6,
                        "bound_ms": 1.0,
                    },
                ]
            }
        }
    )
    assert "estimated" in plots.update_dispatch(fig, cpu)
    assert list(fig.data[plots.DISPATCH][plots.KINDS.index("vendor")].x) == [75.0]
    assert "no GPU timings" in plots.update_roofline(fig, cpu)
    vendor = fig.data[plots.ROOFLINE][plots.KINDS.index("vendor")]
    assert list(vendor.x) == [2.0] and list(vendor.marker.symbol) == ["circle-open"]
    assert max(fig.data[plots.ROOF].y) > 0


def test_panel_builds_charts_and_timeline_choice() -> None:
    panel = fed_panel(candidates=3)
    fig = panel.charts.figs["charts"]
    assert panel.charts.plot_box.children == (panel.charts.output,)
    assert ("c2", "c2") in list(panel.charts.timeline_candidate.options)
    panel.charts.timeline_candidate.value = "c2"
    assert "c2" in fig.data[plots.TIMELINE][plots.KINDS.index("triton")].y
    # What the front end draws is the figure as it stands, the picked timeline included.
    (shown,) = panel.charts.output.outputs
    drawn = shown["data"]["application/vnd.plotly.v1+json"]["data"][plots.TIMELINE.start + 1]
    assert "c2" in drawn["y"]


def test_three_panels_save_in_well_under_a_megabyte() -> None:
    """A notebook stores each widget's state when saved with "Save Widget State": the charts
    must not carry plotly.js (5 MB per FigureWidget) into it."""
    from ipywidgets.widgets.widget import _instances

    before = set(_instances)
    panels = [fed_panel(candidates=3) for _ in range(3)]
    for panel in panels:
        assert panel.charts.figs, "the charts were not built"
    # The front end saves every model the kernel made (shown or not), as get_state gives it.
    made = [_instances[k] for k in set(_instances) - before]
    saved = len(json.dumps([w.get_state() for w in made], default=str))
    assert saved < 1_000_000, saved


def test_charts_have_titles_axes_units_and_a_kind_legend() -> None:
    go = pytest.importorskip("plotly.graph_objects")
    fig = plots.new_charts(go.Figure)
    layout = fig.layout
    axes = {
        "dispatch": (layout.xaxis, layout.yaxis),
        "roofline": (layout.xaxis2, layout.yaxis2),
        "timeline": (layout.xaxis3, layout.yaxis3),
        "progress": (layout.xaxis4, layout.yaxis4),
    }
    for chart, (x_axis, y_axis) in axes.items():
        assert x_axis.title.text == plots.AXES[chart][0]
        assert y_axis.title.text == plots.AXES[chart][1]
    assert "(%)" in layout.xaxis.title.text and "FLOP/byte" in layout.xaxis2.title.text
    assert "(ms)" in layout.xaxis3.title.text and "(s)" in layout.xaxis4.title.text
    assert layout.width is None and layout.autosize  # fills the panel's width
    legend = [trace.name for trace in fig.data if trace.showlegend is not False]
    assert "vendor library call" in legend and "Triton kernel" in legend
    profile = Profile.from_dict(
        {"timeline": [{"name": "k", "kind": "triton", "start_ms": 0.0, "dur_ms": 7250.0}]}
    )
    # On the CPU the bars are interpreter time, and the chart says so.
    note = plots.update_timeline(fig, profile, None, "c1", device="cpu")
    assert "interpreter" in note
    assert "CPU interpreter time" in fig.layout.annotations[2].text
    assert "not GPU time" in fig.layout.xaxis3.title.text
    assert plots.update_timeline(fig, profile, None, "c1", device="cuda") == ""
    # A kind only the timeline shows (no dispatch map here) has a legend entry of its own.
    other = Profile.from_dict(
        {"timeline": [{"name": "copy", "kind": "other", "start_ms": 0.0, "dur_ms": 1.0}]}
    )
    plots.update_timeline(fig, other, None, "c1", device="cuda")
    legend = [t.name for t in fig.data if t.showlegend is not False and len(t.x or ())]
    assert "other op" in legend, legend
    # Without a GPU the progress chart never gets a point, and says why (not "yet").
    assert plots.update_progress(fig, [], 30.0, device="cpu") == "nothing is timed without a GPU"
    assert plots.update_progress(fig, [], 30.0, device="cuda") == "no timed candidate yet"
    assert fig.layout.annotations[2].text == plots.TITLES["timeline"]


def test_profile_summary_shows_failures_and_notes() -> None:
    panel = SessionPanel()
    panel.feed(
        [
            Event("session_started", {"problem": "<cell>", "name": "p", "kind": "module"}),
            Event(
                "profile",
                {
                    "dispatch_map": {
                        "ok": False,
                        "error": "harvest broke",
                        "records": [],
                        "notes": ["ranked by bytes"],
                    }
                },
            ),
        ]
    )
    assert "profiling failed: harvest broke" in panel.charts.profile_summary.value
    assert "ranked by bytes" in panel.charts.profile_summary.value


def test_errors_are_shown() -> None:
    panel = SessionPanel()
    panel.feed([Event("error", {"where": "executor", "message": "boom"})])
    assert "executor: boom" in panel.header.errors.value


# --------------------------------------------------------------------------- report, text, accept


def test_static_summary() -> None:
    state = state_from_events(events_of(candidates=3))
    html = render_summary(state, out_dir="runs/x")
    assert "kernelopt-summary" in html and "%kernelopt open runs/x" in html
    assert html.count("<tr>") == 3 and "c2</b> ★" in html
    assert "✗ correctness" in html and "1.20x" in html


def test_summary_beside_the_live_panel() -> None:
    """The summary shown under the live panel: a running session says so and where its progress
    is, its table (the panel's own) starts folded, so the page does not repeat it; an unfinished
    session that no kernel runs any more says it was interrupted."""
    events = events_of(candidates=3)
    live = summary_of_events(events[:2], beside_panel=True, live=True)
    assert "status <b>running (the live panel shows its progress" in live
    assert "Measuring the baselines (eager, torch.compile) (" in live
    assert "Profiling the reference and harvesting Inductor&#x27;s kernels (running)" in live
    assert "interrupted" not in live
    # As the magic shows it, before the session's first event: running, not 'starting'.
    shown = summary_of_events([], beside_panel=True, live=True)
    assert "status <b>running (the live panel" in shown and "starting" not in shown
    saved = summary_of_events(events[:2], beside_panel=True)
    assert "status <b>interrupted</b>" in saved and "kernels (interrupted)" in saved
    assert "running" not in saved
    beside = summary_of_events(events, beside_panel=True, live=True)
    assert "status <b>finished</b>" in beside
    assert "<details><summary>3 candidate(s) (the same table as the panel's)" in beside
    alone = summary_of_events(events)
    assert "<details open><summary>3 candidate(s)</summary>" in alone


def test_text_progress_lines() -> None:
    out = io.StringIO()
    progress = TextProgress(out)
    for e in events_of(candidates=3):
        progress(e)
    text = out.getvalue()
    assert "KernelOPT: relu_scale (module) on cuda" in text
    assert "c3: fail (static pass, correctness fail, fp64 skipped, performance skipped)" in text
    assert text.rstrip().endswith("finished (finished); best: c2")
    assert "planner step 1: token0 token1" in text  # the agent's own words, shortened
    assert max(len(line) for line in text.splitlines()) < 200


GOLDEN = Path(__file__).parent / "golden"


def assert_golden(name: str, text: str) -> None:
    """``text`` equals tests/golden/<name>; KERNELOPT_UPDATE_GOLDEN=1 rewrites the file."""
    path = GOLDEN / name
    if os.environ.get("KERNELOPT_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.is_file(), f"{path} missing: run with KERNELOPT_UPDATE_GOLDEN=1 to create it"
    expected = path.read_text()
    assert text == expected, (
        f"{path} differs; if the change is intended, refresh with KERNELOPT_UPDATE_GOLDEN=1:\n"
        + "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True)))
    )


def test_accepted_cell_runs_and_names_its_origin() -> None:
    problem = problem_from_source(REFERENCE, validate=False)
    source = (
        "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
        "    def forward(self, x):\n        return torch.relu(x) * 2.0\n"
    )
    cand = {"id": "c7", "source": source, "parent": "c3", "agent": "executor", "plan_id": "p2"}
    gates = [
        {"name": "static", "status": "pass"},
        {"name": "correctness", "status": "pass"},
        {"name": "fp64", "status": "pass"},
        {"name": "performance", "status": "skipped", "detail": "no GPU"},
    ]
    text = render_accepted_cell(problem, cand, gates, None)
    lines = text.splitlines()
    assert lines[0] == "# KernelOPT: accepted candidate c7 for cell (module problem)"
    assert "parent c3" in lines[1] and "plan p2" in lines[1]
    assert "performance skipped (no GPU)" in lines[2]
    assert "not timed" in lines[3]
    ns: dict[str, Any] = {}
    exec(compile(text, "<accepted>", "exec"), ns)
    import torch

    x = torch.randn(4, 4)
    assert torch.equal(ns["ModelNew"]()(x), torch.relu(x) * 2.0)
    assert "TRITON_INTERPRET" not in text  # no Triton in this candidate: no preamble
    triton_cand = dict(cand, source=candidate_source(256))
    with_kernels = render_accepted_cell(problem, triton_cand, gates, None)
    # The interpreter switch comes before the kernels are decorated (it is read then).
    assert with_kernels.index("use_cpu_interpreter()") < with_kernels.index("@triton.jit")
    assert_golden("accepted_cell_module.py", text)
    assert_golden("accepted_cell_triton.py", with_kernels)
    timed = render_accepted_cell(problem, cand, gates, (1.5, 1.4, 1.6))
    assert "1.50x vs the baseline (95% CI 1.40-1.60)" in timed


RECORDED = Path(__file__).parent / "data" / "panel" / "row_softmax_offline.jsonl"


def test_recorded_offline_session_in_the_panel_and_summary() -> None:
    """A real offline CPU run (``kernelopt optimize kernelopt_jupyter/problems/row_softmax.py
    --agents offline --budget 4 --seeds 2``, recorded) drawn by the panel and the summary."""
    from kernelopt_jupyter.events import read_events
    from kernelopt_jupyter.notebook.report import summary_of_events

    events = read_events(RECORDED)
    panel = SessionPanel()
    panel.feed(events)
    state = panel.state
    assert state.problem == "row_softmax" and state.device == "cpu"
    assert "finished" in panel.header.html.value
    phases = [(p.name, p.end is not None) for p in panel.phases.phases]
    # On the CPU the first phase is the analysis, said untimed: no "Measuring the baselines"
    # phase that ran the analysis, and no analysis phase of 0 s after it.
    assert [name for name, _ in phases][:2] == ["analysis", "search"]
    assert (
        panel.phases.phases[0].label == "Profiling the reference kernel (no GPU: nothing is timed)"
    )
    assert all(ended for _, ended in phases)  # the session finished: no phase left running
    assert panel.phase_view.phases == panel.phases.to_data() and panel.phase_view.ended
    sources = {c.source for c in state.candidates.values()}
    assert len(panel.table.rows) == len(sources)
    # Each edit's row names the launch setting it moved, not just its plan's title.
    edits = [c for c in state.candidates.values() if c.parent and c.id in panel.table.rows]
    assert edits and all("num_warps" in panel.table.rows[c.id]["info"].value for c in edits)
    summary = summary_of_events(events, out_dir="runs/panel-recording")
    assert "Profiling the reference kernel" in summary and "num_warps" in summary
    assert_golden("summary_row_softmax.html", summary)


def test_reject_one_plan_of_several() -> None:
    ctl = Controller(step=True)
    panel = SessionPanel(controller=ctl)
    plans = [
        {"id": "c0.p0", "title": "retune k1", "action": "retile", "rationale": "r"},
        {"id": "c0.p1", "title": "retune k2", "action": "retile", "rationale": "r"},
    ]
    panel.feed(
        [
            Event("session_started", {"problem": "p", "kind": "triton", "device": "cpu"}),
            Event(
                "step_paused",
                {
                    "agent": "planner",
                    "step": 1,
                    "actions": StepControl.actions_for("planner"),
                    "payload": {"plans": plans},
                },
            ),
        ]
    )
    buttons = list(panel.controls.plan_rejects.children)
    assert [b.description for b in buttons] == ["Reject c0.p0", "Reject c0.p1"]
    assert "kernelopt-step-reject-plan" in buttons[1]._dom_classes
    assert "ask the Planner for other plans" in panel.header.message.value
    panel.controls.reject_reason.value = "k2 is fine as it is"
    buttons[1].click()
    action, value = ctl.step.wait(timeout=1)
    assert (action, value) == ("reject_plan", {"plan_id": "c0.p1", "reason": "k2 is fine as it is"})
    assert all(b.disabled for b in panel.controls.plan_rejects.children)  # until the next pause
    assert "the other plans go on" in panel.header.message.value


_PLANS = [
    {"id": "c0.p0", "title": "retune k1", "action": "retile", "rationale": "r"},
    {"id": "c0.p1", "title": "retune k2", "action": "retile", "rationale": "r"},
]


def _edit_plan(panel: SessionPanel) -> None:
    panel.controls.step_buttons["edit"].click()
    panel.editor.source.value = "only the first kernel"
    panel.editor.submit.click()


def _edit_code(panel: SessionPanel) -> None:
    panel.controls.step_buttons["edit"].click()
    panel.editor.kind.value = "code"
    panel.editor.source.value = "y = 2\n"
    panel.editor.submit.click()


@pytest.mark.parametrize(
    ("press", "sent"),
    [
        (lambda p: p.controls.step_buttons["approve"].click(), ("approve", None)),
        (lambda p: p.controls.step_buttons["next"].click(), ("approve", None)),
        (lambda p: p.controls.plan_rejects.children[0].click(), ("reject_plan", "c0.p0")),
        (lambda p: p.controls.step_buttons["reject"].click(), ("reject", "rejected in the panel")),
        (_edit_plan, ("edit_plan", "only the first kernel")),
        (_edit_code, ("edit_candidate", "y = 2\n")),
    ],
    ids=["approve", "next", "reject_plan", "reject", "edit_plan", "edit_candidate"],
)
def test_the_next_pause_drawn_while_a_decision_is_sent_stays_live(
    press: Any, sent: tuple[str, Any]
) -> None:
    """A decision wakes the search at once; it may pause again, and the refresher thread draw
    that pause, before the button's handler returns. The handler must not then grey out the
    new pause's buttons or overwrite its message (the search would wait on a pause that only
    Stop can answer). Here the refresher draws the next pause at exactly that moment, from
    another thread, given 0.3 s to do it (fails without ControlsView._answered's order and
    lock)."""
    ctl = Controller(step=True)
    panel = SessionPanel(controller=ctl, step_mode=True)
    paused = {"agent": "planner", "step": 1, "actions": StepControl.actions_for("planner")}
    panel.feed(
        [
            Event("session_started", {"problem": "p", "kind": "triton", "device": "cpu"}),
            Event("step_paused", {**paused, "payload": {"plans": _PLANS}}),
        ]
    )
    assert not panel.controls.step_buttons["approve"].disabled
    refreshers: list[threading.Thread] = []
    decide = ctl.step._decide

    def decide_then_the_next_pause_is_drawn(
        action: str, value: Any = None, pause: int | None = None
    ) -> None:
        decide(action, value, pause)
        panel._on_event(Event("step_resumed", {"action": action, "by": "person"}))
        panel._on_event(
            Event(
                "step_paused",
                {
                    "agent": "executor",
                    "step": 2,
                    "actions": StepControl.actions_for("executor"),
                    "payload": {"plan_id": "c0.p1", "source": "x = 1\n", "explanation": "e"},
                },
            )
        )
        refresher = threading.Thread(target=panel.flush, daemon=True)
        refresher.start()
        refresher.join(0.3)
        refreshers.append(refresher)

    ctl.step._decide = decide_then_the_next_pause_is_drawn  # type: ignore[method-assign]
    press(panel)
    for refresher in refreshers:
        refresher.join(10)
    action, value = ctl.step.wait(timeout=1)
    assert (action, value.get("plan_id") if isinstance(value, dict) else value) == sent
    assert panel.state.paused is not None and panel.state.paused.agent == "executor"
    # The executor's pause is live: its buttons answer it, the message names it.
    assert not panel.controls.step_buttons["approve"].disabled
    assert not panel.controls.step_buttons["reject"].disabled
    assert "Paused after executor step 2" in panel.header.message.value, panel.header.message.value
    assert "executor proposes" in panel.controls.pending_text.value


def test_stop_while_paused_ends_on_stopped_even_if_drawn_at_once() -> None:
    """Stop while paused ends the search at once; the refresher may draw its end before the
    Stop handler returns, and the handler must not then overwrite "Stopped." (which the
    browser test of step mode waits for)."""
    ctl = Controller(step=True)
    panel = SessionPanel(controller=ctl, step_mode=True)
    paused = {"agent": "planner", "step": 1, "actions": StepControl.actions_for("planner")}
    panel.feed(
        [
            Event("session_started", {"problem": "p", "kind": "triton", "device": "cpu"}),
            Event("step_paused", {**paused, "payload": {"plans": _PLANS}}),
        ]
    )
    refreshers: list[threading.Thread] = []
    stop = ctl.stop

    def stop_then_the_end_is_drawn() -> None:
        stop()
        panel._on_event(Event("step_resumed", {"action": "stop", "by": "person"}))
        panel._on_event(Event("session_finished", {"status": "stopped", "best": None}))
        refresher = threading.Thread(target=panel.flush, daemon=True)
        refresher.start()
        refresher.join(0.3)
        refreshers.append(refresher)

    ctl.stop = stop_then_the_end_is_drawn  # type: ignore[method-assign]
    panel.controls.stop_button.click()
    for refresher in refreshers:
        refresher.join(10)
    assert ctl.stopped and panel.state.status == "finished"
    assert "Stopped." in panel.header.message.value, panel.header.message.value
    assert panel.controls.stop_button.disabled


def test_a_stopped_session_says_stopped() -> None:
    panel = SessionPanel()
    panel.feed(
        [
            Event("session_started", {"problem": "p", "name": "p", "kind": "module"}),
            Event("session_finished", {"status": "stopped", "best": None}),
        ]
    )
    assert "kernelopt-status" in panel.header.html.value
    assert ">stopped<" in panel.header.html.value and ">finished<" not in panel.header.html.value
    assert "Stopped." in panel.header.message.value
    assert [p.name for p in panel.phases.phases] == ["baselines"]
    assert panel.phases.finished == "stopped" and panel.phases.phases[0].end is not None


@pytest.mark.parametrize("button", ["approve", "next", "reject", "reject_plan"])
def test_a_double_click_answers_one_pause_never_the_next(button: str) -> None:
    """The second click of a double click can reach the kernel after the first one's answer
    let the search go on and pause again, and after that pause was drawn: it came from the
    answered pause's button, so it must not answer the new pause, which the person has not
    seen (fails without the numbered pauses: the second click approved pause 2)."""
    ctl = Controller(step=True)
    panel = SessionPanel(controller=ctl, step_mode=True)
    answers: list[tuple[str, Any]] = []

    def search_pauses() -> None:
        answers.append(ctl.step.wait(timeout=20))

    def pause(number: int) -> threading.Thread:
        waiting = threading.Thread(target=search_pauses, daemon=True)
        waiting.start()
        assert wait_for(lambda: ctl.step.pending and ctl.step.pause_count == number)
        panel.feed(
            [
                Event(
                    "step_paused",
                    {
                        "agent": "planner",
                        "step": number,
                        "actions": StepControl.actions_for("planner"),
                        "payload": {"plans": _PLANS},
                        "pause": number,
                    },
                )
            ]
        )
        return waiting

    panel.feed([Event("session_started", {"problem": "p", "kind": "triton", "device": "cpu"})])
    first = pause(1)
    if button == "reject_plan":
        old = panel.controls.plan_rejects.children[0]
    else:
        old = panel.controls.step_buttons[button]
    old.click()
    first.join(10)
    assert len(answers) == 1
    panel.feed([Event("step_resumed", {"action": answers[0][0], "by": "person"})])
    second = pause(2)
    old.click()  # the double click's second half, on the first pause's button
    time.sleep(0.2)
    assert len(answers) == 1 and ctl.step.pending, answers
    assert not panel.controls.step_buttons["approve"].disabled
    assert "Paused after planner step 2" in panel.header.message.value
    panel.controls.step_buttons["approve"].click()  # the new pause's own button answers it
    second.join(10)
    assert [a for a, _ in answers] == [
        "reject_plan" if button == "reject_plan" else "reject" if button == "reject" else "approve",
        "approve",
    ]


def test_a_decision_naming_a_pause_answers_that_pause_only() -> None:
    control = StepControl(enabled=True)
    control.approve(pause=1)  # nothing is waiting: dropped, not kept for the next pause
    assert control.stale == 1
    got: list[tuple[str, Any]] = []
    waiting = threading.Thread(target=lambda: got.append(control.wait(timeout=20)), daemon=True)
    waiting.start()
    assert wait_for(lambda: control.pending)
    control.reject("no", pause=2)  # names a pause that has not come
    assert control.stale == 2 and control.pending
    control.reject("no", pause=1)
    waiting.join(10)
    assert got == [("reject", "no")]
    control.approve()  # without a number: kept for whichever pause comes next (as before)
    assert control.wait(timeout=1) == ("approve", None)
