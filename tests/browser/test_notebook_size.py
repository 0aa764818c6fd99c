"""The saved size of a notebook with three panels, in a real JupyterLab and Chromium, with
ipywidgets' "Save Widget State Automatically" on: the file JupyterLab writes stays under 1 MB.
The same notebook without the widget state (what saving with the setting off writes: the
outputs do not depend on it) is measured too. The sizes go to
test-artifacts/browser/notebook_size.json, and to the file KERNELOPT_NOTEBOOK_SIZE_OUT names
(scripts/notebook_size.py sets it to benchmarks/results/notebook_size.json)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import nbformat

from .conftest import ARTIFACTS, ROOT, Lab, open_notebook, run_cell, write_notebook
from .test_notebook_use import SEARCH_TIMEOUT_MS

PANELS = 3
LIMIT_BYTES = 1_000_000
#: ipywidgets' own setting, as its settings editor writes it.
SAVE_STATE = Path("@jupyter-widgets") / "jupyterlab-manager" / "plugin.jupyterlab-settings"


def test_three_panels_save_under_a_megabyte_with_widget_state(lab: Lab, page: Any) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from panel_sample import TWO_KERNELS

    settings = lab.root.parent / "settings" / SAVE_STATE
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"saveState": True}))
    magic = "%%kernelopt --agents offline --budget 2 --seeds 2 --iterations 1 --device cpu"
    cells = [("load", "%load_ext kernelopt_jupyter")]
    cells += [(f"search{i}", f"{magic} --name size{i}\n{TWO_KERNELS}") for i in range(PANELS)]
    path = write_notebook(lab.root / "size.ipynb", cells)
    try:
        open_notebook(page, lab, "size.ipynb")
        run_cell(page, "load")
        for i in range(PANELS):
            run_cell(page, f"search{i}")
            header = page.locator(".kernelopt-panel .kernelopt-header").nth(i)
            header.filter(has_text="finished").wait_for(timeout=SEARCH_TIMEOUT_MS)
        page.evaluate("async () => { await window.jupyterapp.shell.currentWidget.context.save(); }")
    finally:
        settings.unlink()

    saved = nbformat.reads(path.read_text(), as_version=4)
    state = saved.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json")
    assert state and state["state"], "JupyterLab saved no widget state"
    without = dict(saved.metadata)
    without.pop("widgets")
    saved.metadata = nbformat.from_dict(without)
    sizes = {
        "panels": PANELS,
        "widget_state_on_bytes": path.stat().st_size,
        "widget_state_off_bytes": len(nbformat.writes(saved).encode()),
        "widget_models_saved": len(state["state"]),
        "search": magic.removeprefix("%%kernelopt "),
        "front_end": "JupyterLab 4 in headless Chromium, saved by the front end",
    }
    report = json.dumps(sizes, indent=1) + "\n"
    (ARTIFACTS / "notebook_size.json").write_text(report)
    if os.environ.get("KERNELOPT_NOTEBOOK_SIZE_OUT"):
        Path(os.environ["KERNELOPT_NOTEBOOK_SIZE_OUT"]).write_text(report)
    assert sizes["widget_state_off_bytes"] < sizes["widget_state_on_bytes"] < LIMIT_BYTES, sizes
    # Each panel left its output and its snapshot (chart and summary) in the file.
    outputs = [out.get("data", {}) for cell in saved.cells for out in cell.get("outputs", [])]
    assert sum("application/vnd.kernelopt.panel+json" in data for data in outputs) == PANELS
    assert sum("image/svg+xml" in data for data in outputs) == PANELS
