"""The Profile tab: the profile's summary, the four charts, their caveats, a timeline picker.

The charts are one plotly figure (see :mod:`plots`), built off the refresh path (the first one
costs ~2 s of imports), and shown as plotly's own output type in an ``Output`` widget: the front
end's plotly renderer (JupyterLab's and Notebook 7's, from the ``plotly`` package) draws it, so
plotly.js is loaded once per page. A ``FigureWidget`` carries plotly.js (5 MB) in its own state,
which a notebook saved with its widget state stored once per chart.
"""

from __future__ import annotations

import html
import json
import threading
from typing import Any

import ipywidgets as w

from kernelopt_jupyter.event_payloads import Profile
from kernelopt_jupyter.notebook.panel import plots
from kernelopt_jupyter.notebook.panel.context import CSS_CLASSES, PanelContext, cls
from kernelopt_jupyter.notebook.panel.progress import WidthProbe


def profile_summary_html(profile: Profile) -> str:
    """The profile's summary line, with the dispatch map's error and notes when it has them."""
    parts = []
    if profile.summary:
        parts.append(f"<div>{html.escape(profile.summary)}</div>")
    dmap = profile.dispatch_map
    if isinstance(dmap, dict):
        if dmap.get("ok") is False and dmap.get("error"):
            parts.append(
                f"<div style='color:#b00'>profiling failed: {html.escape(str(dmap['error']))}</div>"
            )
        if dmap.get("ranked_by") and str(dmap["ranked_by"]) not in profile.summary:
            parts.append(
                f"<div><small>ranked by {html.escape(str(dmap['ranked_by']))}</small></div>"
            )
        if dmap.get("library_dominated"):
            parts.append("<div>library-dominated: most time is in vendor-library calls</div>")
        for note in dmap.get("notes") or []:
            parts.append(f"<div><small>{html.escape(str(note))}</small></div>")
    return "".join(parts)


#: The MIME type plotly's front-end renderer draws.
PLOTLY_MIME = "application/vnd.plotly.v1+json"


def figure_bundle(fig: Any) -> dict[str, Any]:
    """``fig`` as an output for plotly's renderer only, with a line of text elsewhere (no
    ``text/html`` copy of plotly.js, which plotly's default notebook output adds)."""
    spec = json.loads(fig.to_json())
    return {
        PLOTLY_MIME: {"data": spec.get("data", []), "layout": spec.get("layout", {})},
        "text/plain": "KernelOPT charts (drawn by plotly's renderer in JupyterLab or Notebook 7)",
    }


class ChartsView:
    """Dispatch map, roofline, kernel timeline and search progress, with one caveat each."""

    def __init__(self, ctx: PanelContext) -> None:
        self.ctx = ctx
        self.figs: dict[str, Any] = {}
        self.started = False
        self._notes: dict[str, str] = {}
        self.timeline_candidate = cls(
            w.Dropdown(options=[("(none)", "")], value="", description="timeline of"),
            CSS_CLASSES["timeline_candidate"],
        )
        self.timeline_candidate.observe(lambda _c: self.render_timeline(), names="value")
        self.profile_summary = w.HTML("")
        self.plot_box = w.VBox(
            [w.HTML("<i>charts appear when the session starts…</i>")],
            layout=w.Layout(width="100%"),
        )
        #: Where the figure is drawn, as an output; ``shown`` is the last output sent.
        self.output = w.Output(layout=w.Layout(width="100%"))
        self.shown: dict[str, Any] | None = None
        self.chart_notes = w.HTML("")
        self.probe = WidthProbe(layout=w.Layout(width="100%", height="0px"))
        self.probe.observe(lambda _c: self._fit_width(), names="width")
        self.widget = cls(
            w.VBox(
                [
                    self.probe,
                    self.profile_summary,
                    self.plot_box,
                    self.chart_notes,
                    self.timeline_candidate,
                ]
            ),
            CSS_CLASSES["profile"],
        )

    def start(self, *, background: bool) -> None:
        """Build the figure once, on a thread of its own when events arrive live."""
        if self.started:
            return
        self.started = True
        if background:
            threading.Thread(target=self.build, name="kernelopt-charts", daemon=True).start()
        else:
            self.build()

    def build(self) -> None:
        """Make the figure and draw what the state already holds."""
        try:
            import plotly.graph_objects as go

            fig = plots.new_charts(go.Figure)
        except ImportError as exc:  # plotly missing: the rest of the panel still works
            self.plot_box.children = (w.HTML(f"<i>charts need plotly ({exc})</i>"),)
            return
        with self.ctx.lock:
            self.figs = {"charts": fig}
            self._fit_width()
            self.plot_box.children = (self.output,)
            self.render_profile()
            self.render_progress()
            self.publish()

    def publish(self) -> None:
        """Send the figure to the front end when it changed since it was last sent."""
        fig = self.figs.get("charts")
        if fig is None:
            return
        bundle = figure_bundle(fig)
        if bundle == self.shown:
            return
        self.shown = bundle
        # Set as the Output's state, not printed into it: the refresher's thread has no cell
        # whose output a ``with output:`` block could capture.
        self.output.outputs = ({"output_type": "display_data", "data": bundle, "metadata": {}},)

    def _fit_width(self) -> None:
        # The browser measured the tab (WidthProbe): the figure takes that width.
        fig = self.figs.get("charts")
        if fig is not None and self.probe.width > 0:
            fig.layout.width = self.probe.width
            self.publish()

    def render_profile(self) -> None:
        """The reference's summary, dispatch map and roofline; the timeline picker's options."""
        s = self.ctx.state
        ref = s.reference_profile()
        if ref is not None:
            self.profile_summary.value = profile_summary_html(ref)
        profiled = [p.candidate for p in s.profiles if p.candidate]
        options = [("(none)", ""), *[(str(c), str(c)) for c in dict.fromkeys(profiled)]]
        if list(self.timeline_candidate.options) != options:
            keep = self.timeline_candidate.value
            self.timeline_candidate.options = options
            self.timeline_candidate.value = keep if keep in dict(options).values() else ""
        if "charts" not in self.figs:
            return
        self._note("dispatch", plots.update_dispatch(self.figs["charts"], ref))
        self._note("roofline", plots.update_roofline(self.figs["charts"], ref))
        self.render_timeline()
        self.publish()

    def render_timeline(self) -> None:
        """The reference's launches and those of the picked candidate."""
        if "charts" not in self.figs:
            return
        cid = self.timeline_candidate.value or ""
        cand = self.ctx.state.candidate_profile(cid) if cid else None
        state = self.ctx.state
        note = plots.update_timeline(
            self.figs["charts"],
            state.reference_profile(),
            cand,
            cid or "candidate",
            device=state.device or "cuda",
        )
        self._note("timeline", note)
        self.publish()

    def render_progress(self) -> None:
        """The best speedup so far, as a step line."""
        if "charts" in self.figs:
            state = self.ctx.state
            note = plots.update_progress(
                self.figs["charts"], state.progress, state.last_t, device=state.device or "cuda"
            )
            self._note("progress", note)
            self.publish()

    def _note(self, chart: str, note: str) -> None:
        # Caveats under the charts (no GPU timings, no timeline...), one per chart.
        if self._notes.get(chart, "") == note:
            return
        self._notes[chart] = note
        items = [
            f"<b>{html.escape(plots.TITLES[name].split(':')[0].split('(')[0].strip())}</b>: "
            f"{html.escape(text)}"
            for name, text in self._notes.items()
            if text
        ]
        self.chart_notes.value = "<small>" + " · ".join(items) + "</small>" if items else ""
