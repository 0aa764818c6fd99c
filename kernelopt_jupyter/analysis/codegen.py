"""Turn Inductor's generated module into an editable, standalone ``ModelNew`` candidate.

Pure text work (no torch import): the worker captures the generated module and the facts only a
run can give (chosen launch configs, which graph input is which parameter), and this module
rewrites the code:

* each ``async_compile.triton(...)`` kernel becomes a plain ``@triton.jit`` function (Inductor's
  heuristics decorator removed; ``tl_math`` -> ``tl.math``; NaN-propagating
  ``triton_helpers.maximum/minimum`` -> ``tl.maximum/minimum``); ``triton_helpers`` is imported
  only if a kernel still needs it;
* each ``K.run(..., stream=...)`` becomes ``K[grid](..., **LAUNCH_CONFIGS["K"])`` with the grid a
  ``lambda meta`` of the block sizes (docs/engine.md, the launch-config convention);
* each ``extern_kernels.X(...)`` becomes the public ``torch.X(...)`` call, labelled as a kept
  vendor call; allocation and view helpers become plain torch calls; size asserts, device guards
  and raw-stream plumbing are dropped (a launch uses torch's current stream, as Inductor's does).

Generated code differs between torch 2.11-2.13: ``call`` is a module function or a ``Runner``
method, launches sit inside ``with torch.cuda._DeviceGuard`` on CUDA, numel arguments are named
``rnumel`` or ``r0_numel``, persistent reductions fix ``R0_BLOCK`` in the body. Every rule below
matches by shape, not by version; what it cannot translate raises :class:`HarvestError`.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field
from typing import Any

from kernelopt_jupyter.analysis.tl_helpers import HELPERS, helpers_source, uses_libdevice
from kernelopt_jupyter.launch_configs import format_launch_configs


class HarvestError(Exception):
    """The generated code uses something the harvest cannot turn into a standalone candidate."""


#: aten ops served by a vendor library (cuBLAS, cuDNN, flash/efficient attention kernels).
VENDOR_OPS = (
    "mm",
    "addmm",
    "bmm",
    "baddbmm",
    "convolution",
    "_convolution",
    "cudnn_convolution",
    "_scaled_mm",
    "_int_mm",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_flash_attention_for_cpu",
    "_flash_attention_forward",
    "_efficient_attention_forward",
    "_cudnn_rnn",
    "mkldnn_rnn_layer",
    "linear",
    "matmul",
)

_LIBRARY = {
    "mm": "cuBLAS",
    "addmm": "cuBLAS",
    "bmm": "cuBLAS",
    "baddbmm": "cuBLAS",
    "_scaled_mm": "cuBLASLt",
    "_int_mm": "cuBLAS",
    "linear": "cuBLAS",
    "matmul": "cuBLAS",
    "convolution": "cuDNN",
    "_convolution": "cuDNN",
    "cudnn_convolution": "cuDNN",
}

_DROP_CALLS = {"assert_size_stride", "assert_alignment", "set_device", "clear", "check"}
_ALLOC_CALLS = {
    "empty_strided_cuda",
    "empty_strided_cpu",
    "empty_strided_xpu",
    "empty_strided_mtia",
    "empty_strided",
}
_BLOCK_RE = re.compile(r"^[XYZ]BLOCK$|^R\d*_?BLOCK$")


def library_of(op: str) -> str:
    """The vendor library behind an aten op name (``"vendor"`` where not known)."""
    if "attention" in op:
        return "attention kernel (flash/efficient/cuDNN)"
    return _LIBRARY.get(op, "vendor")


def library_on(library: str, device: str) -> str:
    """How a kept vendor call's library is named on ``device``. The harvest labels a call by
    the library a GPU would use; on the CPU the same aten op runs ATen's own CPU kernel, so
    calling it cuBLAS or cuDNN there would claim what did not run."""
    if device != "cpu" or library in ("", "aten"):
        return library
    return f"CPU ATen; {library} on GPU"


def is_vendor_op(op: str) -> bool:
    """Whether an aten op name (``aten.addmm.default``, ``addmm``) is a vendor-library call."""
    base = op.split(".")[-2] if op.count(".") >= 2 else op.split(".")[-1]
    base = base.removeprefix("aten::")
    return base in VENDOR_OPS


@dataclass
class LaunchInfo:
    """What a run told us about one Triton kernel: the config Inductor settled on, and more."""

    name: str
    config: dict[str, int]
    num_warps: int = 4
    num_stages: int = 1
    grid_type: str | None = None
    heuristic: str = ""
    count: int = 0
    arg_bytes: list[int] = field(default_factory=list)
    numels: dict[str, int] = field(default_factory=dict)
    extra_args: int = 0  # trailing launch arguments that are the grid itself (FixedGrid)


@dataclass
class ModelFacts:
    """The reference module's interface: state, graph-input sources, forward arguments, outputs."""

    state: list[tuple[str, list[int], str, bool]]  # key, shape, dtype name, is_parameter
    arg_sources: list[tuple[str, str | int]]  # ("param"|"buffer", key) or ("input", index)
    forward_params: list[str] | None  # None: forward(*inputs)
    n_inputs: int
    outputs: tuple[str, int]  # ("tensor", 1) | ("tuple", n) | ("list", n)


