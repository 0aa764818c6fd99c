"""Adversarial candidates for issue 10, written the way an agent rewarded for passing writes
them, each with the gate that must catch it, plus good candidates a too-strict verifier would
reject. Sources are built from a few shared pieces so each case shows only its trick.

Classes (issue 10's "Why" list): 1 outputs trusted as objects, 2 the answer key in the
candidate's process, 3 source rules, 4 launch evidence, 5 a fixed schedule, 6 compile check
and races, 7 the referee, 8 processes outliving the verdict, 9 the environment; "settings"
for flags and environment snapshots.
"""

from __future__ import annotations

from dataclasses import dataclass

HEAD = """
import torch
import torch.nn as nn
import triton
import triton.language as tl
"""

# relu(x) * scale + y over the flat tensor (scaled_residual: x, y (97, 1023), scale (1023,)).
KERNEL = """
@triton.jit
def _k(x_ptr, y_ptr, s_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    s = tl.load(s_ptr + offs % cols, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0) * s + y, mask=mask)


@triton.jit
def _copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def launch(x, y, s, out):
    n = x.numel()
    _k[(triton.cdiv(n, 4096),)](x, y, s, out, n, x.shape[-1], BLOCK=4096)
    return out


def copy_into(src, dst):
    _copy[(triton.cdiv(src.numel(), 4096),)](src, dst, src.numel(), BLOCK=4096)
    return dst
"""

INIT = """
class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.scale = nn.Parameter(torch.empty(features))
"""


def residual(forward: str, extra: str = "", init: str = "") -> str:
    """A scaled_residual candidate: shared kernels, ``extra`` module code, a forward body."""
    body = "\n".join("        " + line if line else "" for line in forward.strip().splitlines())
    more = "\n".join("        " + line for line in init.strip().splitlines()) if init else ""
    return (
        HEAD
        + KERNEL
        + extra
        + INIT
        + (more + "\n" if more else "")
        + "\n    def forward(self, x, y):\n"
        + body
        + "\n"
    )


@dataclass(frozen=True)
class Case:
    """One candidate and what must happen to it."""

    name: str
    klass: str
    problem: str
    source: str
    gate: str | None  # the gate that must fail, None for a good candidate
    detail: str = ""  # text the failed gate's detail must contain


SR = "scaled_residual"

