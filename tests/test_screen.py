"""The Tuner's pre-screen (``analysis.screen``) in a real worker, on the CPU (Triton's
interpreter): every variant is built with the reference's weights and run, the ones that raise
are reported with their error, the others timed interleaved. The times mean nothing on the CPU
(the search screens only on the GPU); what is checked is the protocol."""

from __future__ import annotations

from _verify_corpus import DATA

from kernelopt_jupyter.analysis.screen import ScreenResult, screen_variants
from kernelopt_jupyter.problem import load_problem

GOOD = DATA / "candidates" / "scaled_residual" / "good_fused.py"


def test_the_screen_times_variants_that_run_and_reports_those_that_raise() -> None:
    problem = load_problem(DATA / "problems" / "scaled_residual.py")
    good = GOOD.read_text()
    raises = good.replace("class ModelNew", "class _Unused") + (
        "\n\nclass ModelNew(torch.nn.Module):\n"
        "    def __init__(self, features):\n"
        "        super().__init__()\n"
        "        self.scale = torch.nn.Parameter(torch.randn(features))\n\n"
        "    def forward(self, x, y):\n"
        "        raise RuntimeError('variant broke')\n"
    )
    missing_weight = good.replace("self.scale", "self.gain")
    result = screen_variants(problem, [good, raises, missing_weight], "cpu", time_limit_s=120)
    assert result.ok, result.detail
    assert result.rounds >= 10
    ms0, ms1, ms2 = result.ms
    assert ms0 is not None and ms0 > 0 and result.errors[0] is None
    assert ms1 is None and "variant broke" in str(result.errors[1])
    # a variant whose parameters are not the reference's cannot load its weights
    assert ms2 is None and "state_dict" in str(result.errors[2])
    assert result.fastest(2) == [0]


def test_a_screen_worker_that_dies_is_a_failed_screen_not_an_exception() -> None:
    problem = load_problem(DATA / "problems" / "scaled_residual.py")
    hang = GOOD.read_text() + "\n\nimport time\nwhile True:\n    time.sleep(1)\n"
    result = screen_variants(problem, [hang], "cpu", time_limit_s=8)
    assert isinstance(result, ScreenResult) and not result.ok
    assert "timed out" in result.detail