@dataclass
class HarvestedCode:
    """The candidate source plus its parts, for the agents and the dispatch map."""

    source: str
    kernels: list[dict[str, Any]]
    vendor_calls: list[dict[str, Any]]
    other_calls: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- parsing


def _comments_before(lines: list[str], start: int, stop: int) -> list[str]:
    """Comment lines in ``lines[start:stop]`` (0-based), without their leading ``#``."""
    out = []
    for line in lines[start:stop]:
        text = line.strip()
        if text.startswith("#"):
            out.append(text.lstrip("#").strip())
    return out


def _aten_ops(comments: list[str]) -> list[str]:
    for text in comments:
        m = re.search(r"Original ATen:\s*\[(.*?)\]", text)
        if m:
            return [op.strip() for op in m.group(1).split(",") if op.strip()]
    return []


@dataclass
class _Kernel:
    name: str
    source: str
    ops: list[str]
    heuristic: str


def _kernel_sources(tree: ast.Module, lines: list[str]) -> dict[str, _Kernel]:
    """``NAME = async_compile.triton('NAME', '''src''', ...)`` assignments in the module."""
    kernels: dict[str, _Kernel] = {}
    prev_end = 0
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
            and ast.unparse(node.value.func).endswith("async_compile.triton")
        ):
            args = node.value.args
            if len(args) < 2 or not isinstance(args[1], ast.Constant):
                raise HarvestError("an async_compile.triton call has no literal kernel source")
            name = node.targets[0].id
            src = str(args[1].value)
            comments = _comments_before(lines, prev_end, node.lineno - 1)
            kernels[name] = _Kernel(name, src, _aten_ops(comments), _heuristic_name(src))
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = ast.unparse(node.value.func)
            if func.startswith("async_compile.") and func != "async_compile.triton":
                raise HarvestError(
                    f"generated code compiles a non-Triton kernel ({func}); "
                    "harvest needs Inductor's Triton backend"
                )
        prev_end = node.end_lineno or prev_end
    return kernels


def _heuristic_name(src: str) -> str:
    m = re.search(r"@triton_heuristics\.(\w+)\(", src)
    return m.group(1) if m else ""


def _find_call(tree: ast.Module) -> ast.FunctionDef:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "call":
            return node
    for node in tree.body:  # torch >= 2.12: a Runner class holds call(self, args)
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "call":
                    return item
    raise HarvestError("generated module has no call() function")


# --------------------------------------------------------------------------- kernels


class _KernelRewriter(ast.NodeTransformer):
    def __init__(self) -> None:
        self.uses_helpers = False  # an Inductor helper we have no plain-tl version of
        self.unmapped: set[str] = set()
        self.helpers: set[str] = set()  # plain-tl helpers (tl_helpers.py) the kernel calls

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == "tl_math":
            return ast.Attribute(
                value=ast.Attribute(value=ast.Name("tl", ast.Load()), attr="math", ctx=ast.Load()),
                attr=node.attr,
                ctx=node.ctx,
            )
        if isinstance(node.value, ast.Name) and node.value.id == "triton_helpers":
            if node.attr in HELPERS:
                self.helpers.add(node.attr)
                return ast.Name(f"_h_{node.attr}", ast.Load())
            self.uses_helpers = True
            self.unmapped.add(node.attr)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "triton_helpers"
            and func.attr in ("maximum", "minimum")
            and len(node.args) == 2
            and not node.keywords
        ):
            # Same semantics: the helper returns NaN if either operand is NaN.
            args = [self.visit(a) for a in node.args]
            nan_all = ast.Attribute(
                value=ast.Attribute(
                    value=ast.Name("tl", ast.Load()), attr="PropagateNan", ctx=ast.Load()
                ),
                attr="ALL",
                ctx=ast.Load(),
            )
            return ast.Call(
                func=ast.Attribute(
                    value=ast.Name("tl", ast.Load()), attr=func.attr, ctx=ast.Load()
                ),
                args=args,
                keywords=[ast.keyword(arg="propagate_nan", value=nan_all)],
            )
        self.generic_visit(node)
        return node


