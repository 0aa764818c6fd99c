"""The bundled row softmax problem at interpreter sizes, for CPU searches whose point is not
its size: the same kernel, masks and 397-wide rows, 32 rows instead of 256. Triton's
interpreter runs one program per row, so each gate of a search on it is ~3x quicker."""

from __future__ import annotations

from pathlib import Path

SOFTMAX = Path(__file__).resolve().parents[1] / "kernelopt_jupyter" / "problems" / "row_softmax.py"
SMALL_SOFTMAX = SOFTMAX.read_text().replace("\nROWS = 256\n", "\nROWS = 32\n")
assert "\nROWS = 256\n" in SOFTMAX.read_text(), "row_softmax.py no longer sets ROWS = 256"


def small_softmax(folder: Path) -> Path:
    """``row_softmax.py`` at 32 rows, written under ``folder`` (made if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SOFTMAX.name
    path.write_text(SMALL_SOFTMAX)
    return path
