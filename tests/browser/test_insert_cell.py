"""Test A: the labextension bridge in a real JupyterLab and Chromium.

A widget button's callback (the way the panel's Accept works) asks the extension, through
`kernelopt_jupyter.notebook.bridge`, to insert a cell below its own cell; the cell appears in the right
place with the right source, the kernel learns that it worked, and Undo removes it. A worker
thread running after its cell finished replaces a cell's source (mode "replace").
"""

from __future__ import annotations

from typing import Any

from .conftest import (
    JS_KERNEL_IDLE,
    Lab,
    cell_output,
    cells,
    open_notebook,
    run_cell,
    shot,
    write_notebook,
)

INSERTED = "inserted = 40 + 2\nprint('inserted says', inserted)"

BUTTON_CELL = f"""
import ipywidgets as widgets
from kernelopt_jupyter.notebook import bridge

my_cell = bridge.current_cell_id()
status = widgets.Label("not clicked")
button = widgets.Button(description="Insert below")
button.add_class("kernelopt-test-insert")

def on_click(_):
    status.value = "sent"
    bridge.request_insert_async(
        my_cell, {INSERTED!r},
        on_done=lambda ok, reply: setattr(status, "value", f"ok={{ok}} {{reply and reply.detail}}"),
    )

button.on_click(on_click)
status.add_class("kernelopt-test-status")
display(widgets.HBox([button, status]))
print("cell id", my_cell)
"""

THREAD_CELL = """
import threading
from kernelopt_jupyter.notebook import bridge

my_cell = bridge.current_cell_id()
replaced = []
def later():
    import time
    time.sleep(0.5)  # the cell has finished by now: the reply is read at once
    replaced.append(bridge.request_insert(my_cell, "print('replaced by the bridge')",
                                          mode="replace", timeout=10))
worker = threading.Thread(target=later)
worker.start()
"""


def test_button_inserts_cell_below_and_undo_removes_it(lab: Lab, page: Any) -> None:
    write_notebook(
        lab.root / "bridge_a.ipynb",
        [("top", "print('top')"), ("buttons", BUTTON_CELL), ("bottom", "print('bottom')")],
    )
    open_notebook(page, lab, "bridge_a.ipynb")
    run_cell(page, "buttons")
    assert "cell id buttons" in cell_output(page, "buttons")  # JupyterLab sent metadata.cellId

    button = page.locator("button.kernelopt-test-insert")
    button.wait_for(state="visible")
    shot(page, "a1-before-click")
    button.click()
    page.locator(".kernelopt-test-status", has_text="ok=True").wait_for(timeout=20_000)

    now = cells(page)
    assert [c["id"] for c in now][:2] == ["top", "buttons"]
    assert [c["id"] for c in now][3] == "bottom"
    assert now[2]["source"] == INSERTED and now[2]["type"] == "code"
    assert len(now) == 4
    # The browser shows it, directly below the button cell.
    rendered = page.locator(".jp-Notebook .jp-Cell").nth(2)
    rendered.get_by_text("inserted = 40 + 2").wait_for()
    shot(page, "a2-inserted-below")

    # The inserted cell is runnable as is.
    run_cell(page, now[2]["id"])
    assert "inserted says 42" in cell_output(page, now[2]["id"])

    # Undo (the notebook's Undo Cell Operation, `z` in command mode) takes the insertion back.
    # As a person does it: click the inserted cell's prompt, Escape to command mode, then z.
    page.locator(".jp-Notebook .jp-Cell").nth(2).locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("z")
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells.length === 3"
    )
    assert [c["id"] for c in cells(page)] == ["top", "buttons", "bottom"]
    shot(page, "a3-undone")


def test_worker_thread_replaces_cell_after_it_ran(lab: Lab, page: Any) -> None:
    write_notebook(lab.root / "bridge_b.ipynb", [("first", "x = 1"), ("worker", THREAD_CELL)])
    open_notebook(page, lab, "bridge_b.ipynb")
    run_cell(page, "worker")
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells"
        ".some(c => c.id === 'worker' && c.getSource() === \"print('replaced by the bridge')\")",
        timeout=20_000,
    )
    assert [c["id"] for c in cells(page)] == ["first", "worker"]  # replaced in place
    # The worker thread got the exact answer.
    write_check = "worker.join(10); print('replaced ->', replaced)"
    page.evaluate(
        "(src) => { const w = window.jupyterapp.shell.currentWidget;"
        " w.content.model.sharedModel.insertCell(2, {cell_type: 'code', source: src,"
        " id: 'check'}); }",
        write_check,
    )
    run_cell(page, "check")
    assert "replaced -> [True]" in cell_output(page, "check")
    shot(page, "a4-replaced")


