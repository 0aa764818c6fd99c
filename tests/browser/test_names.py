"""Names in a real JupyterLab: a session started after the notebook was renamed is named after
its current name and the cell number the notebook shows (the kernel's JPY_SESSION_NAME still
holds the name the notebook had when the kernel started), and the accepted cell's docstring
names that session's problem, not "cell"."""

from __future__ import annotations

import time
from typing import Any

from .conftest import (
    CELL_NUMBER_JS,
    Lab,
    cell_output,
    cells,
    open_notebook,
    run_cell,
    write_notebook,
)

PROBLEM = """
import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2
def get_inputs():
    return [torch.randn(64)]
"""


def test_a_renamed_notebook_names_its_session_with_the_shown_cell_number(
    lab: Lab, page: Any
) -> None:
    write_notebook(
        lab.root / "Untitled.ipynb",
        [
            ("load", "%load_ext kernelopt_jupyter"),
            ("search", "%%kernelopt --agents offline --budget 1 --device cpu" + PROBLEM),
            ("accept", "%kernelopt wait 240\n%kernelopt accept best"),
            ("stop", "%kernelopt stop"),
        ],
    )
    open_notebook(page, lab, "Untitled.ipynb")
    run_cell(page, "load")
    page.evaluate(
        "async () => { await window.jupyterapp.shell.currentWidget.context"
        ".rename('softmax study.ipynb'); }"
    )
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.path"
        ".endsWith('softmax study.ipynb')"
    )
    run_cell(page, "search")
    shown = page.evaluate(CELL_NUMBER_JS, "search")
    run_cell(page, "accept", timeout_ms=300_000)
    deadline = time.monotonic() + 30
    folders: list[str] = []
    while time.monotonic() < deadline and not folders:
        folders = (
            [p.name for p in (lab.root / "runs").glob("*")] if (lab.root / "runs").is_dir() else []
        )
        time.sleep(0.5)
    assert shown == 2, shown
    assert any(name.startswith("softmax_study-cell2-") for name in folders), folders
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells.length === 5",
        timeout=30_000,
    )
    accepted = cells(page)[3]["source"]
    assert "for problem 'softmax_study-cell2'" in accepted, [
        line for line in accepted.splitlines() if "Harvested" in line
    ]
    assert "problem 'cell'" not in accepted
    # %kernelopt stop names the session as the panel and its folder do, beside its label.
    run_cell(page, "stop")
    said = cell_output(page, "stop")
    assert said.startswith("s1 (softmax_study-cell2): already finished"), said
