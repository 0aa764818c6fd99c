"""Test B: the whole notebook flow in a real JupyterLab and Chromium, on the offline agents.

Run a `%%kernelopt` cell (small module, CPU, small budget), watch the panel stream, open a
candidate's diff, click Accept, find the new cell directly below the magic cell with the
candidate's code, run it and check it matches the reference. Then step mode: edit the paused
candidate's kernel in the panel so it computes the wrong thing and see gate 2 (correctness)
reject it.
"""

from __future__ import annotations

import re
from typing import Any

from .conftest import (
    Lab,
    cell_output,
    cells,
    click_until_answered,
    open_notebook,
    run_cell,
    shot,
    write_notebook,
)

PROBLEM = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.bias = nn.Parameter(torch.randn(features) * 0.1)

    def forward(self, x):
        return x + (F.gelu(self.linear(x)) + self.bias)


def get_inputs():
    return [torch.randn(64, 32)]


def get_init_inputs():
    return [32]
"""

CHECK = """
torch.manual_seed(0)
reference = Model(*get_init_inputs())
accepted = ModelNew(*get_init_inputs())
accepted.load_state_dict(reference.state_dict())
x = get_inputs()[0]
torch.testing.assert_close(accepted(x), reference(x), rtol=1e-4, atol=1e-4)
print("accepted candidate matches the reference")
"""

# Step mode: the person's edit of the paused candidate keeps its kernels but changes GELU's 0.5
# inside the Triton kernel, so it computes the wrong thing. (Work added in PyTorch around the
# kernels would be caught earlier, by the static gate's accounting of forward's ops.)
# The first candidate is Inductor's harvested kernel (GELU's 0.5 a kernel argument) or
# KernelOPT's own pointwise kernel (GELU written out in it): one of the two edits applies.
BREAKS = (
    ("0.5,", "0.6,"),
    ("y = 0.5 * x * (1.0 + tl.math.erf", "y = 0.6 * x * (1.0 + tl.math.erf"),
)

SEARCH_TIMEOUT_MS = 150_000

# Step mode: the agent the search is paused after, once the panel shows the pause completely
# (buttons enabled, the message and the proposal both naming that agent), else null.
JS_PAUSED = """() => {
  const q = s => document.querySelector('.kernelopt-panel ' + s);
  const approve = q('button.kernelopt-step-approve');
  const message = q('.kernelopt-message');
  const pending = q('.kernelopt-step-pending');
  if (!approve || approve.disabled || !message || !pending) return null;
  const m = message.innerText.trim().match(/^Paused after (\\w+) step/);
  if (!m || !pending.innerText.trim().startsWith(m[1] + ' proposes')) return null;
  return {agent: m[1], message: message.innerText.trim()};
}"""


def _click_tab(page: Any, panel: Any, title: str) -> None:
    panel.locator(".kernelopt-tabs .lm-TabBar-tab", has_text=title).first.click()


def test_search_diff_accept_run(lab: Lab, page: Any) -> None:
    magic = "%%kernelopt --agents offline --budget 2 --seeds 2 --iterations 1 --device cpu"
    magic += " --name browser_mlp"
    write_notebook(
        lab.root / "flow.ipynb",
        [("load", "%load_ext kernelopt_jupyter"), ("search", magic + "\n" + PROBLEM.lstrip())],
    )
    open_notebook(page, lab, "flow.ipynb")
    run_cell(page, "load")
    run_cell(page, "search")  # returns at once: the search runs in the background

    panel = page.locator(".kernelopt-panel").first
    panel.wait_for(state="visible", timeout=30_000)
    # The agents' reasoning streams into the panel while the search runs.
    page.wait_for_function(
        "() => [...document.querySelectorAll('.kernelopt-stream-text')]"
        ".some(e => e.innerText.trim().length > 0)",
        timeout=60_000,
    )
    shot(page, "b1-panel-streaming")

    _click_tab(page, panel, "Candidates")
    accept = panel.locator(".kernelopt-candidate-row button.kernelopt-accept:not([disabled])")
    accept.first.wait_for(state="visible", timeout=SEARCH_TIMEOUT_MS)
    row = panel.locator(
        ".kernelopt-candidate-row",
        has=page.locator("button.kernelopt-accept:not([disabled])"),
    ).first
    classes = row.get_attribute("class") or ""
    cid = re.search(r"kernelopt-candidate-(c\d+)", classes)
    assert cid, classes
    cid_s = cid.group(1)
    # A passed candidate shows its correctness badge as passed.
    assert row.locator(".kernelopt-gate-correctness.kernelopt-gate-pass").count() == 1
    shot(page, "b2-candidates")

    # Open its diff: the Diff tab shows the candidate side by side with its parent; against
    # the reference, the candidate's ModelNew replaces the person's Model.
    # The table is redrawn at each event of the live search, and the click reaches the kernel
    # between the search's own work: a click that opened nothing is made again (three tries,
    # opening a diff twice is harmless) on the same candidate's row.
    diff_view = panel.locator(".kernelopt-diff-view")
    for attempt in range(3):
        panel.locator(f".kernelopt-candidate-{cid_s} button.kernelopt-diff").first.click()
        try:
            diff_view.wait_for(state="visible", timeout=40_000)
            break
        except Exception:
            if attempt == 2:
                raise
            _click_tab(page, panel, "Candidates")
    panel.locator(".kernelopt-diff-against button", has_text="reference").click()
    page.wait_for_function(
        "() => { const e = document.querySelector('.kernelopt-diff-view');"
        " return e && e.innerText.includes('ModelNew'); }",
        timeout=30_000,
    )
    shot(page, "b3-diff")

    # Accept: a new cell appears directly below the %%kernelopt cell.
    _click_tab(page, panel, "Candidates")
    row.locator("button.kernelopt-accept").click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells.length === 3",
        timeout=30_000,
    )
    now = cells(page)
    assert [c["id"] for c in now[:2]] == ["load", "search"]
    inserted = now[2]
    assert inserted["type"] == "code"
    assert f"accepted candidate {cid_s}" in inserted["source"]
    assert "class ModelNew" in inserted["source"]
    panel.locator(".kernelopt-message", has_text=f"Inserted {cid_s}").wait_for(timeout=30_000)
    page.locator(".jp-Notebook .jp-Cell").nth(2).scroll_into_view_if_needed()
    shot(page, "b4-accepted-cell")

    # The accepted cell runs as is, and its ModelNew computes what the reference computes.
    run_cell(page, inserted["id"], timeout_ms=120_000)
    page.evaluate(
        "(src) => window.jupyterapp.shell.currentWidget.content.model.sharedModel"
        ".insertCell(3, {cell_type: 'code', source: src, id: 'check'})",
        CHECK.strip(),
    )
    run_cell(page, "check", timeout_ms=120_000)
    out = cell_output(page, "check")
    assert "accepted candidate matches the reference" in out, out
    shot(page, "b5-ran-and-matches")


def test_step_mode_edit_rejected_by_correctness(lab: Lab, page: Any) -> None:
    magic = "%%kernelopt --agents offline --budget 2 --seeds 2 --iterations 1 --device cpu --step"
    magic += " --name browser_step"
    write_notebook(
        lab.root / "step.ipynb",
        [("load", "%load_ext kernelopt_jupyter"), ("search", magic + "\n" + PROBLEM.lstrip())],
    )
    open_notebook(page, lab, "step.ipynb")
    run_cell(page, "load")
    run_cell(page, "search")
    panel = page.locator(".kernelopt-panel").first
    panel.wait_for(state="visible", timeout=30_000)

    # Approve each step until the executor pauses with a candidate to gate.
    approve = panel.locator("button.kernelopt-step-approve")
    for _ in range(12):
        paused = page.wait_for_function(JS_PAUSED, timeout=SEARCH_TIMEOUT_MS).json_value()
        if paused["agent"] == "executor":
            break
        click_until_answered(page, approve, paused["message"], SEARCH_TIMEOUT_MS // 4)
    else:
        raise AssertionError("the executor never paused with a candidate")
    shot(page, "b6-step-paused-executor")

    panel.locator("button.kernelopt-step-edit").click()
    source = panel.locator(".kernelopt-edit-source textarea")
    source.wait_for(state="visible")
    original = source.input_value()
    assert "ModelNew" in original
    breaks = [b for b in BREAKS if b[0] in original]
    assert breaks, original
    source.fill(original.replace(*breaks[0], 1))
    panel.locator("button.kernelopt-edit-submit").click()
    panel.locator(".kernelopt-message", has_text="Your code is sent").wait_for()

    # The edited candidate is gated: gate 2 (correctness) fails it.
    _click_tab(page, panel, "Candidates")
    failed = panel.locator(
        ".kernelopt-candidate-row .kernelopt-gate-correctness.kernelopt-gate-fail"
    ).first
    failed.wait_for(state="visible", timeout=SEARCH_TIMEOUT_MS)
    row = panel.locator(
        ".kernelopt-candidate-row",
        has=page.locator(".kernelopt-gate-correctness.kernelopt-gate-fail"),
    ).first
    assert row.locator("button.kernelopt-accept").is_disabled()
    assert "person" in row.inner_text()  # the person's edit, not an agent's candidate
    failed.click()  # its diagnostics: the outputs differ from the reference's
    detail = panel.locator(".kernelopt-gate-detail")
    detail.locator(".kernelopt-gate-sentence", has_text="correctness:").wait_for()
    # A sentence and a few numbers, not the raw record (over 4,000 px of JSON per click); the
    # largest error is the failing call's, not 0.0.
    height = detail.evaluate("d => d.getBoundingClientRect().height")
    assert height < 400, height
    numbers = dict(
        row.locator("td").all_inner_texts()
        for row in detail.locator(".kernelopt-gate-numbers tr").all()
    )
    error = numbers.get("largest absolute error", "")
    assert error and float(error) > 0, numbers
    detail.locator(".kernelopt-gate-record summary").click()  # the full record
    assert "outside" in detail.inner_text()
    shot(page, "b7-edit-rejected-by-correctness")


# A person's pure-PyTorch candidate with the same ops as the reference, in the wrong order (the
# bias inside the GELU): it reaches the correctness gate, which fails it.
PURE_TORCH_WRONG = """
import torch
import torch.nn as nn
import torch.nn.functional as F