@dataclass
class _PlainKernel:
    name: str
    source: str  # plain @triton.jit function text (plus any helper functions it defines)
    params: list[str]  # runtime (non-constexpr) parameters, in order
    constexprs: list[str]
    uses_helpers: bool
    helpers: set[str] = field(default_factory=set)
    unmapped: set[str] = field(default_factory=set)


def _plain_kernel(kernel: _Kernel) -> _PlainKernel:
    tree = ast.parse(kernel.source)
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    main = [f for f in funcs if f.name == kernel.name]
    if not main:
        raise HarvestError(f"kernel {kernel.name}: no function of that name in its source")
    rewriter = _KernelRewriter()
    texts = []
    params: list[str] = []
    constexprs: list[str] = []
    for fn in funcs:
        fn.decorator_list = [ast.parse("triton.jit", mode="eval").body]
        fn = rewriter.visit(fn)
        ast.fix_missing_locations(fn)
        texts.append(ast.unparse(fn))
    for arg in main[0].args.args:
        ann = ast.unparse(arg.annotation) if arg.annotation is not None else ""
        (constexprs if ann.endswith("constexpr") else params).append(arg.arg)
    return _PlainKernel(
        kernel.name,
        "\n\n\n".join(texts),
        params,
        constexprs,
        rewriter.uses_helpers,
        rewriter.helpers,
        rewriter.unmapped,
    )


def _grid_lambda(grid_type: str | None, numel: dict[str, str], cfg_keys: set[str]) -> str:
    """A ``lambda meta: (...)`` grid for Inductor's grid types (our own translation)."""

    def ceil(numel_key: str, block: str) -> str:
        value = numel.get(numel_key)
        if value is None:
            raise HarvestError(f"launch has no {numel_key} argument for its {grid_type} grid")
        if block not in cfg_keys:
            return value
        return f"triton.cdiv({value}, meta[{block!r}])"

    if grid_type is None:
        grid_type = "Grid2D" if "ynumel" in numel else "Grid1D"
    if grid_type == "Grid1D":
        return f"lambda meta: ({ceil('xnumel', 'XBLOCK')},)"
    if grid_type == "Grid2D":
        return f"lambda meta: ({ceil('xnumel', 'XBLOCK')}, {ceil('ynumel', 'YBLOCK')})"
    if grid_type == "Grid3D":
        return (
            f"lambda meta: ({ceil('xnumel', 'XBLOCK')}, {ceil('ynumel', 'YBLOCK')}, "
            f"{ceil('znumel', 'ZBLOCK')})"
        )
    if grid_type == "Grid2DWithYZOverflow":
        # The kernel folds program_id(2) into y when y exceeds CUDA's 65535 limit.
        y = ceil("ynumel", "YBLOCK")
        return (
            f"lambda meta: ({ceil('xnumel', 'XBLOCK')}, "
            f"triton.cdiv({y}, triton.cdiv({y}, 65535)), triton.cdiv({y}, 65535))"
        )
    raise HarvestError(f"Inductor grid type {grid_type} is not supported by the harvest")


# --------------------------------------------------------------------------- call body


