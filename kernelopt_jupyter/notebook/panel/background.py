"""A panel button whose work runs on a worker thread (the kernel stays free): Export, Report.

The button is live when ``ready()`` says so and off while its work runs; the message line says
when the work starts, how it ended, or in one line why it failed. Subclasses give the button,
the readiness test, the messages and the work itself (``_work``).
"""

from __future__ import annotations

import threading
from typing import Any

from kernelopt_jupyter.notebook.panel.context import PanelContext


class BackgroundAction:
    """The shared life of a button that starts work on a thread."""

    #: The thread's name and the word that starts the failure message.
    label = "action"

    def __init__(self, ctx: PanelContext, out_dir: str | None, button: Any) -> None:
        self.ctx = ctx
        self.out_dir = out_dir
        self.button = button
        ctx.click(self.button, self.label, self.start)
        self.error: str | None = None
        self._busy = False

    def ready(self) -> bool:
        """Whether the work can start now."""
        raise NotImplementedError

    def not_ready(self) -> str:
        """What the message line says when the button is used too early."""
        raise NotImplementedError

    def starting(self) -> str:
        """What the message line says as the work starts (after ``_reset``)."""
        raise NotImplementedError

    def _reset(self) -> None:
        """Forget the previous run's result."""
        self.error = None

    def _work(self, run_dir: str) -> None:
        """The work itself, on the thread; raises for a failure (said in one line)."""
        raise NotImplementedError

    def render(self) -> None:
        """Enable the button when ready and idle."""
        self.button.disabled = self._busy or not self.ready()

    def start(self) -> threading.Thread | None:
        """Start the work on a worker thread; returns the thread (None when not started)."""
        if self._busy:
            return None
        if not self.ready() or self.out_dir is None:
            self.ctx.say(self.not_ready())
            return None
        self._busy, self.button.disabled = True, True
        self._reset()
        self.ctx.say(self.starting())
        thread = threading.Thread(
            target=self._run, args=(self.out_dir,), name=f"kernelopt-{self.label}", daemon=True
        )
        thread.start()
        return thread

    def _run(self, run_dir: str) -> None:
        try:
            self._work(run_dir)
        except Exception as exc:  # the work's own errors (export, report): one line each
            self.error = " ".join((str(exc) or type(exc).__name__).split())
            self.ctx.say(f"{self.label.capitalize()} failed: {self.error}")
        finally:
            with self.ctx.lock:
                self._busy = False
                self.render()