BUSY_CELL = """
import threading, time
from kernelopt_jupyter.notebook import bridge

my_cell = bridge.current_cell_id()
answers = []
threading.Thread(
    target=lambda: answers.append(
        bridge.request_insert(my_cell, "print('inserted while busy')", timeout=30)
    )
).start()
# The kernel stays busy until the test releases it: the extension edits the notebook anyway.
import os
deadline = time.monotonic() + 60
while not os.path.exists("release-busy") and time.monotonic() < deadline:
    time.sleep(0.05)
"""


def test_insert_lands_while_the_kernel_is_busy(lab: Lab, page: Any) -> None:
    write_notebook(lab.root / "bridge_busy.ipynb", [("busy", BUSY_CELL), ("after", "x = 2")])
    open_notebook(page, lab, "bridge_busy.ipynb")
    page.evaluate(
        "() => { const app = window.jupyterapp; const w = app.shell.currentWidget;"
        " w.content.activeCellIndex = 0; app.commands.execute('notebook:run-cell'); }"
    )
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells"
        ".some(c => c.getSource() === \"print('inserted while busy')\")",
        timeout=20_000,
    )
    # Still inside the busy cell (it waits for the release file written below), yet the new
    # cell is there, directly below it. (The kernel's status light is no witness: JupyterLab
    # opens a comm subshell through the control channel, whose idle status it shows.)
    running = page.evaluate(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " const cell = w.content.widgets.find(c => c.model.id === 'busy');"
        " return [cell.model.executionState, cell.promptNode.textContent]; }"
    )
    assert running[0] == "running" or "*" in running[1], running
    assert [c["source"] for c in cells(page)][1] == "print('inserted while busy')"
    shot(page, "a5-inserted-while-busy")
    (lab.root / "release-busy").write_text("")
    page.wait_for_function(JS_KERNEL_IDLE, timeout=30_000)
    # Once the cell ends, the kernel reads the reply: the worker thread's answer is exact.
    page.evaluate(
        "(src) => window.jupyterapp.shell.currentWidget.content.model.sharedModel"
        ".insertCell(3, {cell_type: 'code', source: src, id: 'check'})",
        "import time; time.sleep(0.5); print('answers', answers)",
    )
    run_cell(page, "check")
    assert "answers [True]" in cell_output(page, "check")


def test_still_answers_after_a_kernel_restart(lab: Lab, page: Any) -> None:
    write_notebook(lab.root / "bridge_restart.ipynb", [("cell", "x = 1")])
    open_notebook(page, lab, "bridge_restart.ipynb")
    page.evaluate(
        "async () => { await window.jupyterapp.shell.currentWidget.sessionContext.restartKernel(); }"
    )
    page.wait_for_function(JS_KERNEL_IDLE, timeout=60_000)
    page.evaluate(
        "(src) => window.jupyterapp.shell.currentWidget.content.model.sharedModel"
        ".insertCell(1, {cell_type: 'code', source: src, id: 'ask'})",
        "import threading\n"
        "from kernelopt_jupyter.notebook import bridge\n"
        "probed = []\n"
        "prober = threading.Thread(target=lambda: probed.append(bridge.probe(timeout=10)))\n"
        "prober.start(); prober.join(0.5)  # the ping goes out (and is answered) first\n"
        "fut = bridge.request_insert_async(bridge.current_cell_id(), '# after restart', timeout=10)",
    )
    run_cell(page, "ask")
    # The comm target is registered on the restarted kernel too.
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells"
        ".some(c => c.getSource() === '# after restart')"
    )
    assert [c["source"] for c in cells(page)][2] == "# after restart"
    page.evaluate(
        "(src) => window.jupyterapp.shell.currentWidget.content.model.sharedModel"
        ".insertCell(3, {cell_type: 'code', source: src, id: 'check'})",
        "prober.join(10); print('reply', fut.result(10).status, 'probe', probed)",
    )
    run_cell(page, "check")
    assert "reply ok probe [True]" in cell_output(page, "check")
