"""The export's op runtime in this process, with plain torch standing in for the kernels: the
custom op passes torch.library's own checks (schema, fake, aliasing) and a view the
candidate returns is copied, as a custom op's outputs may not alias its inputs."""

from __future__ import annotations

import types
import uuid
from pathlib import Path
from typing import Any

import pytest
import torch

from kernelopt_jupyter.deploy import op_runtime
from kernelopt_jupyter.deploy.guard_runtime import kernelopt_signature
from kernelopt_jupyter.deploy.probe import output_layout

CANDIDATE = """
import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return x.view(-1)  # a view of the input, as a reshape problem's reference returns
"""
REFERENCE = """
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x.reshape(-1)
"""


def _module(name: str, source: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


@pytest.fixture
def export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> op_runtime.Export:
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # CPU kernels are admitted only under it
    (tmp_path / "candidate.py").write_text(CANDIDATE)
    (tmp_path / "reference.py").write_text(REFERENCE)
    x = torch.randn(4, 8)
    manifest: dict[str, Any] = {
        "op": f"kernelopt::unit_{uuid.uuid4().hex[:8]}",  # each test registers its own op
        "problem": {
            "kind": "module",
            "entry": "Model",
            "digest": op_runtime.file_digest(tmp_path / "reference.py"),
        },
        "candidate": {
            "optimized": "ModelNew",
            "digest": op_runtime.file_digest(tmp_path / "candidate.py"),
        },
        "init": [],
        "device": "cpu",
        "fingerprint": op_runtime.current_fingerprint("cpu"),
        "verified": {
            "device": "cpu",
            "signatures": [kernelopt_signature([x])],
            "outputs": [output_layout(x.reshape(-1))],
            "shapes": ["as given"],
            "state_dtypes": [],
            "training": False,
        },
    }
    candidate = _module("candidate", CANDIDATE)
    reference = _module("reference", REFERENCE)
    return op_runtime.Export(tmp_path, manifest, candidate, reference)


def test_the_op_copies_a_view_and_passes_opcheck(export: op_runtime.Export) -> None:
    assert export.changes == []  # the setup is the verified one: no warning
    model = export.load()
    x = torch.randn(4, 8)
    with torch.no_grad():
        y = model(x)
    assert model.kernelopt_path == "kernel"
    torch.testing.assert_close(y, x.reshape(-1))
    assert y.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    handle = id(model.kernelopt_parts.optimized)
    torch.library.opcheck(export.op, ([x], 0, handle))
    with torch.no_grad():
        model(torch.randn(3, 8))
    assert model.kernelopt_path.startswith("reference: these shapes")


def test_an_edited_file_is_reported_and_warned_once(
    tmp_path: Path, export: op_runtime.Export
) -> None:
    (tmp_path / "candidate.py").write_text(CANDIDATE + "\n# edited\n")
    changes = op_runtime.package_changes(tmp_path, export.manifest, "cpu")
    assert changes == ["candidate.py: edited since it was verified"]
    with pytest.warns(op_runtime.KernelOPTUnverifiedWarning, match="candidate.py: edited"):
        op_runtime.warn_unverified(tmp_path, export.manifest)
    assert op_runtime.warn_unverified(tmp_path, export.manifest) == changes  # no second warning
