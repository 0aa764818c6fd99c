"""The analysis cache: a problem's baselines, dispatch map and harvest, kept on disk.

Analysis is the slow start of every search (minutes on the CPU, about a minute and a half on
the GPU at published sizes) and its answer depends only on what the key holds: the problem's
source, its input shapes and dtypes, its mode, the torch and Triton versions, the device and
the GPU's name. A second search of the same problem starts from the saved answer (the
``profile`` event then says ``cached: true``). Only an analysis that ran every step to its end
is stored: never one cut short by a deadline, nor one with a failed phase (a crashed or
timed-out worker, a harvest, baselines or timeline step that raised; the ``degraded`` events
and result.json's ``degraded`` say which), and an entry that holds a failed phase is never
read. ``--no-cache`` (``SearchOptions.analysis_cache = False``) neither reads nor writes it.

The folder is ``$KERNELOPT_CACHE_DIR/analysis`` (default ``~/.cache/kernelopt/analysis``);
entries are small JSON files, written atomically, safe to delete at any time.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from kernelopt_jupyter.problem import Problem

#: Bump when the stored layout or what analysis computes changes (old entries are ignored).
#: 2: entries of schema 1 may hold an analysis whose harvest failed.
CACHE_SCHEMA = 2


def default_cache_dir() -> Path:
    """``$KERNELOPT_CACHE_DIR`` or ``~/.cache/kernelopt``."""
    given = os.environ.get("KERNELOPT_CACHE_DIR")
    return Path(given) if given else Path.home() / ".cache" / "kernelopt"


def gpu_name(device: str) -> str:
    """The GPU's name (from nvidia-smi, so this process never initialises CUDA), or the device."""
    if device != "cuda":
        return device
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return "cuda (unnamed GPU)"
    try:
        out = subprocess.run(
            [exe, "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "cuda (unnamed GPU)"
    return out.stdout.strip().splitlines()[0] if out.stdout.strip() else "cuda (unnamed GPU)"


def input_signature(problem: Problem) -> list[Any] | None:
    """Shapes and dtypes of ``get_inputs()``, drawn on the meta device (no memory, no compute).

    Module problems only: a kernel problem's module defines Triton kernels, which this process
    must not import (a later interpreter run would break), and its shapes are in its source and
    ``KERNELOPT_SMALL`` (both in the key). None when the inputs cannot be drawn on meta.
    """
    if problem.kind != "module":
        return []
    import torch

    from kernelopt_jupyter.problem import materialize

    try:
        loaded = materialize(problem)
        with torch.device("meta"):
            inputs = loaded.make_inputs(seed=0, device="meta")
    except Exception:  # a get_inputs that needs real data: no key, so no cache (never a guess)
        return None
    return [
        [list(x.shape), str(x.dtype)] if isinstance(x, torch.Tensor) else repr(x) for x in inputs
    ]


def _analysis_code() -> str:
    """A digest of the analysis package's own source: a changed harvest is a changed answer."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()[:16]


class AnalysisCache:
    """Saved analyses under one folder, keyed by everything the analysis depends on."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = (root or default_cache_dir()) / "analysis"
        #: Input signatures already drawn by this instance (each runs the problem's module).
        self._shapes: dict[tuple[str, str, str], list[Any] | None] = {}

    def key(self, problem: Problem, device: str) -> str | None:
        """The entry's key, or None when the problem's inputs cannot be described."""
        import torch
        import triton

        memo = (problem.source, problem.kind, os.environ.get("KERNELOPT_SMALL", ""))
        if memo not in self._shapes:
            self._shapes[memo] = input_signature(problem)
        shapes = self._shapes[memo]
        if shapes is None:
            return None
        what = {
            "schema": CACHE_SCHEMA,
            "source": problem.source,
            "kind": problem.kind,
            "shapes": shapes,
            "small": os.environ.get("KERNELOPT_SMALL", ""),
            "torch": torch.__version__,
            "triton": triton.__version__,
            "device": device,
            "gpu": gpu_name(device),
            "code": _analysis_code(),
        }
        return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:32]

    def load(self, key: str) -> dict[str, Any] | None:
        """The saved analysis, or None (missing, unreadable or of another schema)."""
        path = self.root / f"{key}.json"
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("schema") != CACHE_SCHEMA:
            return None
        if degraded_of(data):
            return None
        return data

    def store(self, key: str, data: dict[str, Any]) -> bool:
        """Save ``data`` (atomically: a reader never sees half an entry); whether it was
        stored. An analysis with a failed phase (``degraded_of``) is refused. Errors are
        ignored, since a cache that cannot be written only costs time."""
        if degraded_of(data):
            return False
        tmp = ""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.root, suffix=".tmp")
            with os.fdopen(fd, "w") as fh:
                json.dump({**data, "schema": CACHE_SCHEMA}, fh, default=str)
            os.replace(tmp, self.root / f"{key}.json")
        except (OSError, TypeError, ValueError):
            if tmp:
                Path(tmp).unlink(missing_ok=True)
            return False
        return True


def degraded_of(data: dict[str, Any]) -> list[Any]:
    """The failed phases an entry's analysis lists (its facts' ``degraded``); empty for a
    complete one."""
    profile = data.get("profile")
    facts = profile.get("facts") if isinstance(profile, dict) else None
    found = facts.get("degraded") if isinstance(facts, dict) else None
    return list(found) if isinstance(found, list) else []
