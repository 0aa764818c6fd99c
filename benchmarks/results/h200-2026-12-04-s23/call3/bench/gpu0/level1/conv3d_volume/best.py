# KernelOPT candidate c2 (agent: executor; plan: c0.p0; kernel)
# Mode: as constructed (the reference's own mode, as KernelBench runs it)
# Gates: static=pass, correctness=pass, fp64=pass, performance=pass
# Timing: 6.4795 ms; 1.02x eager; 1.02x torch.compile
# source key a95e926db6260ec8
"""Harvested from torch.compile (Inductor) for problem 'conv3d_volume'.

Editable candidate: each Triton kernel below is Inductor's generated code as a plain
@triton.jit function; vendor-library calls (cuBLAS/cuDNN) are kept and labelled.
Shapes are static: the code is specialised to the problem's input shapes.
Harvested on cuda (torch 2.11.0+cu130, triton 3.6.0).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

aten = torch.ops.aten

# Launch configurations (block sizes, warps, stages) per kernel: the Tuner edits
# only this dict; grids follow the block sizes through `meta`.
LAUNCH_CONFIGS = {
    'triton_poi_fused_convolution_0': {'XBLOCK': 1024, 'num_warps': 4, 'num_stages': 1},
}


# ---- Triton kernel triton_poi_fused_convolution_0 <- aten.convolution
@triton.jit
def triton_poi_fused_convolution_0(in_out_ptr0, in_ptr0, xnumel, XBLOCK: tl.constexpr):
    xnumel = 150994944
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x3 = xindex
    x1 = xindex // 294912 % 64
    tmp0 = tl.load(in_out_ptr0 + x3, None)
    tmp1 = tl.load(in_ptr0 + x1, None, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tl.store(in_out_ptr0 + x3, tmp2, None)


def reinterpret_tensor(tensor, size, stride, offset=0):
    """A view of ``tensor``'s storage with the given size, stride and extra offset."""
    return tensor.as_strided(size, stride, tensor.storage_offset() + offset)


def _declare(module, key, shape, dtype, parameter):
    """Register ``key`` (dotted, like the reference's state_dict) as a zero tensor."""
    *path, leaf = key.split(".")
    for part in path:
        child = module._modules.get(part)
        if child is None:
            child = nn.Module()
            module.add_module(part, child)
        module = child
    tensor = torch.zeros(shape, dtype=dtype)
    if parameter:
        module.register_parameter(leaf, nn.Parameter(tensor, requires_grad=False))
    else:
        module.register_buffer(leaf, tensor)


def _harvested_forward(args):
    """Inductor's call(), rewritten with plain launches and torch calls."""
    arg0_1, arg1_1, arg2_1, = args
    _device = arg2_1.device
    # vendor call (kept): aten.convolution via cuDNN <- aten.convolution
    buf0 = torch.convolution(arg2_1, arg0_1, stride=(1, 1, 1), padding=(1, 1, 1), dilation=(1, 1, 1), transposed=False, output_padding=(0, 0, 0), groups=1, bias=None)
    del arg0_1
    del arg2_1
    buf1 = buf0
    del buf0
    # Triton kernel triton_poi_fused_convolution_0 <- aten.convolution
    triton_poi_fused_convolution_0[lambda meta: (triton.cdiv(150994944, meta['XBLOCK']),)](buf1, arg1_1, 150994944, **LAUNCH_CONFIGS['triton_poi_fused_convolution_0'])
    del arg1_1
    return (buf1,)


class _ModelNewHeuristic(nn.Module):
    """The harvested model: the reference's parameters, Inductor's kernels."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        _declare(self, 'conv.weight', (64, 32, 3, 3, 3), torch.float32, True)
        _declare(self, 'conv.bias', (64,), torch.float32, True)

    def forward(self, x):
        with torch.no_grad():
            outs = _harvested_forward([self.conv.weight, self.conv.bias, x])
        return outs[0]


# --- KernelOPT: cuDNN algorithms by measurement (cudnn.benchmark during the forward) ---
class ModelNew(_ModelNewHeuristic):
    """The candidate above, with cuDNN's algorithms chosen by timing instead of heuristics."""

    def forward(self, *inputs):
        previous = torch.backends.cudnn.benchmark
        torch.backends.cudnn.benchmark = True
        try:
            return _ModelNewHeuristic.forward(self, *inputs)
        finally:
            torch.backends.cudnn.benchmark = previous


