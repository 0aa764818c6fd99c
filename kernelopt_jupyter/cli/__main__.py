"""``python -m kernelopt_jupyter.cli``: the same as the ``kernelopt`` console script."""

from __future__ import annotations

import sys

from kernelopt_jupyter.cli.main import main

sys.exit(main())
