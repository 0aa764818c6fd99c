"""Test C: the notebook as people use it, in a real JupyterLab and Chromium (offline agents, CPU).

One notebook that imports Triton before anything else (as a person's notebook does), then runs a
search on a reduction kernel (row softmax: ``tl.max``/``tl.sum``): the panel shows its phases
with clocks, the charts carry axis titles, the table names each candidate's change; Accept
inserts the winner below, and it runs in that same kernel. ``%%kernelopt --help`` works on an
empty cell. Then the kernel restarts: the old panel says its kernel has gone and offers
``%kernelopt open DIR --resume``. In step mode, Reject twice and the search goes on; reject one
plan of two with its own button and the other goes on, Stop says ``stopped`` (header and the
static summary, which said ``running`` and folds its table), and ``%kernelopt accept`` shows the
code with a Copy button. Screenshots of the main states go to docs/screenshots/ when
KERNELOPT_UPDATE_GOLDEN=1 (as the golden files are refreshed), else to test-artifacts/.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

from .conftest import (
    ROOT,
    Lab,
    cell_output,
    cells,
    click_until_answered,
    open_notebook,
    run_cell,
    shot,
    write_notebook,
)

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


# Each "a->b" of the candidates table that the browser broke across two lines (a wrap after
# the "-" drew "XBLOCK 256-" above ">512").
JS_WRAPPED_ARROWS = """() => {
  const table = document.querySelector('.kernelopt-panel .kernelopt-candidates');
  const walker = document.createTreeWalker(table, NodeFilter.SHOW_TEXT);
  const broken = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent;
    for (let i = text.indexOf('->'); i >= 0; i = text.indexOf('->', i + 1)) {
      const range = document.createRange();
      range.setStart(node, Math.max(0, i - 1));
      range.setEnd(node, Math.min(text.length, i + 3));
      const tops = new Set([...range.getClientRects()].filter(r => r.width > 0)
        .map(r => Math.round(r.top)));
      if (tops.size > 1) broken.push(text);
    }
  }
  return broken;
}"""

# The kinds (vendor, triton, other) drawn in the Profile tab's charts that no legend entry
# names (plotly leaves an empty trace out of the legend).
JS_UNNAMED_KINDS = """() => {
  const gd = document.querySelector('.kernelopt-profile .js-plotly-plot');
  const named = new Set([...gd.querySelectorAll('.legendtext')].map(e => e.textContent));
  const legend = new Set(gd.data.filter(t => named.has(t.name)).map(t => t.legendgroup));
  const drawn = gd.data.filter(t => t.legendgroup && t.x && t.x.length).map(t => t.legendgroup);
  return [...new Set(drawn)].filter(kind => !legend.has(kind));
}"""


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
    # On the CPU nothing is timed: the first phase is the analysis, and says so.
    first = panel.locator(".kernelopt-phases").inner_text()
    assert "no GPU: nothing is timed" in first and "Measuring the baselines" not in first, first
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
    assert not re.search(r"\b0 s\b", phases), phases  # no phase took "0 s"
    # The CPU's static gate built the kernels for the GPU target, and says it ran none there.
    static = panel.locator("button.kernelopt-gate-static").first.get_attribute("title") or ""
    assert "compile for sm_90" not in static or "without a GPU" in static, static
    assert not page.evaluate(JS_WRAPPED_ARROWS), page.evaluate(JS_WRAPPED_ARROWS)
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
    # After the end the progress chart's caveat says why it is empty, not "no timed candidate
    # yet".
    caveats = panel.locator(".kernelopt-profile").inner_text()
    assert "nothing is timed without a GPU" in caveats and "no timed candidate" not in caveats
    assert not page.evaluate(JS_UNNAMED_KINDS), page.evaluate(JS_UNNAMED_KINDS)
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


# The pause the panel shows (buttons live, message and proposal naming the same agent), else
# null; ``noPlan``: the Planner's pause with no plan left; ``answer``: what the pause said to the
# person's last decision (the verdict of code submitted at it).
JS_PAUSED = """() => {
  const q = s => document.querySelector('.kernelopt-panel ' + s);
  const approve = q('button.kernelopt-step-approve');
  const message = q('.kernelopt-message');
  const pending = q('.kernelopt-step-pending');
  if (!approve || approve.disabled || !message || !pending) return null;
  const m = message.innerText.trim().match(/^Paused after (\\w+) step/);
  const said = pending.innerText.trim();
  if (!m || !(said.startsWith(m[1] + ' proposes') || said.startsWith(m[1] + ': no plan left')))
    return null;
  const answer = q('.kernelopt-step-answer');
  return {agent: m[1], message: message.innerText.trim(),
          plans: (pending.innerText.match(/•/g) || []).length,
          noPlan: said.startsWith(m[1] + ': no plan left'),
          answer: answer ? answer.innerText.trim() : '',
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
            click_until_answered(
                page, panel.locator("button.kernelopt-step-reject"), paused["message"]
            )
            rejects.append(paused["rows"])
        else:
            click_until_answered(
                page, panel.locator("button.kernelopt-step-approve"), paused["message"]
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


# The per-plan Reject buttons of a pause: [{text: 'Reject c0.p0', plan: its title, enabled}]
# (the title from the button's tooltip, "drop 'TITLE' only; the other plans go on").
JS_PLAN_REJECTS = """() => [...document.querySelectorAll(
    '.kernelopt-panel button.kernelopt-step-reject-plan')].map(b => ({
  text: b.innerText.trim(), enabled: !b.disabled,
  plan: b.title.replace(/^drop '/, '').replace(/' only; the other plans go on$/, '')}))"""

# Whether the pause's N per-plan Reject buttons are drawn and live. They come after the pause's
# message and proposal (new widgets, drawn last): JS_PAUSED can hold before they exist.
JS_PLAN_REJECTS_SHOWN = """(n) => document.querySelectorAll(
    '.kernelopt-panel button.kernelopt-step-reject-plan:not([disabled])').length === n"""


def _gated_row_names(panel: Any, text: str) -> bool:
    """Whether a candidate row that passed correctness names ``text`` (its plan's title)."""
    passed = panel.page.locator(".kernelopt-gate-correctness.kernelopt-gate-pass")
    rows = panel.locator(".kernelopt-candidate-row", has=passed)
    return any(text in row.inner_text() for row in rows.all())


def test_step_mode_rejects_one_plan_then_stops_and_accepts_by_magic(lab: Lab, page: Any) -> None:
    """One stepped search: the static summary beside the panel says 'running'; at the Planner's
    pause one plan of two is rejected with its own button and the other goes on to a gated
    candidate; Stop (while paused) ends it 'stopped', in the header and in the redrawn summary,
    whose table starts folded; ``%kernelopt accept best`` gets the front end's own new cell and
    shows the code with a Copy button that copies exactly that code."""
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from panel_sample import TWO_KERNELS

    magic = "%%kernelopt --agents offline --budget 8 --seeds 2 --iterations 2 --plans 2"
    magic += " --device cpu --step"
    write_notebook(
        lab.root / "step_plan.ipynb",
        [
            ("load", "%load_ext kernelopt_jupyter"),
            ("search", magic + "\n" + TWO_KERNELS),
            ("accept", "%kernelopt accept best"),
        ],
    )
    open_notebook(page, lab, "step_plan.ipynb")
    run_cell(page, "load")
    run_cell(page, "search")
    panel = page.locator(".kernelopt-panel").first
    panel.wait_for(state="visible", timeout=30_000)
    summary = page.locator(".kernelopt-summary").first
    summary.wait_for(timeout=30_000)
    said = summary.inner_text()
    assert "status running (the live panel shows its progress" in said, said
    assert "candidate(s)" not in said, said  # no table before any candidate
    _click_tab(panel, "Candidates")

    plans: dict[str, str] = {}  # the rejected plan's title and the other one's
    for _ in range(40):
        paused = page.wait_for_function(JS_PAUSED_OR_DONE, timeout=SEARCH_TIMEOUT_MS).json_value()
        # The search ended with no pause after the reject left a candidate to stop at (it
        # came too late, at the Planner's last step): fail now, not after SEARCH_TIMEOUT_MS.
        assert paused["agent"] is not None, f"the search finished, still stepping: {plans}"
        if not plans and paused["agent"] == "planner" and paused["plans"] >= 2:
            # The first pause with plans to choose from (the Planner's first step): its
            # per-plan buttons are drawn after the proposal, so wait for them. Deciding from
            # what was drawn at once approved this pause when they came late, the reject fell
            # to a later Planner step or none, and the search ran to its end unstopped.
            page.wait_for_function(JS_PLAN_REJECTS_SHOWN, arg=paused["plans"])
            buttons = page.evaluate(JS_PLAN_REJECTS)
            assert len(buttons) == paused["plans"] and all(b["enabled"] for b in buttons), buttons
            plans = {"rejected": buttons[0]["plan"], "kept": buttons[1]["plan"]}
            pending = panel.locator(".kernelopt-step-pending").inner_text()
            assert all(title in pending for title in plans.values()), (plans, pending)
            shot(page, "step-plan-rejects")
            panel.locator(".kernelopt-step-reason input").fill("not this one")
            click_until_answered(
                page,
                panel.locator("button.kernelopt-step-reject-plan", has_text=buttons[0]["text"]),
                paused["message"],
            )
        elif plans and _gated_row_names(panel, plans["kept"]):
            break  # the other plan went on to a passed candidate: stop here, while paused
        else:
            click_until_answered(
                page, panel.locator("button.kernelopt-step-approve"), paused["message"]
            )
    else:
        raise AssertionError(f"no passed candidate of the plan left by the reject: {plans}")
    table = panel.locator(".kernelopt-candidates").inner_text()
    assert plans["rejected"] not in table, (plans, table)  # the rejected plan never ran

    # Stop while paused: the header says how it ended, stopped, not finished.
    panel.locator("button.kernelopt-stop").click()
    status = panel.locator(".kernelopt-header .kernelopt-status")
    status.filter(has_text="stopped").wait_for(timeout=60_000)
    assert status.inner_text().strip() == "stopped"
    assert "finished" not in panel.locator(".kernelopt-header").inner_text()
    panel.locator(".kernelopt-message", has_text="Stopped.").wait_for(timeout=30_000)
    shot(page, "step-plan-stopped")

    # The summary is redrawn at the end: stopped, its table folded (the panel shows it).
    summary.filter(has_text="status stopped").wait_for(timeout=30_000)
    details = summary.locator("details")
    assert details.get_attribute("open") is None
    fold = details.locator("summary").inner_text()
    assert "candidate(s) (the same table as the panel's)" in fold, fold
    rows = summary.locator("table.kernelopt-summary-candidates tr")
    assert not rows.nth(1).is_visible()
    details.locator("summary").click()
    rows.nth(1).wait_for(state="visible")
    assert rows.count() == int(fold.split()[0]) + 1 >= 3, fold  # header, the root, the edit
    assert rows.count() - 1 == panel.locator(".kernelopt-candidate-row").count()

    # %kernelopt accept: the front end's own new cell below, and the code with a Copy button.
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=lab.url)
    run_cell(page, "accept", timeout_ms=60_000)
    out = cell_output(page, "accept")
    assert "set_next_input" in out and "the code is also shown here" in out, out
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells.length === 4",
        timeout=30_000,
    )
    now = cells(page)
    assert [c["id"] for c in now[:3]] == ["load", "search", "accept"], now
    inserted = now[3]["source"]
    assert inserted.startswith("# KernelOPT: accepted candidate"), inserted
    view = page.locator(".kernelopt-code-view").first
    assert view.locator("pre").inner_text().strip() == inserted.strip()
    copy = view.locator("button.kernelopt-copy")
    copy.click()
    copy.filter(has_text="Copied").wait_for(timeout=10_000)
    assert page.evaluate("() => navigator.clipboard.readText()").strip() == inserted.strip()
    shot(page, "accept-by-magic-copy")


# A JupyterLab console on a python3 kernel, once its kernel is connected and idle.
JS_OPEN_CONSOLE = """async () => {
  const app = window.jupyterapp;
  await app.started;
  await app.restored;
  await app.commands.execute('console:create', {kernelPreference: {name: 'python3'}});
}"""

JS_CONSOLE_READY = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  if (!w || !w.console || !w.sessionContext) return false;
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.connectionStatus === 'connected' && w.sessionContext.kernelDisplayStatus === 'idle';
}"""

JS_CONSOLE_RUN = """async (src) => {
  const c = window.jupyterapp.shell.currentWidget.console;
  c.promptCell.model.sharedModel.setSource(src);
  await c.execute(true);
}"""


def test_accept_in_a_console_shows_the_code_with_copy(lab: Lab, page: Any) -> None:
    """A front end that cannot take an inserted cell (a JupyterLab console: the labextension
    edits notebooks only): the panel's Accept says no cell was inserted and shows the code with
    a Copy button, which copies exactly that code."""
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from panel_sample import TWO_KERNELS

    page.goto(f"{lab.url}/lab?token={lab.token}&reset")
    page.wait_for_function("() => !!(window.jupyterapp && window.jupyterapp.shell)")
    page.evaluate(JS_OPEN_CONSOLE)
    page.wait_for_function(JS_CONSOLE_READY, timeout=60_000)
    page.evaluate(JS_CONSOLE_RUN, "%load_ext kernelopt_jupyter")
    magic = "%%kernelopt --agents offline --budget 2 --seeds 2 --iterations 1 --device cpu"
    page.evaluate(JS_CONSOLE_RUN, magic + "\n" + TWO_KERNELS)
    panel = page.locator(".jp-CodeConsole .kernelopt-panel").first
    panel.wait_for(state="visible", timeout=30_000)
    _click_tab(panel, "Candidates")
    row = panel.locator(
        ".kernelopt-candidate-row", has=page.locator("button.kernelopt-accept:not([disabled])")
    ).first
    row.wait_for(state="visible", timeout=SEARCH_TIMEOUT_MS)
    cid = re.search(r"kernelopt-candidate-(c\d+)", row.get_attribute("class") or "")
    assert cid
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=lab.url)
    row.locator("button.kernelopt-accept").click()
    message = panel.locator(".kernelopt-message", has_text="No cell was inserted")
    message.wait_for(timeout=30_000)
    said = message.inner_text()
    assert f"{cid.group(1)}'s code is shown below with a Copy button" in said, said
    view = panel.locator(".kernelopt-code .kernelopt-code-view")
    code = view.locator("pre").inner_text()
    assert code.startswith(f"# KernelOPT: accepted candidate {cid.group(1)}"), code
    copy = view.locator("button.kernelopt-copy")
    copy.click()
    copy.filter(has_text="Copied").wait_for(timeout=10_000)
    assert page.evaluate("() => navigator.clipboard.readText()").strip() == code.strip()
    shot(page, "accept-in-console-copy")