# ----------------------------------------------------------------------
# KernelOPT guard: the kernels above run only for the verified shapes, dtypes and
# device (cuda), in eval mode without autograd; any other call runs
# the reference. Use: model = kernelopt_guarded(Model(...)); model(x);
# model.kernelopt_path says which path the last call took.
# Verified shape sets: as given.
# `kernelopt export` verifies more shapes (docs/deploy.md).
# ----------------------------------------------------------------------

"""The guard: the verified kernels run only where they were verified, else the reference.

This file is rendered verbatim into ``best.py``, an accepted notebook cell and every export
(``render_guard`` in the guard module beside this one), so it imports only torch and the
standard library, passes the verifier's static rules (no try/except in functions, no
reflection, no reading of the environment, no string naming the harness) and has no
``from __future__`` import (it is appended below other code).

A call takes the kernel path only when every argument matches a verified *signature* (tensor
shape, dtype and contiguity; the value of a plain argument), the tensors are on the verified
device type, the module is in eval mode and no gradient is needed (the kernels have no
backward). Anything else runs the reference, and the guard says which path it took and why.
"""

from typing import Any

import torch

#: The dtypes a signature can name (its text is ``str(dtype)``); a table, not ``getattr``.
_KERNELOPT_DTYPES = {
    str(d): d
    for d in (
        torch.float64,
        torch.float32,
        torch.float16,
        torch.bfloat16,
        torch.int64,
        torch.int32,
        torch.int16,
        torch.int8,
        torch.uint8,
        torch.bool,
        torch.complex64,
        torch.complex128,
    )
}


def kernelopt_signature(args: Any) -> list[dict[str, Any]]:
    """One argument list as plain data: per tensor its shape, dtype and contiguity, per plain
    value (int, float, bool, None, str) the value itself, per anything else its type name."""
    spec: list[dict[str, Any]] = []
    for arg in args:
        if isinstance(arg, torch.Tensor):
            spec.append(
                {
                    "kind": "tensor",
                    "shape": [int(n) for n in arg.shape],
                    "dtype": str(arg.dtype),
                    "contiguous": bool(arg.is_contiguous()),
                }
            )
        elif arg is None or isinstance(arg, bool | int | float | str):
            spec.append({"kind": "value", "value": arg})
        else:
            spec.append({"kind": "other", "type": type(arg).__name__})
    return spec


def _kernelopt_spec_key(spec: dict[str, Any]) -> tuple[Any, ...]:
    """A hashable key of one argument's spec (the same for a call and a recorded signature)."""
    if spec["kind"] == "tensor":
        dtype = _KERNELOPT_DTYPES.get(spec["dtype"], spec["dtype"])
        return ("tensor", tuple(spec["shape"]), dtype, spec["contiguous"])
    if spec["kind"] == "value":
        return ("value", type(spec["value"]).__name__, spec["value"])
    return ("other", spec["type"])


def _kernelopt_call_key(args: Any) -> tuple[Any, ...]:
    """The key of a call's arguments, built without intermediate dicts (cheap per call)."""
    key: list[tuple[Any, ...]] = []
    for arg in args:
        if isinstance(arg, torch.Tensor):
            key.append(("tensor", tuple(arg.shape), arg.dtype, arg.is_contiguous()))
        elif arg is None or isinstance(arg, bool | int | float | str):
            key.append(("value", type(arg).__name__, arg))
        else:
            key.append(("other", type(arg).__name__))
    return tuple(key)


