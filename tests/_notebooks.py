"""Reading an executed notebook's outputs (the CPU and GPU notebook tests share these)."""

from __future__ import annotations

from typing import Any


def outputs_of(nb: Any, cell_id: str) -> list[dict[str, Any]]:
    """The outputs of the cell with id ``cell_id``."""
    for cell in nb.cells:
        if cell.get("id") == cell_id:
            return list(cell.get("outputs", []))
    raise KeyError(cell_id)


def text_of(outputs: list[dict[str, Any]]) -> str:
    """Everything the outputs say, as text (streams, plain text and HTML)."""
    parts = []
    for out in outputs:
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        data = out.get("data", {})
        parts.append(str(data.get("text/plain", "")))
        parts.append(str(data.get("text/html", "")))
    return "\n".join(parts)
