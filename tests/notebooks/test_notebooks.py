"""Every notebook in notebooks/ runs top to bottom in a real kernel (nbclient), without errors."""

import os
import pathlib

import nbformat
import pytest
from nbclient import NotebookClient

REPO = pathlib.Path(__file__).resolve().parents[2]
# Notebooks that need a stand-in module, or JAX, get their own test.
OWN_TEST = {"colab.ipynb", "jax_rollouts.ipynb"}  # jax_rollouts: tests/rollouts, where JAX is
NOTEBOOKS = sorted(p for p in (REPO / "notebooks").glob("*.ipynb") if p.name not in OWN_TEST)

pytestmark = [pytest.mark.kernel, pytest.mark.slow]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(path, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for cell in notebook.cells for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
