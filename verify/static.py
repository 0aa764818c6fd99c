"""The static gate's source analysis: what a candidate's text may and may not do.

This reads the candidate's syntax tree only (it executes nothing, so it runs in the caller).
It is a fast first filter and a teaching aid, not the guarantee: the guarantees come from the
process boundary, the dispatch-level accounting and the schedule (docs/verification.md). The
run-time half of the static gate runs in the candidate's process (``sandbox.py``), the sm_90
compile check in ``compile_check.py``.

Rules, each as an LLM might break them: ``torch.compile`` (or dynamo/Inductor's compiler)
inside the candidate; importing, subclassing or calling the reference ``Model``; try/except
inside a function, ``contextlib.suppress`` or a home-made context manager whose ``__exit__``
can return a true value (a fallback to PyTorch around kernel launches); side streams; threads,
processes, signals; assigning attributes of torch, time, triton, builtins or other imported
modules (monkeypatching timers, ``allclose`` or the harness), also through simple aliases
(``_t = torch``); reaching into the harness or the interpreter (``gc``, ``inspect``,
``sys.modules`` also as ``torch.sys.modules``, frames, ``__self__``/``__globals__``/
``__subclasses__``/``__builtins__``, ``runpy``, ``os.environ``/``putenv``, ``sys.argv``,
``__name__`` tests outside the main guard, ``TRITON_INTERPRET``, ``kernelopt_jupyter``);
files, sockets and dynamic code. CUDA graphs are allowed.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

#: Module prefixes whose import means reaching outside the candidate's own code.
_HARNESS_MODULES = (
    "kernelopt_jupyter",
    "gc",
    "inspect",
    "importlib",
    "ctypes",
    "runpy",
    "marshal",
    "pickle",
    "code",
    "codeop",
    "builtins",
    "atexit",
    "weakref",
    "sysconfig",
    "site",
    "pytest",
)
#: Files and the network: a candidate computes on its inputs, it reads and writes nothing.
_IO_MODULES = (
    "pathlib",
    "shutil",
    "tempfile",
    "glob",
    "socket",
    "http",
    "urllib",
    "requests",
    "io",
)
_THREAD_MODULES = (
    "threading",
    "_thread",
    "concurrent",
    "multiprocessing",
    "asyncio",
    "subprocess",
    "signal",
    "resource",
)
_PROCESS_CALLS = {
    "os.fork",
    "os.forkpty",
    "os.system",
    "os.popen",
    "os.posix_spawn",
    "os.posix_spawnp",
    "os.kill",
    "os.killpg",
    "os.getpid",
    "os.getppid",
    "os.setsid",
    "os.setpgid",
    "os._exit",
    "os.abort",
}
_PROCESS_PREFIXES = ("os.spawn", "os.exec", "os.wait")
#: The environment: where secrets and the harness's markers live.
_ENV_NAMES = {"os.environ", "os.environb", "os.getenv", "os.getenvb", "os.putenv", "os.unsetenv"}
#: Harness and interpreter detection: a candidate must not behave differently when checked.
#: Triton's kernel classes: what `type(triton.jit(f))` is tells the interpreter from the GPU.
_KERNEL_CLASSES = {"JITFunction", "InterpretedFunction", "KernelInterface", "JITCallable"}
_DETECTION_NAMES = {
    "sys.argv",
    "sys.orig_argv",
    "sys.executable",
    "sys.flags",
    "sys._xoptions",
    "sys.path",
    "sys.gettrace",
    "sys.getprofile",
}
_DETECTION_STRINGS = (
    "TRITON_INTERPRET",
    "Interpreted",
    "interpreter",
    "KERNELOPT",
    "kernelopt",
    "PYTEST",
    "/proc/",
)
#: Attributes that open a way from any object to the interpreter's internals.
_REFLECTION_ATTRS = {
    "__self__",
    "__globals__",
    "__subclasses__",
    "__builtins__",
    "__code__",
    "__closure__",
    "__mro__",
    "__bases__",
    "__base__",
    "__dict__",
    "__getattribute__",
    "__import__",
    "__loader__",
    "__spec__",
    "__reduce__",
    "__reduce_ex__",
    "__func__",
    "__wrapped__",
}
#: Names of the dispatcher's thread-local switches and registries: with them a candidate can
#: hide ops from the dispatch-level accounting (exclude the Python key, pop or disable the
#: mode) or replace an op's kernel. A candidate never needs them. The run-time registry check
#: (``OpRegistry``) covers re-registration; key exclusion is covered by this rule only (see
#: docs/verification.md, "What is still out of reach").
_DISPATCH_INTERNALS = (
    "_ExcludeDispatchKeyGuard",
    "_IncludeDispatchKeyGuard",
    "_ForceDispatchKeyGuard",
    "DispatchKey",
    "_DisableTorchDispatch",
    "_DisableFuncTorch",
    "_DisablePythonDispatcher",
    "_EnablePythonDispatcher",
    "_EnableTorchFunction",
    "_DisableTorchFunction",
    "_RestorePythonTLSSnapshot",
    "_AutoDispatchBelow",
    "_PreserveDispatchKeyGuard",
    "_dispatch_",
    "_disable_current_modes",
    "_pop_mode",
    "_pop_torch_",
    "_push_on_torch_",
    "_unset_dispatch_mode",
    "_set_dispatch_mode",
    "_get_dispatch_mode",
    "_len_torch_",
    "_python_dispatch",
    "_set_torch_function_mode",
    "_unset_torch_function_mode",
    "py_impl",
    "py_kernels",
)
#: Attribute prefixes of frames, tracebacks, generators and coroutines (the call stack).
_FRAME_PREFIXES = (
    "f_back",
    "f_globals",
    "f_locals",
    "f_builtins",
    "f_code",
    "tb_",
    "gi_frame",
    "gi_code",
    "cr_frame",
    "cr_code",
    "ag_frame",
    "ag_code",
    "co_consts",
)
_STREAM_NAMES = {
    "torch.cuda.Stream",
    "torch.cuda.stream",
    "torch.cuda.ExternalStream",
    "torch.cuda.StreamContext",
    "torch.cuda.set_stream",
    "torch.cuda.streams",
    "torch.Stream",
    "torch.accelerator.set_stream",
}
#: Calls that change process-wide numerics the reference and baselines also run under.
_GLOBAL_SETTING_CALLS = {
    "torch.set_float32_matmul_precision",
    "torch.set_default_dtype",
    "torch.set_default_device",
    "torch.set_flush_denormal",
    # Scoped or not, these set cuDNN's and oneDNN's numerics (TF32 among them) and restore
    # them after: the by-value settings check after a call would see nothing.
    "torch.backends.cudnn.flags",
    "torch.backends.cudnn.set_flags",
    "torch.backends.mkldnn.flags",
    "torch.backends.mkldnn.set_flags",
}
#: Process-wide settings a candidate may set inside its forward, because they choose among
#: algorithms of the same precision and not the numerics: ``torch.backends.cudnn.benchmark``
#: (cuDNN times its algorithms instead of taking its heuristic's pick). The harness still
#: checks after every call that the value is what it was before (``verify/launches.py``), and
#: the float64 referee judges the algorithm picked; TF32 and the other numerics stay refused.
_SCOPED_SETTINGS = frozenset({"torch.backends.cudnn.benchmark"})
_REFLECTION = {"sys.modules", "sys._getframe", "sys.settrace", "sys.setprofile", "__import__"}
#: Names of ``sys`` that reach other modules or the stack, also through a re-export
#: (``torch.sys.modules``): matched as prefixes of the last part.
_SYS_REFLECTION_PREFIXES = (
    "modules",
    "_getframe",
    "settrace",
    "setprofile",
    "_current_frames",
    "meta_path",
    "path_hooks",
    "exc_info",
    "exception",
    "last_",
)
_BUILTIN_HANDLES = {"__builtins__", "builtins"}
#: Modules refused when reached as an attribute of another module (``torch.ctypes``,
#: ``torch.hub.os``): native memory, processes, threads, the interpreter's internals.
_REACHED_THROUGH = frozenset(
    {
        "ctypes", "os", "subprocess", "multiprocessing", "threading", "_thread", "signal",
        "importlib", "inspect", "gc", "pickle", "marshal", "runpy", "builtins", "socket",
        "shutil", "tempfile", "mmap",
    }
)  # fmt: skip


def _dispatch_message(name: str) -> str:
    return (
        f"uses {name}: the dispatcher's switches and registries (dispatch keys, modes, kernel "
        "registration) would hide ops from the verifier's accounting or replace an op's kernel; "
        "a candidate computes in its own kernels and calls ops plainly"
    )


@dataclass
class StaticAnalysis:
    """What the candidate's source shows, and the rule violations found."""

    syntax_error: str | None = None
    violations: list[str] = field(default_factory=list)
    defines_model_new: bool = False
    defines_entry: bool = False
    jit_kernels: list[str] = field(default_factory=list)
    dispatch_only_declared: bool = False
    uses_cuda_graphs: bool = False