class _CallRewriter:
    """Rewrites the statements of ``call(args)`` into the candidate's ``_harvested_forward``."""

    def __init__(
        self,
        kernels: dict[str, _PlainKernel],
        launches: dict[str, LaunchInfo],
        origins: dict[str, list[str]],
        lines: list[str],
    ) -> None:
        self.kernels = kernels
        self.launches = launches
        self.origins = origins
        self.lines = lines
        self.arg_names: list[str] = []
        self.vendor_calls: list[dict[str, Any]] = []
        self.other_calls: list[dict[str, Any]] = []
        self.configs: dict[str, dict[str, int]] = {}
        self.fixed: dict[str, dict[str, int]] = {}
        self.launched: list[str] = []
        self.elements: dict[str, int] = {}  # iteration-space size per kernel (static shapes)

    def rewrite(self, body: list[ast.stmt], indent: str, prev_end: int) -> list[str]:
        out: list[str] = []
        carried: list[str] = []
        for stmt in body:
            comments = carried + _comments_before(self.lines, prev_end, stmt.lineno - 1)
            prev_end = stmt.end_lineno or prev_end
            produced = self._statement(stmt, indent, comments)
            # A dropped statement (stream fetch, size assert) passes its comments on.
            carried = comments if not produced else []
            out.extend(produced)
        return out

    def _statement(self, stmt: ast.stmt, indent: str, comments: list[str]) -> list[str]:
        ops = _aten_ops(comments)
        if isinstance(stmt, ast.With):
            items = " ".join(ast.unparse(i.context_expr) for i in stmt.items)
            if "DeviceGuard" in items or "device(" in items:
                return self.rewrite(stmt.body, indent, stmt.lineno)
            raise HarvestError(f"unsupported with-block in generated call(): {items}")
        if isinstance(stmt, ast.Assign) and ast.unparse(stmt.value) == "args":
            target = stmt.targets[0]
            names = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
            self.arg_names = [ast.unparse(n) for n in names]
            return []
        if (
            isinstance(stmt, ast.Assign)
            and isinstance(stmt.value, ast.Call)
            and ast.unparse(stmt.value.func).endswith("get_raw_stream")
        ):
            return []
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            fname = call.func.attr if isinstance(call.func, ast.Attribute) else ""
            fname = fname or (call.func.id if isinstance(call.func, ast.Name) else "")
            if fname in _DROP_CALLS and not self._is_kernel_run(call):
                return []
            if self._is_kernel_run(call):
                return self._launch(call, indent, ops)
        expr_rewriter = _ExprRewriter(self, ops)
        stmt = expr_rewriter.visit(stmt)
        ast.fix_missing_locations(stmt)
        text = ast.unparse(stmt)
        prefix = [f"{indent}# {label}" for label in expr_rewriter.pending]
        return prefix + [indent + line for line in text.splitlines()]

    def _is_kernel_run(self, call: ast.Call) -> bool:
        func = call.func
        return (
            isinstance(func, ast.Attribute)
            and func.attr == "run"
            and isinstance(func.value, ast.Name)
            and func.value.id in self.kernels
        )

    def _launch(self, call: ast.Call, indent: str, ops: list[str]) -> list[str]:
        assert isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
        name = call.func.value.id
        kernel = self.kernels[name]
        launch = self.launches.get(name)
        if launch is None:
            raise HarvestError(f"kernel {name} never ran during the capture run")
        args = [ast.unparse(a) for a in call.args]
        fixed_grid: list[str] = []
        if launch.grid_type == "FixedGrid" and launch.extra_args:
            # Templates (max-autotune matmuls) pass their grid after the kernel's arguments.
            fixed_grid = args[len(args) - launch.extra_args :]
            args = args[: len(args) - launch.extra_args]
        if len(args) != len(kernel.params):
            raise HarvestError(
                f"kernel {name}: launch passes {len(args)} arguments for "
                f"{len(kernel.params)} runtime parameters"
            )
        numel = {}
        for pname, value in zip(kernel.params, args):
            key = "r0_numel" if pname == "rnumel" else pname
            if re.fullmatch(r"[xyz]numel|r\d*_numel", key):
                numel[key] = value
        if all(v.isdigit() for v in numel.values()) and numel:
            size = 1
            for v in numel.values():
                size *= int(v)
            self.elements[name] = size
        persistent = launch.heuristic == "persistent_reduction" or "persistent" in launch.heuristic
        cfg: dict[str, int] = {}
        fixed: dict[str, int] = {}
        for key in kernel.constexprs:
            if key not in launch.config:
                raise HarvestError(f"kernel {name}: no chosen value for constexpr {key}")
            chosen = int(launch.config[key])
            # A persistent reduction covers the whole row in one block: R*_BLOCK is not a knob.
            if _BLOCK_RE.match(key) and not (persistent and key.startswith("R")):
                cfg[key] = chosen
            else:
                fixed[key] = chosen
        cfg["num_warps"] = int(launch.num_warps)
        cfg["num_stages"] = int(launch.num_stages)
        if name not in self.configs:
            self.configs[name] = cfg
            self.fixed[name] = fixed
        if fixed_grid:
            grid = f"({', '.join(fixed_grid)},)"  # block sizes live in the template's body
        else:
            grid = _grid_lambda(launch.grid_type, numel, set(cfg) | set(fixed))
        extra = "".join(f", {k}={v}" for k, v in self.fixed[name].items())
        self.launched.append(name)
        label = f"{indent}# Triton kernel {name}" + (f" <- {', '.join(ops)}" if ops else "")
        line = f"{indent}{name}[{grid}]({', '.join(args)}{extra}, **LAUNCH_CONFIGS[{name!r}])"
        return [label, line]


