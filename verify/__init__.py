"""Verification: the four gates every candidate must pass, run in a worker process.

```python
report = verify_candidate(problem, source, VerifyOptions(device="cpu", seeds=3))
report.verdict, report.gates, report.speedup, report.to_dict()
```
See docs/engine.md ("Verification API") and the contract's ``verify --json``. Importing this
package is light (no torch): the worker imports ``kernelopt_jupyter.worker`` as its
main module, which must not already be loaded by the package.

The modules, by where they run (docs/verification.md, "Where things run"):

* host, the caller's process: ``cascade`` (the gates in order, the workers started),
  ``service`` (a search's verification worker, kept), ``static`` (the source rules: it only
  parses), ``compile_check`` (the sm_90 compile check, run in a compile worker of its own);
* worker, the verification worker and the processes it forks:
  - the checker's process shell: ``checker`` (the children's protocol, deadlines and
    deaths; where the time and the memory went), ``lending`` and ``ipc`` (tensors device to
    device), ``perf`` and ``timing`` (the performance gate, all three sides: its protocol,
    timer, statistics and verdict);
  - the reference's process: ``reference``;
  - the candidate's process: ``sandbox`` (the harness and its process watch),
    ``accounting`` (dispatch-level accounting), ``launches`` (the launch recorder);
  - ``wire``: the messages between them, parsed as data;
* pure, on data only (no process, socket or device handle): ``judge`` (every decision of
  the static run-time, correctness and float64 gates), ``compare`` (tolerances and the
  referee's errors), ``schedule`` (the calls, from one seed), ``report`` (options in, gate
  results out).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kernelopt_jupyter.verify.report import GATE_NAMES, GateResult, VerifyOptions, VerifyReport

if TYPE_CHECKING:
    from kernelopt_jupyter.problem import Problem
    from kernelopt_jupyter.verify.cascade import GateCallback
    from kernelopt_jupyter.verify.service import VerifyService

__all__ = [
    "GATE_NAMES",
    "GateResult",
    "VerifyOptions",
    "VerifyReport",
    "verify_candidate",
    "verify_candidates",
]


def verify_candidate(
    problem: Problem,
    candidate_source: str,
    options: VerifyOptions | None = None,
    candidate_path: str = "<candidate>",
    *,
    on_gate: GateCallback | None = None,
    service: VerifyService | None = None,
) -> VerifyReport:
    """Run the four gates on one candidate (see ``cascade.verify_candidate``); ``service``
    (``verify.service.VerifyService``) reuses a search's verification worker."""
    from kernelopt_jupyter.verify.cascade import verify_candidate as _verify

    return _verify(
        problem, candidate_source, options, candidate_path, on_gate=on_gate, service=service
    )


def verify_candidates(
    problem: Problem,
    sources: list[str],
    options: VerifyOptions | None = None,
    paths: list[str] | None = None,
) -> list[VerifyReport]:
    """The four gates on several candidates with one fork server, each candidate in its own
    fresh process (see ``cascade.verify_candidates``)."""
    from kernelopt_jupyter.verify.cascade import verify_candidates as _verify_many

    return _verify_many(problem, sources, options, paths)
