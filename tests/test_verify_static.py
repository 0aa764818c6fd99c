"""The static gate's source analysis: rules, aliases, what stays allowed. No worker starts."""

from __future__ import annotations

import time

import pytest
from _verify_corpus import DATA, assert_caught_by, verify

from kernelopt_jupyter.verify.static import analyze_candidate

# Candidates in tests/data/candidates/scaled_residual/ rejected from their text alone.
SOURCE_CASES = [
    ("bad_torch_only", "defines no @triton.jit kernel"),
    ("bad_calls_reference", "`Model`, the reference"),
    ("bad_try_except_fallback", "try/except inside a function"),
    ("bad_side_stream", "side streams are not allowed"),
    ("bad_thread", "threads and processes are not allowed"),
    ("bad_torch_compile", "uses torch.compile"),
    ("bad_monkeypatch", "assigns torch.allclose: monkeypatching"),
    ("bad_no_modelnew", "defines no class ModelNew"),
    ("bad_syntax_error", "syntax error on line"),
]


@pytest.mark.parametrize(("candidate", "detail"), SOURCE_CASES)
def test_source_rules_reject_cheats_without_running_them(candidate: str, detail: str) -> None:
    start = time.monotonic()
    report = verify("scaled_residual", candidate)
    assert_caught_by(report, "static", detail)
    static = report.gate("static")
    assert static is not None and static.metrics["phase"] == "source"
    assert time.monotonic() - start < 5.0  # no worker process was started


def _violations(source: str) -> list[str]:
    return analyze_candidate(source).violations


KERNEL = """
import torch
import triton
import triton.language as tl

@triton.jit
def k(x, n, B: tl.constexpr):
    pass
"""


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        ("import torch as T\nf = T.compile(lambda x: x)\n", "torch.compile"),
        ("from torch import compile as c\n", "torch.compile"),
        ("import torch._dynamo\n", "torch._dynamo"),
        ("from torch._inductor import compile_fx\n", "Inductor's compiler"),
        ("import torch\ntorch.cuda.set_stream(None)\n", "side streams"),
        ("from torch.cuda import Stream\ns = Stream()\n", "side streams"),
        ("from concurrent.futures import ThreadPoolExecutor\n", "threads and processes"),
        ("import os\nos.system('nvidia-smi')\n", "threads and processes"),
        ("import time\ntime.perf_counter = lambda: 0.0\n", "monkeypatching"),
        ("import torch\nsetattr(torch, 'allclose', None)\n", "setattr() on torch"),
        ("import torch.testing as tt\ntt.assert_close = print\n", "monkeypatching"),
        ("import torch\ndel torch.nn.functional.gelu\n", "deletes"),
        ("import torch\ntorch.backends.cudnn.deterministic = True\n", "monkeypatching"),
        ("import torch\ndel torch.backends.cudnn.benchmark\n", "deletes"),
        (
            "import torch\nwith torch.backends.cudnn.flags(allow_tf32=True):\n    pass\n",
            "process-wide setting",
        ),
        (
            "from torch.backends import cudnn\ncudnn.set_flags(True, False, 0, False, True)\n",
            "process-wide setting",
        ),
        ("import torch\ntorch.set_float32_matmul_precision('high')\n", "process-wide setting"),
        ("import torch\nf = getattr(torch, 'comp' + 'ile')\n", "computed name"),
        ("import torch\nf = getattr(torch, 'compile')\n", "torch.compile"),
        ("import gc\nobjs = gc.get_objects()\n", "harness"),
        ("import sys\nref = sys.modules\n", "harness"),
        ("import kernelopt_jupyter.verify\n", "harness"),
        ("x = __builtins__\n", "harness"),
        ("from .problem import Model\n", "relative import"),
        ("def f():\n    try:\n        pass\n    except* ValueError:\n        pass\n", "try/except"),
        (
            "import contextlib\ndef f():\n    with contextlib.suppress(Exception):\n        pass\n",
            "contextlib.suppress",
        ),
        ("async def f():\n    pass\n", "async functions"),
        ("class Model:\n    pass\n", "class named `Model`"),
        ("exec('print(1)')\n", "dynamic code"),
        # Issue 10: the hardened rules (aliases, re-exports, reflection, environment, detection).
        ("import os\nflag = os.environ.get('X')\n", "environment"),
        ("import os\nos.putenv('A', 'B')\n", "environment"),
        ("_t = torch\nf = _t.compile\n", "torch.compile"),
        ("_t = torch\n_t.allclose = lambda *a, **k: True\n", "monkeypatching"),
        ("mods = torch.sys.modules\n", "reaches the sys module through another module"),
        ("b = print.__self__\n", ".__self__"),
        ("g = k.__globals__\n", ".__globals__"),
        ("subs = object.__subclasses__()\n", ".__subclasses__"),
        ("f = getattr(torch, name)\n", "computed name"),
        ("f = getattr(obj, 'f_' + 'back')\n", "computed name"),
        ("x = getattr(fn, '__globals__')\n", "reflection"),
        ("import runpy\n", "harness"),
        ("import sys\nargs = sys.argv\n", "detect the harness"),
        ("def f():\n    return __name__ == 'kernelopt'\n", "outside the main guard"),
        ("MODE = 'TRITON_INTERPRET'\n", "must not detect"),
        ("from triton.runtime.interpreter import InterpretedFunction\n", "interpreter"),
        ("import os\npid = os.getppid()\n", "threads and processes"),
        ("data = open('/proc/self/environ').read()\n", "reads and writes no files"),
        ("import pathlib\n", "reads and writes no"),
        (
            "class Quiet:\n    def __enter__(self):\n        return self\n"
            "    def __exit__(self, *exc):\n        return True\n",
            "can return a true value",
        ),
        ("import signal\n", "threads and processes"),
        ("def f(frame):\n    return frame.f_back.f_locals\n", ".f_back"),
    ],
)
def test_each_rule_fires_on_the_construct_it_names(snippet: str, expected: str) -> None:
    found = _violations(KERNEL + snippet)
    assert any(expected in v for v in found), found