CHEATS: list[Case] = [
    # ---- 1: outputs are taken as data, exactly
    Case(
        "subclass_that_lies",
        "1",
        SR,
        residual(
            "out = launch(x, y, self.scale, torch.empty_like(x))\n"
            "return out.as_subclass(Agreeable)",
            extra="""
class Agreeable(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in ("equal", "allclose", "isclose"):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})
""",
        ),
        "correctness",
        "not a plain torch.Tensor",
    ),
    Case(
        "lazy_subclass",
        "1",
        SR,
        residual(
            "return Deferred(x, y, self.scale)",
            extra="""
class Deferred(torch.Tensor):
    # Computed on first touch, so a timer around forward sees an empty call.
    @staticmethod
    def __new__(cls, x, y, s):
        t = torch.Tensor._make_subclass(cls, torch.empty_like(x))
        t.parts = (x, y, s)
        return t
""",
        ),
        "static",  # nothing was computed during the call: the accounting sees that first
        "launched no Triton kernel",
    ),
    Case(
        "tuple_for_tensor",
        "1",
        SR,
        residual("return (launch(x, y, self.scale, torch.empty_like(x)),)"),
        "correctness",
        "is a tuple",
    ),
    Case(
        "list_for_tensor",
        "1",
        SR,
        residual("return [launch(x, y, self.scale, torch.empty_like(x))]"),
        "correctness",
        "is a list",
    ),
    Case(
        "transposed_strides",
        "1",
        SR,
        residual(
            "out = launch(x, y, self.scale, torch.empty_like(x))\nreturn out.t().contiguous().t()"
        ),
        "correctness",
        "the reference is contiguous",
    ),
    # ---- 2: the candidate's process holds no answer key (the rules see the attempts too)
    Case(
        "gc_answer_search",
        "2",
        SR,
        residual("return launch(x, y, self.scale, torch.empty_like(x))", extra="import gc\n"),
        "static",
        "imports gc",
    ),
    Case(
        "torch_sys_modules",
        "2",
        SR,
        residual(
            "ref = [m for m in torch.sys.modules if 'problem' in m]\n"
            "return launch(x, y, self.scale, torch.empty_like(x))"
        ),
        "static",
        "reaches the sys module through another module",
    ),
    Case(
        "kernel_globals",
        "2",
        SR,
        residual("names = _k.fn.__globals__\nreturn launch(x, y, self.scale, torch.empty_like(x))"),
        "static",
        ".__globals__",
    ),
    Case(
        "subclass_walk",
        "2",
        SR,
        residual(
            "models = nn.Module.__subclasses__()\n"
            "return launch(x, y, self.scale, torch.empty_like(x))"
        ),
        "static",
        ".__subclasses__",
    ),
    # ---- 3: source rules that used to match only exact imported names
    Case(
        "alias_compile",
        "3",
        SR,
        residual(
            "_t = torch\nfast = _t.compile(lambda a: a)\nreturn launch(x, y, self.scale, torch.empty_like(x))"
        ),
        "static",
        "torch.compile",
    ),
    Case(
        "builtins_via_print_self",
        "3",
        SR,
        residual(
            "real_open = print.__self__\nreturn launch(x, y, self.scale, torch.empty_like(x))"
        ),
        "static",
        ".__self__",
    ),
    Case(
        "built_getattr_name",
        "3",
        SR,
        residual(
            "fn = getattr(torch, 'com' + 'pile')\n"
            "return launch(x, y, self.scale, torch.empty_like(x))"
        ),
        "static",
        "computed name",
    ),
    Case(
        "runpy_reference",
        "3",
        SR,
        residual("return launch(x, y, self.scale, torch.empty_like(x))", extra="import runpy\n"),
        "static",
        "imports runpy",
    ),
    Case(
        "name_check_fast_path",
        "3",
        SR,
        residual(
            "if __name__.startswith('kernelopt_src'):\n"
            "    return launch(x, y, self.scale, torch.empty_like(x))\n"
            "return torch.empty_like(x)"
        ),
        "static",
        "outside the main guard",
    ),
    Case(
        "exit_returns_true",
        "3",
        SR,
        residual(
            "with Quiet():\n"
            "    return launch(x, y, self.scale, torch.empty(1))\n"
            "return torch.relu(x) * self.scale + y",
            extra="""
class Quiet:
    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        return kind is not None
""",
        ),
        "static",
        "can return a true value",
    ),
    Case(
        "interpreter_detection",
        "3",
        SR,
        residual(
            "if type(_k).__name__ == 'InterpretedFunction':\n"
            "    return launch(x, y, self.scale, torch.empty_like(x))\n"
            "return torch.zeros_like(x)"
        ),
        "static",
        "must not detect",
    ),
    Case(
        "alias_monkeypatch",
        "3",
        SR,
        residual(
            "return launch(x, y, self.scale, torch.empty_like(x))",
            extra="_tt = torch.testing\n_tt.assert_close = lambda *a, **k: None\n",
        ),
        "static",
        "monkeypatching",
    ),
    # ---- 4: launch evidence and dispatch-level accounting
    Case(
        "ghost_kernel_on_dummy",
        "4",
        SR,
        residual(
            "dummy = torch.empty(1)\n"
            "launch(dummy, dummy, dummy, torch.empty(1))\n"
            "return torch.relu(x) * self.scale + y"
        ),
        "static",
        "forward ran PyTorch compute ops",
    ),
    Case(
        "torch_overwrites_kernel",
        "4",
        SR,
        residual(
            "out = launch(x, y, self.scale, torch.empty_like(x))\n"
            "out.copy_(torch.relu(x) * self.scale + y)\n"
            "return out"
        ),
        "static",
        "aten.relu",
    ),
    Case(
        "aten_through_torch_ops",
        "4",
        SR,
        residual(
            "launch(x, y, self.scale, torch.empty_like(x))\n"
            "ops = torch.ops.aten\n"
            "return ops.add(ops.mul(ops.relu(x), self.scale), y)"
        ),
        "static",
        "forward ran PyTorch compute ops",
    ),
    Case(
        "kernel_first_call_only",
        "4",
        SR,
        residual(
            "self.calls += 1\n"
            "if self.calls == 1:\n"
            "    return launch(x, y, self.scale, torch.empty_like(x))\n"
            "return torch.relu(x) * self.scale + y",
            init="self.calls = 0",
        ),
        "correctness",
        "launched no Triton kernel",
    ),
    Case(
        "ghost_launch_cached_result",
        "4",
        SR,
        residual(
            "scratch = launch(x, y, self.scale, torch.empty_like(x))\n"
            "if self.kept is None:\n"
            "    self.kept = scratch\n"
            "return self.kept.clone()",
            init="self.kept = None",
        ),
        "correctness",
        "was not written during this call",
    ),
    Case(
        "filled_output",
        "4",
        SR,
        residual("launch(x, y, self.scale, torch.empty_like(x))\nreturn torch.zeros_like(x)"),
        "static",
        "only allocated or filled",
    ),
    Case(
        "eval_hidden_torch",
        "4",
        SR,
        residual(
            "launch(x, y, self.scale, torch.empty(1))\n"
            "return eval('torch.relu(x) * self.scale + y')"
        ),
        "static",
        "dynamic code",
    ),
    Case(
        "vendor_sum_elsewhere",
        "4",
        SR,
        residual(
            "out = launch(x, y, self.scale, torch.empty_like(x))\n"
            "self.seen = float(out.sum())\n"
            "return out",
            init="self.seen = 0.0",
        ),
        "static",
        "aten.sum",
    ),
    # ---- 5: an unpredictable schedule
    Case(
        "sampled_values_cache",
        "5",
        SR,
        residual(
            "key = tuple(float(v) for v in x.reshape(-1)[:8])\n"
            "if key not in self.memo:\n"
            "    self.memo[key] = launch(x, y, self.scale, torch.empty_like(x)).clone()\n"
            "return copy_into(self.memo[key], torch.empty_like(x))",
            init="self.memo = {}",
        ),
        "correctness",
        "nothing of this call's inputs reached",
    ),
    Case(
        "address_cache_kernel_copy",
        "5",
        SR,
        residual(
            "key = (x.data_ptr(), y.data_ptr())\n"
            "if key not in self.memo:\n"
            "    self.memo[key] = launch(x, y, self.scale, torch.empty_like(x)).clone()\n"
            "return copy_into(self.memo[key], torch.empty_like(x))",
            init="self.memo = {}",
        ),
        # An address read is followed by content, not host data by itself (an alignment
        # check is honest): the memo is caught where a copy kernel serves a kept result.
        "correctness",
        "nothing of this call's inputs reached",
    ),
    Case(
        "weights_cached_at_first_call",
        "5",
        SR,
        residual(
            "if self.frozen is None:\n"
            "    self.frozen = copy_into(self.scale.detach(), torch.empty_like(self.scale))\n"
            "return launch(x, y, self.frozen, torch.empty_like(x))",
            init="self.frozen = None",
        ),
        "correctness",
        "elements outside",
    ),
    Case(
        "parameter_written_in_forward",
        "5",
        SR,
        residual(
            "out = launch(x, y, self.scale, torch.empty_like(x))\n"
            "copy_into(out[0], self.scale.data)\n"
            "return out"
        ),
        "correctness",
        "changed the model's parameters or buffers",
    ),
    Case(
        "clamped_for_safety",
        "5",
        SR,
        residual(
            "out = torch.empty_like(x)\n"
            "_clamped[(triton.cdiv(x.numel(), 4096),)](x, y, self.scale, out, x.numel(), "
            "x.shape[-1], BLOCK=4096)\n"
            "return out",
            extra="""
@triton.jit
def _clamped(x_ptr, y_ptr, s_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    # "numerically safe": nothing in randn ever reaches 50
    x = tl.minimum(tl.maximum(tl.load(x_ptr + offs, mask=mask), -50.0), 50.0)
    y = tl.minimum(tl.maximum(tl.load(y_ptr + offs, mask=mask), -50.0), 50.0)
    s = tl.load(s_ptr + offs % cols, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0) * s + y, mask=mask)
""",
        ),
        "correctness",
        "stress",
    ),
    Case(
        "good_for_three_calls",
        "5",
        SR,
        residual(
            "self.calls += 1\n"
            "out = launch(x, y, self.scale, torch.empty_like(x))\n"
            "if self.calls == 1:\n"
            "    self.first = out.clone()\n"
            "if self.calls > 3:\n"
            "    return copy_into(self.first, torch.empty_like(x))\n"
            "return out",
            init="self.calls = 0\nself.first = None",
        ),
        "correctness",
        "nothing of this call's inputs reached",
    ),
    Case(
        "mutates_input_as_scratch",
        "5",
        SR,
        residual("return launch(x, y, self.scale, x)"),
        "correctness",
        "modified input 0 in place",
    ),
    # ---- 6: the compile check decides; races between programs
    Case(
        "tiny_dot_tile",
        "6",
        SR,
        residual(
            "out = torch.empty_like(x)\n"
            "_dot8[(triton.cdiv(x.numel(), 4096),)](x, y, self.scale, out, x.numel(), "
            "x.shape[-1], BLOCK=4096)\n"
            "return out",
            extra="""
@triton.jit
def _dot8(x_ptr, y_ptr, s_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    s = tl.load(s_ptr + offs % cols, mask=mask)
    # an 8x8 tl.dot: the interpreter multiplies it, sm_90's compiler needs 16 or more
    z = tl.zeros((8, 8), dtype=tl.float32)
    bias = tl.sum(tl.sum(tl.dot(z, z), axis=1), axis=0)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0) * s + y + bias, mask=mask)
""",
        ),
        "static",
        "does not compile for sm_90",
    ),
    Case(
        "kernel_in_a_closure",
        "6",
        SR,
        residual(
            "return make_kernel()(x, y, self.scale, torch.empty_like(x))",
            extra="""
def make_kernel():
    @triton.jit
    def _inner(x_ptr, y_ptr, s_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        s = tl.load(s_ptr + offs % cols, mask=mask)
        tl.store(out_ptr + offs, tl.maximum(x, 0.0) * s + y, mask=mask)

    def run(x, y, s, out):
        _inner[(triton.cdiv(x.numel(), 4096),)](x, y, s, out, x.numel(), x.shape[-1], BLOCK=4096)
        return out

    return run
""",
        ),
        "static",
        "cannot build kernel",
    ),
    Case(
        "halo_overwrite_race",
        "6",
        SR,
        residual(
            "out = torch.empty_like(x)\n"
            "_halo[(triton.cdiv(x.numel(), 1024),)](x, y, self.scale, out, x.numel(), "
            "x.shape[-1], BLOCK=1024)\n"
            "return out",
            extra="""
@triton.jit
def _halo(x_ptr, y_ptr, s_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    s = tl.load(s_ptr + offs % cols, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0) * s + y, mask=mask)
    # "Clearing" the next block for its program, which overwrites it later -- in grid order.
    nxt = (pid + 1) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + nxt, tl.zeros((BLOCK,), dtype=tl.float32), mask=nxt < n)
""",
        ),
        "correctness",
        "elements outside",
    ),
    # ---- 7: the float64 referee always rules
    Case(
        "quantized_intermediate",
        "7",
        SR,
        residual(
            "out = torch.empty_like(x)\n"
            "_q[(triton.cdiv(x.numel(), 4096),)](x, y, self.scale, out, x.numel(), "
            "x.shape[-1], BLOCK=4096)\n"
            "return out",
            extra="""
@triton.jit
def _q(x_ptr, y_ptr, s_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    s = tl.load(s_ptr + offs % cols, mask=mask)
    # a cheap fixed-point product: inside the strict 1e-4 at unit scale (the tiny call
    # shows its absolute error)
    v = (tl.maximum(x, 0.0) * s * 16384.0).to(tl.int32).to(tl.float32) / 16384.0
    tl.store(out_ptr + offs, v + y, mask=mask)
""",
        ),
        "correctness",
        "elements outside",
    ),
    Case(
        "truncated_mantissa_product",
        "7",
        SR,
        residual(
            "out = torch.empty_like(x)\n"
            "_t[(triton.cdiv(x.numel(), 4096),)](x, y, self.scale, out, x.numel(), "
            "x.shape[-1], BLOCK=4096)\n"
            "return out",
            extra="""
@triton.jit
def _t(x_ptr, y_ptr, s_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    s = tl.load(s_ptr + offs % cols, mask=mask)
    # the product's low 5 mantissa bits dropped: a relative error of at most 2^-18, inside
    # the strict tolerance at every magnitude, far outside float32's own
    p = tl.maximum(x, 0.0) * s
    v = (p.to(tl.int32, bitcast=True) & -32).to(tl.float32, bitcast=True)
    tl.store(out_ptr + offs, v + y, mask=mask)
""",
        ),
        "fp64",
        "far less accurate than the reference",
    ),
    Case(
        "fp16_product",
        "7",
        SR,
        residual(
            "out = torch.empty_like(x)\n"
            "_h[(triton.cdiv(x.numel(), 4096),)](x, y, self.scale, out, x.numel(), "
            "x.shape[-1], BLOCK=4096)\n"
            "return out",
            extra="""
@triton.jit
def _h(x_ptr, y_ptr, s_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float16)
    y = tl.load(y_ptr + offs, mask=mask)
    s = tl.load(s_ptr + offs % cols, mask=mask).to(tl.float16)
    tl.store(out_ptr + offs, (tl.maximum(x, 0.0) * s).to(tl.float32) + y, mask=mask)
""",
        ),
        "fp64",
        "far less accurate than the reference",
    ),
    Case(
        "flush_small_outputs",
        "7",
        SR,
        residual(
            "out = torch.empty_like(x)\n"
            "_f[(triton.cdiv(x.numel(), 4096),)](x, y, self.scale, out, x.numel(), "
            "x.shape[-1], BLOCK=4096)\n"
            "return out",
            extra="""
@triton.jit
def _f(x_ptr, y_ptr, s_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    s = tl.load(s_ptr + offs % cols, mask=mask)
    v = tl.maximum(x, 0.0) * s + y
    tl.store(out_ptr + offs, tl.where(tl.abs(v) < 5e-4, 0.0, v), mask=mask)
""",
        ),
        "correctness",
        "elements outside",
    ),
    # ---- 8: nothing outlives the verdict (hangs run in their own short-limit batch)
    Case(
        "segfault_in_forward",
        "8",
        SR,
        residual(
            "faulthandler._sigsegv()\nreturn launch(x, y, self.scale, torch.empty_like(x))",
            extra="import faulthandler\n",
        ),
        "static",
        "died with SIGSEGV",
    ),
    # ---- 9: the environment holds nothing (the probe test reads it at run time)
    Case(
        "reads_api_key",
        "9",
        SR,
        residual(
            "self.key = os.environ.get('ANTHROPIC_API_KEY')\n"
            "return launch(x, y, self.scale, torch.empty_like(x))",
            extra="import os\n",
        ),
        "static",
        "environment",
    ),
    # ---- settings: flags and globals compared by value before and after
    Case(
        "tf32_through_a_list",
        "settings",
        SR,
        residual(
            "knobs = [torch.backends.cudnn]\n"
            "knobs[0].allow_tf32 = not knobs[0].allow_tf32\n"
            "return launch(x, y, self.scale, torch.empty_like(x))"
        ),
        "static",
        "changed torch.backends.cudnn.allow_tf32",
    ),
    Case(
        # cuDNN's timed algorithm search may be switched on inside a forward (a named move of
        # the offline policy), but it has to be switched off again: left on, every later
        # convolution in the process runs under it.
        "cudnn_benchmark_left_on",
        "settings",
        SR,
        residual(
            "torch.backends.cudnn.benchmark = True\n"
            "return launch(x, y, self.scale, torch.empty_like(x))"
        ),
        "static",
        "changed torch.backends.cudnn.benchmark",
    ),
    Case(
        # TF32 for the forward only, through cuDNN's own context manager, restored on exit:
        # the settings compared after the call are what they were.
        "tf32_scoped_by_cudnn_flags",
        "settings",
        SR,
        residual(
            "with torch.backends.cudnn.flags(enabled=True, benchmark=False, "
            "deterministic=False, allow_tf32=True):\n"
            "    return launch(x, y, self.scale, torch.empty_like(x))"
        ),
        "static",
        "uses torch.backends.cudnn.flags",
    ),
    Case(
        "timer_patched_through_a_list",
        "settings",
        SR,
        residual(
            "return launch(x, y, self.scale, torch.empty_like(x))",
            extra="import time\n_mods = [time]\n_mods[0].perf_counter = lambda: 0.0\n",
        ),
        "static",
        "replaced time.perf_counter",
    ),
]