class KernelOPTGuard:
    """Decides per call whether the verified kernels may run; remembers the last decision.

    ``verified`` is plain data: ``{"device": "cuda" | "cpu", "signatures": [signature, ...]}``
    (a signature as :func:`kernelopt_signature` writes it). ``unavailable``, when given, is why
    no call may take the kernels here (an export says so on a CPU without Triton's
    interpreter).
    """

    def __init__(self, verified: dict[str, Any], unavailable: str | None = None) -> None:
        self.device = verified["device"]
        self.signatures = [list(s) for s in verified["signatures"]]
        self._index: dict[tuple[Any, ...], int] = {}
        for number, signature in enumerate(self.signatures):
            key = tuple(_kernelopt_spec_key(s) for s in signature)
            self._index.setdefault(key, number)
        self.unavailable = unavailable
        # The module mode the kernels were verified in: a problem's reference runs as
        # constructed (training mode, as KernelBench runs it) unless it declares eval.
        self.training = bool(verified.get("training", False))
        # The weights' dtypes the kernels were verified with (a module problem); a model
        # converted since (``.half()``) takes the reference until it is converted back.
        self.state_dtypes = set(verified.get("state_dtypes") or [])
        self.state_reason: str | None = None
        self.last_path: str | None = None
        self.last_reason = "not called yet"

    def choose(
        self, args: Any, *, training: bool = False, needs_grad: bool = False
    ) -> tuple[int, str]:
        """The verified signature's number for this call, or -1 and the reason to fall back."""
        reason: str | None = None
        number = -1
        devices = {a.device.type for a in args if isinstance(a, torch.Tensor)}
        if training != self.training:
            verified_in = "training" if self.training else "eval"
            now = "training" if training else "eval"
            reason = f"the module is in {now} mode; the kernels were verified in {verified_in} mode"
        elif needs_grad:
            reason = (
                "autograd needs gradients and the kernels have no backward "
                "(call it under torch.no_grad() or torch.inference_mode())"
            )
        elif devices and devices != {self.device}:
            reason = f"tensors on {sorted(devices)}; verified on {self.device}"
        elif self.state_reason is not None:
            reason = self.state_reason
        elif self.unavailable is not None:
            reason = self.unavailable
        else:
            number = self._index.get(_kernelopt_call_key(args), -1)
            if number < 0:
                reason = "these shapes, dtypes or values were not verified"
        self.last_path = "kernel" if number >= 0 else "reference"
        self.last_reason = "a verified signature" if reason is None else reason
        return number, self.last_reason

    def check_state(self, module: Any) -> None:
        """Note whether ``module``'s weights still have the verified dtypes (called when the
        guarded module is made and after each conversion, not per call)."""
        found = {str(t.dtype) for t in module.state_dict().values()}
        extra = found - self.state_dtypes
        self.state_reason = None
        if self.state_dtypes and extra:
            self.state_reason = (
                f"weights in {', '.join(sorted(extra))}; verified with "
                f"{', '.join(sorted(self.state_dtypes))}"
            )

    def describe(self) -> str:
        """The last call's path in one line: ``kernel`` or ``reference: <why>``."""
        if self.last_path is None:
            return self.last_reason
        if self.last_path == "kernel":
            return "kernel"
        return f"reference: {self.last_reason}"


def _kernelopt_tie(optimized: Any, reference: Any) -> None:
    """Make ``optimized`` use the reference's own parameter and buffer objects (one copy of the
    weights; later changes to the reference's weights are seen by the kernels too)."""
    for key, tensor in reference.state_dict(keep_vars=True).items():
        *path, leaf = key.split(".")
        owner = optimized
        for part in path:
            owner = owner._modules[part]
        if leaf in owner._parameters and isinstance(tensor, torch.nn.Parameter):
            owner._parameters[leaf] = tensor
        elif leaf in owner._buffers:
            owner._buffers[leaf] = tensor


class KernelOPTParts:
    """What a guarded module holds outside its module tree: the optimized module (its tensors
    are the reference's, tied, so the state_dict stays the reference's alone), an optional
    ``kernel_call(args, number)`` for the kernel path (an export routes it through its custom
    op) and an optional ``fallback`` standing in for the eager reference (a compiled one)."""

    def __init__(self, optimized: Any, kernel_call: Any = None, fallback: Any = None) -> None:
        self.optimized = optimized
        self.kernel_call = kernel_call
        self.fallback = fallback


