"""Dispatch analysis: baselines, the Inductor harvest and the dispatch map.

```python
from kernelopt_jupyter.analysis import profile_problem, harvest_problem, measure_baselines
```
All three run their torch/Inductor work in a worker process.
"""

from kernelopt_jupyter.analysis.baselines import Baselines, measure_baselines
from kernelopt_jupyter.analysis.dispatch import (
    DispatchChoice,
    DispatchMap,
    DispatchRecord,
    profile_problem,
)
from kernelopt_jupyter.analysis.harvest import Harvest, KernelRecord, harvest_problem

__all__ = [
    "Baselines",
    "DispatchChoice",
    "DispatchMap",
    "DispatchRecord",
    "Harvest",
    "KernelRecord",
    "harvest_problem",
    "measure_baselines",
    "profile_problem",
]