@pytest.mark.parametrize(
    "snippet",
    [
        # Inductor's runtime helpers are plain Triton code that harvested kernels import.
        "from torch._inductor.runtime import triton_helpers\n"
        "from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math\n",
        # Module-level try/except around an optional import is not a launch fallback.
        "try:\n    import numpy\nexcept ImportError:\n    numpy = None\n",
        # Attributes of self and of local objects are the candidate's own business.
        "class ModelNew(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.compile_flag = True\n        self.cfg = {}\n        self.cfg['x'] = 1\n",
        # CUDA graphs are allowed.
        "def cap(fn, x):\n    g = torch.cuda.CUDAGraph()\n    with torch.cuda.graph(g):\n"
        "        y = fn(x)\n    torch.cuda.synchronize()\n    return g, y\n",
        # re.compile and triton's own helpers are not torch.compile.
        "import re\npat = re.compile('x')\nn = triton.cdiv(10, 3)\n",
        # The main guard (a self-test at the bottom of a kernel file) is the honest __name__.
        "if __name__ == '__main__':\n    print(triton.cdiv(10, 3))\n",
        # A context manager whose __exit__ lets exceptions through.
        "class Timer:\n    def __enter__(self):\n        return self\n"
        "    def __exit__(self, *exc):\n        return False\n",
        # Plain attribute names that merely resemble reflection ones.
        "class ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
        "        return x.shape, type(self).__name__\n",
        # Reading a setting is fine (assigning it is monkeypatching).
        "tf32 = torch.backends.cuda.matmul.allow_tf32\n",
    ],
)
def test_legitimate_constructs_stay_allowed(snippet: str) -> None:
    assert _violations(KERNEL + snippet) == []


def test_analysis_reports_structure_markers() -> None:
    source = KERNEL + (
        "KERNELOPT_DISPATCH_ONLY = True\n"
        "def launch():\n    g = torch.cuda.CUDAGraph()\n"
        "class ModelNew(torch.nn.Module):\n    pass\n"
    )
    analysis = analyze_candidate(source)
    assert analysis.defines_model_new and analysis.dispatch_only_declared
    assert analysis.uses_cuda_graphs and analysis.jit_kernels == ["k"]
    entry = analyze_candidate("def axpy(x, y):\n    return x\n", kind="triton", entry="axpy")
    assert entry.defines_entry and not entry.defines_model_new


def test_every_good_corpus_candidate_is_clean() -> None:
    for path in sorted((DATA / "candidates").glob("*/good_*.py")):
        assert _violations(path.read_text()) == [], path.name


def test_compile_cache_key_covers_the_whole_source() -> None:
    from kernelopt_jupyter.verify.compile_check import _cache_key

    spec = {"qualname": "_k", "signature": {}, "constexprs": {}}
    base = KERNEL + "class ModelNew:\n    def forward(self):\n        return 1\n"
    # A plain def made a kernel by triton.jit(...) later: its body is a kernel's body too.
    plain = "def _k(x):\n    pass\n_k = triton.jit(_k)\n"
    assert _cache_key(base, spec) != _cache_key(base.replace("return 1", "return 2"), spec)
    assert _cache_key(plain, spec) != _cache_key(plain.replace("pass", "x + 1"), spec)


def test_on_gate_sees_every_gate_in_order() -> None:
    from _verify_corpus import problem

    from kernelopt_jupyter.verify import GateResult, VerifyOptions, verify_candidate

    seen: list[GateResult] = []
    source = (DATA / "candidates" / "scaled_residual" / "bad_torch_compile.py").read_text()
    report = verify_candidate(
        problem("scaled_residual"), source, VerifyOptions(device="cpu"), on_gate=seen.append
    )
    assert [g.name for g in seen] == ["static", "correctness", "fp64", "performance"]
    assert seen == report.gates and seen[0].status == "fail"
