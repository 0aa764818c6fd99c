"""The Export button: the session's winner as a guarded custom-op package (``kernelopt export``).

The export re-verifies the winner at every shape set (minutes on the CPU), so it runs on a
worker thread; the message line says each shape's verdict as it comes and, at the end, where
the package is and how to import it. The button is live once the session has finished with a
best candidate (the export reads the run folder's ``result.json`` and ``best.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets as w

from kernelopt_jupyter.notebook.panel.context import CSS_CLASSES, PanelContext, cls

#: ``export(run_dir, device=..., on_check=...)``: ``kernelopt_jupyter.deploy.export``'s shape.
Exporter = Callable[..., Any]


def _default_exporter(run_dir: str, **kwargs: Any) -> Any:
    from kernelopt_jupyter.deploy import export

    return export(run_dir, **kwargs)


def import_hint(package: Path) -> str:
    """The two lines that use the exported package from this notebook."""
    return f"import sys; sys.path.insert(0, {str(package.parent)!r}); import {package.name}"


class ExportView:
    """The Export button and the thread that runs the export."""

    def __init__(
        self, ctx: PanelContext, out_dir: str | None, exporter: Exporter | None = None
    ) -> None:
        self.ctx = ctx
        self.out_dir = out_dir
        self.exporter = exporter or _default_exporter
        self.button = cls(
            w.Button(
                description="Export",
                icon="download",
                tooltip="the winner as a guarded torch.library custom op (kernelopt export)",
                disabled=True,
            ),
            CSS_CLASSES["export"],
        )
        self.button.on_click(lambda _b: self.start())
        self.result: Any = None
        self.error: str | None = None
        self._busy = False

    def ready(self) -> bool:
        """Whether there is a finished session with a best candidate to export."""
        state = self.ctx.state
        return bool(self.out_dir and state.finished and state.finished.get("best"))

    def render(self) -> None:
        """Enable the button when the session has finished with a winner."""
        self.button.disabled = self._busy or not self.ready()

    def start(self) -> threading.Thread | None:
        """Export on a worker thread (the kernel stays free); returns the thread."""
        if self._busy:
            return None
        if not self.ready() or self.out_dir is None:
            self.ctx.say("Export: the session has no verified winner to export (yet).")
            return None
        self._busy, self.button.disabled = True, True
        self.result, self.error = None, None
        best = (self.ctx.state.finished or {}).get("best")
        self.ctx.say(f"Exporting {best}: verifying it at every shape set…")
        thread = threading.Thread(
            target=self._run, args=(self.out_dir,), name="kernelopt-export", daemon=True
        )
        thread.start()
        return thread

    def _on_check(self, check: Any) -> None:
        name = getattr(getattr(check, "shape", None), "name", "?")
        self.ctx.say(f"Exporting: shape {name}: {getattr(check, 'verdict', '?')}")

    def _run(self, run_dir: str) -> None:
        device = self.ctx.state.device or "auto"
        try:
            result = self.exporter(run_dir, device=device, on_check=self._on_check)
        except Exception as exc:  # ExportError, ProblemError, DeviceError: one line each
            self.error = str(exc) or type(exc).__name__
            self.ctx.say(f"Export failed: {self.error}")
        else:
            self.result = result
            package = Path(result.package)
            self.ctx.say(
                f"Exported to {package} ({result.report.summary()}). "
                f"Use it: {import_hint(package)}; model = {package.name}.load() "
                "(the docstring of its __init__.py says more)"
            )
        finally:
            with self.ctx.lock:
                self._busy = False
                self.render()