class _ExprRewriter(ast.NodeTransformer):
    """Expression-level rewrites inside one statement of ``call``."""

    def __init__(self, owner: _CallRewriter, ops: list[str]) -> None:
        self.owner = owner
        self.ops = ops
        self.pending: list[str] = []  # labels written as comments above the statement

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        text = ast.unparse(func)
        if isinstance(func, ast.Name) and func.id in _ALLOC_CALLS:
            if len(node.args) < 3:
                raise HarvestError(f"unexpected allocation call {ast.unparse(node)}")
            return ast.Call(
                func=ast.parse("torch.empty_strided", mode="eval").body,
                args=node.args[:2],
                keywords=[
                    ast.keyword(arg="dtype", value=node.args[2]),
                    ast.keyword(arg="device", value=ast.Name("_device", ast.Load())),
                ],
            )
        if text.startswith("extern_kernels."):
            op = text.split(".", 1)[1]
            lib = library_of(op)
            record = {
                "name": f"vendor_{len(self.owner.vendor_calls)}_{op}",
                "op": f"aten.{op}",
                "library": lib,
                "ops": self.ops,
                "call": "",
            }
            self.owner.vendor_calls.append(record)
            new = ast.parse(
                f"torch.{op}" if _torch_has(op) else f"torch.ops.aten.{op}", mode="eval"
            ).body
            node.func = new
            record["call"] = ast.unparse(node)
            self.pending.append(
                f"vendor call (kept): aten.{op} via {lib}"
                + (f" <- {', '.join(self.ops)}" if self.ops else "")
            )
            return node
        m = re.match(r"^(?:torch\.ops\.)?aten\.(\w+)(?:\.\w+)?$", text)
        if m:
            op = m.group(1)
            if op in ("view", "reshape", "as_strided", "alias", "permute", "expand"):
                return node  # metadata-only views, no kernel
            record = {
                "name": f"{'vendor' if op in VENDOR_OPS else 'op'}_{op}",
                "op": f"aten.{op}",
                "library": library_of(op) if op in VENDOR_OPS else "aten",
                "ops": self.ops,
                "call": ast.unparse(node),
            }
            if op in VENDOR_OPS:
                record["name"] = f"vendor_{len(self.owner.vendor_calls)}_{op}"
                self.owner.vendor_calls.append(record)
                self.pending.append(f"vendor call (kept): aten.{op} via {record['library']}")
            else:
                record["name"] = f"aten_{len(self.owner.other_calls)}_{op}"
                self.owner.other_calls.append(record)
                self.pending.append(f"aten fallback (kept, not Triton): aten.{op}")
        return node


def _torch_has(op: str) -> bool:
    # Decided without importing torch: these extern kernels are public torch functions.
    return op in {"mm", "addmm", "bmm", "baddbmm", "convolution", "_int_mm", "_scaled_mm"}


# --------------------------------------------------------------------------- assembly

_HELPERS = '''

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
'''


def _access(key: str, is_param: bool) -> str:
    parts = key.split(".")
    if all(p.isidentifier() for p in parts):
        return "self." + key
    getter = "get_parameter" if is_param else "get_buffer"
    return f"self.{getter}({key!r})"


def _known_names(kernels: dict[str, _PlainKernel]) -> set[str]:
    return (
        set(dir(builtins))
        | {
            "torch",
            "triton",
            "tl",
            "nn",
            "aten",
            "reinterpret_tensor",
            "LAUNCH_CONFIGS",
            "_device",
            "math",
            "inf",
            "nan",
        }
        | set(kernels)
    )


