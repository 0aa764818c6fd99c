"""notebooks/quickstart.ipynb runs top to bottom with nbclient on CPU (offline agents)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest
from _notebooks import outputs_of, text_of
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).parent.parent / "notebooks" / "quickstart.ipynb"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.mark.slow
def test_quickstart_notebook_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNELOPT_HOME", str(tmp_path / "home"))  # the kernel inherits it
    work = tmp_path / "nb"
    work.mkdir()
    shutil.copy(NOTEBOOK, work / NOTEBOOK.name)
    nb = nbformat.read(work / NOTEBOOK.name, as_version=4)
    client = NotebookClient(
        nb,
        timeout=900,
        kernel_name="python3",
        store_widget_state=False,  # as scripts/demo.sh saves it
        resources={"metadata": {"path": str(work)}},
    )
    client.execute()  # raises CellExecutionError on any cell error

    search = outputs_of(nb, "search")
    assert any(WIDGET_MIME in out.get("data", {}) for out in search), "no panel widget"
    assert "kernelopt-summary" in text_of(search)  # the static summary sits by the panel
    assert "error" not in [out["output_type"] for out in search]

    status = text_of(outputs_of(nb, "status"))
    assert "finished" in status and "kernelopt-summary" in status
    # nbclient makes no cell from set_next_input: the magic says it only asked, and shows
    # the code with a Copy button.
    accepted = text_of(outputs_of(nb, "accept"))
    assert "asked the front end for a new cell below" in accepted
    assert "kernelopt-code-view" in accepted and "class ModelNew" in accepted
    assert "ModelNew matches Model" in text_of(outputs_of(nb, "check"))
    assert "quickstart_mlp" in text_of(outputs_of(nb, "sessions"))

    # Saved small: no output embeds plotly's bundle (megabytes) by itself.
    assert len(nbformat.writes(nb)) < 400_000

    runs = list((work / "runs").glob("quickstart_mlp-*"))
    assert len(runs) == 1
    result = json.loads((runs[0] / "result.json").read_text())
    assert result["best"] is not None
    events = (runs[0] / "events.jsonl").read_text().splitlines()
    assert json.loads(events[-1])["type"] == "session_finished"