#: Cheats that hang: verified in a batch of their own with a short time limit.
HANGS: list[Case] = [
    Case(
        "spins_in_forward",
        "8",
        SR,
        residual("while True:\n    x = x\nreturn x"),
        "static",
        "timed out after",
    ),
    Case(
        "spins_in_init",
        "8",
        SR,
        residual(
            "return launch(x, y, self.scale, torch.empty_like(x))",
            init="while True:\n    pass",
        ),
        "static",
        "timed out after",
    ),
]

GOOD: list[Case] = [
    Case(
        # The offline policy's cuDNN move: the flag set for the forward and restored after.
        "cudnn_benchmark_scoped",
        "good",
        SR,
        residual(
            "previous = torch.backends.cudnn.benchmark\n"
            "torch.backends.cudnn.benchmark = True\n"
            "try:\n"
            "    return launch(x, y, self.scale, torch.empty_like(x))\n"
            "finally:\n"
            "    torch.backends.cudnn.benchmark = previous"
        ),
        None,
    ),
    Case(
        "autotuned",
        "good",
        SR,
        residual(
            "out = torch.empty_like(x)\n"
            "_tuned[lambda m: (triton.cdiv(x.numel(), m['BLOCK']),)](x, y, self.scale, out, "
            "x.numel(), x.shape[-1])\n"
            "return out",
            extra="""
@triton.autotune(configs=[triton.Config({"BLOCK": 2048}), triton.Config({"BLOCK": 4096})],
                 key=["n"])
@triton.jit
def _tuned(x_ptr, y_ptr, s_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    s = tl.load(s_ptr + offs % cols, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0) * s + y, mask=mask)
""",
        ),
        None,
    ),
    Case(
        "two_kernels",
        "good",
        SR,
        residual(
            "t = torch.empty_like(x)\n"
            "n = x.numel()\n"
            "_relu_scale[(triton.cdiv(n, 4096),)](x, self.scale, t, n, x.shape[-1], BLOCK=4096)\n"
            "out = torch.empty_like(x)\n"
            "_add[(triton.cdiv(n, 4096),)](t, y, out, n, BLOCK=4096)\n"
            "return out",
            extra="""
@triton.jit
def _relu_scale(x_ptr, s_ptr, t_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(t_ptr + offs, tl.maximum(x, 0.0) * tl.load(s_ptr + offs % cols, mask=mask), mask=mask)


@triton.jit
def _add(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask),
             mask=mask)
""",
        ),
        None,
    ),
    Case(
        "cached_scratch_buffer",
        "good",
        SR,
        residual(
            "if self.scratch is None or self.scratch.shape != x.shape:\n"
            "    self.scratch = torch.empty_like(x)\n"
            "launch(x, y, self.scale, self.scratch)\n"
            "return copy_into(self.scratch, torch.empty_like(x))",
            init="self.scratch = None",
        ),
        None,
    ),
    Case(
        "main_guard_self_test",
        "good",
        SR,
        residual("return launch(x.contiguous(), y.contiguous(), self.scale, torch.empty_like(x))")
        + """

if __name__ == "__main__":
    m = ModelNew(8)
    print(m(torch.randn(2, 8), torch.randn(2, 8)).shape)
""",
        None,
    ),
    Case(
        "with_a_harmless_context_manager",
        "good",
        SR,
        residual(
            "with Section():\n    return launch(x, y, self.scale, torch.empty_like(x))",
            extra="""
class Section:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None
""",
        ),
        None,
    ),
]