def _free_names(body_lines: list[str]) -> set[str]:
    tree = ast.parse("def _f():\n" + "\n".join(body_lines) + "\n    pass\n")
    assigned: set[str] = set()
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (assigned if isinstance(node.ctx, ast.Store | ast.Del) else used).add(node.id)
        elif isinstance(node, ast.arg):
            assigned.add(node.arg)
    return used - assigned


@dataclass
class _Parts:
    """What the renderers below need: the parsed kernels and the rewritten ``call()``."""

    raw: dict[str, _Kernel]
    plain: dict[str, _PlainKernel]
    rewriter: _CallRewriter
    body: list[str]
    used_kernels: list[str]
    helper_text: str


def _parse_parts(output_code: str, launches: dict[str, LaunchInfo], facts: ModelFacts) -> _Parts:
    """Parse the generated module, rewrite ``call()``, and refuse what cannot be mapped."""
    tree = ast.parse(output_code)
    lines = output_code.splitlines()
    raw = _kernel_sources(tree, lines)
    plain = {name: _plain_kernel(k) for name, k in raw.items()}
    call = _find_call(tree)
    for name, k in raw.items():
        if name in launches and not launches[name].heuristic:
            launches[name].heuristic = k.heuristic
    rewriter = _CallRewriter(plain, launches, {n: k.ops for n, k in raw.items()}, lines)
    body = rewriter.rewrite(call.body, "    ", call.lineno)
    if not rewriter.arg_names:
        raise HarvestError("generated call() does not unpack its arguments")
    if len(rewriter.arg_names) != len(facts.arg_sources):
        raise HarvestError(
            f"generated call() takes {len(rewriter.arg_names)} inputs but the graph had "
            f"{len(facts.arg_sources)}"
        )
    unknown = _free_names(body) - _known_names(plain) - set(rewriter.arg_names)
    if unknown:
        raise HarvestError(f"generated code uses {sorted(unknown)}, which the harvest cannot map")
    used_kernels = [n for n in plain if n in set(rewriter.launched)]
    helper_names: set[str] = set().union(*(plain[n].helpers for n in used_kernels))
    return _Parts(raw, plain, rewriter, body, used_kernels, helpers_source(helper_names))


def _render_docstring(title: str, device_note: str) -> list[str]:
    out = [
        f'"""{title or "Harvested from torch.compile (Inductor)"}.',
        "",
        "Editable candidate: each Triton kernel below is Inductor's generated code as a plain",
        "@triton.jit function; vendor-library calls (cuBLAS/cuDNN) are kept and labelled.",
        "Shapes are static: the code is specialised to the problem's input shapes.",
    ]
    if device_note:
        out.append(device_note)
    return [*out, '"""', ""]


def _render_imports(parts: _Parts) -> list[str]:
    out = ["import torch", "import torch.nn as nn", "import triton", "import triton.language as tl"]
    kernels = [parts.plain[n] for n in parts.used_kernels]
    if uses_libdevice(parts.helper_text) or any(uses_libdevice(k.source) for k in kernels):
        out.append("from triton.language.extra import libdevice")
    if any(k.uses_helpers for k in kernels):
        # An Inductor runtime helper with no plain-tl version here (random numbers, sorts).
        out.append("from torch._inductor.runtime import triton_helpers")
    return [*out, "", "aten = torch.ops.aten"]


def _render_launch_configs(parts: _Parts) -> list[str]:
    configs = {n: parts.rewriter.configs[n] for n in parts.used_kernels}
    return [
        "",
        "# Launch configurations (block sizes, warps, stages) per kernel: the Tuner edits",
        "# only this dict; grids follow the block sizes through `meta`.",
        format_launch_configs(configs),
    ]


def _render_helpers(parts: _Parts) -> list[str]:
    if not parts.helper_text:
        return []
    return [
        "",
        "",
        "# ---- helpers the kernels call (plain tl, NaN- and tie-exact as Inductor's)",
        parts.helper_text,
    ]


