"""The phase rows of the panel, drawn in the browser, which ticks the running phase's clock.

A phase that lasts minutes (the analysis on the CPU) thus costs no kernel messages; the rows
come from :class:`~kernelopt_jupyter.notebook.phases.PhaseTracker`.
"""

from __future__ import annotations

import anywidget
import traitlets

from kernelopt_jupyter.notebook.phases import PhaseTracker

_ESM = r"""
function fmt(s) {
  s = Math.max(0, s);
  if (s < 0.5) return "under 1 s";  // "0 s" would read as a phase that never ran
  if (s < 60) return Math.round(s) + " s";
  const m = Math.floor(s / 60), r = Math.floor(s % 60);
  return m + " min " + String(r).padStart(2, "0") + " s";
}
function render({ model, el }) {
  el.classList.add("kernelopt-phases");
  let timer = null;
  let last = null;  // the budget's clock as last drawn live, kept once the kernel has gone
  const draw = () => {
    const phases = model.get("phases") || [];
    const clock = model.get("clock");  // wall-clock seconds at session time 0, or 0 when not live
    const ended = model.get("ended");
    // The labextension marks a panel whose kernel has gone: a record, its clocks stop.
    const gone = el.closest(".kernelopt-gone") !== null;
    const now = Date.now() / 1000;
    el.innerHTML = "";
    if (phases.length) {
      // The budget's clock: from the session's start, the analysis included.
      const limit = model.get("limit"), start = model.get("start"), end = model.get("end");
      const live = clock > 0 && !ended && !gone;
      const took = end >= 0 ? end - start : (live ? now - clock - start : last);
      if (live) last = took;
      const row = document.createElement("div");
      row.className = "kernelopt-phase-clock";
      row.style.cssText = "display:flex;align-items:center;gap:8px;font-size:12px;margin:1px 0";
      const bar = document.createElement("progress");
      bar.style.cssText = "width:160px;flex:0 0 auto";
      bar.max = 1;
      if (limit > 0 && took !== null) bar.value = Math.min(1, took / limit);
      const label = document.createElement("span");
      const shown = took === null ? "(not live)"
        : fmt(took) + (gone && end < 0 ? " when the kernel went" : "");
      label.textContent = "Time " + shown + (limit > 0
        ? " of " + fmt(limit) + " (--time-limit; the analysis counts)" : " (no --time-limit)");
      row.append(bar, label);
      el.appendChild(row);
    }
    for (const p of phases) {
      const row = document.createElement("div");
      const running = p.end === null;
      row.className = "kernelopt-phase kernelopt-phase-" + p.name + (running ? " kernelopt-phase-running" : "");
      row.style.cssText = "display:flex;align-items:center;gap:8px;font-size:12px;margin:1px 0";
      const bar = document.createElement("progress");
      bar.style.cssText = "width:160px;flex:0 0 auto";
      bar.max = 1;
      if (p.progress !== null) bar.value = p.progress; else if (!running) bar.value = 1;
      const label = document.createElement("span");
      label.textContent = (running ? "▶ " : "✓ ") + p.label + (p.detail ? " · " + p.detail : "");
      const time = document.createElement("span");
      time.className = "kernelopt-phase-time";
      time.style.cssText = "color:#555;margin-left:auto";
      if (!running) time.textContent = fmt(p.end - p.start);
      else if (gone) time.textContent = "stopped with the kernel";
      else if (clock > 0 && !ended) time.textContent = fmt(now - clock - p.start) + " so far";
      else time.textContent = ended ? "" : "(not live)";
      row.append(bar, label, time);
      el.appendChild(row);
    }
    if (gone && timer !== null) { clearInterval(timer); timer = null; }
  };
  draw();
  timer = setInterval(draw, 1000);
  model.on("change", draw);
  return () => { clearInterval(timer); model.off("change", draw); };
}
export default { render };
"""


class PhaseView(anywidget.AnyWidget):  # type: ignore[misc]
    """The phases as rows: a progress bar, the phase's label, its duration or clock."""

    _esm = traitlets.Unicode(_ESM).tag(sync=True)
    phases = traitlets.List(traitlets.Dict()).tag(sync=True)
    clock = traitlets.Float(0.0).tag(sync=True)
    ended = traitlets.Bool(False).tag(sync=True)
    #: The budget's clock, in session seconds: start, end (-1 while running), the time limit.
    start = traitlets.Float(0.0).tag(sync=True)
    end = traitlets.Float(-1.0).tag(sync=True)
    limit = traitlets.Float(0.0).tag(sync=True)

    def show(self, tracker: PhaseTracker, clock: float | None) -> None:
        """Send the tracker's phases (one message); ``clock`` is the session's start, or None."""
        with self.hold_sync():
            self.phases = tracker.to_data()
            if clock is not None:
                self.clock = clock
            self.ended = tracker.finished is not None
            self.start = tracker.started
            self.end = -1.0 if tracker.ended is None else tracker.ended
            self.limit = tracker.limit or 0.0


_WIDTH_ESM = r"""
function render({ model, el }) {
  // Report this element's width (the Profile tab's) to the kernel whenever it settles.
  let timer = null;
  const seen = new ResizeObserver(() => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const width = Math.round(el.getBoundingClientRect().width);
      if (width > 0 && Math.abs(width - model.get("width")) > 8) {
        model.set("width", width);
        model.save_changes();
      }
    }, 150);
  });
  seen.observe(el);
  return () => { clearTimeout(timer); seen.disconnect(); };
}
export default { render };
"""


class WidthProbe(anywidget.AnyWidget):  # type: ignore[misc]
    """Invisible; ``width`` is its width in the browser, in CSS pixels (0 until shown).

    A plotly figure drawn in a hidden tab sizes itself to a default 700 px and does not follow
    its container afterwards: the charts take their width from this probe instead.
    """

    _esm = traitlets.Unicode(_WIDTH_ESM).tag(sync=True)
    width = traitlets.Int(0).tag(sync=True)
