"""An append-only text view: the one place the panel needs its own front-end code.

A plain ``Textarea``/``Output`` resends its whole value on every change, so a long agent
transcript would cost O(n^2) bytes. This widget sends only the new piece (a custom message
``{"op": "append"}``); a view that opens later (a page reload, a second view) asks for the
text so far once (``{"op": "sync"}``) and gets it in one message.
"""

from __future__ import annotations

from typing import Any

import anywidget
import traitlets

_ESM = r"""
function render({ model, el }) {
  el.classList.add("kernelopt-stream");
  const pre = document.createElement("pre");
  pre.className = "kernelopt-stream-text";
  pre.style.cssText = "max-height:320px;overflow:auto;margin:0;padding:6px;white-space:pre-wrap;" +
    "font-size:12px;background:var(--jp-layout-color2,#f7f7f7)";
  el.appendChild(pre);
  const atBottom = () => pre.scrollHeight - pre.scrollTop - pre.clientHeight < 24;
  const onMsg = (msg) => {
    if (!msg || typeof msg.text !== "string") return;
    const follow = atBottom();
    if (msg.op === "reset") pre.textContent = msg.text;
    else if (msg.op === "append") pre.appendChild(document.createTextNode(msg.text));
    if (follow) pre.scrollTop = pre.scrollHeight;
  };
  model.on("msg:custom", onMsg);
  model.send({ op: "sync" });
  return () => model.off("msg:custom", onMsg);
}
export default { render };
"""


class StreamView(anywidget.AnyWidget):  # type: ignore[misc]
    """Append-only text (an agent's reasoning); the Python side keeps the full text."""

    _esm = traitlets.Unicode(_ESM).tag(sync=True)
    placeholder = traitlets.Unicode("").tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._chunks: list[str] = []
        self.on_msg(self._on_front_end_msg)

    @property
    def value(self) -> str:
        """The whole text so far."""
        return "".join(self._chunks)

    def append(self, text: str) -> None:
        """Add ``text`` at the end; only ``text`` travels to the browser."""
        if not text:
            return
        self._chunks.append(text)
        self.send({"op": "append", "text": text})

    def _on_front_end_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("op") == "sync":
            # Compact the history into one chunk: syncs repeat with every new view.
            joined = self.value
            self._chunks = [joined] if joined else []
            self.send({"op": "reset", "text": joined})
