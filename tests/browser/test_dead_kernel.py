"""A panel whose kernel restarted mid-search is a record, in a real JupyterLab and Chromium: the
banner says so, the header no longer says "running" or "paused", the clocks stop, each gate
badge keeps its diagnostic as its tooltip, and charts opened afterwards fill their tab."""

from __future__ import annotations

import sys
from typing import Any

from .conftest import ROOT, Lab, open_notebook, run_cell, write_notebook
from .test_notebook_use import JS_PAUSED_OR_DONE, SEARCH_TIMEOUT_MS, doc_shot

JS_CLOCKS = """() => [...document.querySelectorAll(
  '.kernelopt-panel .kernelopt-phase-clock, .kernelopt-panel .kernelopt-phase-time')]
  .map(e => e.innerText.trim()).join(' | ')"""


def test_a_restarted_kernels_panel_is_a_record(lab: Lab, page: Any) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from panel_sample import TWO_KERNELS

    magic = "%%kernelopt --agents offline --budget 4 --seeds 2 --device cpu --step"
    write_notebook(
        lab.root / "dead.ipynb",
        [("load", "%load_ext kernelopt_jupyter"), ("search", magic + "\n" + TWO_KERNELS)],
    )
    open_notebook(page, lab, "dead.ipynb")
    run_cell(page, "load")
    run_cell(page, "search")
    panel = page.locator(".kernelopt-panel").first
    panel.wait_for(state="visible", timeout=30_000)
    # Paused after the first gated candidate: the search's clock runs, c0's badges are drawn.
    paused = page.wait_for_function(JS_PAUSED_OR_DONE, timeout=SEARCH_TIMEOUT_MS).json_value()
    assert paused["agent"] is not None
    assert "so far" in page.evaluate(JS_CLOCKS)
    badge = panel.locator("button.kernelopt-gate-static").first
    diagnostic = badge.get_attribute("title") or ""
    assert diagnostic.startswith("static: pass"), diagnostic

    page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()"
    )
    panel.locator(".kernelopt-gone-banner").wait_for(timeout=60_000)
    page.wait_for_function(
        "() => !document.querySelector('.kernelopt-panel').innerText.includes('so far')",
        timeout=10_000,
    )
    status = panel.locator(".kernelopt-header .kernelopt-status").inner_text().strip()
    assert status == "ended: the kernel restarted", status
    first = page.evaluate(JS_CLOCKS)
    assert "stopped with the kernel" in first and "when the kernel went" in first, first
    page.wait_for_timeout(2500)
    assert page.evaluate(JS_CLOCKS) == first  # no clock ticks on a record
    assert badge.get_attribute("title") == diagnostic  # the diagnostic is still there
    message = panel.locator(".kernelopt-message").inner_text()
    assert message == "The search was paused here when its kernel went.", message
    doc_shot(page, panel, "panel-kernel-gone-paused")
    # Charts first opened after the restart still fill the tab (at plotly's default 700 px the
    # subplot titles ran into each other): the front end's renderer sizes them, no kernel.
    panel.locator(".kernelopt-tabs .lm-TabBar-tab", has_text="Profile").first.click()
    page.wait_for_function(
        "() => { const p = document.querySelector('.kernelopt-profile');"
        " const f = p && p.querySelector('.main-svg');"
        " return f && f.clientWidth >= 0.9 * p.clientWidth; }",
        timeout=30_000,
    )
