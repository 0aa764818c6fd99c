"""Problem capture: the three problem kinds, loaded from a file or from notebook source.

A problem is always carried as *source text*, never as live objects, so that the worker process
(and the Triton interpreter, which is chosen when ``@triton.jit`` decorates a function) can
rebuild it from scratch.

Conventions (documented in docs/problems.md):

* **module problem** (KernelBench layout): ``class Model(nn.Module)``, ``get_inputs()``,
  ``get_init_inputs()`` (optional, default ``[]``).
* **Triton problem**: one or more ``@triton.jit`` kernels and a plain launcher function;
  ``KERNELOPT_ENTRY = "name"`` names the launcher (optional when there is exactly one public
  plain function besides the conventions), ``get_inputs()`` gives its arguments and an optional
  ``reference(*inputs)`` written with torch ops serves as the float64 referee.
* **Helion problem**: a ``@helion.kernel`` function (the entry; ``KERNELOPT_ENTRY`` picks one if
  there are several), ``get_inputs()`` and an optional ``reference``.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
import sys
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

ProblemKind = Literal["module", "triton", "helion"]
#: How the reference runs: as ``Model(*get_init_inputs())`` constructs it (training mode, as
#: KernelBench runs it), or in inference mode (``.eval()``: BatchNorm's running statistics, no
#: dropout). A problem file chooses with ``KERNELOPT_MODE = "eval"``; the default is the first.
ProblemMode = Literal["as-constructed", "eval"]
MODES: tuple[ProblemMode, ...] = ("as-constructed", "eval")
_CONVENTION_NAMES = {"get_inputs", "get_init_inputs", "reference", "KERNELOPT_ENTRY"}


class ProblemError(Exception):
    """A mistake in a problem the user wrote: the message is one line naming the file and fix."""


@dataclass(frozen=True)
class Problem:
    """A captured problem: its kind, source text and where it came from."""

    kind: ProblemKind
    path: str
    source: str
    entry: str
    name: str
    level: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    mode: ProblemMode = "as-constructed"

    @property
    def digest(self) -> str:
        """A short content hash, stable across runs (used for cache and memory keys)."""
        return hashlib.sha256(self.source.encode()).hexdigest()[:12]


def _level_from_path(path: str) -> int | None:
    for part in Path(path).parts:
        low = part.lower()
        if low.startswith("level") and low[5:].isdigit():
            return int(low[5:])
    return None


def _parse(source: str, path: str) -> ast.Module:
    try:
        return ast.parse(source, filename=path)
    except SyntaxError as exc:
        raise ProblemError(f"{path}: syntax error on line {exc.lineno}: {exc.msg}") from None


def _decorator_names(node: ast.FunctionDef) -> list[str]:
    names = []
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        names.append(ast.unparse(target))
    return names


def _explicit_entry(tree: ast.Module, path: str) -> str | None:
    """The ``KERNELOPT_ENTRY = "name"`` a file sets, or None."""
    explicit = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "KERNELOPT_ENTRY" for t in node.targets
        ):
            if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                raise ProblemError(f"{path}: KERNELOPT_ENTRY must be a string literal")
            explicit = node.value.value
    return explicit


def _helion_entry(helion: list[str], explicit: str | None, path: str) -> str:
    """The entry of a Helion problem: the one ``@helion.kernel``, or the named one."""
    if explicit is not None:
        if explicit not in helion:
            raise ProblemError(f"{path}: KERNELOPT_ENTRY={explicit!r} is not a @helion.kernel")
        return explicit
    if len(helion) > 1:
        raise ProblemError(
            f"{path}: several @helion.kernel functions; set KERNELOPT_ENTRY to one of {helion}"
        )
    return helion[0]


def _triton_entry(
    funcs: list[ast.FunctionDef], jitted: list[str], explicit: str | None, path: str
) -> str:
    """The entry of a Triton problem: its one public plain launcher, or the named one."""
    if explicit is not None:
        if explicit not in {f.name for f in funcs} or explicit in jitted:
            raise ProblemError(
                f"{path}: KERNELOPT_ENTRY={explicit!r} must name a plain launcher function"
            )
        return explicit
    # Conventions (get_inputs...) and private helpers are never the launcher.
    plain = [
        f.name
        for f in funcs
        if f.name not in jitted and f.name not in _CONVENTION_NAMES and not f.name.startswith("_")
    ]
    if len(plain) != 1:
        raise ProblemError(
            f"{path}: found @triton.jit kernels but {len(plain)} candidate launcher functions "
            f"{plain}; set KERNELOPT_ENTRY = 'launcher_name'"
        )
    return plain[0]


def _declared_mode(tree: ast.Module, path: str) -> ProblemMode:
    """The ``KERNELOPT_MODE`` a file declares (default: as constructed)."""
    mode: ProblemMode = "as-constructed"
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "KERNELOPT_MODE" for t in node.targets
        ):
            value = node.value.value if isinstance(node.value, ast.Constant) else None
            if value == "eval":
                mode = "eval"
            elif value == "as-constructed":
                mode = "as-constructed"
            else:
                raise ProblemError(f"{path}: KERNELOPT_MODE must be 'eval' or 'as-constructed'")
    return mode


def _source_in_mode(source: str, path: str, mode: str) -> str:
    """``source`` declaring ``mode``: eval is written into the text itself (one appended
    line), so every process that rebuilds the problem from its text runs the same semantics."""
    if mode not in MODES:
        raise ProblemError(f"{path}: unknown mode {mode!r}; use one of {list(MODES)}")
    declared = _declared_mode(_parse(source, path), path)
    if mode == declared:
        return source
    if mode == "as-constructed":
        raise ProblemError(f"{path}: declares KERNELOPT_MODE = 'eval'; remove it to run as built")
    note = "# --mode eval: the reference runs in inference mode (.eval())"
    return source.rstrip("\n") + f'\n\n{note}\nKERNELOPT_MODE = "eval"\n'


def with_mode(problem: Problem, mode: str) -> Problem:
    """``problem`` run in ``mode`` (its source then declares it; see ``_source_in_mode``)."""
    if mode == problem.mode:
        return problem
    source = _source_in_mode(problem.source, problem.path, mode)
    return problem_from_source(source, problem.path, level=problem.level, validate=False)


def random_in_mode(model: Any, mode: ProblemMode) -> str | None:
    """Why the reference's output is random in ``mode`` (an active dropout), or None.

    A random reference has no output to compare against: the search could not tell a correct
    candidate from a wrong one. Dropout modules in training mode are found by walking the
    model; functional dropout inside ``forward`` is not seen here.
    """
    import torch

    for name, module in model.named_modules():
        dropout = isinstance(module, torch.nn.modules.dropout._DropoutNd) and module.p > 0
        if dropout and module.training:
            where = f"'{name}'" if name else "the model"
            hint = "use --mode eval" if mode == "as-constructed" else "set p=0"
            return (
                f"{type(module).__name__}(p={module.p}) at {where} is random in "
                f"training mode (the mode the reference runs in); {hint}"
            )
    return None


def classify_source(source: str, path: str = "<cell>") -> tuple[ProblemKind, str]:
    """Tell the problem kind and entry point from the source text alone (no execution).

    A ``class Model`` makes a module problem (it wins over kernels defined beside it), then
    ``@helion.kernel`` functions a Helion problem, then ``@triton.jit`` kernels a Triton one.
    """
    tree = _parse(source, path)
    explicit = _explicit_entry(tree, path)
    if any(isinstance(n, ast.ClassDef) and n.name == "Model" for n in tree.body):
        return "module", "Model"
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    helion = [f.name for f in funcs if any("helion" in d for d in _decorator_names(f))]
    if helion:
        return "helion", _helion_entry(helion, explicit, path)
    jitted = [f.name for f in funcs if any(d.endswith("jit") for d in _decorator_names(f))]
    if jitted:
        return "triton", _triton_entry(funcs, jitted, explicit, path)
    raise ProblemError(
        f"{path}: defines no `class Model(nn.Module)`, no @triton.jit kernel and no "
        "@helion.kernel; see docs/problems.md for the problem layout"
    )


def problem_from_source(
    source: str,
    path: str = "<cell>",
    *,
    level: int | None = None,
    validate: bool = True,
    mode: str | None = None,
) -> Problem:
    """Capture a problem from source text; ``validate`` executes it once to check conventions
    (and that the reference is not random in its mode). ``mode`` overrides what the source
    declares (``eval`` is then written into the captured source)."""
    if mode is not None:
        source = _source_in_mode(source, path, mode)
    kind, entry = classify_source(source, path)
    tree = _parse(source, path)
    mode = _declared_mode(tree, path)
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    if "get_inputs" not in defined:
        raise ProblemError(f"{path}: no get_inputs() function; define one returning a list")
    problem = Problem(
        kind=kind,
        path=path,
        source=source,
        entry=entry,
        name=Path(path).stem if not path.startswith("<") else "cell",
        level=level if level is not None else _level_from_path(path),
        mode=mode,
    )
    if validate:
        # Validation runs the problem's own code: it is the user's trusted reference.
        # Shapes only (the meta device): a 6 GB input is not drawn on the CPU to be checked.
        loaded = materialize(problem)
        loaded.make_inputs(seed=0, device="meta")
        random = random_in_mode(loaded.make_model("meta"), problem.mode)
        if random is not None:
            raise ProblemError(f"{path}: {random}")
    return problem


def load_problem(
    path: str | os.PathLike[str], *, validate: bool = True, mode: str | None = None
) -> Problem:
    """Read and capture a problem file; raises ProblemError with a one-line cause."""
    p = Path(path)
    if not p.is_file():
        raise ProblemError(f"{p}: no such problem file")
    try:
        source = p.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ProblemError(f"{p}: cannot read ({exc})") from None
    return problem_from_source(source, str(p), validate=validate, mode=mode)


# --------------------------------------------------------------------------- source loading

_MODULE_DIR: Path | None = None


def _module_dir() -> Path:
    global _MODULE_DIR
    given = os.environ.get("KERNELOPT_SRC_DIR")
    if _MODULE_DIR is None or (not given and not _MODULE_DIR.is_dir()):
        # A worker is given a folder inside its own temporary directory (removed when the
        # worker ends), so verifying many candidates leaves no source files behind.
        if given:
            _MODULE_DIR = Path(given)
            _MODULE_DIR.mkdir(parents=True, exist_ok=True)
        else:
            from kernelopt_jupyter import tempdirs

            # Removed when this process ends (``tempdirs``): a CLI run leaves none behind. A
            # long-lived process (a notebook's kernel) whose folder went makes a new one.
            _MODULE_DIR = Path(tempdirs.make("kernelopt-src-"))
    return _MODULE_DIR


def load_source_module(source: str, name: str) -> types.ModuleType:
    """Import source text as a fresh module backed by a real file.

    ``@triton.jit`` calls ``inspect.getsource``, which needs a file on disk; plain ``exec`` fails
    on a real GPU. Each call gets a new module object, so kernels are decorated afresh under the
    current ``TRITON_INTERPRET`` setting.
    """
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    safe = "".join(c if c.isalnum() else "_" for c in name)
    mod_name = f"kernelopt_src_{safe}_{digest}"
    file = _module_dir() / f"{mod_name}.py"
    if not file.exists():
        file.write_text(source)
    spec = importlib.util.spec_from_file_location(mod_name, file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module  # dataclasses and pickling look modules up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(mod_name, None)
        raise
    return module


def _entry_module(fn: Callable[..., Any]) -> Any:
    """Wrap a launcher function (Triton or Helion entry) as an ``nn.Module``."""
    import torch

    class EntryModel(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fn = fn

        def forward(self, *args: Any) -> Any:
            return self.fn(*args)

    return EntryModel()


@dataclass
class LoadedProblem:
    """A problem executed in this process: factories for its model and inputs."""

    problem: Problem
    module: types.ModuleType

    def _call(self, fn_name: str, *args: Any) -> Any:
        fn = getattr(self.module, fn_name, None)
        if fn is None:
            if fn_name == "get_init_inputs":
                return []
            raise ProblemError(f"{self.problem.path}: no {fn_name}() function")
        try:
            return fn(*args)
        except Exception as exc:
            raise ProblemError(
                f"{self.problem.path}: {fn_name}() raised {type(exc).__name__}: {exc}"
            ) from None

    def init_inputs(self) -> list[Any]:
        """Constructor arguments of ``Model`` (empty for kernel problems)."""
        if self.problem.kind != "module":
            return []
        value = self._call("get_init_inputs")
        if not isinstance(value, list | tuple):
            raise ProblemError(f"{self.problem.path}: get_init_inputs() must return a list")
        return list(value)

    def _on_device(self, device: str, fn_name: str, seed: int, *args: Any) -> Any:
        """``fn_name(*args)`` under ``seed`` with ``device`` as the default device, so that a
        multi-GB ``torch.randn`` or a large ``nn.Linear`` is made where it is used instead of
        on the CPU and copied (minutes and host memory at KernelBench sizes). A function that
        cannot run that way (a CPU generator, ``.item()`` on the meta device) runs as written,
        its tensors moved afterwards by the caller."""
        import torch

        torch.manual_seed(seed)
        if device == "cpu":
            return self._call(fn_name, *args)
        try:
            with torch.device(device):
                return self._call(fn_name, *args)
        except ProblemError:
            torch.manual_seed(seed)
            return self._call(fn_name, *args)

    def make_inputs(self, seed: int, device: str = "cpu") -> list[Any]:
        """Fresh inputs drawn under ``seed``, made on ``device`` (see :meth:`_on_device`)."""
        import torch

        value = self._on_device(device, "get_inputs", seed)
        if not isinstance(value, list | tuple):
            raise ProblemError(f"{self.problem.path}: get_inputs() must return a list")
        return [v.to(device) if isinstance(v, torch.Tensor) else v for v in value]

    def make_model(self, device: str = "cpu", seed: int = 0) -> Any:
        """The reference as an ``nn.Module`` on ``device`` (weights drawn under ``seed``)."""
        if self.problem.kind == "module":
            init = self.init_inputs()
            model = self._build(device, seed, init)
            model = model.to(device)
            # As constructed unless the problem asks for inference (KernelBench's semantics).
            return model.eval() if self.problem.mode == "eval" else model
        fn = getattr(self.module, self.problem.entry)
        return _entry_module(fn).to(device).eval()

    def _build(self, device: str, seed: int, init: list[Any]) -> Any:
        """``Model(*init)`` with weights drawn under ``seed``, made on ``device`` where the
        constructor allows it (the same as building on the CPU and moving, minus the copy)."""
        import torch

        cls = self.module.Model

        def build() -> Any:
            torch.manual_seed(seed)
            try:
                return cls(*init)
            except TypeError as exc:
                raise ProblemError(
                    f"{self.problem.path}: Model(*get_init_inputs()) failed: {exc}"
                ) from None

        if device == "cpu":
            return build()
        try:
            with torch.device(device):
                return build()
        except ProblemError:
            raise
        except Exception:
            return build()

    def reference_fn(self) -> Callable[..., Any] | None:
        """The torch-only reference used by the float64 referee, if the problem has one."""
        if self.problem.kind == "module":
            return None
        ref = getattr(self.module, "reference", None)
        return ref if callable(ref) else None


def materialize(problem: Problem) -> LoadedProblem:
    """Execute a problem's source in a fresh module (trusted code: the user's reference).
    The modules it imports from its own folder are importable, after every installed package
    (``import_path.allow_sibling_imports``); nothing else of that folder is."""
    from kernelopt_jupyter.import_path import allow_sibling_imports

    allow_sibling_imports(problem.source, problem.path)
    try:
        module = load_source_module(problem.source, f"problem_{problem.name}")
    except Exception as exc:
        raise ProblemError(
            f"{problem.path}: executing the problem raised {type(exc).__name__}: {exc}"
        ) from None
    return LoadedProblem(problem, module)


def candidate_model(problem: Problem, module: types.ModuleType, init_inputs: Sequence[Any]) -> Any:
    """Build the candidate's model from its module: ``ModelNew(*init)`` or the entry function."""
    new_cls = getattr(module, "ModelNew", None)
    if new_cls is not None:
        model = new_cls(*init_inputs)
        # The candidate runs in the reference's mode (a stand-in problem may carry no mode).
        if getattr(problem, "mode", "as-constructed") == "eval" and hasattr(model, "eval"):
            model.eval()
        return model
    if problem.kind != "module" and callable(getattr(module, problem.entry, None)):
        return _entry_module(getattr(module, problem.entry))
    wanted = "class ModelNew" if problem.kind == "module" else f"ModelNew or {problem.entry}()"
    raise AttributeError(f"candidate defines no {wanted}")