class _Analyzer(ast.NodeVisitor):
    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}  # local name -> dotted module path it stands for
        self.violations: list[str] = []
        self.function_depth = 0
        self.uses_cuda_graphs = False
        self.docstrings: set[int] = set()

    # ---------------------------------------------------------------- helpers

    def flag(self, node: ast.AST, message: str) -> None:
        line = getattr(node, "lineno", "?")
        text = f"line {line}: {message}"
        if text not in self.violations:
            self.violations.append(text)

    def resolve(self, node: ast.AST) -> str | None:
        """The dotted name an expression stands for when it is rooted at an imported module."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def check_module_name(self, node: ast.AST, module: str) -> None:
        if module == "torch._dynamo" or module.startswith("torch._dynamo."):
            self.flag(node, f"uses {module} (torch.compile's tracer); write the kernel instead")
        elif module.startswith("torch._inductor") and not module.startswith(
            "torch._inductor.runtime"
        ):
            # Inductor's runtime helpers (triton_helpers, libdevice) are plain Triton code that
            # harvested kernels import; its compiler entry points are torch.compile in disguise.
            self.flag(node, f"uses {module} (Inductor's compiler); write the kernel instead")
        root = module.split(".")[0]
        if module.startswith(_THREAD_MODULES) or root in _THREAD_MODULES:
            self.flag(node, f"imports {module}: threads and processes are not allowed")
        if root in _HARNESS_MODULES:
            self.flag(node, f"imports {module}: a candidate may not reach into the harness")
        if root in _IO_MODULES:
            self.flag(
                node,
                f"imports {module}: a candidate computes on its inputs; it reads and writes no "
                "files and opens no connections",
            )

    def check_dotted(self, node: ast.AST, dotted: str) -> None:
        if dotted == "torch.compile" or dotted.startswith("torch.compile."):
            self.flag(node, "uses torch.compile; the candidate must be the kernel, not a compiler")
        self.check_module_name(node, dotted)
        # Here, not only for attributes: `from os import kill` (then `kill(...)`) was missed.
        if dotted in _PROCESS_CALLS or dotted.startswith(_PROCESS_PREFIXES):
            self.flag(node, f"uses {dotted}: threads and processes are not allowed")
        if dotted in _STREAM_NAMES or any(dotted.startswith(s + ".") for s in _STREAM_NAMES):
            self.flag(node, f"uses {dotted}: side streams are not allowed (the timer misses them)")
        if dotted in _REFLECTION:
            self.flag(node, f"uses {dotted}: a candidate may not reach into the harness")
        parts = dotted.split(".")
        if "sys" in parts[1:] or (parts[0] == "sys" and len(parts) > 1):
            after = parts[parts.index("sys", 1 if parts[0] != "sys" else 0) + 1 :]
            if parts[0] != "sys":
                self.flag(
                    node,
                    f"uses {dotted}: reaches the sys module through another module (the "
                    "harness's modules and frames are behind it)",
                )
            elif after and after[0].startswith(_SYS_REFLECTION_PREFIXES):
                self.flag(node, f"uses {dotted}: a candidate may not reach into the harness")
        through = [p for p in parts[1:] if p in _REACHED_THROUGH]
        if through:
            self.flag(
                node,
                f"uses {dotted}: reaches the {through[0]} module through another module "
                "(torch re-exports several); a candidate needs none of them",
            )
        if dotted in _ENV_NAMES or any(dotted.startswith(n + ".") for n in _ENV_NAMES):
            self.flag(
                node,
                f"uses {dotted}: a candidate does not read or change the environment (secrets "
                "and the harness's settings live there)",
            )
        if dotted.rsplit(".", 1)[-1] in _KERNEL_CLASSES and dotted.startswith("triton"):
            self.flag(
                node,
                f"uses {dotted}: comparing a kernel's type tells the interpreter from the "
                "compiler, and a candidate must behave the same under both",
            )
        if dotted in _DETECTION_NAMES:
            self.flag(
                node,
                f"uses {dotted}: a candidate must not detect the harness (it must behave the "
                "same when checked and when used)",
            )
        if dotted.startswith("triton.runtime.interpreter"):
            self.flag(
                node,
                f"uses {dotted}: a candidate must not detect Triton's interpreter (it must "
                "behave the same on the CPU and the GPU)",
            )
        if dotted in _GLOBAL_SETTING_CALLS:
            self.flag(
                node, f"uses {dotted}: changes a process-wide setting the reference runs under"
            )
        if dotted in {"torch.cuda.CUDAGraph", "torch.cuda.graph", "torch.cuda.graphs"}:
            self.uses_cuda_graphs = True

    # ---------------------------------------------------------------- imports

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.check_module_name(node, alias.name)
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                root = alias.name.split(".")[0]
                self.aliases[root] = root
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            self.flag(node, "relative import: a candidate is a standalone module")
        self.check_module_name(node, module)
        for alias in node.names:
            full = f"{module}.{alias.name}" if module else alias.name
            if alias.name == "Model":
                self.flag(node, "imports `Model`, the reference; the candidate must not use it")
            if alias.name == "*":
                continue
            self.check_dotted(node, full)
            self.aliases[alias.asname or alias.name] = full
        self.generic_visit(node)

    # ---------------------------------------------------------------- names

    def visit_If(self, node: ast.If) -> None:
        # The main guard (a self-test at the bottom of a kernel file) is the one honest test of
        # __name__; anything else that asks who is running the module is harness detection.
        if _is_main_guard(node.test):
            for child in node.body + node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if id(node) in self.docstrings:  # prose about the interpreter is not detection
            return
        if isinstance(node.value, str) and any(w in node.value for w in _DETECTION_STRINGS):
            self.flag(
                node,
                f"mentions {node.value[:40]!r}: a candidate must not detect the harness or the "
                "interpreter (it must behave the same when checked and when used)",
            )

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in ("__name__", "__file__", "__spec__", "__loader__", "__package__"):
            self.flag(
                node,
                f"uses {node.id} outside the main guard: a candidate must not detect how or "
                "where it is run",
            )
        if node.id == "Model":
            self.flag(node, "refers to `Model`, the reference; the candidate must not use it")
        if node.id in _BUILTIN_HANDLES | {"__import__"}:
            self.flag(node, f"uses {node.id}: a candidate may not reach into the harness")
        dotted = self.aliases.get(node.id)
        if dotted is not None:
            self.check_dotted(node, dotted)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in _REFLECTION_ATTRS or node.attr.startswith(_FRAME_PREFIXES):
            self.flag(
                node,
                f"uses .{node.attr}: reflection reaches the interpreter's internals (modules, "
                "frames, the harness); a candidate does not need it",
            )
        if node.attr == "Model":
            self.flag(node, "refers to `Model`, the reference; the candidate must not use it")
        if node.attr.startswith(_DISPATCH_INTERNALS):
            self.flag(node, _dispatch_message(node.attr))
        dotted = self.resolve(node)
        if dotted is not None:
            self.check_dotted(node, dotted)
        # Do not recurse: the dotted name was checked whole (and `torch` alone is fine).
        if self.resolve(node.value) is None:
            self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if node.name == "Model":
            self.flag(node, "defines a class named `Model`, the reference's name; use ModelNew")
        for item in node.body:
            if (
                isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                and item.name in ("__exit__", "__aexit__")
                and _can_return_true(item)
            ):
                self.flag(
                    item,
                    f"{node.name}.{item.name} can return a true value, which swallows the "
                    "exception like try/except (a hidden fallback); let errors propagate",
                )
        self.generic_visit(node)

    # ---------------------------------------------------------------- functions and try

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self.flag(node, "async functions are not allowed (work outside the timed call)")
        self._function(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.function_depth += 1
        self.generic_visit(node)
        self.function_depth -= 1

    def visit_Try(self, node: ast.Try) -> None:
        self._try(node, node.handlers)

    def visit_TryStar(self, node: ast.TryStar) -> None:
        self._try(node, node.handlers)

    def _try(self, node: ast.AST, handlers: list[ast.ExceptHandler]) -> None:
        if handlers and self.function_depth > 0:
            self.flag(
                node,
                "try/except inside a function: a fallback around kernel launches hides failures "
                "(let errors propagate)",
            )
        self.generic_visit(node)

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            expr = item.context_expr
            target = expr.func if isinstance(expr, ast.Call) else expr
            if self.resolve(target) == "contextlib.suppress":
                self.flag(node, "contextlib.suppress hides kernel failures like try/except")
        self.generic_visit(node)

    # ---------------------------------------------------------------- monkeypatching

    def _assigned(self, node: ast.AST, target: ast.AST, verb: str) -> None:
        if isinstance(target, ast.Tuple | ast.List):
            for elt in target.elts:
                self._assigned(node, elt, verb)
            return
        if verb == "assigns" and self.resolve(target) in _SCOPED_SETTINGS:
            return  # an algorithm choice, restored after every call (the settings check)
        if isinstance(target, ast.Attribute | ast.Subscript):
            base = target.value
            while isinstance(base, ast.Attribute | ast.Subscript):
                base = base.value
            root = self.resolve(base)
            if root is not None:
                name = ast.unparse(target)
                self.flag(
                    node,
                    f"{verb} {name}: monkeypatching an imported module ({root}) is not allowed",
                )

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._assigned(node, target, "assigns")
        # Follow simple aliases (``_t = torch``, ``c = torch.compile``): the rules see through.
        dotted = self.resolve(node.value)
        if dotted is not None:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.aliases[target.id] = dotted
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._assigned(node, node.target, "assigns")
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._assigned(node, node.target, "assigns")
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._assigned(node, target, "deletes")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in {"setattr", "delattr"} and node.args:
            root = node.args[0]
            while isinstance(root, ast.Attribute):
                root = root.value
            if self.resolve(root) is not None:
                self.flag(
                    node,
                    f"{node.func.id}() on {ast.unparse(node.args[0])}: monkeypatching an imported "
                    "module is not allowed",
                )
        if isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) >= 2:
            base = self.resolve(node.args[0])
            name = node.args[1]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                if base is not None:
                    self.check_dotted(node, f"{base}.{name.value}")
                if name.value in _REFLECTION_ATTRS or name.value.startswith(_FRAME_PREFIXES):
                    self.flag(node, f"getattr(..., {name.value!r}): reflection is not allowed")
                if name.value.startswith(_DISPATCH_INTERNALS):
                    self.flag(node, _dispatch_message(name.value))
            elif base is not None:
                self.flag(node, f"getattr() on {base} with a computed name is not allowed")
            else:
                self.flag(
                    node,
                    "getattr() with a computed name is not allowed: name what you use, so the "
                    "rules (and a reader) can see it",
                )
        dynamic = {"globals", "vars", "eval", "exec", "compile", "breakpoint", "locals"}
        if (
            isinstance(node.func, ast.Name)
            and node.func.id in dynamic
            and node.func.id not in self.aliases
        ):
            self.flag(node, f"{node.func.id}() is not allowed in a candidate (dynamic code)")
        if isinstance(node.func, ast.Name) and node.func.id == "open":
            self.flag(node, "open(): a candidate reads and writes no files")
        self.generic_visit(node)


def _is_main_guard(test: ast.expr) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _can_return_true(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a function has a ``return`` of anything but ``None``/``False``."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            if isinstance(value, ast.Constant) and value.value in (None, False):
                continue
            return True
    return False


def _is_jit_decorated(node: ast.FunctionDef) -> bool:
    """``@triton.jit`` (any spelling), or ``@helion.kernel``, which generates Triton kernels."""
    for dec in node.decorator_list:
        target = ast.unparse(dec.func if isinstance(dec, ast.Call) else dec)
        if target.split(".")[-1] == "jit" or target in ("helion.kernel", "kernel"):
            return True
    return False


def analyze_candidate(source: str, *, kind: str = "module", entry: str = "Model") -> StaticAnalysis:
    """Parse and check a candidate's source; never executes it."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return StaticAnalysis(syntax_error=f"syntax error on line {exc.lineno}: {exc.msg}")
    analyzer = _Analyzer()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = body[0] if body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                analyzer.docstrings.add(id(first.value))
    analyzer.visit(tree)
    result = StaticAnalysis(violations=analyzer.violations)
    result.uses_cuda_graphs = analyzer.uses_cuda_graphs
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
            result.defines_model_new = True
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            if "ModelNew" in names:
                result.defines_model_new = True
            if (
                "KERNELOPT_DISPATCH_ONLY" in names
                and isinstance(node.value, ast.Constant)
                and node.value.value is True
            ):
                result.dispatch_only_declared = True
        elif isinstance(node, ast.FunctionDef) and node.name == entry and kind != "module":
            result.defines_entry = True
    result.jit_kernels = [
        n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and _is_jit_decorated(n)
    ]
    return result
