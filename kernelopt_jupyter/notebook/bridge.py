"""Kernel half of the notebook bridge: ask the KernelOPT labextension to insert a cell.

The labextension (``labextension/``) registers the comm target ``kernelopt.notebook`` on every
notebook kernel. :func:`request_insert` opens a comm to it carrying::

    {"action": "insert_cell", "cell_id": ..., "source": ..., "mode": "below" | "replace",
     "request_id": ..., "origin": <session id of the browser that caused the request>}

and the extension edits the notebook's shared model (undoable, visible to collaborators,
independent of the kernel being busy) and answers ``{"request_id", "status", "detail"}``.
``origin`` keeps a request from being applied once per browser under real-time collaboration:
only the browser whose click or cell run caused it acts.

When the reply can be waited for
--------------------------------
The kernel reads the frontend's reply as a shell message, and it handles shell messages one at
a time on its main thread. The edit itself never waits for the kernel, but *the reply* is only
read once the main thread is free. So:

* From a worker thread (:func:`request_insert_async` makes one; a search thread is one), the
  call blocks for the reply and the answer is exact: the main thread reads the reply as soon as
  it is idle, or at once while an ``async`` cell is awaiting.
* On the kernel's main thread (a widget button callback, an executing cell) waiting would only
  burn the timeout, so :func:`request_insert` does not wait: it sends the request and returns
  whether an extension has answered this kernel before (a :func:`probe`, or an earlier
  request). The reply, when it comes, goes to ``on_reply``. A panel's accept button should
  call :func:`request_insert_async` and update itself in ``on_done``.

Without the extension (Notebook 7 without it, VS Code, plain IPython) nothing answers and the
notebook front end falls back to ``%kernelopt accept N`` (``set_next_input`` from an executing
cell).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Literal

COMM_TARGET = "kernelopt.notebook"

Mode = Literal["below", "replace"]

# Set once any kernelopt labextension has answered a request on this kernel.
_seen = threading.Event()

# How long a request sent from the kernel's main thread keeps listening for its reply when a
# client closed its comm early (the reply is read only after the running handler returns).
_LATE_REPLY_S = 120.0


@dataclass(frozen=True)
class BridgeReply:
    """The extension's answer to one request."""

    request_id: str
    status: str  # "ok" | "error"
    detail: str

    @property
    def ok(self) -> bool:
        """Whether the notebook was edited (or, for a probe, an extension answered)."""
        return self.status == "ok"


def _kernel() -> Any | None:
    """The running ipykernel, or None outside a kernel (plain Python, IPython terminal)."""
    try:
        from ipykernel.kernelbase import Kernel
    except ImportError:
        return None
    return Kernel.instance() if Kernel.initialized() else None


def _parent() -> dict[str, Any]:
    kernel = _kernel()
    if kernel is None:
        return {}
    try:
        parent = kernel.get_parent()
    except Exception:
        return {}
    return parent if isinstance(parent, dict) else {}


def current_cell_id() -> str | None:
    """The notebook cell id of the request being handled (JupyterLab sends it as
    ``metadata.cellId`` with every execute request), or None when unknown."""
    cell_id = (_parent().get("metadata") or {}).get("cellId")
    return cell_id if isinstance(cell_id, str) and cell_id else None


def current_origin() -> str | None:
    """The session id of the browser connection whose message the kernel is handling."""
    session = (_parent().get("header") or {}).get("session")
    return session if isinstance(session, str) and session else None


def extension_seen() -> bool:
    """Whether a kernelopt labextension has answered a request on this kernel."""
    return _seen.is_set()


def _can_wait_here(kernel: Any) -> bool:
    """False on a thread that handles the kernel's shell messages (main shell or subshell):
    the reply would queue behind the very call that waits for it."""
    if threading.current_thread() is threading.main_thread():
        return False
    channel = getattr(kernel, "shell_channel_thread", None)
    manager = getattr(channel, "manager", None)
    if manager is None:
        return True
    try:
        manager.subshell_id_from_thread_id(threading.get_ident())
    except Exception:
        return True  # not a subshell thread
    return False


