"""The Report button: the ended session as a standalone notebook (what ``kernelopt report`` writes).

The report is written into the session folder, beside its ``events.jsonl`` (where ``kernelopt
report DIR`` puts it too), as ``report.ipynb``; when that exists the next free
``report-2.ipynb``, ``report-3.ipynb``, … is taken, so an earlier report (perhaps edited) is
never overwritten. It is built on a worker thread, like the Export button's work; the message
line says where it went or, in one line, why it failed, and the path stays beside the button.
The button is live once the session has ended (finished, stopped or failed: the report says
which), and off while the search runs.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

import ipywidgets as w

from kernelopt_jupyter.notebook.panel.background import BackgroundAction
from kernelopt_jupyter.notebook.panel.context import CSS_CLASSES, PanelContext, cls

#: ``write(run_dir, out, overwrite=False) -> cells``: ``session.report.write_report``'s shape.
Reporter = Callable[..., int]
#: How many numbered names are tried before giving up (``report-2`` … ``report-99``).
MAX_NAMES = 99


def _default_reporter(run_dir: Path, out: Path, **kwargs: bool) -> int:
    from kernelopt_jupyter.session.report import write_report

    return write_report(run_dir, out, **kwargs)


def report_names(run_dir: Path) -> list[Path]:
    """Where a report may go, in order: ``report.ipynb``, then ``report-2.ipynb``, …"""
    return [run_dir / "report.ipynb"] + [
        run_dir / f"report-{n}.ipynb" for n in range(2, MAX_NAMES + 1)
    ]


class ReportView(BackgroundAction):
    """The Report button, the written path beside it, and the thread that writes it."""

    label = "report"

    def __init__(
        self, ctx: PanelContext, out_dir: str | None, reporter: Reporter | None = None
    ) -> None:
        button = cls(
            w.Button(
                description="Report",
                icon="file-text",
                tooltip="the session as a standalone notebook in its folder (kernelopt report)",
                disabled=True,
            ),
            CSS_CLASSES["report"],
        )
        super().__init__(ctx, out_dir, button)
        self.reporter = reporter or _default_reporter
        self.path_html = cls(w.HTML(""), CSS_CLASSES["report_path"])
        self.path: Path | None = None

    def ready(self) -> bool:
        """Whether the session has ended (the report of a running search would be partial)."""
        return bool(self.out_dir and self.ctx.state.finished)

    def not_ready(self) -> str:
        return "Report: the session has not ended yet (stop it, or wait for it)."

    def starting(self) -> str:
        return "Writing the session's report notebook…"

    def _reset(self) -> None:
        super()._reset()
        self.path = None

    def _write(self, run_dir: Path) -> tuple[Path, int]:
        for out in report_names(run_dir):
            if out.exists():
                continue
            try:
                return out, self.reporter(run_dir, out, overwrite=False)
            except FileExistsError:  # written meanwhile (another click, another kernel)
                continue
        raise FileExistsError(
            f"{run_dir}: report.ipynb … report-{MAX_NAMES}.ipynb all exist; "
            "remove some, or run `kernelopt report DIR --out NOTEBOOK`"
        )

    def _work(self, run_dir: str) -> None:
        out, cells = self._write(Path(run_dir))
        self.path = out
        self.path_html.value = (
            "<span style='font-size:12px;padding:0 6px'>report: "
            f"<code>{html.escape(str(out))}</code></span>"
        )
        self.ctx.say(
            f"Report written to {out} ({cells} cells): open it from the file browser; "
            "it runs top to bottom on a CPU or a GPU."
        )