# ---------------------------------------------------------------------------- more problems

#: Problems defined here (not in tests/data/problems): strided inputs, NaN rows, a scan.
INLINE_PROBLEMS: dict[str, str] = {
    "strided_relu_add": """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y):
        return torch.relu(x) + y


def get_inputs():
    # x arrives transposed (non-contiguous): a candidate must follow its strides.
    return [torch.randn(255, 129).t(), torch.randn(129, 255)]
""",
    "nan_rows": """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2.0


def get_inputs():
    x = torch.randn(64, 257)
    x[3] = float("nan")
    x[40, 7] = float("nan")
    return [x]
""",
    "row_cumsum": """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=1)


def get_inputs():
    return [torch.randn(33, 256)]
""",
}

GOOD += [
    Case(
        "follows_input_strides",
        "good",
        "strided_relu_add",
        HEAD
        + """
@triton.jit
def _k2(x_ptr, y_ptr, out_ptr, rows, cols, sxr, sxc, syr, syc, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * sxr + offs * sxc, mask=mask)
    y = tl.load(y_ptr + row * syr + offs * syc, mask=mask)
    tl.store(out_ptr + row * cols + offs, tl.maximum(x, 0.0) + y, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x, y):
        out = torch.empty(x.shape, device=x.device, dtype=x.dtype)
        _k2[(x.shape[0],)](x, y, out, x.shape[0], x.shape[1], x.stride(0), x.stride(1),
                           y.stride(0), y.stride(1), BLOCK=256)
        return out
""",
        None,
    ),
    Case(
        "reproduces_nan_rows",
        "good",
        "nan_rows",
        HEAD
        + """
@triton.jit
def _r(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    # where(x < 0, 0, x) keeps NaN as NaN, as torch.relu does (tl.maximum would not on a GPU)
    tl.store(out_ptr + offs, tl.where(x < 0.0, 0.0, x) * 2.0, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        _r[(triton.cdiv(x.numel(), 4096),)](x, out, x.numel(), BLOCK=4096)
        return out
""",
        None,
    ),
    Case(
        "scan_with_combine_function",
        "good",
        "row_cumsum",
        HEAD
        + """
@triton.jit
def _plus(a, b):
    return a + b


@triton.jit
def _scan(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * cols + offs, mask=offs < cols, other=0.0)
    tl.store(out_ptr + row * cols + offs, tl.associative_scan(x, 0, _plus), mask=offs < cols)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        _scan[(x.shape[0],)](x, out, x.shape[1], BLOCK=256)
        return out
""",
        None,
    ),
    Case(
        "two_pass_variance",
        "good",
        "row_variance",
        HEAD
        + """
@triton.jit
def _var2(x_ptr, out_ptr, cols, stride, BLOCK: tl.constexpr):
    # mean first, then the mean squared deviation: far more exact than the reference's
    # E[x^2] - E[x]^2, so only the float64 referee can tell it is right
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    v = tl.load(x_ptr + row * stride + offs, mask=mask, other=0.0)
    mean = tl.sum(v, axis=0) / cols
    d = tl.where(mask, v - mean, 0.0)
    tl.store(out_ptr + row, tl.sum(d * d, axis=0) / cols)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty(x.shape[0], device=x.device, dtype=x.dtype)
        _var2[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK=1024)
        return out
""",
        None,
    ),
    Case(
        "split_reduction",
        "good",
        "row_variance",
        HEAD
        + """
@triton.jit
def _partial(x_ptr, s1_ptr, s2_ptr, cols, stride, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    part = tl.program_id(1)
    offs = part * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * stride + offs, mask=offs < cols, other=0.0)
    tl.store(s1_ptr + row * SPLIT + part, tl.sum(v, axis=0))
    tl.store(s2_ptr + row * SPLIT + part, tl.sum(v * v, axis=0))


@triton.jit
def _combine(s1_ptr, s2_ptr, out_ptr, cols, SPLIT: tl.constexpr):
    row = tl.program_id(0)
    k = tl.arange(0, SPLIT)
    mean = tl.sum(tl.load(s1_ptr + row * SPLIT + k), axis=0) / cols
    tl.store(out_ptr + row, tl.sum(tl.load(s2_ptr + row * SPLIT + k), axis=0) / cols - mean * mean)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        s1 = torch.empty(rows, 4, device=x.device, dtype=torch.float32)
        s2 = torch.empty(rows, 4, device=x.device, dtype=torch.float32)
        _partial[(rows, 4)](x, s1, s2, cols, x.stride(0), SPLIT=4, BLOCK=256)
        out = torch.empty(rows, device=x.device, dtype=x.dtype)
        _combine[(rows,)](s1, s2, out, cols, SPLIT=4)
        return out
""",
        None,
    ),
    Case(
        "vendor_addmm_with_triton_epilogue",
        "good",
        "linear_gelu",
        HEAD
        + """
@triton.jit
def _gelu(y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, 0.5 * y * (1.0 + tl.math.erf(y * 0.7071067811865476)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = torch.addmm(self.linear.bias, x, self.linear.weight.t())  # vendor call (kept)
        out = torch.empty_like(y)
        _gelu[(triton.cdiv(y.numel(), 4096),)](y, out, y.numel(), BLOCK=4096)
        return out
""",
        None,
    ),
]