KERNELOPT_DISPATCH_ONLY = True  # PyTorch's own ops, no Triton kernel of its own


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.bias = nn.Parameter(torch.randn(features) * 0.1)

    def forward(self, x):
        return x + F.gelu(self.linear(x) + self.bias)
"""


def test_a_pure_pytorch_failure_reads_true_of_it(lab: Lab, page: Any) -> None:
    """Code submitted at the first pause is gated at once; its correctness failure reads as a
    sentence with the failing call's error, and names no race (it launches no kernel)."""
    magic = "%%kernelopt --agents offline --budget 3 --seeds 2 --iterations 1 --device cpu --step"
    write_notebook(
        lab.root / "pure.ipynb",
        [("load", "%load_ext kernelopt_jupyter"), ("search", magic + "\n" + PROBLEM.lstrip())],
    )
    open_notebook(page, lab, "pure.ipynb")
    run_cell(page, "load")
    run_cell(page, "search")
    panel = page.locator(".kernelopt-panel").first
    panel.wait_for(state="visible", timeout=30_000)
    page.wait_for_function(JS_PAUSED, timeout=SEARCH_TIMEOUT_MS)
    _click_tab(page, panel, "Edit")
    panel.locator(".kernelopt-edit-source textarea").fill(PURE_TORCH_WRONG.lstrip())
    panel.locator("button.kernelopt-edit-submit").click()
    _click_tab(page, panel, "Candidates")
    mine = panel.locator(
        ".kernelopt-candidate-row",
        has=page.locator(".kernelopt-gate-correctness.kernelopt-gate-fail"),
    ).filter(has_text="person")
    mine.first.wait_for(timeout=SEARCH_TIMEOUT_MS)
    mine.first.locator(".kernelopt-gate-correctness").click()
    detail = panel.locator(".kernelopt-gate-detail")
    detail.locator(".kernelopt-gate-sentence", has_text="Correctness failed").wait_for()
    numbers = dict(
        row.locator("td").all_inner_texts()
        for row in detail.locator(".kernelopt-gate-numbers tr").all()
    )
    error = numbers.get("largest absolute error", "")
    assert error and float(error) > 0, numbers  # the failing call's, not 0.0
    assert numbers.get("calls that passed") == "0", numbers  # its first call failed
    detail.locator(".kernelopt-gate-record summary").click()
    record = detail.inner_text()
    assert "race" not in record, record  # no kernel launched: no race hint
    shot(page, "pure-pytorch-correctness-detail")
