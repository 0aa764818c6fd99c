"""What a candidate changes, in one line: for the panel's table and the static summary.

A tuner's or executor's candidate usually moves a launch setting; the two sources'
``LAUNCH_CONFIGS`` say exactly which ("k: XBLOCK 2->4"). Where they cannot (the parent had no
dict), the executor's own answer names the change, then the candidate's note, then its plan.
"""

from __future__ import annotations

from kernelopt_jupyter.events import Event
from kernelopt_jupyter.launch_configs import LaunchConfigError, read_launch_configs
from kernelopt_jupyter.session.state import CandidateView, SessionState


def config_change(old_source: str, new_source: str) -> str:
    """'K: num_warps 2->4' from the two sources' LAUNCH_CONFIGS, or '' when not comparable."""
    try:
        old, new = read_launch_configs(old_source), read_launch_configs(new_source)
    except LaunchConfigError:
        return ""
    if not old or not new:
        return ""
    parts = []
    for kernel in new:
        before, after = old.get(kernel, {}), new[kernel]
        moved = [
            f"{key} {before.get(key, '-')}->{after.get(key, '-')}"
            for key in sorted(set(before) | set(after))
            if before.get(key) != after.get(key)
        ]
        if moved:
            parts.append(f"{kernel}: {', '.join(moved)}")
    return "; ".join(parts)


class ChangeNotes:
    """What each executor edit said it changed ('K: num_warps 1->2'), by plan id.

    The candidate event carries only the plan's title; the executor's answer
    (``agent_finished``'s output) names the concrete change.
    """

    def __init__(self) -> None:
        self.by_plan: dict[str, str] = {}

    def apply(self, event: Event) -> None:
        """Remember an executor answer's explanation."""
        if event.type != "agent_finished" or event.data.get("agent") != "executor":
            return
        output = event.data.get("output")
        if isinstance(output, dict) and output.get("plan_id") and output.get("explanation"):
            self.by_plan[str(output["plan_id"])] = str(output["explanation"])


def change_text(state: SessionState, cand: CandidateView, notes: ChangeNotes) -> str:
    """The concrete change a candidate makes to its parent, as one line."""
    parent = state.candidates.get(cand.parent or "")
    if parent is not None:
        moved = config_change(parent.source, cand.source)
        if moved:
            return moved
    said = notes.by_plan.get(cand.plan_id or "") if cand.agent == "executor" else None
    text = said or cand.note or state.plan_title(cand.plan_id)
    if cand.dispatch_only and "dispatch" not in text:
        text = (text + " " if text else "") + "[dispatch]"
    return text
