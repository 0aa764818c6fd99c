"""The Diff tab: a candidate side by side with its parent or with the reference."""

from __future__ import annotations

import ipywidgets as w

from kernelopt_jupyter.notebook.panel.context import CSS_CLASSES, PanelContext, cls
from kernelopt_jupyter.notebook.panel.diff import side_by_side


def option_label(ctx: PanelContext, cid: str) -> str:
    """'c3 (executor: fuse the epilogue)' for a candidate picker."""
    cand = ctx.state.candidates[cid]
    plan = ctx.state.candidate_plan_title(cand)
    return f"{cid} ({cand.agent}{': ' + plan if plan else ''})"[:80]


class DiffTab:
    """A candidate picker, a parent/reference switch and the side-by-side diff."""

    def __init__(self, ctx: PanelContext) -> None:
        self.ctx = ctx
        self.candidate = cls(
            w.Dropdown(options=[], description="candidate"), CSS_CLASSES["diff_candidate"]
        )
        self.against = cls(
            w.ToggleButtons(options=["parent", "reference"], value="parent"),
            CSS_CLASSES["diff_against"],
        )
        self.view = cls(w.HTML("<i>no candidate yet</i>"), CSS_CLASSES["diff_view"])
        self.candidate.observe(lambda _c: self.render(), names="value")
        self.against.observe(lambda _c: self.render(), names="value")
        self.widget = w.VBox([w.HBox([self.candidate, self.against]), self.view])

    def set_candidates(self, newest: str) -> None:
        """Offer every candidate; pick ``newest`` when nothing was picked yet."""
        keep = self.candidate.value
        self.candidate.options = [(option_label(self.ctx, c), c) for c in self.ctx.state.candidates]
        if keep is None or self.candidate.value is None:
            self.candidate.value = newest

    def show(self, cid: str, against: str | None = None) -> None:
        """Diff candidate ``cid`` against 'parent' or 'reference' and open the tab."""
        if against is not None:
            self.against.value = against
        if self.candidate.value != cid:
            self.candidate.value = cid  # the observer redraws
        else:
            self.render()
        self.ctx.select_tab("Diff")

    def render(self) -> None:
        """Redraw the diff of the picked candidate."""
        cid = self.candidate.value
        state = self.ctx.state
        cand = state.candidates.get(cid) if cid else None
        if cand is None:
            self.view.value = "<i>no candidate yet</i>"
            return
        parent = state.candidates.get(cand.parent) if cand.parent else None
        if self.against.value == "parent" and parent is not None:
            old, label = parent.source, f"parent {parent.id}"
        else:
            old, label = self.ctx.reference_source, "reference"
            if not old:
                self.view.value = "<i>the reference source is not known for this session</i>"
                return
        self.view.value = side_by_side(old, cand.source, label, cand.id)
