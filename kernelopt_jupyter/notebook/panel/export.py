"""The Export button: the session's winner as a guarded custom-op package (``kernelopt export``).

The export re-verifies the winner at every shape set (minutes on the CPU), so it runs on a
worker thread; the message line says each shape's verdict as it comes and, at the end, where
the package is and how to import it. The button is live once the session has finished with a
best candidate (the export reads the run folder's ``result.json`` and ``best.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets as w

from kernelopt_jupyter.deploy import import_hint
from kernelopt_jupyter.notebook.panel.background import BackgroundAction
from kernelopt_jupyter.notebook.panel.context import CSS_CLASSES, PanelContext, cls

#: ``export(run_dir, device=..., on_check=...)``: ``kernelopt_jupyter.deploy.export``'s shape.
Exporter = Callable[..., Any]


def _default_exporter(run_dir: str, **kwargs: Any) -> Any:
    from kernelopt_jupyter.deploy import export

    return export(run_dir, **kwargs)


class ExportView(BackgroundAction):
    """The Export button and the thread that runs the export."""

    label = "export"

    def __init__(
        self, ctx: PanelContext, out_dir: str | None, exporter: Exporter | None = None
    ) -> None:
        button = cls(
            w.Button(
                description="Export",
                icon="download",
                tooltip="the winner as a guarded torch.library custom op (kernelopt export)",
                disabled=True,
            ),
            CSS_CLASSES["export"],
        )
        super().__init__(ctx, out_dir, button)
        self.exporter = exporter or _default_exporter
        self.result: Any = None

    def ready(self) -> bool:
        """Whether there is a finished session with a best candidate to export."""
        state = self.ctx.state
        return bool(self.out_dir and state.finished and state.finished.best)

    def not_ready(self) -> str:
        return "Export: the session has no verified winner to export (yet)."

    def starting(self) -> str:
        best = self.ctx.state.finished.best if self.ctx.state.finished else None
        return f"Exporting {best}: verifying it at every shape set…"

    def _reset(self) -> None:
        super()._reset()
        self.result = None

    def _on_check(self, check: Any) -> None:
        name = getattr(getattr(check, "shape", None), "name", "?")
        self.ctx.say(f"Exporting: shape {name}: {getattr(check, 'verdict', '?')}")

    def _work(self, run_dir: str) -> None:
        device = self.ctx.state.device or "auto"
        result = self.exporter(run_dir, device=device, on_check=self._on_check)
        self.result = result
        package = Path(result.package)
        self.ctx.say(
            f"Exported to {package} ({result.report.summary()}). "
            f"Use it: {import_hint(package)}; model = {package.name}.load() "
            "(the docstring of its __init__.py says more)"
        )
