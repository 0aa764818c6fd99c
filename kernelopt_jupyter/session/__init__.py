"""The session layer: one search over one problem, and the readers of its event stream.

``OptimizationSession`` runs a search and owns its ``EventLog``; ``SessionState`` is the one
event reader (the panel, the text progress, the report and ``status`` all fold events through
it); ``TextProgress`` is the one progress printer, used by the CLI and the magic.
"""

from __future__ import annotations

from kernelopt_jupyter.session.optimization import (
    RESULT_SCHEMA,
    OptimizationSession,
    SearchOptions,
    SessionError,
    make_policy,
)

__all__ = ["RESULT_SCHEMA", "OptimizationSession", "SearchOptions", "SessionError", "make_policy"]
