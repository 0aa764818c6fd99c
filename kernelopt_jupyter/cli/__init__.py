"""The ``kernelopt`` command line: the parser in ``main``, one module per command."""

from __future__ import annotations

from kernelopt_jupyter.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
