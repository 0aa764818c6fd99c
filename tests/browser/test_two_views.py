"""The same notebook open in JupyterLab and in Notebook 7 at once, on one kernel, in real
Chromium: the panel drawn by the page that ran the cell and the one drawn from the kernel's
widget state by the other page both show the Profile tab's charts (it was blank in one)."""

from __future__ import annotations

import sys
from typing import Any

from .conftest import ROOT, Lab, open_notebook, run_cell, shot, write_notebook
from .test_notebook_use import SEARCH_TIMEOUT_MS

JS_CHARTS_DRAWN = """() => { const p = document.querySelector('.kernelopt-profile');
  const f = p && p.querySelector('.main-svg');
  return !!f && f.clientWidth >= 0.9 * p.clientWidth && f.clientHeight > 300; }"""


def _show_profile(page: Any) -> None:
    panel = page.locator(".kernelopt-panel").first
    panel.wait_for(state="visible", timeout=60_000)
    panel.locator(".kernelopt-tabs .lm-TabBar-tab", has_text="Profile").first.click()
    page.wait_for_function(JS_CHARTS_DRAWN, timeout=60_000)


def test_lab_and_notebook_7_both_draw_the_profile(
    lab: Lab, page: Any, browser_context: Any
) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from panel_sample import TWO_KERNELS

    magic = "%%kernelopt --agents offline --budget 2 --seeds 2 --iterations 1 --device cpu"
    write_notebook(
        lab.root / "two_views.ipynb",
        [("load", "%load_ext kernelopt_jupyter"), ("search", magic + "\n" + TWO_KERNELS)],
    )
    open_notebook(page, lab, "two_views.ipynb")
    run_cell(page, "load")
    run_cell(page, "search")
    header = page.locator(".kernelopt-panel .kernelopt-header").first
    header.filter(has_text="finished").wait_for(timeout=SEARCH_TIMEOUT_MS)
    page.evaluate("async () => { await window.jupyterapp.shell.currentWidget.context.save(); }")
    _show_profile(page)
    other = browser_context.new_page()
    try:
        other.goto(f"{lab.url}/notebooks/two_views.ipynb?token={lab.token}")
        _show_profile(other)
        assert other.locator(".kernelopt-panel-record").count() == 0  # live: the same kernel
        shot(other, "two-views-notebook7-profile")
        # The first view still draws its charts beside the second.
        page.bring_to_front()
        page.wait_for_function(JS_CHARTS_DRAWN, timeout=30_000)
        shot(page, "two-views-lab-profile")
    finally:
        other.close()
