"""The tutorial notebook (docs/tutorial.ipynb) runs from its first cell to its last
without an error, in a kernel of this Python, with no network and nothing of the
user's own Jupyter set-up (its folders are the test's)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "docs" / "tutorial.ipynb"


def test_the_tutorial_notebook_runs_without_an_error(tmp_path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    # The kernel imports this checkout's arena, installed or not.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    notebook = nbformat.read(TUTORIAL, as_version=4)
    # ipykernel's spec says "python", which jupyter_client runs as this interpreter.
    client = NotebookClient(notebook, timeout=300, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # CellExecutionError, naming the cell, on the first cell that fails
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    shown = {kind for output in outputs for kind in output.get("data", {})}
    assert {"image/svg+xml", "text/html"} <= shown  # the boards, the replays and the match tables


def test_the_tutorial_is_stored_without_outputs():
    import nbformat

    notebook = nbformat.read(TUTORIAL, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(not cell.outputs and cell.execution_count is None for cell in code)
