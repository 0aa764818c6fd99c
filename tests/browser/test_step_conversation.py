"""Step mode as a conversation, in a real JupyterLab and Chromium (offline agents, CPU): reject
the Planner's plans until none is left; the panel says so and offers End, your own code or a
direction; code submitted from the Edit tab at that pause is gated as the person's candidate,
the pause comes back with its verdict, and End finishes the search."""

from __future__ import annotations

import sys
from typing import Any

from .conftest import (
    ROOT,
    Lab,
    click_until_answered,
    open_notebook,
    run_cell,
    shot,
    wait_message_changes,
    write_notebook,
)
from .test_notebook_use import (
    JS_PAUSED_OR_DONE,
    JS_WRAPPED_ARROWS,
    SEARCH_TIMEOUT_MS,
    _click_tab,
    doc_shot,
)

# The panel's visible buttons whose label does not fit them (drawn as "Rej…", "Submit throug…"),
# or that run past their box (a squeezed row of badges).
JS_CUT_BUTTONS = """() => [...document.querySelectorAll('.kernelopt-panel button')]
  .filter(b => b.offsetParent !== null && (b.scrollWidth > b.clientWidth + 1
    || b.getBoundingClientRect().right > b.parentElement.getBoundingClientRect().right + 1))
  .map(b => b.innerText.trim())"""


# The candidates table's column headers wider than their cell (drawn over the next one).
JS_CUT_HEADERS = """() => [...document.querySelectorAll('.kernelopt-panel .kernelopt-candidates b')]
  .filter(b => b.offsetParent !== null && b.scrollWidth > b.clientWidth + 1)
  .map(b => b.innerText.trim())"""


def test_reject_until_no_plan_then_own_code_is_gated_and_end(lab: Lab, page: Any) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from panel_sample import TWO_KERNELS

    magic = "%%kernelopt --agents offline --budget 6 --seeds 2 --iterations 2 --plans 2"
    magic += " --device cpu --step"
    write_notebook(
        lab.root / "step_no_plan.ipynb",
        [("load", "%load_ext kernelopt_jupyter"), ("search", magic + "\n" + TWO_KERNELS)],
    )
    open_notebook(page, lab, "step_no_plan.ipynb")
    run_cell(page, "load")
    run_cell(page, "search")
    panel = page.locator(".kernelopt-panel").first
    panel.wait_for(state="visible", timeout=30_000)
    rejects, submitted, answer = 0, "", ""
    for _ in range(40):
        paused = page.wait_for_function(JS_PAUSED_OR_DONE, timeout=SEARCH_TIMEOUT_MS).json_value()
        assert paused["agent"] is not None, "the search finished without offering a way on"
        if paused["noPlan"] and not submitted:
            pending = panel.locator(".kernelopt-step-pending").inner_text()
            assert "End the search" in pending and "direction" in pending, pending
            assert panel.locator("button.kernelopt-step-end").is_enabled()
            assert not panel.locator("button.kernelopt-step-reject").is_enabled()
            cut = page.evaluate(JS_CUT_BUTTONS)
            assert not cut, f"buttons cut short: {cut}"
            doc_shot(page, panel, "panel-step-no-plan")
            panel.locator("button.kernelopt-step-edit").click()
            source = panel.locator(".kernelopt-edit-source textarea")
            page.wait_for_function(  # the editor's text arrives from the kernel after the tab
                "() => { const t = document.querySelector("
                "'.kernelopt-panel .kernelopt-edit-source textarea');"
                " return t && t.value.length > 0; }"
            )
            parent = source.input_value()
            assert "ModelNew" in parent or "def " in parent, parent  # the parent's code
            submitted = parent + "\n# my own version of it\n"
            source.fill(submitted)
            submit = panel.locator("button.kernelopt-edit-submit")
            assert "Submit through the gates" in submit.inner_text()
            assert not page.evaluate(JS_CUT_BUTTONS), page.evaluate(JS_CUT_BUTTONS)
            panel.locator("button.kernelopt-edit-submit").click()
            wait_message_changes(page, paused["message"])
        elif paused["noPlan"] and paused["answer"]:
            answer = paused["answer"]
            shot(page, "step-no-plan-answered")
            panel.locator("button.kernelopt-step-end").click()
            break
        elif paused["agent"] == "planner" and paused["plans"]:
            panel.locator(".kernelopt-step-reason input").fill(f"not these {rejects}")
            click_until_answered(
                page, panel.locator("button.kernelopt-step-reject"), paused["message"]
            )
            rejects += 1
        else:
            click_until_answered(
                page, panel.locator("button.kernelopt-step-approve"), paused["message"]
            )
    else:
        raise AssertionError("no pause with no plan left came")
    assert rejects >= 1 and submitted
    assert "Your code was gated as c" in answer and "it passed the gates" in answer, answer
    status = panel.locator(".kernelopt-header .kernelopt-status")
    status.filter(has_text="finished").wait_for(timeout=60_000)
    # The person's candidate is a row of its own, agent "person", through the gates.
    _click_tab(panel, "Candidates")
    mine = panel.locator(".kernelopt-candidate-row", has_text="person")
    mine.first.wait_for(timeout=30_000)
    assert mine.first.locator(".kernelopt-gate-correctness.kernelopt-gate-pass").count() == 1
    # The table's headers and badges are whole ("parent" ran into "agent", badges read "corr…").
    assert not page.evaluate(JS_CUT_BUTTONS), page.evaluate(JS_CUT_BUTTONS)
    assert not page.evaluate(JS_CUT_HEADERS), page.evaluate(JS_CUT_HEADERS)
    assert not page.evaluate(JS_WRAPPED_ARROWS), page.evaluate(JS_WRAPPED_ARROWS)
    doc_shot(page, panel, "panel-step-own-code")
