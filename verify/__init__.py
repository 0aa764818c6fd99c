"""Verification: the four gates every candidate must pass, run in a worker process.

```python
report = verify_candidate(problem, source, VerifyOptions(device="cpu", seeds=3))
report.verdict, report.gates, report.speedup, report.to_dict()
```
See docs/engine.md ("Verification API") and the contract's ``verify --json``.
"""

from kernelopt_jupyter.verify.cascade import verify_candidate
from kernelopt_jupyter.verify.report import GATE_NAMES, GateResult, VerifyOptions, VerifyReport

__all__ = ["GATE_NAMES", "GateResult", "VerifyOptions", "VerifyReport", "verify_candidate"]
