"""``%%kernelopt`` and ``%kernelopt``: start, watch, steer and accept searches from a notebook.

``%%kernelopt [options]`` runs its cell in the user's namespace, captures the problem the cell
defines, starts an :class:`~kernelopt_jupyter.session.OptimizationSession` in a background
thread (the cell returns at once, so the panel's buttons stay live) and shows the live panel
plus a static HTML summary. ``%kernelopt status|stop|accept N|sessions|open DIR`` do the rest.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shlex
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import HTML, display

from kernelopt_jupyter import defaults
from kernelopt_jupyter.events import Event, read_events
from kernelopt_jupyter.notebook.accept import (
    code_view_html,
    insert_next_input,
    render_accepted_cell,
)
from kernelopt_jupyter.notebook.report import render_summary, state_from_events, summary_of_events
from kernelopt_jupyter.notebook.snapshot import panel_bundle, snapshot_bundle
from kernelopt_jupyter.problem import Problem, ProblemError, problem_from_source
from kernelopt_jupyter.session.protocols import SessionController
from kernelopt_jupyter.session.state import SessionState

LINE_USAGE = """\
%kernelopt status            the current session: status, best candidate, summary
%kernelopt stop              stop the current session after its current step
%kernelopt wait [SECONDS]    wait for the current session to finish (for Run All / CI)
%kernelopt accept N [--run]  insert candidate N (e.g. c3, or 'best') in a new cell below;
                             --run also runs it here (defines ModelNew now)
%kernelopt sessions          sessions of this kernel and saved ones under runs/
%kernelopt open DIR [--resume] [--text]   show a saved session (read-only, or resume it)
%kernelopt export [--shape NAME=SIZE[,NAME=SIZE]]... [--fixed-shape] [--mode eval]
                  [--device D] [--out DEST]
                             verify the current session's winner at every shape set and write
                             it as a guarded custom-op package (as `kernelopt export`)
