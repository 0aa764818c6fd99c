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
import threading
from collections.abc import Callable
from pathlib import Path

import ipywidgets as w

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


class ReportView:
    """The Report button, the written path beside it, and the thread that writes it."""

    def __init__(
        self, ctx: PanelContext, out_dir: str | None, reporter: Reporter | None = None
    ) -> None:
        self.ctx = ctx
        self.out_dir = out_dir
        self.reporter = reporter or _default_reporter
        self.button = cls(
            w.Button(
                description="Report",
                icon="file-text",
                tooltip="the session as a standalone notebook in its folder (kernelopt report)",
                disabled=True,
            ),
            CSS_CLASSES["report"],
        )
        self.button.on_click(lambda _b: self.start())
        self.path_html = cls(w.HTML(""), CSS_CLASSES["report_path"])
        self.path: Path | None = None
        self.error: str | None = None
        self._busy = False

    def ready(self) -> bool:
        """Whether the session has ended (the report of a running search would be partial)."""
        return bool(self.out_dir and self.ctx.state.finished)

    def render(self) -> None:
        """Enable the button once the session has ended."""
        self.button.disabled = self._busy or not self.ready()

    def start(self) -> threading.Thread | None:
        """Write the report on a worker thread (the kernel stays free); returns the thread."""
        if self._busy:
            return None
        if not self.ready() or self.out_dir is None:
            self.ctx.say("Report: the session has not ended yet (stop it, or wait for it).")
            return None
        self._busy, self.button.disabled = True, True
        self.path, self.error = None, None
        self.ctx.say("Writing the session's report notebook…")
        thread = threading.Thread(
            target=self._run, args=(Path(self.out_dir),), name="kernelopt-report", daemon=True
        )
        thread.start()
        return thread

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

    def _run(self, run_dir: Path) -> None:
        try:
            out, cells = self._write(run_dir)
        except Exception as exc:  # EventError (no session), OSError (unwritable): one line
            self.error = " ".join((str(exc) or type(exc).__name__).split())
            self.ctx.say(f"Report failed: {self.error}")
        else:
            self.path = out
            self.path_html.value = (
                "<span style='font-size:12px;padding:0 6px'>report: "
                f"<code>{html.escape(str(out))}</code></span>"
            )
            self.ctx.say(
                f"Report written to {out} ({cells} cells): open it from the file browser; "
                "it runs top to bottom on a CPU or a GPU."
            )
        finally:
            with self.ctx.lock:
                self._busy = False
                self.render()