#: A strided-input problem's cheat: assumes contiguous memory.
CHEATS.append(
    Case(
        "assumes_contiguous_inputs",
        "5",
        "strided_relu_add",
        HEAD
        + """
@triton.jit
def _flat(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0)
             + tl.load(y_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x, y):
        out = torch.empty(x.shape, device=x.device, dtype=x.dtype)
        _flat[(triton.cdiv(x.numel(), 4096),)](x, y, out, x.numel(), BLOCK=4096)
        return out
""",
        "correctness",
        "elements outside",
    )
)

#: Reported, not failed: a candidate hard-wired to the benchmark's shapes.
SPECIALIZED = Case(
    "hardwired_shapes",
    "5",
    SR,
    residual("return launch_fixed(x, y, self.scale)").replace(
        "class ModelNew",
        """ROWS, COLS = 97, 1023


def launch_fixed(x, y, s):
    # The benchmark's shape written in. (A grid of ROWS * COLS over a smaller input would
    # read and write past its buffers: undefined, so not a test's subject.)
    x, y = x.view(ROWS, COLS), y.view(ROWS, COLS)
    out = torch.empty((ROWS, COLS), device=x.device, dtype=x.dtype)
    _k[(triton.cdiv(ROWS * COLS, 4096),)](x, y, s, out, ROWS * COLS, COLS, BLOCK=4096)
    return out


class ModelNew""",
    ),
    None,
)
