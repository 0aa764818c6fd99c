"""A click whose handler raises is said on the panel's message line, never lost.

ipywidgets prints a click handler's traceback as output of the comm message, which JupyterLab
shows only in its log console: without the panel's own handling the person sees a button that
did nothing, and in step mode a pause that nobody can answer any more.
"""

from __future__ import annotations

import html
from typing import Any

import pytest
from panel_sample import REFERENCE

from kernelopt_jupyter.agents.stepping import StepControl
from kernelopt_jupyter.events import Event
from kernelopt_jupyter.notebook.panel.view import SessionPanel


class BrokenStep(StepControl):
    """A step control whose decisions raise (a bug in the session, a closed queue)."""

    def approve(self, pause: int | None = None) -> str | None:
        raise RuntimeError("the queue is closed")

    def reject(self, reason: str = "", pause: int | None = None) -> str | None:
        raise RuntimeError("the queue is closed")


class Controller:
    def __init__(self) -> None:
        self.step = BrokenStep(enabled=True)
        self.stopped = False

    def stop(self) -> None:
        raise OSError("the session's process is gone")

    def submit(self, source: str, parent: str | None = None, agent: str = "person") -> str:
        raise AssertionError("a paused step's edit goes to the step control")


class BrokenEditStep(BrokenStep):
    def edit_candidate(self, source: str, pause: int | None = None) -> str | None:
        raise RuntimeError("the queue is closed")


def _paused(panel: SessionPanel) -> None:
    panel.feed([Event("session_started", {"problem": "p", "kind": "triton", "device": "cpu"})])
    panel.feed(
        [
            Event(
                "step_paused",
                {
                    "agent": "planner",
                    "step": 1,
                    "actions": StepControl.actions_for("planner"),
                    "payload": {"plans": [{"id": "p1", "title": "t", "action": "a"}]},
                    "pause": 1,
                },
            )
        ]
    )


@pytest.mark.parametrize("action", ["approve", "next", "reject"])
def test_a_step_click_that_raises_is_said_and_the_pause_keeps_its_buttons(action: str) -> None:
    panel = SessionPanel(controller=Controller(), step_mode=True, reference_source=REFERENCE)
    _paused(panel)
    button = panel.controls.step_buttons[action]
    assert not button.disabled
    button.click()
    message = html.unescape(panel.header.message.value)
    assert f"{action} failed: RuntimeError: the queue is closed" in message, message
    # The decision was not taken: the pause can still be answered (by a second try).
    assert not panel.controls.step_buttons[action].disabled
    assert not panel.controls.step_buttons["approve"].disabled


def test_stop_and_submit_failures_are_said(capsys: Any) -> None:
    panel = SessionPanel(controller=Controller(), step_mode=False, reference_source=REFERENCE)
    panel.controls.stop_button.click()
    message = html.unescape(panel.header.message.value)
    assert "stop failed: OSError: the session's process is gone" in message, message
    assert not panel.controls.stop_button.disabled  # Stop can be tried again
    assert "OSError" in capsys.readouterr().err  # the traceback goes to the kernel's log


def test_a_paused_edit_that_raises_is_said_and_the_pause_keeps_its_buttons() -> None:
    controller = Controller()
    controller.step = BrokenEditStep(enabled=True)
    panel = SessionPanel(controller=controller, step_mode=True, reference_source=REFERENCE)
    _paused(panel)
    panel.editor.kind.value = "code"
    panel.editor.source.value = "class ModelNew: pass"
    panel.editor.submit.click()
    message = html.unescape(panel.header.message.value)
    assert "submit failed: RuntimeError: the queue is closed" in message, message
    assert not panel.controls.step_buttons["approve"].disabled
