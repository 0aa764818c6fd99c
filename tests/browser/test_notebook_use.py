"""Test C: the notebook as people use it, in a real JupyterLab and Chromium (offline agents, CPU).

One notebook that imports Triton before anything else (as a person's notebook does), then runs a
search on a reduction kernel (row softmax: ``tl.max``/``tl.sum``): the panel shows its phases
with clocks, the charts carry axis titles, the table names each candidate's change; Accept
inserts the winner below, and it runs in that same kernel. ``%%kernelopt --help`` works on an
empty cell. Then the kernel restarts: the old panel says its kernel has gone and offers
``%kernelopt open DIR --resume``. Screenshots of the main states go to docs/screenshots/ when
KERNELOPT_UPDATE_GOLDEN=1 (as the golden files are refreshed), else to test-artifacts/.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

from .conftest import ROOT, Lab, cell_output, cells, open_notebook, run_cell, shot, write_notebook

# The bundled problem at 32 rows instead of 256 (the same kernel, masks and 397-wide rows):
# Triton's interpreter runs one program per row, so each gate of the search is ~3x quicker.
SOFTMAX = (
    (ROOT / "kernelopt_jupyter" / "problems" / "row_softmax.py")
    .read_text()
    .replace("\nROWS = 256\n", "\nROWS = 32\n")
)
assert "\nROWS = 32\n" in SOFTMAX
SEARCH_TIMEOUT_MS = 240_000
DOCS = ROOT / "docs" / "screenshots"

CHECK = """
x = torch.randn(64, 397) * 10.0
torch.testing.assert_close(row_softmax(x), torch.softmax(x, dim=-1), rtol=1e-4, atol=1e-5)
print("accepted reduction kernel matches torch.softmax in this kernel")
"""


def doc_shot(page: Any, locator: Any, name: str) -> Path:
    """A screenshot of ``locator`` for the docs (refreshed with KERNELOPT_UPDATE_GOLDEN=1)."""
    path = shot(page, name)
    locator.screenshot(path=str(path))
    if os.environ.get("KERNELOPT_UPDATE_GOLDEN") == "1":
        DOCS.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, DOCS / f"{name}.png")
    return path


def _click_tab(panel: Any, title: str) -> None:
    panel.locator(".kernelopt-tabs .lm-TabBar-tab", has_text=title).first.click()


def test_reduction_accepted_and_run_in_the_same_kernel(lab: Lab, page: Any) -> None:
    magic = "%%kernelopt --agents offline --budget 3 --seeds 2 --iterations 1 --device cpu"
    write_notebook(
        lab.root / "use.ipynb",
        [
            # Triton first, as a person's notebook would: the interpreter comes later.
            ("load", "import torch\nimport triton\n%load_ext kernelopt_jupyter"),
            ("help", "%%kernelopt --help"),
            ("search", magic + "\n" + SOFTMAX),
        ],
    )
    open_notebook(page, lab, "use.ipynb")
    run_cell(page, "load")
    run_cell(page, "help")
    assert "--budget" in cell_output(page, "help")  # an empty cell-magic body still shows help
    run_cell(page, "search")

    panel = page.locator(".kernelopt-panel").first
    panel.wait_for(state="visible", timeout=30_000)
    # The analysis is visible: a phase row with its clock running, before any candidate.
    page.locator(
        ".kernelopt-phase-running .kernelopt-phase-time", has_text="so far"
    ).first.wait_for(timeout=60_000)
    assert "Measuring the baselines" in panel.locator(".kernelopt-phases").inner_text()
    doc_shot(page, panel, "panel-analysis")

    _click_tab(panel, "Candidates")
    accept = panel.locator(".kernelopt-candidate-row button.kernelopt-accept:not([disabled])")
    accept.first.wait_for(state="visible", timeout=SEARCH_TIMEOUT_MS)
    panel.locator(".kernelopt-header", has_text="finished").wait_for(timeout=SEARCH_TIMEOUT_MS)
    rows = panel.locator(".kernelopt-candidate-row")
    assert rows.count() >= 2
    text = panel.locator(".kernelopt-candidates").inner_text()
    assert "num_warps" in text, text  # the concrete change, not just the plan's title
    assert len({r.inner_text() for r in rows.all()}) == rows.count()
    phases = panel.locator(".kernelopt-phases").inner_text()
    assert "so far" not in phases and "Agents' search" in phases, phases
    doc_shot(page, panel, "panel-candidates")

    _click_tab(panel, "Profile")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.kernelopt-profile .xtitle')]"
        ".some(e => e.textContent.includes('share of time (%)'))",
        timeout=60_000,
    )
    titles = page.evaluate(  # SVG text: textContent, not innerText
        "() => [...document.querySelectorAll('.kernelopt-profile .xtitle, "
        ".kernelopt-profile .annotation-text')].map(e => e.textContent)"
    )
    assert any("interpreter time" in t for t in titles), titles  # CPU timeline says what it is
    # The charts fill the panel's width (drawn in a hidden tab, they would stay at 700 px).
    page.wait_for_function(
        "() => { const p = document.querySelector('.kernelopt-profile');"
        " const f = p && p.querySelector('.main-svg');"
        " return f && f.clientWidth >= 0.9 * p.clientWidth; }",
        timeout=30_000,
    )
    doc_shot(page, panel, "panel-charts")

    # Accept the first passed candidate: a cell below the magic's, which runs right here.
    _click_tab(panel, "Candidates")
    row = panel.locator(
        ".kernelopt-candidate-row", has=page.locator("button.kernelopt-accept:not([disabled])")
    ).last
    cid = re.search(r"kernelopt-candidate-(c\d+)", row.get_attribute("class") or "")
    assert cid
    row.locator("button.kernelopt-accept").click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells.length === 4",
        timeout=30_000,
    )
    inserted = cells(page)[3]
    assert f"accepted candidate {cid.group(1)}" in inserted["source"]
    assert "tl.sum" in inserted["source"] and "use_cpu_interpreter()" in inserted["source"]
    run_cell(page, inserted["id"], timeout_ms=120_000)
    assert "Error" not in cell_output(page, inserted["id"]), cell_output(page, inserted["id"])
    page.evaluate(
        "(src) => window.jupyterapp.shell.currentWidget.content.model.sharedModel"
        ".insertCell(4, {cell_type: 'code', source: src, id: 'check'})",
        CHECK.strip(),
    )
    run_cell(page, "check", timeout_ms=120_000)
    out = cell_output(page, "check")
    assert "matches torch.softmax in this kernel" in out, out

    # The kernel restarts: the old panel says so, names the way back, and its buttons are off.
    page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()"
    )
    banner = panel.locator(".kernelopt-gone-banner")
    banner.wait_for(timeout=60_000)
    said = banner.inner_text()
    assert "has restarted" in said and "--resume" in said and "%kernelopt open runs/" in said
    assert panel.locator("button.kernelopt-accept").first.is_disabled()
    doc_shot(page, panel, "panel-kernel-gone")


# The pause the panel shows (buttons live, message and proposal naming the same agent), else null.
JS_PAUSED = """() => {
  const q = s => document.querySelector('.kernelopt-panel ' + s);
  const approve = q('button.kernelopt-step-approve');
  const message = q('.kernelopt-message');
  const pending = q('.kernelopt-step-pending');
  if (!approve || approve.disabled || !message || !pending) return null;
  const m = message.innerText.trim().match(/^Paused after (\\w+) step/);
  if (!m || !pending.innerText.trim().startsWith(m[1] + ' proposes')) return null;
  return {agent: m[1], message: message.innerText.trim(),
          plans: pending.innerText.includes('•'),
          rows: document.querySelectorAll('.kernelopt-panel .kernelopt-candidate-row').length};
}"""


JS_PAUSED_OR_DONE = (
    "() => { const paused = (" + JS_PAUSED + ")(); if (paused) return paused;"
    " const h = document.querySelector('.kernelopt-panel .kernelopt-header');"
    " return h && h.innerText.includes('finished') ? {agent: null} : null; }"
)


def test_step_mode_rejects_twice_and_the_search_goes_on(lab: Lab, page: Any) -> None:
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from panel_sample import TWO_KERNELS

    magic = "%%kernelopt --agents offline --budget 5 --seeds 2 --iterations 2 --plans 1"
    magic += " --device cpu --step"
    write_notebook(
        lab.root / "step_reject.ipynb",
        [("load", "%load_ext kernelopt_jupyter"), ("search", magic + "\n" + TWO_KERNELS)],
    )
    open_notebook(page, lab, "step_reject.ipynb")
    run_cell(page, "load")
    run_cell(page, "search")
    panel = page.locator(".kernelopt-panel").first
    panel.wait_for(state="visible", timeout=30_000)
    rejects: list[int] = []  # candidate rows at each reject
    for _ in range(40):
        paused = page.wait_for_function(JS_PAUSED_OR_DONE, timeout=SEARCH_TIMEOUT_MS).json_value()
        if paused["agent"] is None:
            break
        again = not rejects or paused["rows"] > rejects[-1]
        if paused["agent"] == "planner" and paused["plans"] and len(rejects) < 2 and again:
            panel.locator(".kernelopt-step-reason input").fill(
                f"leave the row max alone {len(rejects)}"
            )
            if not rejects:
                doc_shot(page, panel, "panel-step-paused")
            panel.locator("button.kernelopt-step-reject").click()
            rejects.append(paused["rows"])
        else:
            panel.locator("button.kernelopt-step-approve").click()
        page.wait_for_function(
            "(msg) => { const m = document.querySelector('.kernelopt-panel .kernelopt-message');"
            " return m && m.innerText.trim() !== msg; }",
            arg=paused["message"],
        )
    else:
        raise AssertionError("the stepped search did not finish")
    assert len(rejects) == 2, rejects
    _click_tab(panel, "Candidates")
    rows = panel.locator(".kernelopt-candidate-row")
    assert rows.count() > rejects[1] > rejects[0], rejects  # candidates after each reject
    assert panel.locator(".kernelopt-gate-correctness.kernelopt-gate-pass").count() >= 2
    _click_tab(panel, "Agents")
    panel.locator(".kernelopt-agents .lm-TabBar-tab", has_text="planner").first.click()
    stream = panel.locator(".kernelopt-stream-text", has_text="leave the row max alone 1")
    stream.first.wait_for(timeout=30_000)  # the Planner's next turn carries the reason
