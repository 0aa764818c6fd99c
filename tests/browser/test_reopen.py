"""A saved notebook reopened in Notebook 7, in real Chromium: the search's panel ran in
JupyterLab and the notebook was saved (widget state off, ipywidgets' default) and its kernel
shut down. Reopened with a new kernel, the panel's output says in one line that it ended with
its kernel, above the snapshot (the chart of the candidates and the summary), and nothing says
"Error displaying widget: model not found"."""

from __future__ import annotations

import json
import sys
from typing import Any

from .conftest import ROOT, Lab, open_notebook, run_cell, write_notebook
from .test_notebook_use import SEARCH_TIMEOUT_MS, doc_shot

JS_SAVE_AND_SHUT_DOWN = """async () => {
  const w = window.jupyterapp.shell.currentWidget;
  await w.context.save();
  await w.sessionContext.shutdown();
}"""


def test_a_saved_notebook_reopens_in_notebook_7_as_a_snapshot(lab: Lab, page: Any) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from panel_sample import TWO_KERNELS

    magic = "%%kernelopt --agents offline --budget 2 --seeds 2 --iterations 1 --device cpu"
    write_notebook(
        lab.root / "reopen.ipynb",
        [("load", "%load_ext kernelopt_jupyter"), ("search", magic + "\n" + TWO_KERNELS)],
    )
    open_notebook(page, lab, "reopen.ipynb")
    run_cell(page, "load")
    run_cell(page, "search")
    panel = page.locator(".kernelopt-panel").first
    panel.locator(".kernelopt-header", has_text="finished").wait_for(timeout=SEARCH_TIMEOUT_MS)
    # The live panel is the widget, not the record line, in the page that ran the cell.
    assert page.locator(".kernelopt-panel-record").count() == 0
    page.locator(".kernelopt-summary", has_text="status finished").first.wait_for()
    page.evaluate(JS_SAVE_AND_SHUT_DOWN)

    saved = json.loads((lab.root / "reopen.ipynb").read_text())
    outputs = saved["cells"][1]["outputs"]
    kinds = [sorted(o.get("data", {})) for o in outputs]
    assert any("application/vnd.kernelopt.panel+json" in k for k in kinds), kinds
    assert any("image/svg+xml" in k for k in kinds), kinds

    page.goto(f"{lab.url}/notebooks/reopen.ipynb?token={lab.token}")
    record = page.locator(".kernelopt-panel-record")
    record.wait_for(timeout=60_000)
    assert "ended with the kernel that drew it" in record.inner_text()
    output = page.locator(".jp-Cell-outputArea", has=record)
    chart = output.locator("img[src^='data:image/svg+xml']")
    chart.wait_for()
    assert chart.evaluate("i => i.naturalWidth") > 100  # the SVG decoded and drew
    summary = output.locator(".kernelopt-summary")
    said = summary.inner_text()
    assert "status finished" in said and "best:" in said, said
    page.wait_for_timeout(2000)  # ipywidgets' manager has restored by now (its error is late)
    text = page.locator("body").inner_text()
    assert "model not found" not in text and "Error displaying widget" not in text
    assert page.locator(".kernelopt-panel").count() == 0
    doc_shot(page, output, "notebook7-reopened-snapshot")