class KernelOPTGuarded(torch.nn.Module):
    """A reference module whose calls take the verified kernels where the guard admits them;
    ``kernelopt_path`` says which path the last call took."""

    def __init__(self, reference: Any, optimized: Any, guard: Any, kernel_call: Any = None) -> None:
        super().__init__()
        self.reference = reference
        self.kernelopt_guard = guard
        self.kernelopt_parts = KernelOPTParts(optimized, kernel_call)
        guard.check_state(reference)

    @property
    def kernelopt_path(self) -> str:
        """The last call's path: ``kernel`` or ``reference: <why>``."""
        return self.kernelopt_guard.describe()

    def _apply(self, fn: Any, recurse: bool = True) -> Any:
        # .to()/.cuda()/.half() move the reference; the optimized module's own extra tensors
        # (anything not tied to the reference) must follow it, and buffers come back as new
        # tensor objects, so the tie is made again.
        self.kernelopt_parts.optimized._apply(fn, recurse)
        out = super()._apply(fn, recurse)
        _kernelopt_tie(self.kernelopt_parts.optimized, self.reference)
        self.kernelopt_guard.check_state(self.reference)
        return out

    def forward(self, *args: Any) -> Any:
        """Run the kernels on a verified call, the reference otherwise."""
        needs_grad = torch.is_grad_enabled() and (
            any(p.requires_grad for p in self.reference.parameters())
            or any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
        )
        training = self.reference.training
        number, _ = self.kernelopt_guard.choose(args, training=training, needs_grad=needs_grad)
        parts = self.kernelopt_parts
        if number < 0:
            return self.reference(*args) if parts.fallback is None else parts.fallback(*args)
        if parts.kernel_call is not None:
            return parts.kernel_call(args, number)
        return parts.optimized(*args)


class KernelOPTGuardedFunction:
    """A kernel problem's reference function guarded the same way (no weights, no modes)."""

    def __init__(self, reference: Any, optimized: Any, guard: Any, kernel_call: Any = None) -> None:
        self.reference = reference
        self.optimized = optimized
        self.kernelopt_guard = guard
        self.kernel_call = kernel_call
        self.fallback: Any = None

    @property
    def kernelopt_path(self) -> str:
        """The last call's path: ``kernel`` or ``reference: <why>``."""
        return self.kernelopt_guard.describe()

    def __call__(self, *args: Any) -> Any:
        """Run the kernels on a verified call, the reference otherwise."""
        needs_grad = torch.is_grad_enabled() and any(
            isinstance(a, torch.Tensor) and a.requires_grad for a in args
        )
        number, _ = self.kernelopt_guard.choose(args, needs_grad=needs_grad)
        if number < 0:
            fallback = self.fallback
            return self.reference(*args) if fallback is None else fallback(*args)
        if self.kernel_call is not None:
            return self.kernel_call(args, number)
        return self.optimized(*args)


def kernelopt_guard(
    reference: Any,
    optimized: Any,
    verified: dict[str, Any],
    init: Any = None,
    kernel_call: Any = None,
    unavailable: str | None = None,
) -> Any:
    """Guard ``reference`` (a module instance or the problem's function) with ``optimized``
    (the candidate's ``ModelNew`` class or its entry function) and the ``verified`` set.

    A module reference gets ``optimized(*init)`` with the reference's weights loaded strictly
    (as the verifier loaded them) and then tied to the reference's own tensors.
    ``unavailable`` as for :class:`KernelOPTGuard`.
    """
    guard = KernelOPTGuard(verified, unavailable)
    if not isinstance(reference, torch.nn.Module):
        if isinstance(optimized, type):
            optimized = optimized()
        return KernelOPTGuardedFunction(reference, optimized, guard, kernel_call)
    model = optimized(*(init or []))
    model.load_state_dict(reference.state_dict(), strict=True)
    _kernelopt_tie(model, reference)
    first = next(iter(reference.state_dict().values()), None)
    if first is not None:
        model.to(first.device)
    model.train(guard.training)  # as the verifier ran it: in the problem's mode
    return KernelOPTGuarded(reference, model, guard, kernel_call)


KERNELOPT_VERIFIED = {'device': 'cuda',
 'signatures': [[{'kind': 'tensor',
                  'shape': [8, 32, 32, 96, 96],
                  'dtype': 'torch.float32',
                  'contiguous': True}]],
 'shapes': ['as given'],
 'state_dtypes': ['torch.float32'],
 'training': True}
KERNELOPT_INIT = [32, 64]


def kernelopt_guarded(reference, *init):
    """The reference (a module instance or the problem's function) with the verified
    kernels swapped in where the guard admits the call (the verified set above)."""
    args = list(init) if init else KERNELOPT_INIT
    return kernelopt_guard(reference, ModelNew, KERNELOPT_VERIFIED, args)