class _Request:
    """One comm round trip: open with the request, wait for the reply."""

    def __init__(self, data: dict[str, Any], on_reply: Callable[[BridgeReply], None] | None):
        self.data = data
        self.request_id: str = data["request_id"]
        self.reply: BridgeReply | None = None
        self.done = threading.Event()
        self._on_reply = on_reply
        self._comm: Any = None
        self._released = False
        self._reopened = False  # re-registered after an early close: nobody else closes it

    def _handle(self, msg: dict[str, Any]) -> None:
        data = (msg.get("content") or {}).get("data") or {}
        if not isinstance(data, dict) or data.get("request_id") != self.request_id:
            return
        reply = BridgeReply(
            request_id=self.request_id,
            status=str(data.get("status", "error")),
            detail=str(data.get("detail", "")),
        )
        _seen.set()
        if self._reopened and reply.ok:
            self._forget()  # the frontend's own close came first and is not coming again
        # Another collaborator's browser may report an error while ours succeeds: keep "ok".
        if self.reply is None or (reply.ok and not self.reply.ok):
            self.reply = reply
        if reply.ok:
            self.done.set()
        else:
            # Wait a moment for an "ok" from another browser before settling on the error.
            timer = threading.Timer(0.25, self.done.set)
            timer.daemon = True
            timer.start()
        if self._on_reply is not None:
            try:
                self._on_reply(reply)
            except Exception:  # a broken callback must not break the kernel's comm handling
                pass

    def _on_close(self, _msg: dict[str, Any]) -> None:
        # A browser connected to this kernel that lacks the comm target (a console, a client
        # without the extension) closes a comm it cannot open, possibly before the browser
        # that edits the notebook answers: keep listening until a reply or the timeout.
        if self.reply is None and self._comm is not None and not self._released:
            from comm import get_comm_manager

            self._comm._closed = False
            get_comm_manager().register_comm(self._comm)
            self._reopened = True

    def _release(self) -> None:
        """Stop listening for a reply that did not come (or a comm nobody will close); tell
        no one: no frontend waits on it."""
        if self.reply is None or self._reopened:
            self._forget()

    def _forget(self) -> None:
        self._released = True
        mine: Any = self._comm
        if mine is None:
            return
        from comm import get_comm_manager

        manager = get_comm_manager()
        comm_id = mine.comm_id
        registered: Any = manager.comms.get(comm_id)
        if registered is mine:
            del manager.comms[comm_id]
            mine._closed = True

    def send(self, listen_s: float) -> None:
        """Open the comm carrying the request; stop listening after ``listen_s`` seconds
        if no reply came (a reply closes the comm the normal way)."""
        from comm import create_comm

        # Made unopened, its handlers set, then opened: a reply that came back between the
        # open and the handlers' registration (a thread descheduled there, on a loaded
        # machine) was dropped, and the request waited out its whole timeout.
        comm = create_comm(target_name=COMM_TARGET, primary=False)
        self._comm = comm
        comm.on_msg(self._handle)
        comm.on_close(self._on_close)
        comm.primary = True
        comm.open(data=self.data)
        timer = threading.Timer(listen_s, self._release)
        timer.daemon = True
        timer.start()


def _message(action: str, origin: str | None, **fields: Any) -> dict[str, Any]:
    return {"action": action, "request_id": uuid.uuid4().hex, "origin": origin, **fields}


def _validate(cell_id: str, source: str, mode: str) -> None:
    if not isinstance(cell_id, str) or not cell_id:
        raise ValueError("bridge: cell_id must be a non-empty string (the %%kernelopt cell's id)")
    if not isinstance(source, str):
        raise TypeError("bridge: source must be a string")
    if mode not in ("below", "replace"):
        raise ValueError(f"bridge: mode must be 'below' or 'replace', not {mode!r}")