%%kernelopt --help           options of the cell magic that starts a search"""


@dataclass
class SessionRecord:
    """A session started or opened in this kernel, with what its panel needs."""

    label: str
    session: SessionController | None
    problem: Problem | None
    cell_id: str | None
    out_dir: Path | None
    panel: Any = None
    live: bool = True
    summary: Any = None  # the display handle of the static HTML summary
    image: Any = None  # the display handle of the snapshot's chart (SVG), above the summary

    @property
    def named(self) -> str:
        """'s2 (Untitled-cell3)': the label the line commands take, and the name the panel and
        the session folder show."""
        name = self.problem.name if self.problem is not None else ""
        return f"{self.label} ({name})" if name else self.label

    def refresh_summary(self) -> None:
        """Redraw the static snapshot, its chart and summary, from the events (from the
        caller's thread and cell)."""
        if self.image is not None:
            self.image.update(snapshot_bundle(self.state()), raw=True)
        if self.summary is not None:
            self.summary.update(HTML(self.summary_html()))

    def summary_html(self) -> str:
        """The static summary of the session's events (its table folded: the panel has it)."""
        live = self.live and self.session is not None
        return summary_of_events(self.events(), out_dir=self.out_dir, beside_panel=True, live=live)

    def events(self) -> list[Event]:
        """The session's events so far."""
        log = self.session.log if self.session is not None else None
        if log is not None:
            return list(log.events)
        if self.out_dir is not None and (self.out_dir / "events.jsonl").is_file():
            return read_events(self.out_dir / "events.jsonl")
        return []

    def state(self) -> SessionState:
        """A fresh fold of the session's events."""
        return state_from_events(self.events())


#: Sessions of this kernel, oldest first; the last is "the current session".
SESSIONS: list[SessionRecord] = []


def _say(message: str) -> None:
    """A one-line message for the person (stderr: notebooks show it in red, no traceback)."""
    print(f"kernelopt: {message}", file=sys.stderr)


def has_widget_frontend(shell: Any) -> bool:
    """Whether outputs go to a Jupyter front end (JupyterLab, Notebook 7, VS Code) via a kernel."""
    return shell is not None and getattr(shell, "kernel", None) is not None


def _origin(shell: Any) -> str | None:
    """The session id of the front-end connection whose request runs now (None outside one)."""
    get_parent = getattr(shell, "get_parent", None)
    try:
        header = ((get_parent() if get_parent is not None else None) or {}).get("header") or {}
    except Exception:  # an old kernel without parent tracking: the front end asks the kernel
        return None
    session = header.get("session")
    return str(session) if session else None


def current_cell_id(shell: Any) -> str | None:
    """The id of the executing cell, as JupyterLab sends it (None elsewhere)."""
    get_parent = getattr(shell, "get_parent", None)
    if get_parent is None:
        return None
    try:
        parent = get_parent() or {}
    except Exception:  # an old kernel without parent tracking: no cell id, fallback accept
        return None
    metadata = parent.get("metadata") or {}
    cell_id = metadata.get("cellId") or metadata.get("cell_id")
    return str(cell_id) if cell_id else None


def instance_problem_source(
    cell: str, module_name: str, inputs_name: str, ns: dict[str, Any]
) -> str:
    """Problem source for ``--module NAME --inputs NAME``: the cell plus a KernelBench wrapper.

    The worker rebuilds the problem from text, so the cell must be self-contained; the wrapper
    deep-copies the instance (its weights are the reference's) and draws fresh inputs shaped
    like the named ones (or calls them, when they name a function).
    """
    import torch

    for name in (module_name, inputs_name):
        if not name.isidentifier():
            raise ProblemError(f"<cell>: {name!r} is not a variable name")
    if not isinstance(ns.get(module_name), torch.nn.Module):
        raise ProblemError(
            f"<cell>: --module {module_name}: the cell defines no nn.Module of that name"
        )
    if inputs_name not in ns:
        raise ProblemError(
            f"<cell>: --inputs {inputs_name}: the cell defines no variable of that name"
        )
    return (
        cell.rstrip()
        + f"""


# Added by %%kernelopt: the instance `{module_name}` and inputs `{inputs_name}` as a problem.
import copy as _ko_copy

import torch as _ko_torch

_ko_instance = {module_name}
_ko_inputs = {inputs_name}


class Model(_ko_torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = _ko_copy.deepcopy(_ko_instance)

    def forward(self, *args):
        return self.inner(*args)


def get_inputs():
    values = _ko_inputs() if callable(_ko_inputs) else _ko_inputs
    values = list(values) if isinstance(values, (list, tuple)) else [values]
    return [
        _ko_torch.randn_like(v) if isinstance(v, _ko_torch.Tensor) and v.is_floating_point() else v
        for v in values
    ]


def get_init_inputs():
    return []
"""
    )


def cell_number(shell: Any) -> int | None:
    """The executing cell's number as the front end shows it (``[12]``), or None.

    The execution result IPython is filling holds it; ``shell.execution_count`` is already
    the next cell's while a cell runs (IPython 9 counts up before running the code)."""
    result = getattr(getattr(shell, "displayhook", None), "exec_result", None)
    count = getattr(result, "execution_count", None)
    if isinstance(count, int):
        return count
    count = getattr(shell, "execution_count", None)
    return count if isinstance(count, int) else None


def _leading_blank_lines(text: str) -> int:
    """How many lines at the start of ``text`` hold only whitespace."""
    lines = text.splitlines()
    return next((i for i, line in enumerate(lines) if line.strip()), len(lines))


def session_name(problem: Problem, args: argparse.Namespace, shell: Any) -> str:
    """What a cell's session is called (its folder runs/<name>-<time>): ``--name``, else the
    ``--module`` variable, else the kernel's entry function, else the notebook and cell number."""
    if args.name:
        name = str(args.name)
    elif args.module:
        name = str(args.module)
    elif problem.kind != "module" and problem.entry:
        name = problem.entry
    else:
        # The labextension says the notebook's current path before the cell runs; else the
        # server's JPY_SESSION_NAME, the notebook's name when the kernel started.
        from kernelopt_jupyter.notebook.bridge import notebook_path

        notebook = Path(notebook_path() or os.environ.get("JPY_SESSION_NAME") or "").stem
        count = cell_number(shell)
        name = "-".join(p for p in (notebook, f"cell{count}" if count else "cell") if p)
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "cell"


def empty_cell_to_line(lines: list[str]) -> list[str]:
    """IPython refuses a cell magic with an empty body before calling it, so ``%%kernelopt
    --help`` alone in a cell would fail: turn such a cell into the line magic."""
    if not lines or not lines[0].startswith("%%kernelopt") or any(x.strip() for x in lines[1:]):
        return lines
    return ["%kernelopt" + lines[0][len("%%kernelopt") :].rstrip("\n") + " --empty-cell\n"]


def shown_status(state: SessionState) -> str:
    """'running', 'paused', or how the session ended ('finished', 'stopped', 'failed')."""
    return (state.finished.status if state.finished else "") or state.status


def find_candidate(state: SessionState, which: str) -> str:
    """Resolve 'c3', '3' or 'best' to a candidate id of ``state``; raises UsageError."""
    if which == "best":
        if state.best is None:
            raise UsageError("kernelopt: no verified candidate yet")
        return state.best
    for cid in (which, f"c{which}"):
        if cid in state.candidates:
            return cid
    known = ", ".join(list(state.candidates)[-8:]) or "none yet"
    raise UsageError(f"kernelopt: no candidate {which!r} (known: {known})")


@magics_class
class KernelOptMagics(Magics):
    """The ``kernelopt`` line and cell magics."""

    @magic_arguments()
    @argument("--agents", default="offline", help="offline (default), claude or replay:FILE")
    @argument(
        "--budget",
        type=int,
        default=defaults.CANDIDATE_BUDGET,
        help=f"most candidates to gate (default {defaults.CANDIDATE_BUDGET})",
    )
    @argument(
        "--seeds",
        type=int,
        default=defaults.SEEDS,
        help=f"input seeds of the correctness gate (default {defaults.SEEDS})",
    )
    @argument("--device", default="auto", help="auto (default), cpu or cuda")
    @argument("--step", action="store_true", help="pause after every agent step for a decision")
    @argument("--model", default=None, help="Claude model name for --agents claude")
    @argument("--out", default=None, help="session folder (default runs/<name>-<time>)")
    @argument(
        "--time-limit",
        type=float,
        default=None,
        help="stop the whole run (analysis included) after SECONDS",
    )
    @argument(
        "--max-tokens",
        type=int,
        default=None,
        help="Claude: stop after this many API tokens (input, output, cache reads and writes)",
    )
    @argument(
        "--max-usd",
        type=float,
        default=None,
        help="Claude: stop after this much API spend in USD (list prices; an estimate)",
    )
    @argument("--iterations", type=int, default=None, help="beam-search iterations")
    @argument("--plans", type=int, default=None, help="plans per iteration")
    @argument("--beam", type=int, default=None, help="beam width")
    @argument("--module", default=None, help="optimize this nn.Module instance of the cell")
    @argument("--inputs", default=None, help="with --module: its input list (or a function)")
    @argument("--name", default=None, help="problem name (for the session folder)")
    @argument("--text", action="store_true", help="text progress instead of the widget panel")
    @argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the analysis cache: analyse afresh and keep nothing",
    )
    @line_cell_magic
    def kernelopt(self, line: str, cell: str | None = None) -> Any:
        """Start a search on the problem the cell defines (cell magic), or manage sessions.

        The cell defines a problem as a file would (docs/problems.md): ``class Model`` with
        ``get_inputs()`` (and ``get_init_inputs()``), a Triton kernel with its launcher, or a
        Helion kernel; or any ``nn.Module`` instance with ``--module NAME --inputs NAME``.
        """
        if cell is None:
            return self._line(line)
        if {"-h", "--help"} & set(line.split()):
            print(self.cell_help())
            return None
        args = parse_argstring(self.kernelopt, line)
        return self.start(args, cell, magic_line=line)

    # ------------------------------------------------------------------ the cell magic

    def run_in_user_namespace(self, cell: str, magic_line: str | None = None) -> None:
        """Execute the cell's code as a normal cell would; its exceptions propagate as the cell's.

        ``run_cell`` would show an error but leave the magic's cell "ok" (a notebook run would
        go on past it); executing directly keeps the error the cell's own. With
        ``magic_line`` (the ``%%kernelopt`` line above ``cell``), tracebacks count the cell's
        own lines, that line included, and a syntax error is one line naming the cell's number
        and line (a UsageError: the cell still fails, without IPython's and this module's
        frames).
        """
        shell: Any = self.shell
        code = shell.transform_cell(cell)
        number = cell_number(shell)
        raw = cell
        if magic_line is not None:
            raw = f"%%kernelopt {magic_line}".rstrip() + "\n" + cell
            # IPython drops the body's leading blank lines; the padding puts each line back
            # at its number in the cell, under the magic's line.
            code = "\n" * (1 + _leading_blank_lines(cell) - _leading_blank_lines(code)) + code
        filename = shell.compile.cache(code, number or 0, raw_code=raw)
        try:
            compiled = compile(code, filename, "exec")
        except SyntaxError as exc:
            if magic_line is None:
                raise
            where = f"cell [{number}]" if number else "the cell"
            text = (exc.text or "").strip()
            raise UsageError(
                f"kernelopt: {where}, line {exc.lineno}: {exc.msg}"
                + (f": {text}" if text else "")
                + " (fix the cell's code and run it again)"
            ) from None
        exec(compiled, shell.user_ns)

    def cell_help(self) -> str:
        """The options of ``%%kernelopt`` (argparse's help) followed by the line commands."""
        parser = self.kernelopt.parser
        parser.prog = "%kernelopt"  # IPython's formatter adds one more %
        return parser.format_help().replace("::\n\n", "", 1) + "\nline commands:\n" + LINE_USAGE

    def start(
        self, args: argparse.Namespace, cell: str, magic_line: str = ""
    ) -> SessionRecord | None:
        """Run the cell, capture its problem, start the session and show the panel
        (``magic_line``: the options after ``%%kernelopt``, for the cell's line numbers)."""
        if bool(args.module) != bool(args.inputs):
            raise UsageError("kernelopt: --module and --inputs go together")
        if args.max_tokens is not None and args.max_tokens < 1:
            raise UsageError(f"kernelopt: --max-tokens {args.max_tokens} must be at least 1")
        if args.max_usd is not None and not args.max_usd > 0:
            raise UsageError(f"kernelopt: --max-usd {args.max_usd} must be more than 0 USD")
        shell: Any = self.shell
        if args.device != "cuda":
            # Triton kernels of the cell, and the accepted ones later, must be defined under
            # the interpreter when there is no GPU; it is read when a kernel is decorated.
            from kernelopt_jupyter.notebook.interpreter import use_cpu_interpreter

            use_cpu_interpreter()
        self.run_in_user_namespace(cell, magic_line=magic_line)
        try:
            if args.module:
                source = instance_problem_source(cell, args.module, args.inputs, shell.user_ns)
            else:
                source = cell
            problem = problem_from_source(source, "<cell>")
        except ProblemError as exc:
            hint = "" if args.module else " (or pass --module NAME --inputs NAME)"
            _say(f"{exc}{hint}")
            return None
        problem = dataclasses.replace(problem, name=session_name(problem, args, shell))
        try:
            from kernelopt_jupyter.session import OptimizationSession, SearchOptions, SessionError
        except ImportError as exc:
            _say(f"the search engine is not available ({exc})")
            return None
        options = SearchOptions(
            agents=args.agents,
            budget=args.budget,
            seeds=args.seeds,
            device=args.device,
            step=args.step,
            model=args.model,
            max_seconds=args.time_limit,
            max_tokens=args.max_tokens,
            max_usd=args.max_usd,
            out_dir=Path(args.out) if args.out else None,
            analysis_cache=not args.no_cache,
        )
        for name in ("iterations", "plans", "beam"):
            if getattr(args, name) is not None:
                setattr(options, name, getattr(args, name))
        try:
            session = OptimizationSession(problem, options)
        except (SessionError, ProblemError, OSError) as exc:
            _say(str(exc))
            return None
        record = SessionRecord(
            label=f"s{len(SESSIONS) + 1}",
            session=session,
            problem=problem,
            cell_id=current_cell_id(self.shell),
            out_dir=Path(session.out_dir),
        )
        self.show(record, text=args.text, step_mode=args.step)
        SESSIONS.append(record)
        try:
            session.start()
        except SessionError as exc:
            _say(str(exc))
        return None

    def show(self, record: SessionRecord, *, text: bool = False, step_mode: bool = False) -> None:
        """Display ``record``'s panel (or text progress) and its static summary."""
        session = record.session
        live = record.live and session is not None
        events_now: list[Event] = [] if live else record.events()
        if text or not has_widget_frontend(self.shell):
            from kernelopt_jupyter.session.progress import TextProgress

            progress = TextProgress()
            if live and session is not None:
                session.log.subscribe(progress, replay=True)
            else:
                for event in events_now:
                    progress(event)
                if has_widget_frontend(self.shell):
                    display(HTML(render_summary(progress.state, out_dir=record.out_dir)))
            record.panel = progress
            return
        from kernelopt_jupyter.notebook.panel.view import SessionPanel

        panel = SessionPanel(
            controller=session if live else None,
            problem=record.problem,
            cell_id=record.cell_id,
            step_mode=step_mode,
            out_dir=str(record.out_dir) if record.out_dir else None,
        )
        record.panel = panel
        # The panel, then its snapshot (chart and summary) for a notebook reopened without it.
        display(panel_bundle(panel.widget._repr_mimebundle_(), _origin(self.shell)), raw=True)
        record.image = display(snapshot_bundle(SessionState()), raw=True, display_id=True)
        record.summary = display(HTML(record.summary_html()), display_id=True)
        panel.on_finished.append(lambda state: record.refresh_summary())
        if live and session is not None:
            panel.attach(session.log)
            session.log.subscribe(_phase_redraw(record.refresh_summary), replay=True)
            session.log.subscribe(_chart_redraw(record.image), replay=True)
        else:
            panel.feed(events_now)
            record.refresh_summary()

    # ------------------------------------------------------------------ the line magic

    def _line(self, line: str) -> Any:
        try:
            words = shlex.split(line)
        except ValueError as exc:
            raise UsageError(f"kernelopt: {exc}") from None
        if "--empty-cell" in words:
            if {"-h", "--help"} & set(words):
                print(self.cell_help())
                return None
            raise UsageError(
                "kernelopt: the %%kernelopt cell is empty: write the problem below the magic line "
                "(class Model + get_inputs(), or a Triton kernel and its launcher); "
                "%%kernelopt --help lists the options"
            )
        if not words or words[0] in ("help", "-h", "--help"):
            print(self.cell_help())
            return None
        command, rest = words[0], words[1:]
        handler = getattr(self, f"_cmd_{command}", None)
        if handler is None:
            raise UsageError(f"kernelopt: unknown command {command!r}\n{LINE_USAGE}")
        return handler(rest)

    def _current(self) -> SessionRecord:
        if not SESSIONS:
            raise UsageError("kernelopt: no session in this kernel; run a %%kernelopt cell first")
        return SESSIONS[-1]

    def _cmd_status(self, rest: list[str]) -> None:
        record = self._current()
        state = record.state()
        running = record.session is not None and record.session.running
        print(
            f"{record.label}: {state.problem} {shown_status(state)}"
            + (" (running)" if running else "")
            + f"; {len(state.candidates)} candidates; best {state.best or 'none'}"
            + (f"; {state.budget_line()}" if state.budget_line() else "")
        )
        if has_widget_frontend(self.shell):
            display(HTML(record.summary_html()))

    def _cmd_stop(self, rest: list[str]) -> None:
        record = self._current()
        if not record.live:
            raise UsageError("kernelopt: the current session is a read-only view")
        if record.session is None or not record.session.running:
            print(f"{record.named}: already {shown_status(record.state())}; nothing to stop")
            return
        controls = getattr(record.panel, "controls", None)
        if controls is not None:
            # Through the panel: its message line says "Stopping…" at once, in place of a
            # pause's offers that a stop answers.
            controls.stop()
        else:
            record.session.stop()
        print(f"{record.named}: stopping after the current step")

    def _cmd_wait(self, rest: list[str]) -> None:
        record = self._current()
        try:
            timeout = float(rest[0]) if rest else None
        except ValueError:
            raise UsageError("kernelopt: usage: %kernelopt wait [SECONDS]") from None
        wait = getattr(record.session, "wait", None)
        finished = wait(timeout) if (record.live and wait is not None) else True
        if record.panel is not None and hasattr(record.panel, "flush"):
            record.panel.flush()  # draw everything now
        # Again from this cell: an update sent from the panel's thread after the magic's cell
        # finished may not reach a front end that routes outputs by their request.
        record.refresh_summary()
        state = record.state()
        if finished:
            print(f"{record.label}: {shown_status(state)}; best {state.best or 'none'}")
        else:
            print(f"{record.label}: still running after {timeout:g} s")

    def _cmd_accept(self, rest: list[str]) -> None:
        run_now = "--run" in rest
        rest = [r for r in rest if r != "--run"]
        if len(rest) != 1:
            raise UsageError("kernelopt: usage: %kernelopt accept N [--run]   (an id or 'best')")
        record = self._current()
        state = record.state()
        cid = find_candidate(state, rest[0])
        cand = state.candidates[cid]
        if cand.verdict != "pass":
            raise UsageError(
                f"kernelopt: {cid} did not pass the gates ({cand.verdict or 'not gated yet'})"
            )
        speed = (cand.speedup, cand.ci_low, cand.ci_high) if cand.speedup is not None else None
        text = render_accepted_cell(
            record.problem, cand, cand.gates, speed, device=state.device or None
        )
        insert_next_input(text, self.shell)
        # set_next_input is a request: JupyterLab and Notebook make the cell, nbclient and
        # some other front ends drop it silently. So the code is also shown, with Copy.
        how = (
            f"{cid}: asked the front end for a new cell below with its code (set_next_input; "
            "JupyterLab and Notebook add it, others ignore it: the code is also shown here)"
        )
        if has_widget_frontend(self.shell):
            display(HTML(code_view_html(text, cid)))
        if run_now:
            self.run_in_user_namespace(text)
            print(f"{how}; its definitions are live in this kernel.")
        else:
            print(how + ".")

    def _cmd_sessions(self, rest: list[str]) -> None:
        lines = []
        for record in SESSIONS:
            state = record.state()
            lines.append(
                f"{record.label}  {state.problem:<16} {shown_status(state):<11} "
                f"{len(state.candidates):>3} candidates  best {state.best or '-':<6} {record.out_dir}"
            )
        root = Path(rest[0]) if rest else Path("runs")
        known = {str(r.out_dir) for r in SESSIONS}
        if root.is_dir():
            for events_file in sorted(root.glob("*/events.jsonl")):
                folder = events_file.parent
                if str(folder) in known:
                    continue
                try:
                    state = state_from_events(read_events(events_file))
                except Exception as exc:  # one unreadable folder must not hide the others
                    lines.append(f"saved  {folder}  (unreadable: {exc})")
                    continue
                # Not running in this kernel and never finished: its kernel went away mid-run.
                status = shown_status(state) if state.status == "finished" else "interrupted"
                lines.append(
                    f"saved  {state.problem:<16} {status:<11} "
                    f"{len(state.candidates):>3} candidates  best {state.best or '-':<6} {folder}"
                )
        print("\n".join(lines) if lines else f"no sessions yet (none in this kernel or {root}/)")

    def _cmd_export(self, rest: list[str]) -> None:
        from kernelopt_jupyter.deploy import export, import_hint
        from kernelopt_jupyter.deploy.packaging import ExportError
        from kernelopt_jupyter.deploy.shapes import parse_shape_spec
        from kernelopt_jupyter.device import DeviceError

        usage = (
            "kernelopt: usage: %kernelopt export [--shape NAME=SIZE[,NAME=SIZE]]... "
            "[--fixed-shape] [--mode eval|as-constructed] [--device D] [--out DEST]"
        )
        parser = argparse.ArgumentParser(prog="%kernelopt export", add_help=False)
        parser.add_argument("--shape", action="append", default=[])
        parser.add_argument("--fixed-shape", action="store_true")
        parser.add_argument("--mode", choices=("eval", "as-constructed"), default=None)
        parser.add_argument("--out", default=None)
        parser.add_argument("--device", default=None)
        try:
            args = parser.parse_args(rest)
            shapes = [parse_shape_spec(spec) for spec in args.shape]
        except SystemExit:
            raise UsageError(usage) from None
        except ValueError as exc:
            raise UsageError(f"kernelopt: --shape: {exc}") from None
        record = self._current()
        state = record.state()
        if not state.best or record.out_dir is None:
            raise UsageError(f"kernelopt: {record.label} has no verified winner to export")
        print(f"{record.label}: exporting {state.best}: verifying it at every shape set ...")

        def said(check: Any) -> None:
            name = getattr(getattr(check, "shape", None), "name", "?")
            print(f"  shape {name}: {getattr(check, 'verdict', '?')}", flush=True)

        try:
            result = export(
                record.out_dir,
                args.out,
                device=args.device or state.device or "auto",
                shapes=shapes or None,
                fixed_shape=args.fixed_shape,
                on_check=said,
                mode=args.mode,
            )
        except (ExportError, ProblemError, DeviceError) as exc:
            raise UsageError(f"kernelopt: {exc}") from None
        package = Path(result.package)
        print(f"{record.label}: package {package}")
        print(f"use it: {import_hint(package)}")

    def _cmd_open(self, rest: list[str]) -> None:
        parser = argparse.ArgumentParser(prog="%kernelopt open", add_help=False)
        parser.add_argument("dir")
        parser.add_argument("--resume", action="store_true")
        parser.add_argument("--text", action="store_true")
        try:
            args = parser.parse_args(rest)
        except SystemExit:
            raise UsageError("kernelopt: usage: %kernelopt open DIR [--resume] [--text]") from None
        folder = Path(args.dir)
        if not (folder / "events.jsonl").is_file():
            _say(f"{folder}: not a KernelOPT session folder (no events.jsonl)")
            return
        try:
            from kernelopt_jupyter.session import OptimizationSession, SessionError
        except ImportError as exc:
            _say(f"the search engine is not available ({exc})")
            return
        try:
            session = OptimizationSession.open(folder, resume=args.resume)
        except (SessionError, ProblemError, OSError) as exc:
            _say(str(exc))
            return
        record = SessionRecord(
            label=f"s{len(SESSIONS) + 1}",
            session=session,
            problem=session.problem,
            cell_id=current_cell_id(self.shell),
            out_dir=folder,
            live=args.resume,
        )
        self.show(record, text=args.text, step_mode=bool(getattr(session.options, "step", False)))
        SESSIONS.append(record)
        if args.resume:
            session.start()


