"""What the panel says around the end of a search, in a real JupyterLab and Chromium (offline
agents, CPU): the finished table's headers and badges are drawn whole; code submitted once the
candidate budget is used is refused at once, never announced as "Submitted as c4" beside "c4
not gated: candidate budget used"; while paused the header shows no seconds of its own (they
stood still beside the ticking Time row), and ``%kernelopt stop`` names the session as the
panel does and replaces the pause's "Paused after ..." line at once."""

from __future__ import annotations

import re
import sys
from typing import Any

from .conftest import ROOT, Lab, cell_output, open_notebook, run_cell, write_notebook
from .test_notebook_use import JS_PAUSED_OR_DONE, SEARCH_TIMEOUT_MS, _click_tab
from .test_step_conversation import JS_CUT_BUTTONS, JS_CUT_HEADERS

#: A number of seconds as the header drew them ("194 s", "12/300 s").
SECONDS = re.compile(r"\b\d+(?:/\d+)? s\b")


def _problem() -> str:
    sys.path.insert(0, str(ROOT / "tests"))
    from panel_sample import TWO_KERNELS

    return str(TWO_KERNELS)


def test_code_submitted_after_the_budget_is_refused_at_once(lab: Lab, page: Any) -> None:
    magic = "%%kernelopt --agents offline --budget 2 --seeds 2 --iterations 1 --device cpu"
    write_notebook(
        lab.root / "budget_used.ipynb",
        [("load", "%load_ext kernelopt_jupyter"), ("search", magic + "\n" + _problem())],
    )
    open_notebook(page, lab, "budget_used.ipynb")
    run_cell(page, "load")
    run_cell(page, "search")
    panel = page.locator(".kernelopt-panel").first
    header = panel.locator(".kernelopt-header")
    header.filter(has_text="finished").wait_for(timeout=SEARCH_TIMEOUT_MS)
    assert "candidates 2/2" in header.inner_text(), header.inner_text()
    # The finished table's headers and badges are whole ("parent" ran into "agent", the
    # badges read "corr…").
    _click_tab(panel, "Candidates")
    panel.locator(".kernelopt-candidate-row").first.wait_for()
    assert not page.evaluate(JS_CUT_BUTTONS), page.evaluate(JS_CUT_BUTTONS)
    assert not page.evaluate(JS_CUT_HEADERS), page.evaluate(JS_CUT_HEADERS)
    _click_tab(panel, "Edit")
    panel.locator(".kernelopt-edit-source textarea").fill(_problem() + "\n# mine\n")
    panel.locator("button.kernelopt-edit-submit").click()
    message = panel.locator(".kernelopt-message")
    message.filter(has_text="Not submitted").wait_for(timeout=10_000)
    said = message.inner_text()
    assert "candidate budget used" in said and "no more candidates are gated" in said, said
    page.wait_for_timeout(2000)  # a gate thread started anyway would have said so by now
    text = panel.inner_text()
    assert "Submitted as" not in text and "not gated" not in text, text


def test_paused_header_has_no_clock_and_line_magic_stop_answers_at_once(
    lab: Lab, page: Any
) -> None:
    magic = "%%kernelopt --agents offline --budget 4 --seeds 2 --device cpu --step"
    write_notebook(
        lab.root / "stop_by_magic.ipynb",
        [
            ("load", "%load_ext kernelopt_jupyter"),
            ("search", magic + "\n" + _problem()),
            ("stop", "%kernelopt stop"),
        ],
    )
    open_notebook(page, lab, "stop_by_magic.ipynb")
    run_cell(page, "load")
    run_cell(page, "search")
    panel = page.locator(".kernelopt-panel").first
    panel.wait_for(state="visible", timeout=30_000)
    paused = page.wait_for_function(JS_PAUSED_OR_DONE, timeout=SEARCH_TIMEOUT_MS).json_value()
    assert paused["agent"] is not None, "the stepped search finished without a pause"
    header = panel.locator(".kernelopt-header")
    first = header.inner_text()
    clock = panel.locator(".kernelopt-phase-clock").inner_text()
    assert not SECONDS.search(first), first  # one clock: the Time row's
    page.wait_for_timeout(2500)
    assert panel.locator(".kernelopt-phase-clock").inner_text() != clock  # that one ticks
    assert header.inner_text() == first

    run_cell(page, "stop")
    said = cell_output(page, "stop")
    named = re.match(r"s1 \(([\w.-]+)\): stopping after the current step", said)
    assert named, said
    summary = page.locator(".kernelopt-summary").first.inner_text()
    assert f"problem {named.group(1)} " in summary, (said, summary)  # the name shown there
    # The panel's line changed with the stop, before the search acted on it.
    message = panel.locator(".kernelopt-message").inner_text()
    assert message.startswith("Stopping after the current step"), message
    status = panel.locator(".kernelopt-header .kernelopt-status")
    status.filter(has_text="stopped").wait_for(timeout=60_000)
