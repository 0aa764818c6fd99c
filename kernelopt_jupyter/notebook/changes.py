"""What a candidate changes, in one line: for the panel's table and the static summary.

A tuner's or executor's candidate usually moves a launch setting; the two sources'
``LAUNCH_CONFIGS`` say exactly which ("k: XBLOCK 2->4"). Where they cannot (the parent had no
dict), the executor's own answer names the change, then the candidate's note, then its plan.
"""

from __future__ import annotations

from kernelopt_jupyter.event_payloads import AgentFinished, CandidateProposed
from kernelopt_jupyter.events import Event, EventError
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
    """What each executor edit said it changed ('K: num_warps 1->2'), by candidate.

    The candidate event carries only the plan's title; the executor's answer
    (``agent_finished``'s output, just before the candidate it made) names the concrete change.
    Each candidate keeps the answer that made it: a retry of the same plan, or a later plan
    given the same id (logs written before plan ids were unique), says something else.
    """

    def __init__(self) -> None:
        #: Plan id -> the latest executor answer's explanation for it.
        self.by_plan: dict[str, str] = {}
        #: Candidate id -> the explanation of the answer that made it ('' for none).
        self.by_candidate: dict[str, str] = {}

    def apply(self, event: Event) -> None:
        """Remember an executor answer's explanation, and which candidate it made."""
        try:
            d = event.payload()
        except EventError:
            return
        if isinstance(d, CandidateProposed) and d.agent == "executor":
            self.by_candidate[d.id] = self.by_plan.get(str(d.plan_id), "")
            return
        if not isinstance(d, AgentFinished) or d.agent != "executor":
            return
        # ``output`` is the Executor's answer (agents.base.Edit.to_dict() and its plan id).
        if d.output.get("plan_id"):
            self.by_plan[str(d.output["plan_id"])] = str(d.output.get("explanation") or "")


def change_text(state: SessionState, cand: CandidateView, notes: ChangeNotes) -> str:
    """The concrete change a candidate makes to its parent, as one line."""
    parent = state.candidates.get(cand.parent or "")
    if parent is not None:
        moved = config_change(parent.source, cand.source)
        if moved:
            return moved
    said = None
    if cand.agent == "executor":
        said = (
            notes.by_candidate[cand.id]
            if cand.id in notes.by_candidate
            else notes.by_plan.get(cand.plan_id or "")
        )
    text = said or cand.note or state.candidate_plan_title(cand)
    if cand.dispatch_only and "dispatch" not in text:
        text = (text + " " if text else "") + "[dispatch]"
    return text