def _warm_plotly() -> None:
    try:
        import plotly.graph_objects as go

        _ = go.Figure  # the lazy import behind it takes ~2 s; pay it before the panel needs it
    except ImportError:
        pass


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics (``%load_ext kernelopt_jupyter``)."""
    ipython.register_magics(KernelOptMagics)
    cleanup = ipython.input_transformers_cleanup
    if empty_cell_to_line not in cleanup:
        cleanup.append(empty_cell_to_line)
    if has_widget_frontend(ipython):
        from kernelopt_jupyter.notebook.bridge import listen_for_notebook_path

        listen_for_notebook_path()
        threading.Thread(target=_warm_plotly, name="kernelopt-warm", daemon=True).start()


def _chart_redraw(image: Any) -> Any:
    """An event reader that redraws the snapshot's chart (display handle ``image``) at each
    verdict, from its own fold of the events: the chart then never says "no candidate yet"
    beside a table of them."""
    state = SessionState()

    def read(event: Event) -> None:
        state.apply(event)
        state.take_changes()  # the panel draws from its own state: nothing to keep here
        if event.type == "verdict" and image is not None:
            image.update(snapshot_bundle(state), raw=True)

    return read


def _phase_redraw(redraw: Any) -> Any:
    """An event reader that calls ``redraw`` when the session's phase changes (it started,
    the analysis, the search, the winner): the static summary beside a live panel then names
    the problem and the running phase instead of what it knew before the first event. Budget
    ticks are left to the panel; the end is redrawn by the panel's ``on_finished``."""
    from kernelopt_jupyter.notebook.phases import PhaseTracker

    tracker = PhaseTracker()

    def read(event: Event) -> None:
        if tracker.apply(event) and event.type not in ("budget", "session_finished"):
            redraw()

    return read
