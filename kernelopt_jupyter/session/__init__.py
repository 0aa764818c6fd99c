"""The session layer: one search over one problem, and the readers of its event stream.

``OptimizationSession`` runs a search and owns its ``EventLog``; ``SessionState`` is the one
event reader (the panel, the text progress, the report and ``status`` all fold events through
it); ``TextProgress`` is the one progress printer, used by the CLI and the magic;
``SessionController`` is what a front end may call on a session (a ``Protocol``).
"""

from __future__ import annotations

from kernelopt_jupyter.session.optimization import (
    RESULT_SCHEMA,
    OptimizationSession,
    SearchOptions,
    SessionError,
    make_policy,
)
from kernelopt_jupyter.session.protocols import SessionController, StepDecisions

__all__ = [
    "RESULT_SCHEMA",
    "OptimizationSession",
    "SearchOptions",
    "SessionController",
    "SessionError",
    "StepDecisions",
    "make_policy",
]
