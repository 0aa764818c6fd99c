"""KernelOPT for Jupyter: a dispatch-aware, profiling-guided agentic GPU kernel optimizer.

Importing this package loads no Jupyter, plotly, nbformat or anthropic module (the GPU machine
has none of them); the notebook front end is loaded by ``%load_ext kernelopt_jupyter``.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def load_ipython_extension(ipython: Any) -> None:
    """Register the ``%%kernelopt`` cell magic and its line magics."""
    from kernelopt_jupyter.notebook.magic import load_ipython_extension as _load

    _load(ipython)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension_build", "dest": "kernelopt-jupyter"}]
