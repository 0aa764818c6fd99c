"""``scripts/rule_coverage.py``, the survey of which rewrite rules reach which problems: its
outcomes and counts on a folder of two small problems, and (marked ``kernelbench``) on the
KernelBench development sample (``../shared/kernelbench-dev``; see tests/_kernelbench.py),
where every candidate it reports as offered must render: its sources compile, a kernel
candidate passes the static gate, and the rendered ``ModelNew`` builds at the CPU sizes."""

from __future__ import annotations

import importlib.util
import itertools
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from _kernelbench import LEVELS, dev_dir

from kernelopt_jupyter.agents.transforms import lift_launch_configs
from kernelopt_jupyter.candidate import is_dispatch_only
from kernelopt_jupyter.problem import load_source_module
from kernelopt_jupyter.verify.static import analyze_candidate

ROOT = Path(__file__).resolve().parents[1]


def _survey() -> Any:
    spec = importlib.util.spec_from_file_location(
        "rule_coverage", ROOT / "scripts/rule_coverage.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["rule_coverage"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


_LAYER_NORM_RELU = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.norm = nn.LayerNorm(features)

    def forward(self, x):
        return torch.relu(self.norm(x))


def get_inputs():
    return [torch.randn(2, 3, 7)]


def get_init_inputs():
    return [7]
"""

_LAYER_NORM_LSE = _LAYER_NORM_RELU.replace(
    "torch.relu(self.norm(x))", "torch.logsumexp(self.norm(x), dim=-1)"
)

_MATMUL = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(5, 7), torch.randn(7, 3)]


def get_init_inputs():
    return []
"""


def test_the_survey_counts_each_outcome_per_level(tmp_path: Path) -> None:
    rc = _survey()
    for level in LEVELS:
        (tmp_path / level).mkdir()
    (tmp_path / "level1" / "1_norm_relu.py").write_text(_LAYER_NORM_RELU)
    (tmp_path / "level2" / "1_matmul.py").write_text(_MATMUL)
    (tmp_path / "level2" / "2_norm_lse.py").write_text(_LAYER_NORM_LSE)
    out = tmp_path / "coverage.json"
    assert rc.main([str(tmp_path), "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    rows = {row["problem"]: row for row in data["problems"]}
    norm = rows["level1/1_norm_relu"]
    assert norm["outcome"] == "kernels" and "layer_norm_kernel" in norm["matched"]
    assert any("layer_norm_kernel" in names for names in norm["offered"])
    assert rows["level2/1_matmul"]["outcome"] == "none"
    # The norm's kernel, then a logsumexp no kernel takes: a mixed candidate, offered.
    mixed = rows["level2/2_norm_lse"]
    assert mixed["outcome"] == "foreign", mixed
    assert mixed["foreign"] == {"layer_norm_kernel": "logsumexp"}, mixed
    assert ["layer_norm_kernel"] in mixed["offered"]
    assert data["levels"]["level1"]["kernels"] == 1
    assert data["levels"]["level2"] == {"problems": 2, "none": 1, "foreign": 1, "matched": 1}


def test_an_outcome_names_the_best_thing_reached() -> None:
    rc = _survey()
    row = rc.Coverage(problem="level2/x", foreign={"max_pool_kernel": "logsumexp"})
    assert row.outcome == "foreign"
    row.offered = [["fold_batchnorm"]]
    assert row.outcome == "foreign"  # a mixed candidate is the gap to close
    row.kernels = True
    assert row.outcome == "kernels"
    assert rc.Coverage(problem="l/y", offered=[["drop_identities"]]).outcome == "vendor"
    assert rc.Coverage(problem="l/z", refused={"r": "shape"}).outcome == "refused"
    assert rc.Coverage(problem="l/w", error="no graph").outcome == "error"
    assert rc.Coverage(problem="l/v").outcome == "none"


def test_a_folder_without_levels_is_refused(tmp_path: Path, capsys: Any) -> None:
    assert _survey().main([str(tmp_path)]) == 2
    assert str(tmp_path) in capsys.readouterr().err


_names = itertools.count()


#: The sample is surveyed in this many parts (every PARTS-th problem), so that ``-n 2`` shares
#: the costly networks of level 3 between its workers.
PARTS = 4


@pytest.mark.kernelbench
@pytest.mark.parametrize("part", range(PARTS))
def test_every_candidate_the_survey_offers_renders(part: int) -> None:
    from kernelopt_jupyter.problem import materialize, problem_from_source

    rc = _survey()
    paths = rc.problems(dev_dir())[part::PARTS]
    for path in paths:
        row, matches = rc.survey_problem(path)
        assert len(matches) == len(row.offered)
        assert row.kernels == any(m.kernels and not m.beside for m in matches)
        assert set(row.foreign) == {"+".join(m.names) for m in matches if m.beside}
        for match in matches:
            where = f"{row.problem}: {match.title}"
            compile(match.problem_source, where, "exec")
            compile(match.eager_source, where, "exec")
            if match.kernels:
                # A mixed candidate (PyTorch ops beside our kernels) is marked dispatch-only.
                assert is_dispatch_only(match.eager_source) == bool(match.beside), where
                lifted = lift_launch_configs(match.eager_source)
                assert analyze_candidate(lifted).violations == [], where
            problem = problem_from_source(match.problem_source, str(path), validate=False)
            module = load_source_module(match.eager_source, f"coverage_{next(_names)}")
            module.ModelNew(*materialize(problem).init_inputs())
    assert paths
