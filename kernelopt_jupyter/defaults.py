"""The one home of the settings a person may leave out.

The CLI's flags, the notebook magic's flags, the session's ``SearchOptions``, the search's
``SearchConfig``, the verifier's ``VerifyOptions`` and the export all read their defaults from
here, so a default changes in one place and the help texts say the same number.
"""

from __future__ import annotations

#: Candidates a search may gate (``--budget``).
CANDIDATE_BUDGET = 16
#: Input seeds of the correctness gate (``--seeds``).
SEEDS = 3
#: Seconds a candidate may run in ``kernelopt verify`` (and the export's checks) before it
#: counts as hung (``--hang-limit``): a limit on one verification, not on a search.
HANG_LIMIT_S = 120.0
#: The same hang limit for each verification inside a search, which gates bigger candidates
#: than a person usually verifies by hand.
SEARCH_HANG_LIMIT_S = 180.0
#: The search's shape (the paper's): iterations, plans per iteration, executor retries, beam.
ITERATIONS = 5
PLANS = 4
RETRIES = 4
BEAM = 4