def _render_kernels(parts: _Parts) -> tuple[list[str], list[dict[str, Any]]]:
    """One section per launched kernel, and the kernel records the agents see."""
    out: list[str] = []
    records: list[dict[str, Any]] = []
    for name in parts.used_kernels:
        pk, ops = parts.plain[name], parts.raw[name].ops
        out += ["", "", f"# ---- Triton kernel {name}" + (f" <- {', '.join(ops)}" if ops else "")]
        out.append(pk.source)
        records.append(
            {
                "name": name,
                "kind": "triton",
                "source": pk.source,
                "ops": ops,
                "launches": parts.rewriter.launched.count(name),
                "heuristic": parts.raw[name].heuristic,
                "elements": parts.rewriter.elements.get(name),
            }
        )
    return out, records


def _render_forward_function(parts: _Parts, facts: ModelFacts) -> list[str]:
    names = parts.rewriter.arg_names
    return [
        _HELPERS,
        "",
        "def _harvested_forward(args):",
        '    """Inductor\'s call(), rewritten with plain launches and torch calls."""',
        f"    {', '.join(names)}, = args",
        f"    _device = {_first_tensor_arg(facts, names)}.device",
        *parts.body,
    ]


def _render_model_class(facts: ModelFacts) -> list[str]:
    """``ModelNew``: the reference's state declared under its keys, forward calling the graph."""
    out = [
        "",
        "",
        "class ModelNew(nn.Module):",
        '    """The harvested model: the reference\'s parameters, Inductor\'s kernels."""',
        "",
        "    def __init__(self, *args, **kwargs):",
        "        super().__init__()",
    ]
    for key, shape, dtype, is_param in facts.state:
        out.append(f"        _declare(self, {key!r}, {tuple(shape)!r}, torch.{dtype}, {is_param})")
    if facts.forward_params is None:
        sig = "self, *inputs"
        names = [f"inputs[{i}]" for i in range(facts.n_inputs)]
    else:
        sig = ", ".join(["self", *facts.forward_params])
        names = list(facts.forward_params)
    state_is_param = {key: is_param for key, _s, _d, is_param in facts.state}
    exprs = []
    for kind, ref in facts.arg_sources:
        if kind == "input":
            assert isinstance(ref, int)
            exprs.append(names[ref])
        else:
            exprs.append(_access(str(ref), state_is_param.get(str(ref), kind == "param")))
    out += [
        "",
        f"    def forward({sig}):",
        "        with torch.no_grad():",
        f"            outs = _harvested_forward([{', '.join(exprs)}])",
    ]
    kind, n = facts.outputs
    if kind == "tensor":
        out.append("        return outs[0]")
    elif kind == "tuple":
        out.append(f"        return tuple(outs[:{n}])")
    else:
        out.append(f"        return list(outs[:{n}])")
    return out


def _notes(parts: _Parts) -> list[str]:
    unmapped = sorted(set().union(*(parts.plain[n].unmapped for n in parts.used_kernels)))
    if not unmapped:
        return []
    return [
        "kernels call Inductor runtime helper(s) with no plain-tl version here "
        f"({', '.join(unmapped)}); the candidate imports torch._inductor.runtime.triton_helpers"
    ]


def build_candidate(
    output_code: str,
    launches: dict[str, LaunchInfo],
    facts: ModelFacts,
    *,
    title: str = "",
    device_note: str = "",
) -> HarvestedCode:
    """The editable candidate for ``output_code`` (one Inductor graph) and its parts.

    The text is rendered section by section, top to bottom: docstring, imports, the
    ``LAUNCH_CONFIGS`` dict, plain-``tl`` helpers, one section per kernel, the rewritten
    ``call()`` and the ``ModelNew`` class (tests/test_analysis_codegen_golden.py pins each).
    """
    parts = _parse_parts(output_code, launches, facts)
    kernel_lines, records = _render_kernels(parts)
    out = [
        *_render_docstring(title, device_note),
        *_render_imports(parts),
        *_render_launch_configs(parts),
        *_render_helpers(parts),
        *kernel_lines,
        *_render_forward_function(parts, facts),
        *_render_model_class(facts),
    ]
    source = "\n".join(out) + "\n"
    vendor, other = parts.rewriter.vendor_calls, parts.rewriter.other_calls
    return HarvestedCode(source, records, vendor, other, _notes(parts))


def _first_tensor_arg(facts: ModelFacts, arg_names: list[str]) -> str:
    for (kind, _ref), name in zip(facts.arg_sources, arg_names):
        if kind == "input":
            return name
    if arg_names:
        return arg_names[0]
    raise HarvestError("the compiled graph takes no tensor inputs")