def request_insert(
    cell_id: str,
    source: str,
    mode: Mode = "below",
    timeout: float = 2.0,
    *,
    on_reply: Callable[[BridgeReply], None] | None = None,
    origin: str | None = None,
) -> bool:
    """Ask the labextension to insert ``source`` as a code cell directly below the cell
    ``cell_id`` (``mode="below"``) or to replace that cell's source (``mode="replace"``).

    Returns True when the extension applied the edit. On a thread that can wait (any thread but
    the kernel's shell threads) it waits up to ``timeout`` seconds for the reply and returns
    False when none came or the extension reported an error. On the kernel's main thread (a
    widget callback, a running cell) it cannot see the reply in time (see the module docstring):
    it sends the request and returns :func:`extension_seen`; the reply goes to ``on_reply``.
    Outside a kernel it returns False. ``origin`` (default: the session of the message being
    handled) names the browser that should act.
    """
    _validate(cell_id, source, mode)
    kernel = _kernel()
    if kernel is None:
        return False
    data = _message(
        "insert_cell",
        origin if origin is not None else current_origin(),
        cell_id=cell_id,
        source=source,
        mode=mode,
    )
    req = _Request(data, on_reply)
    if not _can_wait_here(kernel):
        # The reply is read once this handler returns, however long that takes.
        req.send(max(timeout, _LATE_REPLY_S))
        return extension_seen()
    req.send(timeout + 1.0)
    req.done.wait(timeout)
    return req.reply is not None and req.reply.ok


def request_insert_async(
    cell_id: str,
    source: str,
    mode: Mode = "below",
    timeout: float = 2.0,
    *,
    on_done: Callable[[bool, BridgeReply | None], None] | None = None,
) -> Future[BridgeReply | None]:
    """Like :func:`request_insert`, but never blocks: the round trip runs in a worker thread,
    so it gets the exact answer even when called from a widget button callback.

    The returned future resolves to the extension's :class:`BridgeReply`, or None when nothing
    answered within ``timeout``; ``on_done(ok, reply)`` is called from the worker thread.
    """
    _validate(cell_id, source, mode)
    origin = current_origin()  # the clicking browser: threads do not see the click's header
    future: Future[BridgeReply | None] = Future()

    def run() -> None:
        reply: BridgeReply | None = None
        try:
            kernel = _kernel()
            if kernel is not None:
                data = _message("insert_cell", origin, cell_id=cell_id, source=source, mode=mode)
                req = _Request(data, None)
                req.send(timeout + 1.0)
                req.done.wait(timeout)
                reply = req.reply
        except BaseException as err:  # hand any failure to the caller through the future
            future.set_exception(err)
            return
        future.set_result(reply)
        if on_done is not None:
            on_done(reply is not None and reply.ok, reply)

    threading.Thread(target=run, name="kernelopt-bridge", daemon=True).start()
    return future


def probe(timeout: float = 2.0) -> bool:
    """Ask whether a kernelopt labextension is listening on this kernel.

    From a worker thread it waits and returns the answer. On the kernel's main thread (e.g. when
    ``%%kernelopt`` runs) it sends the question and returns :func:`extension_seen`; the answer
    arrives once the cell finishes, so a later accept click on the main thread knows.
    """
    kernel = _kernel()
    if kernel is None:
        return False
    req = _Request(_message("ping", current_origin()), None)
    if not _can_wait_here(kernel):
        req.send(max(timeout, _LATE_REPLY_S))
        return extension_seen()
    req.send(timeout + 1.0)
    req.done.wait(timeout)
    return req.reply is not None and req.reply.ok


#: The comm target the labextension opens before a ``%%kernelopt`` cell runs, carrying the
#: notebook's current path (``{"path": ...}``); the kernel's own ``JPY_SESSION_NAME`` is the
#: name the notebook had when the kernel started.
PATH_TARGET = "kernelopt.notebook_path"

#: The latest notebook path the labextension sent ("path"), if any.
_notebook: dict[str, str] = {}


def on_notebook_path(_comm: Any, msg: dict[str, Any]) -> None:
    """Comm-open handler of :data:`PATH_TARGET`: keep the path it carries."""
    data = (msg.get("content") or {}).get("data") or {}
    path = data.get("path")
    if isinstance(path, str) and path:
        _notebook["path"] = path


def listen_for_notebook_path() -> None:
    """Register :data:`PATH_TARGET` on this kernel (nothing outside a kernel)."""
    if _kernel() is None:
        return
    from comm import get_comm_manager

    get_comm_manager().register_target(PATH_TARGET, on_notebook_path)


def notebook_path() -> str | None:
    """The notebook's path as the labextension last said it, or None."""
    return _notebook.get("path")
